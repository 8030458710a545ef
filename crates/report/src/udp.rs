//! The kernel's UDP counters over a run, and the rule that reads them: datagrams dropped
//! because a socket buffer was full.
//!
//! Over TCP a segment the kernel drops is sent again by the kernel within a round trip.
//! QUIC runs on UDP: a datagram dropped for a full receive buffer is lost, and the QUIC
//! stack finds out only by its loss detection, a packet threshold or a timeout later, then
//! halves its congestion window. On loopback nothing else drops a datagram, so a drop there
//! is a buffer too small for the bursts a run sends: the client's own socket, or the
//! server's. The counters are the network namespace's (`/proc/net/snmp` and `snmp6`, read
//! before and after the run by the probe), so other UDP traffic adds to them; the rule
//! speaks only for a run that itself spoke UDP.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much the kernel's UDP counters grew over a window, by the kernel's names (IPv4's
/// `Udp` and IPv6's `Udp6` added together).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UdpCounts {
    /// Datagrams read by sockets.
    #[serde(rename = "InDatagrams")]
    pub in_datagrams: u64,
    /// Datagrams sent.
    #[serde(rename = "OutDatagrams")]
    pub out_datagrams: u64,
    /// Datagrams received and dropped, for any reason (RcvbufErrors among them).
    #[serde(rename = "InErrors")]
    pub in_errors: u64,
    /// Datagrams dropped because a socket's receive buffer was full.
    #[serde(rename = "RcvbufErrors")]
    pub rcvbuf_errors: u64,
    /// Datagrams not sent because a socket's send buffer was full.
    #[serde(rename = "SndbufErrors")]
    pub sndbuf_errors: u64,
}

impl UdpCounts {
    /// Datagrams lost to the kernel: those dropped on receipt (InErrors, which holds
    /// RcvbufErrors) and those refused on sending (SndbufErrors).
    pub fn dropped(&self) -> u64 {
        self.in_errors.saturating_add(self.sndbuf_errors)
    }
}

/// The UDP counters over a run, and the warning their rule gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UdpReport {
    /// How much each counter grew over the run: system-wide for the network namespace
    /// foxbench ran in, not only its own sockets.
    pub deltas: UdpCounts,
    /// One line when a run over UDP (HTTP/3) saw datagrams dropped, with the sysctl that
    /// fixes it; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// The socket buffer limits the warning names, as read from the machine and the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Buffers {
    /// `net.core.rmem_max`: the most a socket's SO_RCVBUF may be set to, bytes.
    pub rmem_max: Option<u64>,
    /// `net.core.wmem_max`: the most a socket's SO_SNDBUF may be set to, bytes.
    pub wmem_max: Option<u64>,
    /// The receive buffer foxbench asked for on each of its UDP sockets, bytes.
    pub asked: Option<u64>,
}

/// The report of a window: its counters, and a warning when `udp_run` (the run itself
/// spoke UDP) and the kernel dropped datagrams.
pub fn report(deltas: UdpCounts, udp_run: bool, buffers: &Buffers) -> UdpReport {
    UdpReport {
        deltas,
        warning: (udp_run && deltas.dropped() > 0).then(|| warning(&deltas, buffers)),
    }
}

fn warning(d: &UdpCounts, b: &Buffers) -> String {
    let shown = |v: Option<u64>| v.map_or_else(|| "unknown".to_string(), |v| v.to_string());
    // What to set: what foxbench asked for when it was more than the cap, else a cap that
    // holds a few thousand full-size datagrams (8 MiB, as quic-go and quiche recommend).
    const RECOMMENDED: u64 = 8 << 20;
    let want = b.asked.unwrap_or(RECOMMENDED).max(RECOMMENDED);
    let capped = match (b.asked, b.rmem_max) {
        (Some(asked), Some(max)) if asked > max => format!(
            "foxbench asked for a {asked}-byte receive buffer per socket and net.core.rmem_max ({max}) capped it"
        ),
        (Some(asked), _) => format!(
            "foxbench asked for a {asked}-byte receive buffer per socket (net.core.rmem_max {}); the server's sockets may be the small ones",
            shown(b.rmem_max)
        ),
        (None, _) => format!(
            "net.core.rmem_max is {}, net.core.wmem_max {}",
            shown(b.rmem_max),
            shown(b.wmem_max)
        ),
    };
    format!(
        "the kernel dropped {} UDP datagrams during the run (this network namespace's Udp RcvbufErrors {}, SndbufErrors {}, InErrors {}): a socket buffer was full, and QUIC pays for each drop with a loss detection and a smaller congestion window; {capped}: sysctl -w net.core.rmem_max={want} net.core.wmem_max={want}",
        d.dropped(),
        d.rcvbuf_errors,
        d.sndbuf_errors,
        d.in_errors,
    )
}

#[cfg(test)]
mod tests;
