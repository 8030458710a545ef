//! The kernel's TCP counters: `/proc/net/netstat` (TcpExt) and `/proc/net/snmp` (Tcp).
//!
//! Both files hold pairs of lines: `Prefix: Name1 Name2 ...` then `Prefix: 12 0 ...`. The
//! counters are read by name, never by position: a new kernel adds and reorders fields. A
//! counter the kernel does not have reads as 0.
//!
//! The counters are per network namespace (the reader's), not per process: every socket of
//! the namespace moves them, so a window's delta holds whatever else ran beside it.

use crate::ProbeError;

macro_rules! tcp_counters {
    ($( $(#[$doc:meta])* $field:ident = $section:literal $name:literal, )*) => {
        /// A reading of the TCP counters the diagnosis uses, or the difference of two.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct TcpCounters {
            $( $(#[$doc])* pub $field: u64, )*
        }

        impl TcpCounters {
            /// Each counter's section and kernel name, in field order.
            pub const NAMES: &'static [(&'static str, &'static str)] = &[$(($section, $name)),*];

            /// Each counter as (kernel name, value), in field order.
            pub fn named(&self) -> Vec<(&'static str, u64)> {
                vec![$(($name, self.$field)),*]
            }

            /// The counters from the name/value pairs of `netstat` and `snmp`.
            fn from_pairs(pairs: &[(&str, &str, u64)]) -> Self {
                let get = |section: &str, name: &str| {
                    pairs
                        .iter()
                        .find(|(s, n, _)| *s == section && *n == name)
                        .map_or(0, |p| p.2)
                };
                TcpCounters { $( $field: get($section, $name), )* }
            }

            /// What each counter grew by since `earlier` (0 where it went back: a counter
            /// is only reset with its namespace).
            pub fn since(&self, earlier: &TcpCounters) -> TcpCounters {
                TcpCounters { $( $field: self.$field.saturating_sub(earlier.$field), )* }
            }
        }
    };
}

tcp_counters! {
    /// Delayed ACKs sent (the ACK timer fired before data to piggyback it on).
    delayed_acks = "TcpExt" "DelayedACKs",
    /// Delayed ACKs further delayed because the socket was locked.
    delayed_ack_locked = "TcpExt" "DelayedACKLocked",
    /// Delayed ACKs lost (quick ACK mode entered).
    delayed_ack_lost = "TcpExt" "DelayedACKLost",
    /// Connections dropped because a listen socket's accept queue was full.
    listen_overflows = "TcpExt" "ListenOverflows",
    /// Connections dropped at a listen socket, for any reason (overflows included).
    listen_drops = "TcpExt" "ListenDrops",
    /// Retransmission timeouts.
    tcp_timeouts = "TcpExt" "TCPTimeouts",
    /// Retransmitted segments lost again.
    tcp_lost_retransmit = "TcpExt" "TCPLostRetransmit",
    /// SYN and SYN-ACK retransmissions.
    tcp_syn_retrans = "TcpExt" "TCPSynRetrans",
    /// Tail loss probes sent: counted in RetransSegs, and spurious on a busy loopback (the
    /// peer was slow to ACK, not a packet lost).
    tcp_loss_probes = "TcpExt" "TCPLossProbes",
    /// SYN cookies sent (the SYN queue overflowed).
    syncookies_sent = "TcpExt" "SyncookiesSent",
    /// Times TCP entered memory pressure (`net.ipv4.tcp_mem`).
    tcp_memory_pressures = "TcpExt" "TCPMemoryPressures",
    /// Packets pruned from a receive queue for lack of socket memory.
    tcp_rcv_pruned = "TcpExt" "RcvPruned",
    /// Connections aborted for lack of memory.
    tcp_abort_on_memory = "TcpExt" "TCPAbortOnMemory",
    /// Packets dropped because a socket's backlog was full.
    tcp_backlog_drop = "TcpExt" "TCPBacklogDrop",
    /// Segments retransmitted.
    retrans_segs = "Tcp" "RetransSegs",
    /// Connection attempts that failed.
    attempt_fails = "Tcp" "AttemptFails",
    /// Established connections reset.
    estab_resets = "Tcp" "EstabResets",
}

/// Every `(section, name, value)` of a `/proc/net/netstat` or `/proc/net/snmp` text.
///
/// A header line `Prefix: names...` is paired with the line right after it only when that
/// line has the same prefix and as many fields; otherwise the header is dropped and the next
/// line is read as a header in turn, so a stray line costs at most itself (or the one pair it
/// splits), never the section after it. A value that is not a whole number (Tcp's `MaxConn`
/// is `-1`) is skipped, never shifted onto another name.
pub fn counter_pairs(text: &str) -> Vec<(&str, &str, u64)> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(header) = lines.next() {
        let Some((section, names)) = header.split_once(':') else {
            continue;
        };
        let Some((vsection, values)) = lines.peek().and_then(|l| l.split_once(':')) else {
            continue;
        };
        let names: Vec<&str> = names.split_whitespace().collect();
        let values: Vec<&str> = values.split_whitespace().collect();
        if vsection != section || names.len() != values.len() {
            continue;
        }
        lines.next();
        for (name, value) in names.into_iter().zip(values) {
            if let Ok(v) = value.parse::<u64>() {
                out.push((section, name, v));
            }
        }
    }
    out
}

/// The counters from the texts of `/proc/net/netstat` and `/proc/net/snmp`.
pub fn parse_tcp_counters(netstat: &str, snmp: &str) -> TcpCounters {
    let mut pairs = counter_pairs(netstat);
    pairs.extend(counter_pairs(snmp));
    TcpCounters::from_pairs(&pairs)
}

/// Reads the TCP and UDP counters of this process's network namespace, `/proc/net/snmp`
/// (which holds both) read once; `None` for what could not be read.
pub fn net_counters() -> (Option<TcpCounters>, Option<crate::UdpCounters>) {
    let Ok(snmp) = std::fs::read_to_string("/proc/net/snmp") else {
        return (None, None);
    };
    let tcp = std::fs::read_to_string("/proc/net/netstat")
        .ok()
        .map(|netstat| parse_tcp_counters(&netstat, &snmp));
    (tcp, Some(crate::udp::udp_counters_from(&snmp)))
}

/// Reads the TCP counters of this process's network namespace.
pub fn tcp_counters() -> Result<TcpCounters, ProbeError> {
    let read = |path: &str| {
        std::fs::read_to_string(path).map_err(|e| ProbeError::Proc(format!("{path}: {e}")))
    };
    Ok(parse_tcp_counters(
        &read("/proc/net/netstat")?,
        &read("/proc/net/snmp")?,
    ))
}

#[cfg(test)]
mod tests;
