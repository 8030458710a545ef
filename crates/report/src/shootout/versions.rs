//! Each protocol against HTTP/1.1 on the same target: every measured h2, h2c and h3 cell
//! beside the HTTP/1.1 cell with the same connections (and, for a new connection per
//! request, the same resumption), with req/s, p99, each process's CPU per request (a
//! proxy's and its app's apart) and the peak RSS of both; an h3 cell also beside the
//! HTTP/2 cell of its connections and streams, its server CPU per request as a ratio of
//! that one's: what QUIC costs the same server. One table for both renderings, built from
//! the cells alone: no branch per protocol.

use super::{Cell, CellSummary, TargetResult};
use crate::units::{bytes_compact, human_us, rate_suffixed};

/// A cell, its summary and the cells it is set beside.
struct Row<'a> {
    target: &'a TargetResult,
    cell: (&'a Cell, &'a CellSummary),
    http1: Option<(&'a Cell, &'a CellSummary)>,
    /// For an h3 cell: the h2 (or h2c) cell of its connections and streams.
    http2: Option<(&'a Cell, &'a CellSummary)>,
}

/// Over TLS (h2, h3, https) or plain TCP.
fn tls(c: &Cell) -> bool {
    c.tls_resume.is_some()
}

/// A cell that may stand beside another: measured, neither a capacity search nor
/// pipelined, with the same connections and keep-alive; when each request opens its own
/// connection, with the same TLS resumption (the handshake is then most of the cost).
fn alike(a: &Cell, b: &Cell) -> bool {
    a.connections == b.connections
        && a.keepalive == b.keepalive
        && (a.keepalive || a.tls_resume == b.tls_resume)
        && a.capacity.is_none()
        && a.pipeline <= 1
        && a.summary.is_some()
}

/// The best of the cells like `of` that `wanted` accepts: of the same scenario and the same
/// security (TLS or plain TCP) first, then the same security, then the same scenario, then
/// any. A kept-alive cell over plain TCP beside one over TLS is labelled so.
fn beside<'a>(
    t: &'a TargetResult,
    of: &Cell,
    wanted: impl Fn(&Cell) -> bool,
) -> Option<(&'a Cell, &'a CellSummary)> {
    let like: Vec<&Cell> = t
        .cells
        .iter()
        .filter(|c| wanted(c) && alike(c, of))
        .collect();
    let rank = |c: &Cell| (tls(c) != tls(of), c.scenario != of.scenario);
    let c = like.into_iter().min_by_key(|c| rank(c))?;
    Some((c, c.summary.as_ref()?))
}

fn rows<'a>(targets: &[&'a TargetResult]) -> Vec<Row<'a>> {
    targets
        .iter()
        .flat_map(|t| t.cells.iter().map(move |c| (*t, c)))
        .filter(|(_, c)| c.protocol != "http/1.1" && c.capacity.is_none())
        .filter_map(|(t, c)| {
            let http1 = beside(t, c, |o| o.protocol == "http/1.1");
            let http2 = (!c.is_http2())
                .then(|| beside(t, c, |o| o.is_http2() && o.streams == c.streams))
                .flatten();
            // A cell with nothing to stand beside gets no row.
            (http1.is_some() || http2.is_some()).then_some(Row {
                target: t,
                cell: (c, c.summary.as_ref()?),
                http1,
                http2,
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

/// A level as the table names it: `h3-10x10 (h3, 10 streams)`, with the scenario when it
/// is not the row's own and "plain TCP" when the row's cell is over TLS and this one not
/// (or the other way round).
fn level(c: &Cell, row: &Cell) -> String {
    let mut notes = Vec::new();
    if c.protocol != "http/1.1" {
        let n = c.streams.unwrap_or(1);
        notes.push(format!(
            "{}, {n} stream{}",
            c.protocol,
            if n == 1 { "" } else { "s" }
        ));
    }
    if c.scenario != row.scenario {
        notes.push(c.scenario.clone());
    }
    if tls(c) != tls(row) {
        notes.push(if tls(c) { "TLS" } else { "plain TCP" }.into());
    }
    if notes.is_empty() {
        c.level.clone()
    } else {
        format!("{} ({})", c.level, notes.join(", "))
    }
}

fn p99(s: &CellSummary) -> String {
    s.latency.at(99.0).map_or("–".into(), human_us)
}

/// The columns of the table.
pub(crate) const HEADERS: [&str; 14] = [
    "target",
    "scenario",
    "level",
    "HTTP/1.1 level",
    "req/s",
    "req/s HTTP/1.1",
    "÷ HTTP/1.1",
    "p99",
    "p99 HTTP/1.1",
    "CPU per request, by process",
    "CPU per request HTTP/1.1, by process",
    "server CPU per request ÷ h2",
    "peak RSS",
    "peak RSS HTTP/1.1",
];

/// Which columns hold numbers (right-aligned).
pub(crate) const NUMERIC: [bool; 14] = [
    false, false, false, false, true, true, true, true, true, false, false, true, true, true,
];

/// The table's title.
pub(crate) const TITLE: &str = "HTTP/2 and HTTP/3 against HTTP/1.1";

/// What the table says under it.
pub(crate) const NOTE: &str = "Each HTTP/2 and HTTP/3 cell beside the HTTP/1.1 cell of the same target with the same \
     connections and keep-alive (and TLS resumption, where each request opens a connection), medians of repeats; a \
     level marked plain TCP or TLS is not over the same security as the row's. CPU per request is each process name's \
     of the server's tree, so what a protocol costs a proxy and what it costs its app are apart. An h3 row's server \
     CPU per request is also set against the HTTP/2 cell of its connections and streams: what QUIC costs the server.";

/// The table's rows, one per h2, h2c or h3 cell with a cell to stand beside; empty when
/// the run has none.
pub(crate) fn table(targets: &[&TargetResult]) -> Vec<[String; 14]> {
    rows(targets)
        .iter()
        .map(|r| {
            let (c, s) = r.cell;
            let dash = || "–".to_string();
            let h1 = |f: &dyn Fn(&Cell, &CellSummary) -> String| {
                r.http1.map_or_else(dash, |(c1, s1)| f(c1, s1))
            };
            [
                r.target.name.clone(),
                c.scenario.clone(),
                level(c, c),
                h1(&|c1, _| level(c1, c)),
                rate_suffixed(s.rps_median),
                h1(&|_, s1| rate_suffixed(s1.rps_median)),
                h1(&|_, s1| format!("{:.2}×", s.rps_median / s1.rps_median.max(1e-9))),
                p99(s),
                h1(&|_, s1| p99(s1)),
                processes(s),
                h1(&|_, s1| processes(s1)),
                r.http2
                    .and_then(|(c2, s2)| {
                        let ratio = s.server_cpu_us_per_request? / s2.server_cpu_us_per_request?;
                        Some(if c2.scenario == c.scenario {
                            format!("{ratio:.2}× ({})", c2.level)
                        } else {
                            format!("{ratio:.2}× ({}, {})", c2.level, c2.scenario)
                        })
                    })
                    .unwrap_or_else(dash),
                bytes_compact(s.rss_peak_bytes),
                h1(&|_, s1| bytes_compact(s1.rss_peak_bytes)),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests;
