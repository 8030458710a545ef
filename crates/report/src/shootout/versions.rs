//! HTTP/2 against HTTP/1.1 on the same target: each measured h2 (or h2c) cell beside the
//! HTTP/1.1 cell with the same connections, keep-alive and resumption, with req/s, each
//! process's CPU per request (a proxy's and its app's apart) and the peak RSS of both.
//! One table for both renderings, built from the cells alone: no branch per protocol.

use super::{Cell, CellSummary, TargetResult};
use crate::units::{bytes_compact, rate_suffixed};

/// An h2 cell and the HTTP/1.1 cell it is set beside.
struct Pair<'a> {
    target: &'a TargetResult,
    h2: (&'a Cell, &'a CellSummary),
    http1: (&'a Cell, &'a CellSummary),
}

/// The HTTP/1.1 cell an h2 cell is compared with: measured, on the same target, with the
/// same connections, keep-alive and TLS resumption; of the same scenario when it has one,
/// else of the first scenario that does (a scenario with `http2 = true` beside the
/// HTTP/1.1 scenario of the same request: `redirect-h2` at `h2-10x10` beside `redirect`
/// at `c10`).
fn http1_of<'a>(t: &'a TargetResult, h2: &Cell) -> Option<(&'a Cell, &'a CellSummary)> {
    // A capacity search or a pipelined cell measures something else: never the pair.
    let alike = |c: &&'a Cell| {
        c.protocol == "http/1.1"
            && c.connections == h2.connections
            && c.keepalive == h2.keepalive
            && c.tls_resume == h2.tls_resume
            && c.capacity.is_none()
            && c.pipeline <= 1
            && c.summary.is_some()
    };
    let same = t
        .cells
        .iter()
        .filter(alike)
        .find(|c| c.scenario == h2.scenario);
    let c = same.or_else(|| t.cells.iter().find(alike))?;
    Some((c, c.summary.as_ref()?))
}

fn pairs<'a>(rows: &[&'a TargetResult]) -> Vec<Pair<'a>> {
    rows.iter()
        .flat_map(|t| t.cells.iter().map(move |c| (*t, c)))
        .filter(|(_, c)| c.is_http2())
        .filter_map(|(t, c)| {
            Some(Pair {
                target: t,
                h2: (c, c.summary.as_ref()?),
                http1: http1_of(t, c)?,
            })
        })
        .collect()
}

/// Each costly process's CPU per request (`nginx 7.6 µs, avatar 3.1 µs`), or the server
/// tree's when it is one process.
fn processes(s: &CellSummary) -> String {
    let p = s.costly_processes();
    if p.is_empty() {
        return s
            .server_cpu_us_per_request
            .map_or("–".into(), |u| format!("{u:.1} µs"));
    }
    p.iter()
        .map(|c| format!("{} {:.1} µs", c.name, c.cpu_us_per_request))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns of the table.
pub(crate) const HEADERS: [&str; 11] = [
    "target",
    "scenario",
    "HTTP/2 level",
    "HTTP/1.1 level",
    "req/s h2",
    "req/s HTTP/1.1",
    "h2 / HTTP/1.1",
    "CPU per request h2, by process",
    "CPU per request HTTP/1.1, by process",
    "peak RSS h2",
    "peak RSS HTTP/1.1",
];

/// Which columns hold numbers (right-aligned).
pub(crate) const NUMERIC: [bool; 11] = [
    false, false, false, false, true, true, true, false, false, true, true,
];

/// What the table says under it.
pub(crate) const NOTE: &str = "Each HTTP/2 cell beside the HTTP/1.1 cell of the same target with the same connections, \
     keep-alive and TLS resumption (medians of repeats). CPU per request is each process name's of the server's tree, \
     so what h2 saves a proxy and what it saves its app are apart.";

/// The table's rows, one per h2 cell that has an HTTP/1.1 cell to stand beside; empty
/// when the run has none.
pub(crate) fn rows(targets: &[&TargetResult]) -> Vec<[String; 11]> {
    pairs(targets)
        .iter()
        .map(|p| {
            let (h2, h2s) = p.h2;
            let (h1, h1s) = p.http1;
            [
                p.target.name.clone(),
                h2.scenario.clone(),
                format!(
                    "{} ({}, {} stream{})",
                    h2.level,
                    h2.protocol,
                    h2.streams.unwrap_or(1),
                    if h2.streams.unwrap_or(1) == 1 {
                        ""
                    } else {
                        "s"
                    }
                ),
                if h1.scenario == h2.scenario {
                    h1.level.clone()
                } else {
                    format!("{} ({})", h1.level, h1.scenario)
                },
                rate_suffixed(h2s.rps_median),
                rate_suffixed(h1s.rps_median),
                format!("{:.2}×", h2s.rps_median / h1s.rps_median.max(1e-9)),
                processes(h2s),
                processes(h1s),
                bytes_compact(h2s.rss_peak_bytes),
                bytes_compact(h1s.rss_peak_bytes),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests;
