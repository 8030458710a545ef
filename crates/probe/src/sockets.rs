//! Each TCP socket of this network namespace with the kernel's own figures for it
//! (`TCP_INFO`), read through sock_diag netlink (inet_diag), as `ss -ti` reads them: its
//! delayed-ACK timeout, round-trip times, retransmits and segments sent.
//!
//! Unlike the namespace's counters ([`crate::tcp_counters`]), these belong to one socket, so
//! a window's figures can be told apart by link: foxbench's connections to a target (on the
//! target's port) apart from the target's own connections to its services (on theirs). A
//! [`LinkSeries`] follows one link's sockets through a window in constant memory.
//!
//! The kernel's `tcp_info` grows at its end with each release: the fields read here are
//! all in Linux 5.5 and later. A socket whose record is shorter (an older kernel) is left
//! out, so such a kernel reads as no sockets, never as wrong figures.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, SocketAddr};

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
use netlink_packet_sock_diag::inet::{
    nlas::Nla, ExtensionFlags, InetRequest, SocketId, StateFlags,
};
use netlink_packet_sock_diag::SockDiagMessage;
use netlink_sys::{protocols::NETLINK_SOCK_DIAG, Socket, SocketAddr as NetlinkAddr};

use crate::ProbeError;

/// Linux's shortest delayed-ACK timeout, `TCP_DELACK_MIN` (`HZ / 25`), µs: the floor of
/// the bound a socket's round-trip time puts on its timeout (see [`TcpInfo::delayed_ack_us`]).
pub const TCP_DELACK_MIN_US: u32 = 40_000;
/// Linux's longest delayed-ACK timeout by default, `TCP_DELACK_MAX` (`HZ / 5`), µs.
pub const TCP_DELACK_MAX_US: u32 = 200_000;

/// What the kernel reports of one socket, of its `tcp_info`: the fields the diagnosis reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// The delayed-ACK timeout (`tcpi_ato`, the kernel's `icsk_ack.ato`), µs: it adapts to
    /// the gaps between the segments the socket receives.
    pub ato_us: u32,
    /// The smoothed round-trip time (`tcpi_rtt`), µs. A sample runs from a segment's send
    /// to its ACK, so a peer that holds its ACKs back inflates it.
    pub rtt_us: u32,
    /// The lowest round-trip time seen (`tcpi_min_rtt`), µs: the path's own.
    pub min_rtt_us: u32,
    /// Segments retransmitted over the socket's life (`tcpi_total_retrans`).
    pub total_retrans: u32,
    /// Data segments sent over the socket's life (`tcpi_data_segs_out`).
    pub data_segs_out: u32,
}

impl TcpInfo {
    /// How long the kernel holds this socket's next delayed ACK: its `ato`, bounded as
    /// `tcp_send_delayed_ack()` bounds it above `TCP_DELACK_MIN`, by the round-trip time
    /// (never under `TCP_DELACK_MIN`) and by `TCP_DELACK_MAX`. On loopback, where the
    /// round trip is microseconds, that is 40 ms whatever the `ato`; over a path (or to a
    /// peer) whose round trip is longer, up to the `ato`.
    pub fn delayed_ack_us(&self) -> u32 {
        if self.ato_us <= TCP_DELACK_MIN_US {
            return self.ato_us;
        }
        self.ato_us
            .min(self.rtt_us.max(TCP_DELACK_MIN_US))
            .min(TCP_DELACK_MAX_US)
    }

    /// How much the smoothed round-trip time exceeds the path's own, µs: the time this
    /// socket's data waited for its ACKs beyond the path (a peer's delayed ACKs).
    pub fn held_ack_us(&self) -> u32 {
        self.rtt_us.saturating_sub(self.min_rtt_us)
    }
}

/// One TCP socket of the namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSocket {
    /// Its local address.
    pub local: SocketAddr,
    /// Its peer's address.
    pub remote: SocketAddr,
    /// The kernel's identifier of the socket (`sock_gen_cookie`): unique while it lives.
    pub cookie: u64,
    /// The kernel's figures for it.
    pub info: TcpInfo,
}

/// The states whose sockets carry a `tcp_info`: all but listeners, request and TIME_WAIT
/// minisockets (which the kernel reports without one).
fn states() -> StateFlags {
    StateFlags::ESTABLISHED
        | StateFlags::SYN_SENT
        | StateFlags::FIN_WAIT1
        | StateFlags::FIN_WAIT2
        | StateFlags::CLOSE_WAIT
        | StateFlags::LAST_ACK
        | StateFlags::CLOSING
}

/// Every connected TCP socket of this process's network namespace, IPv4 and IPv6, with its
/// `tcp_info`.
pub fn tcp_sockets() -> Result<Vec<TcpSocket>, ProbeError> {
    let mut out = Vec::new();
    for family in [AF_INET, AF_INET6] {
        dump(family, &mut out)?;
    }
    Ok(out)
}

fn netlink_error(what: &str, e: impl std::fmt::Display) -> ProbeError {
    ProbeError::Proc(format!("sock_diag netlink: {what}: {e}"))
}

