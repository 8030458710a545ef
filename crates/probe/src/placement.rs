//! Where a load generator and its target's server may run: the CPUs of this process
//! ([`own_cpus`]) and those of the local process listening on the target's port
//! ([`server`]), found through `/proc/net/tcp{,6}` and the `socket:[inode]` links of every
//! process's fd directory. What the load engine's idle rule (`load::idle`) decides with.

use std::collections::{BTreeSet, HashSet};
use std::net::{IpAddr, SocketAddr, UdpSocket};

use nix::sched::{sched_getaffinity, CpuSet};
use nix::unistd::Pid;
use procfs::net::TcpState;
use procfs::process::{all_processes, FDTarget, Process};

/// A set of CPU numbers, kept sorted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuList(BTreeSet<usize>);

impl CpuList {
    /// The set of `cpus`.
    pub fn of(cpus: impl IntoIterator<Item = usize>) -> CpuList {
        CpuList(cpus.into_iter().collect())
    }

    /// The set of `Cpus_allowed_list`'s ranges.
    pub fn of_ranges(ranges: &[(u32, u32)]) -> CpuList {
        CpuList::of(ranges.iter().flat_map(|&(a, b)| a as usize..=b as usize))
    }

    /// The CPUs in both.
    pub fn intersection(&self, other: &CpuList) -> CpuList {
        CpuList(self.0.intersection(&other.0).copied().collect())
    }

    /// Adds `other`'s CPUs.
    pub fn extend(&mut self, other: &CpuList) {
        self.0.extend(other.0.iter().copied());
    }

    /// The number of CPUs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for no CPU.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The CPUs, in order.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }

    /// `CPU 0`, `CPUs 0-3`, `CPUs 0,2,4-5`.
    pub fn cpus_named(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut run: Option<(usize, usize)> = None;
        let mut flush = |run: (usize, usize)| {
            parts.push(if run.0 == run.1 {
                run.0.to_string()
            } else {
                format!("{}-{}", run.0, run.1)
            })
        };
        for c in self.iter() {
            run = match run {
                Some((a, b)) if b + 1 == c => Some((a, c)),
                Some(r) => {
                    flush(r);
                    Some((c, c))
                }
                None => Some((c, c)),
            };
        }
        if let Some(r) = run {
            flush(r);
        }
        let noun = if self.len() == 1 { "CPU" } else { "CPUs" };
        format!("{noun} {}", parts.join(","))
    }
}

/// Where the target's server runs, as far as this host can tell.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Server {
    /// Found: the CPUs its processes' threads may run on.
    Found {
        /// The union of their allowed CPUs.
        cpus: CpuList,
    },
    /// The target's address is not one of this host's.
    NotLocal,
    /// No process whose sockets could be read listens on the port.
    NotFound {
        /// The target's port.
        port: u16,
    },
    /// Not looked for.
    #[default]
    Unknown,
}

/// The CPUs the calling thread may run on (`sched_getaffinity`): the ones the threads it
/// starts inherit.
pub fn own_cpus() -> CpuList {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => CpuList::of((0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false))),
        Err(_) => CpuList::of(
            0..std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        ),
    }
}

/// True when `ip` is this host's: a loopback or unspecified address, or one of its
/// interfaces' (`getifaddrs`). Not "one a socket can be bound to": with
/// `net.ipv4.ip_nonlocal_bind=1` any address can be. Where the interfaces cannot be
/// listed, a bind decides.
pub fn is_local(ip: IpAddr) -> bool {
    if ip.is_loopback() || ip.is_unspecified() {
        return true;
    }
    match nix::ifaddrs::getifaddrs() {
        Ok(ifs) => ifs
            .filter_map(|i| i.address)
            .any(|a| interface_ip(&a) == Some(ip)),
        Err(_) => UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok(),
    }
}

/// The IP address of an interface's address, when it is one.
fn interface_ip(a: &nix::sys::socket::SockaddrStorage) -> Option<IpAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(IpAddr::V4(v4.ip()));
    }
    a.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
}

/// Where the server of `addr` runs: the processes holding a socket that listens on its
/// port (on its address or on every address), and the CPUs their threads may use.
pub fn server(addr: SocketAddr) -> Server {
    if !is_local(addr.ip()) {
        return Server::NotLocal;
    }
    let not_found = Server::NotFound { port: addr.port() };
    let listening = listeners(addr);
    if listening.is_empty() {
        return not_found;
    }
    let Ok(procs) = all_processes() else {
        return not_found;
    };
    let mut cpus = CpuList::default();
    let mut found = false;
    for p in procs.flatten() {
        let Ok(fds) = p.fd() else { continue };
        let holds = fds.flatten().any(|fd| match fd.target {
            FDTarget::Socket(inode) => listening.contains(&inode),
            _ => false,
        });
        if holds {
            found = true;
            cpus.extend(&process_cpus(&p));
        }
    }
    if found && !cpus.is_empty() {
        Server::Found { cpus }
    } else {
        not_found
    }
}

/// The inodes of the sockets listening on `addr`'s port, on its address or on every one.
fn listeners(addr: SocketAddr) -> HashSet<u64> {
    let v4 = procfs::net::tcp().unwrap_or_default();
    let v6 = procfs::net::tcp6().unwrap_or_default();
    v4.into_iter()
        .chain(v6)
        .filter(|e| {
            let local = e.local_address;
            e.state == TcpState::Listen
                && local.port() == addr.port()
                && (local.ip().is_unspecified() || same_ip(local.ip(), addr.ip()))
        })
        .map(|e| e.inode)
        .collect()
}

/// Equal, counting an IPv4-mapped IPv6 address as its IPv4 one.
fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    let canon = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    canon(a) == canon(b)
}

/// The CPUs any thread of `p` may run on (each thread's `Cpus_allowed_list`).
fn process_cpus(p: &Process) -> CpuList {
    let mut cpus = CpuList::default();
    if let Ok(tasks) = p.tasks() {
        for t in tasks.flatten() {
            if let Some(list) = t.status().ok().and_then(|s| s.cpus_allowed_list) {
                cpus.extend(&CpuList::of_ranges(&list));
            }
        }
    }
    if cpus.is_empty() {
        if let Some(list) = p.status().ok().and_then(|s| s.cpus_allowed_list) {
            cpus = CpuList::of_ranges(&list);
        }
    }
    cpus
}

#[cfg(test)]
mod tests;
