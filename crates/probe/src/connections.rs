//! How many of a process tree's sockets are TCP connections established to a port (a
//! service's, outbound) or on a local listening port (inbound), and how many of those had
//! data in flight or unread: how full a pool to a service is, sampled through a window.
//!
//! The same table tells how many connections a server still holds after their client closed
//! them (`CLOSE_WAIT`): requests it is still answering for a client that gave up.
//!
//! A tree's sockets are the `socket:[inode]` links of its processes' fd directories; the
//! connections are the entries of `/proc/<pid>/net/tcp` and `tcp6` (read once per network
//! namespace among the tree's processes) whose inode is one of them. A socket shared by
//! two processes (inherited over fork) counts once.

use std::collections::{BTreeSet, HashSet};
use std::os::unix::fs::MetadataExt as _;

use procfs::net::TcpState;
use procfs::process::{FDTarget, Process};

use crate::{tree, ProbeError};

/// Which end of a connection the port is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Peer {
    /// Connections from the tree to this remote port: a client's pool to a service.
    Remote(u16),
    /// Connections to the tree on this local port: the clients of a server listening on it.
    Local(u16),
}

impl Peer {
    fn matches(self, s: &Socket) -> bool {
        match self {
            Peer::Remote(port) => s.remote_port == port,
            Peer::Local(port) => s.local_port == port,
        }
    }
}

/// One TCP socket as the kernel's table lists it: what counting needs of a `tcp` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Socket {
    /// The inode that the owner's `fd` links name (`socket:[inode]`).
    pub inode: u64,
    /// Its local port.
    pub local_port: u16,
    /// Its remote port (0 for a listener).
    pub remote_port: u16,
    /// Its state, as far as counting needs it.
    pub state: State,
    /// Bytes sent and not yet acknowledged.
    pub tx_queue: u32,
    /// Bytes received and not yet read by the owner.
    pub rx_queue: u32,
}

/// The TCP states that counting tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// ESTABLISHED.
    Established,
    /// CLOSE_WAIT: the peer closed its end and the owner has not closed its own yet.
    ClosedByPeer,
    /// LISTEN.
    Listen,
    /// Any other (LISTEN, SYN_SENT, FIN_WAIT, ...).
    Other,
}

/// One reading: connections established for a [`Peer`], and how many of them were busy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Connections {
    /// ESTABLISHED connections of the tree for the peer.
    pub established: u32,
    /// Of those, the ones with bytes unacknowledged or unread at the instant of the reading
    /// (`tx_queue` or `rx_queue` non-zero): an approximation of "in use", since a pool
    /// connection waiting for an answer already acknowledged has both queues empty.
    pub busy: u32,
    /// Connections for the peer that the other end has closed and the tree still holds
    /// (`CLOSE_WAIT`). For a server (`Peer::Local`): clients that left while it was still
    /// working on their requests, or that it has not noticed leaving yet.
    pub closed_by_peer: u32,
}

/// Counts the sockets of `owned` (inodes) for `peer`: established, and closed by the peer.
pub fn count(sockets: &[Socket], owned: &HashSet<u64>, peer: Peer) -> Connections {
    let mut seen = HashSet::new();
    let mut c = Connections::default();
    for s in sockets {
        if !(peer.matches(s) && owned.contains(&s.inode) && seen.insert(s.inode)) {
            continue;
        }
        match s.state {
            State::Established => {
                c.established += 1;
                if s.tx_queue > 0 || s.rx_queue > 0 {
                    c.busy += 1;
                }
            }
            State::ClosedByPeer => c.closed_by_peer += 1,
            State::Listen | State::Other => {}
        }
    }
    c
}

/// The socket inodes a process holds open.
/// Whether its fd directory could be read (another user's process cannot be, unless root).
fn socket_inodes(p: &Process, into: &mut HashSet<u64>) -> bool {
    let Ok(fds) = p.fd() else { return false };
    for fd in fds.flatten() {
        if let FDTarget::Socket(inode) = fd.target {
            into.insert(inode);
        }
    }
    true
}