/// One inet_diag dump of `family`'s TCP sockets into `out`.
fn dump(family: u8, out: &mut Vec<TcpSocket>) -> Result<(), ProbeError> {
    let mut socket = Socket::new(NETLINK_SOCK_DIAG).map_err(|e| netlink_error("socket", e))?;
    socket.bind_auto().map_err(|e| netlink_error("bind", e))?;
    socket
        .connect(&NetlinkAddr::new(0, 0))
        .map_err(|e| netlink_error("connect", e))?;
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_DUMP;
    let mut request = NetlinkMessage::new(
        header,
        SockDiagMessage::InetRequest(InetRequest {
            family,
            protocol: IPPROTO_TCP,
            extensions: ExtensionFlags::INFO,
            states: states(),
            socket_id: if family == AF_INET {
                SocketId::new_v4()
            } else {
                SocketId::new_v6()
            },
        })
        .into(),
    );
    request.finalize();
    let mut buf = vec![0; request.buffer_len()];
    request.serialize(&mut buf);
    socket.send(&buf, 0).map_err(|e| netlink_error("send", e))?;
    loop {
        let (bytes, _) = socket
            .recv_from_full()
            .map_err(|e| netlink_error("recv", e))?;
        if bytes.is_empty() {
            return Ok(());
        }
        let mut offset = 0;
        while offset < bytes.len() {
            let Ok(message) = NetlinkMessage::<SockDiagMessage>::deserialize(&bytes[offset..])
            else {
                // A record this crate cannot read (a kernel's tcp_info shorter than it
                // expects): its length is still in the header, so skip to the next.
                match record_len(&bytes[offset..]) {
                    Some(n) => {
                        offset += n;
                        continue;
                    }
                    None => return Ok(()),
                }
            };
            let len = message.header.length as usize;
            match message.payload {
                NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(r)) => {
                    let info = r.nlas.iter().find_map(|n| match n {
                        Nla::TcpInfo(i) => Some(TcpInfo {
                            ato_us: i.ato,
                            rtt_us: i.rtt,
                            min_rtt_us: i.min_rtt,
                            total_retrans: i.total_retrans,
                            data_segs_out: i.data_segs_out,
                        }),
                        _ => None,
                    });
                    if let Some(info) = info {
                        let id = &r.header.socket_id;
                        out.push(TcpSocket {
                            local: SocketAddr::new(id.source_address, id.source_port),
                            remote: SocketAddr::new(id.destination_address, id.destination_port),
                            cookie: u64::from_ne_bytes(id.cookie),
                            info,
                        });
                    }
                }
                NetlinkPayload::Done(_) => return Ok(()),
                NetlinkPayload::Error(e) => return Err(netlink_error("dump", e)),
                _ => {}
            }
            if len == 0 {
                return Ok(());
            }
            offset += len;
        }
    }
}

/// The length of the netlink record at the start of `bytes` (its header's first field,
/// native-endian), when it is one.
fn record_len(bytes: &[u8]) -> Option<usize> {
    let n = u32::from_ne_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    (n >= 16 && n <= bytes.len()).then_some(n)
}

/// Values counted by 100 µs, for a median in constant memory (bounded by the distinct
/// values, not the readings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally(BTreeMap<u32, u64>);

impl Tally {
    const STEP_US: u32 = 100;

    /// Adds a value, µs.
    pub fn push(&mut self, us: u32) {
        *self.0.entry(us / Self::STEP_US).or_default() += 1;
    }

    /// The number of values.
    pub fn len(&self) -> u64 {
        self.0.values().sum()
    }

    /// True when no value was added.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The median, µs (to 100 µs); `None` when empty.
    pub fn median_us(&self) -> Option<u32> {
        let half = self.len().div_ceil(2);
        let mut seen = 0;
        for (&k, &n) in &self.0 {
            seen += n;
            if seen >= half {
                return Some(k * Self::STEP_US);
            }
        }
        None
    }

    /// The lowest value, µs (to 100 µs); `None` when empty.
    pub fn min_us(&self) -> Option<u32> {
        self.0.keys().next().map(|k| k * Self::STEP_US)
    }
}

/// A socket's lifetime counts at a reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    retrans: u64,
    segs: u64,
}

impl Counts {
    fn of(i: &TcpInfo) -> Counts {
        Counts {
            retrans: u64::from(i.total_retrans),
            segs: u64::from(i.data_segs_out),
        }
    }

    fn since(&self, base: &Counts) -> Counts {
        Counts {
            retrans: self.retrans.saturating_sub(base.retrans),
            segs: self.segs.saturating_sub(base.segs),
        }
    }
}

