//! A cell's and a capacity window's TCP counters' report: the counters added up and the
//! rules' findings on them; no I/O.

use report::shootout::{CellSummary, Repeat};
use report::tcp::{Evidence, Runtime, TcpCounts, TcpLink, TcpReport};
use stats::Latency;

use super::{figures, summarize};
use crate::waiting::{client_saturated, server_saturated};

/// What the TCP rules know of the target and the host besides the counters.
#[derive(Debug, Clone, Copy)]
pub struct Net {
    /// What runs the target (a JVM gets the JDK HttpServer's fix named).
    pub runtime: Runtime,
    /// `net.core.somaxconn`, when read.
    pub somaxconn: Option<u64>,
}

impl Default for Net {
    fn default() -> Self {
        Net {
            runtime: Runtime::Other,
            somaxconn: None,
        }
    }
}

/// The TCP counters of the repeats that read them, added up, and the rules' findings on
/// them with the cell's merged latency and connect times; `None` when no repeat read them.
/// In the open model (`rate` levels, capacity windows) the rules read the repeats' merged
/// service time instead ([`measure::rules::rules_latency`], as `foxbench load` does). The shootout runs on loopback. The
/// repeats' links ([`TcpLink`], each link's own sockets) are merged beside the counters.
pub fn tcp_report(
    reps: &[Repeat],
    s: &CellSummary,
    cpu_saturated: bool,
    net: &Net,
) -> Option<TcpReport> {
    let read: Vec<&Repeat> = reps.iter().filter(|r| r.tcp.is_some()).collect();
    if read.is_empty() {
        return None;
    }
    let deltas = read
        .iter()
        .filter_map(|r| r.tcp.as_ref())
        .fold(TcpCounts::default(), |a, d| a.plus(d));
    let merged = |field: fn(&Repeat) -> Option<&str>| {
        let mut all = Latency::new();
        for h in read.iter().filter_map(|r| field(r)) {
            if let Ok(h) = Latency::from_base64(h) {
                let _ = all.merge(&h);
            }
        }
        all
    };
    let service = merged(|r| r.service_hdr_base64.as_deref());
    let latency = Latency::from_base64(&s.hdr_base64).unwrap_or_default();
    let connect = merged(|r| r.connect_hdr_base64.as_deref());
    let links = TcpLink::merge(
        &read
            .iter()
            .map(|r| r.tcp_links.as_slice())
            .collect::<Vec<_>>(),
    );
    Some(report::tcp::report(&Evidence {
        deltas: &deltas,
        completed: read.iter().map(|r| r.requests.completed).sum(),
        latency: measure::rules::rules_latency(&latency, &service),
        connect: (!connect.is_empty()).then_some(&connect),
        cpu_saturated,
        somaxconn: net.somaxconn,
        loopback: true,
        runtime: net.runtime,
        links: &links,
    }))
}

/// The TCP counters' report of one capacity window (its repeat alone), with the rules and
/// the saturation test of a cell's.
pub fn window_tcp(repeat: &Repeat, server_cpus: usize, net: &Net) -> Option<TcpReport> {
    let reps = std::slice::from_ref(repeat);
    let s = summarize(reps);
    let f = figures(reps, &s, server_cpus);
    tcp_report(reps, &s, client_saturated(&f) || server_saturated(&f), net)
}

#[cfg(test)]
mod tests;