/// The TCP table (IPv4 and IPv6) as seen from `p`'s network namespace.
fn tcp_table(p: &Process) -> Result<Vec<Socket>, ProbeError> {
    let mut out = Vec::new();
    let v4 = p.tcp().map_err(|e| ProbeError::Proc(e.to_string()))?;
    // A kernel without IPv6 has no tcp6.
    let v6 = p.tcp6().unwrap_or_default();
    for e in v4.into_iter().chain(v6) {
        out.push(Socket {
            inode: e.inode,
            local_port: e.local_address.port(),
            remote_port: e.remote_address.port(),
            state: match e.state {
                TcpState::Established => State::Established,
                TcpState::CloseWait => State::ClosedByPeer,
                TcpState::Listen => State::Listen,
                _ => State::Other,
            },
            tx_queue: e.tx_queue,
            rx_queue: e.rx_queue,
        });
    }
    Ok(out)
}

/// The sockets of some processes: the inodes they hold, the TCP tables of their network
/// namespaces, and a live process whose fds could not be read (another user's, without
/// root), if any.
struct Held {
    owned: HashSet<u64>,
    sockets: Vec<Socket>,
    unreadable: Option<i32>,
}

impl Held {
    fn read(pids: &[i32]) -> Result<Held, ProbeError> {
        let mut held = Held {
            owned: HashSet::new(),
            sockets: Vec::new(),
            unreadable: None,
        };
        let mut namespaces = BTreeSet::new();
        for &pid in pids {
            let Ok(p) = Process::new(pid) else { continue };
            if !socket_inodes(&p, &mut held.owned) && p.is_alive() {
                held.unreadable = Some(pid);
            }
            // One table per network namespace, read through its first process.
            let ns = std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .map(|m| m.ino())
                .unwrap_or(0);
            if namespaces.insert(ns) {
                match tcp_table(&p) {
                    Ok(t) => held.sockets.extend(t),
                    // It exited between the listing and the read.
                    Err(_) if !p.is_alive() => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(held)
    }
}

/// Whether one of `pids` holds a socket listening on local `port`: that a port which
/// accepts connections is the target's own, not another process's that took it between
/// the choice of the port and the target's bind. Fails, rather than say no, when a live
/// process's sockets could not be read (another user's, without root).
pub fn listens(pids: &[i32], port: u16) -> Result<bool, ProbeError> {
    let held = Held::read(pids)?;
    let found = held
        .sockets
        .iter()
        .any(|s| s.state == State::Listen && s.local_port == port && held.owned.contains(&s.inode));
    match held.unreadable {
        Some(pid) if !found => Err(ProbeError::Proc(format!(
            "the sockets of process {pid} cannot be read"
        ))),
        _ => Ok(found),
    }
}

/// The connections of the tree rooted at `root` established for `peer`, now.
pub fn connections(root: i32, peer: Peer) -> Result<Connections, ProbeError> {
    let held = Held::read(&tree(root)?)?;
    Ok(count(&held.sockets, &held.owned, peer))
}

/// Readings of one peer through a window: min, mean and max of the established and busy
/// counts. Memory is constant: it keeps sums, not samples.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ConnectionSeries {
    /// Readings taken.
    pub samples: u32,
    /// The fewest established connections in a reading.
    pub min: u32,
    /// The most established connections in a reading.
    pub max: u32,
    /// The sum of established connections over the readings.
    pub sum: u64,
    /// The most busy connections in a reading.
    pub busy_max: u32,
    /// The sum of busy connections over the readings.
    pub busy_sum: u64,
}

impl ConnectionSeries {
    /// Adds a reading.
    pub fn push(&mut self, c: Connections) {
        self.min = if self.samples == 0 {
            c.established
        } else {
            self.min.min(c.established)
        };
        self.max = self.max.max(c.established);
        self.sum += u64::from(c.established);
        self.busy_max = self.busy_max.max(c.busy);
        self.busy_sum += u64::from(c.busy);
        self.samples += 1;
    }

    /// The mean established connections; `None` before any reading.
    pub fn mean(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sum as f64 / f64::from(self.samples))
    }

    /// The mean busy connections; `None` before any reading.
    pub fn busy_mean(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.busy_sum as f64 / f64::from(self.samples))
    }

    /// The share of established connection-readings that were busy (0 to 1): "2 of 2
    /// connections busy 97% of the level" is `max` 2 and this 0.97.
    pub fn busy_fraction(&self) -> Option<f64> {
        (self.sum > 0).then(|| self.busy_sum as f64 / self.sum as f64)
    }
}

#[cfg(test)]
mod tests;