/// The sockets of one link through a window: those with the link's port at either end, at
/// each reading. The client ends (the port is their peer's) give the delayed-ACK figures:
/// the client's kernel delays the ACKs a server's segments wait for. The server ends (the
/// port is their own) give how long their data waited for ACKs beyond the round trip.
///
/// Counts run from the first reading for the sockets open then, from zero for sockets
/// opened later; a socket that closes keeps what it had at its last reading (what it did
/// after that, up to one reading interval, is not seen). Memory is the link's open sockets
/// and the distinct values read, never one entry per reading.
#[derive(Debug, Clone, Default)]
pub struct LinkSeries {
    port: u16,
    peer: Option<IpAddr>,
    started: bool,
    base: HashMap<u64, Counts>,
    last: HashMap<u64, Counts>,
    closed: Counts,
    /// The most of the link's sockets seen at one reading.
    pub sockets_max: u32,
    /// Readings taken.
    pub readings: u32,
    /// The client ends' delayed-ACK timeouts as the kernel bounds them
    /// ([`TcpInfo::delayed_ack_us`]), one per socket and reading.
    pub delayed_ack: Tally,
    /// The client ends' `ato`, one per socket and reading.
    pub ato: Tally,
    /// The client ends' lowest round-trip time, one per socket and reading.
    pub min_rtt: Tally,
    /// The server ends' smoothed round-trip time less their lowest
    /// ([`TcpInfo::held_ack_us`]), one per socket and reading.
    pub held_ack: Tally,
}

/// What a [`LinkSeries`] saw over its window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkWindow {
    /// Readings taken.
    pub readings: u32,
    /// The most of the link's sockets seen at one reading.
    pub sockets_max: u32,
    /// Segments its sockets retransmitted, both ends.
    pub retransmits: u64,
    /// Data segments its sockets sent, both ends.
    pub data_segments: u64,
    /// The median delayed-ACK timeout of its client ends, µs.
    pub delayed_ack_us: Option<u32>,
    /// The median `ato` of its client ends, µs.
    pub ato_us: Option<u32>,
    /// The median lowest round trip of its client ends, µs.
    pub min_rtt_us: Option<u32>,
    /// The median time its server ends' data waited for ACKs beyond the round trip, µs.
    pub held_ack_us: Option<u32>,
}

impl LinkSeries {
    /// A link: the sockets with `port` at either end.
    pub fn new(port: u16) -> Self {
        LinkSeries {
            port,
            ..LinkSeries::default()
        }
    }

    /// A link to a server at `addr` seen from its clients alone (a remote server's
    /// sockets are not in this namespace): the sockets connected to that address and port.
    pub fn to(addr: SocketAddr) -> Self {
        LinkSeries {
            port: addr.port(),
            peer: Some(addr.ip()),
            ..LinkSeries::default()
        }
    }

    /// The link's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether `s` is a client end (the link's port is its peer's) or a server end.
    fn ends(&self, s: &TcpSocket) -> (bool, bool) {
        match self.peer {
            Some(ip) => (
                s.remote.port() == self.port && same_ip(s.remote.ip(), ip),
                false,
            ),
            None => (s.remote.port() == self.port, s.local.port() == self.port),
        }
    }

    /// Adds a reading of the namespace's sockets ([`tcp_sockets`]).
    pub fn push(&mut self, sockets: &[TcpSocket]) {
        let mut now: HashMap<u64, Counts> = HashMap::new();
        for s in sockets {
            let (client, server) = self.ends(s);
            if !(client || server) {
                continue;
            }
            now.insert(s.cookie, Counts::of(&s.info));
            if client && s.info.ato_us > 0 {
                self.delayed_ack.push(s.info.delayed_ack_us());
                self.ato.push(s.info.ato_us);
                self.min_rtt.push(s.info.min_rtt_us);
            }
            if server && s.info.rtt_us > 0 {
                self.held_ack.push(s.info.held_ack_us());
            }
        }
        if !self.started {
            self.base.clone_from(&now);
            self.started = true;
        }
        for (cookie, c) in self.last.drain() {
            if !now.contains_key(&cookie) {
                let base = self.base.remove(&cookie).unwrap_or_default();
                let d = c.since(&base);
                self.closed.retrans += d.retrans;
                self.closed.segs += d.segs;
            }
        }
        self.sockets_max = self.sockets_max.max(now.len() as u32);
        self.readings += 1;
        self.last = now;
    }

    /// The window so far.
    pub fn window(&self) -> LinkWindow {
        let mut total = self.closed;
        for (cookie, c) in &self.last {
            let d = c.since(&self.base.get(cookie).copied().unwrap_or_default());
            total.retrans += d.retrans;
            total.segs += d.segs;
        }
        LinkWindow {
            readings: self.readings,
            sockets_max: self.sockets_max,
            retransmits: total.retrans,
            data_segments: total.segs,
            delayed_ack_us: self.delayed_ack.median_us(),
            ato_us: self.ato.median_us(),
            min_rtt_us: self.min_rtt.median_us(),
            held_ack_us: self.held_ack.median_us(),
        }
    }
}

/// Whether `a` is `ip`, an IPv4 address also when written as IPv4-mapped IPv6.
fn same_ip(a: IpAddr, ip: IpAddr) -> bool {
    a.to_canonical() == ip.to_canonical()
}

#[cfg(test)]
mod tests;
