//! One TCP link's own figures, from the kernel's per-socket `tcp_info` (sock_diag netlink,
//! as `ss -ti`): foxbench's connections to the server apart from a target's connections to
//! its services, which the namespace's counters add together.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The sockets of one link over a window (the probe reads them several times a second).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TcpLink {
    /// The service a target's connections lead to; absent for foxbench's own connections to
    /// the server (or the target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// The server's port: the link is every socket with it at either end.
    pub port: u16,
    /// Readings of the namespace's sockets taken.
    pub readings: u64,
    /// The most of the link's sockets seen at one reading (both ends when both are in the
    /// namespace).
    pub sockets_max: u64,
    /// Segments its sockets retransmitted (`tcpi_total_retrans`), both ends. A socket that
    /// closed counts up to its last reading.
    pub retransmits: u64,
    /// Data segments its sockets sent (`tcpi_data_segs_out`), both ends.
    pub data_segments: u64,
    /// How long the kernel holds a delayed ACK on the link's client ends, ms: their `ato`
    /// bounded as `tcp_send_delayed_ack()` bounds it (by the round trip, never under 40 ms,
    /// and by 200 ms); the median over sockets and readings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack_ms: Option<f64>,
    /// The client ends' `tcpi_ato`, ms, median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ato_ms: Option<f64>,
    /// The client ends' lowest round trip (`tcpi_min_rtt`: the path's own), ms, median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rtt_ms: Option<f64>,
    /// How long the server ends' data waited for its ACKs beyond the path's round trip
    /// (`tcpi_rtt` less `tcpi_min_rtt`), ms, median: a peer's delayed ACKs show here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_ack_ms: Option<f64>,
}

impl TcpLink {
    /// What the link is, for a detail: `foxbench→target` or `target→hello`.
    pub fn name(&self) -> String {
        match &self.service {
            None => "foxbench→server".into(),
            Some(s) => format!("target→{s}"),
        }
    }

    /// The links of several windows (repeats) added up, one per link in first-seen order:
    /// counts summed, most sockets the most, figures the median of the windows'.
    pub fn merge(windows: &[&[TcpLink]]) -> Vec<TcpLink> {
        let mut keys: Vec<(Option<String>, u16)> = Vec::new();
        for l in windows.iter().flat_map(|w| w.iter()) {
            let k = (l.service.clone(), l.port);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys.into_iter()
            .map(|(service, port)| {
                let all: Vec<&TcpLink> = windows
                    .iter()
                    .flat_map(|w| w.iter())
                    .filter(|l| l.service == service && l.port == port)
                    .collect();
                let median = |f: fn(&TcpLink) -> Option<f64>| {
                    let mut v: Vec<f64> = all.iter().filter_map(|l| f(l)).collect();
                    crate::shootout::median(&mut v)
                };
                TcpLink {
                    service,
                    port,
                    readings: all.iter().map(|l| l.readings).sum(),
                    sockets_max: all.iter().map(|l| l.sockets_max).max().unwrap_or(0),
                    retransmits: all.iter().map(|l| l.retransmits).sum(),
                    data_segments: all.iter().map(|l| l.data_segments).sum(),
                    delayed_ack_ms: median(|l| l.delayed_ack_ms),
                    ato_ms: median(|l| l.ato_ms),
                    min_rtt_ms: median(|l| l.min_rtt_ms),
                    held_ack_ms: median(|l| l.held_ack_ms),
                }
            })
            .collect()
    }
}

/// The delayed-ACK wait the Nagle rule looks for: the kernel's timeout on the client's
/// sockets and the path's round trip, or Linux's 40 ms on a path of no length when the
/// sockets were not read (a result from before they were, or a kernel without sock_diag).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DelayedAckWait {
    /// The delayed-ACK timeout, ms.
    pub wait_ms: f64,
    /// The path's round trip, ms.
    pub rtt_ms: f64,
    /// The `ato` the kernel reported, ms, when it was read.
    pub ato_ms: Option<f64>,
}

impl DelayedAckWait {
    /// Linux's `TCP_DELACK_MIN`, what the rule assumed before the sockets were read.
    pub const LINUX_MIN: DelayedAckWait = DelayedAckWait {
        wait_ms: 40.0,
        rtt_ms: 0.0,
        ato_ms: None,
    };

    /// The wait on `link`'s client ends, when the kernel's figures were read.
    pub fn of(link: &TcpLink) -> Option<DelayedAckWait> {
        Some(DelayedAckWait {
            wait_ms: link.delayed_ack_ms?,
            rtt_ms: link.min_rtt_ms.unwrap_or(0.0),
            ato_ms: link.ato_ms,
        })
    }

    /// When a response held by Nagle behind `k` delayed ACKs completes, ms: a round trip
    /// for the request and the first segment, then for each stall the wait and the round
    /// trip of the ACK and the segment it released.
    pub fn stall_ms(&self, k: u64) -> f64 {
        self.rtt_ms + k as f64 * (self.wait_ms + self.rtt_ms)
    }
}
