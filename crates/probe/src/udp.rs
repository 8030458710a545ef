//! The kernel's UDP counters: `Udp` in `/proc/net/snmp` (IPv4) and the `Udp6` lines of
//! `/proc/net/snmp6` (IPv6), added together.
//!
//! QUIC runs on UDP, where nothing retransmits a datagram the kernel dropped but the QUIC
//! stack itself, after a loss timeout: a socket buffer too small for a burst shows as
//! `RcvbufErrors` (the receive queue was full) or `SndbufErrors`, both also counted in
//! `InErrors`. Like the TCP counters, they are the network namespace's, not one process's.
//! `/proc/net/snmp6` is absent when IPv6 is disabled: its counters then read as 0.

use crate::netstat::counter_pairs;
use crate::ProbeError;

/// A reading of the UDP counters (IPv4 and IPv6 together), or the difference of two.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpCounters {
    /// Datagrams read by sockets (the kernel counts one when it is read, not when queued).
    pub in_datagrams: u64,
    /// Datagrams sent.
    pub out_datagrams: u64,
    /// Datagrams received and dropped (a full receive buffer, a bad checksum, memory).
    pub in_errors: u64,
    /// Datagrams dropped because a socket's receive buffer was full (in `in_errors` too).
    pub rcvbuf_errors: u64,
    /// Datagrams not sent because a socket's send buffer was full.
    pub sndbuf_errors: u64,
}

impl UdpCounters {
    /// Each counter as (the kernel's IPv4 name, value), in field order.
    pub fn named(&self) -> [(&'static str, u64); 5] {
        [
            ("InDatagrams", self.in_datagrams),
            ("OutDatagrams", self.out_datagrams),
            ("InErrors", self.in_errors),
            ("RcvbufErrors", self.rcvbuf_errors),
            ("SndbufErrors", self.sndbuf_errors),
        ]
    }

    /// What each counter grew by since `earlier` (0 where it went back).
    pub fn since(&self, earlier: &UdpCounters) -> UdpCounters {
        UdpCounters {
            in_datagrams: self.in_datagrams.saturating_sub(earlier.in_datagrams),
            out_datagrams: self.out_datagrams.saturating_sub(earlier.out_datagrams),
            in_errors: self.in_errors.saturating_sub(earlier.in_errors),
            rcvbuf_errors: self.rcvbuf_errors.saturating_sub(earlier.rcvbuf_errors),
            sndbuf_errors: self.sndbuf_errors.saturating_sub(earlier.sndbuf_errors),
        }
    }
}

/// The counters from the texts of `/proc/net/snmp` (its `Udp:` pair of lines; `UdpLite:`
/// is another protocol) and `/proc/net/snmp6` (one `Udp6Name value` per line). A counter
/// a text lacks reads as 0; a malformed line is skipped.
pub fn parse_udp_counters(snmp: &str, snmp6: &str) -> UdpCounters {
    let v4 = counter_pairs(snmp);
    let v6: Vec<(&str, u64)> = snmp6
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?.strip_prefix("Udp6")?;
            let value = f.next()?.parse().ok()?;
            f.next().is_none().then_some((name, value))
        })
        .collect();
    let get = |name: &str| {
        let a = v4
            .iter()
            .find(|(s, n, _)| *s == "Udp" && *n == name)
            .map_or(0, |p| p.2);
        let b = v6.iter().find(|(n, _)| *n == name).map_or(0, |p| p.1);
        a.saturating_add(b)
    };
    UdpCounters {
        in_datagrams: get("InDatagrams"),
        out_datagrams: get("OutDatagrams"),
        in_errors: get("InErrors"),
        rcvbuf_errors: get("RcvbufErrors"),
        sndbuf_errors: get("SndbufErrors"),
    }
}

/// Reads the UDP counters of this process's network namespace.
pub fn udp_counters() -> Result<UdpCounters, ProbeError> {
    let snmp = std::fs::read_to_string("/proc/net/snmp")
        .map_err(|e| ProbeError::Proc(format!("/proc/net/snmp: {e}")))?;
    Ok(udp_counters_from(&snmp))
}

/// The UDP counters from `snmp`'s text, already read, and `/proc/net/snmp6`.
pub(crate) fn udp_counters_from(snmp: &str) -> UdpCounters {
    // Absent with IPv6 disabled: no IPv6 datagrams to count.
    let snmp6 = std::fs::read_to_string("/proc/net/snmp6").unwrap_or_default();
    parse_udp_counters(snmp, &snmp6)
}

#[cfg(test)]
mod tests;
