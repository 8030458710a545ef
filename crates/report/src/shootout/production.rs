//! The production path's figures, for both renderings and the runner's lines: the TLS
//! handshakes per second a cell's server sustained, and each process's CPU per request, so
//! that "the proxy costs N× the app" is a figure.

use super::{Cell, CellSummary, ProcessCost, TargetResult};
use crate::units::rate_suffixed;

impl CellSummary {
    /// The processes that cost something, most first: those below 2% of the tree's CPU
    /// per request (a wrapper shell, a sleeping helper) are left out.
    pub fn costly_processes(&self) -> Vec<&ProcessCost> {
        let total: f64 = self.processes.iter().map(|p| p.cpu_us_per_request).sum();
        self.processes
            .iter()
            .filter(|p| total > 0.0 && p.cpu_us_per_request >= 0.02 * total)
            .collect()
    }

    /// Each process's CPU per request, and how many times the second costs the first:
    /// `nginx 31.0 µs/req, avatar 7.0 µs/req: nginx costs 4.43× avatar`. `None` unless at
    /// least two processes cost something.
    pub fn process_line(&self) -> Option<String> {
        let p = self.costly_processes();
        if p.len() < 2 {
            return None;
        }
        let each: Vec<String> = p
            .iter()
            .map(|c| format!("{} {:.1} µs/req", c.name, c.cpu_us_per_request))
            .collect();
        Some(format!(
            "{}: {} costs {:.2}× {}",
            each.join(", "),
            p[0].name,
            p[0].cpu_us_per_request / p[1].cpu_us_per_request.max(1e-9),
            p[1].name
        ))
    }

    /// `TLS handshakes 1.2k/s full, 3.4k/s resumed`; `None` for plain HTTP.
    pub fn handshake_line(&self) -> Option<String> {
        let (full, resumed) = (self.handshakes_full_per_s?, self.handshakes_resumed_per_s?);
        Some(format!(
            "TLS handshakes {}/s full, {}/s resumed",
            rate_suffixed(full),
            rate_suffixed(resumed)
        ))
    }
}

/// A measured cell over TLS, or whose server tree has more than one process that costs
/// (a proxy and its app): what the production path's table shows.
pub(crate) struct ProductionRow<'a> {
    /// The target (or row).
    pub target: &'a TargetResult,
    /// The cell.
    pub cell: &'a Cell,
    /// Its summary.
    pub summary: &'a CellSummary,
}

impl ProductionRow<'_> {
    /// `nginx 31.0 µs, avatar 7.0 µs (nginx 4.43× avatar)`, or the one process's figure.
    pub fn processes(&self) -> String {
        let p = self.summary.costly_processes();
        let each: Vec<String> = p
            .iter()
            .map(|c| format!("{} {:.1} µs", c.name, c.cpu_us_per_request))
            .collect();
        match p.as_slice() {
            [a, b, ..] => format!(
                "{} ({} {:.2}× {})",
                each.join(", "),
                a.name,
                a.cpu_us_per_request / b.cpu_us_per_request.max(1e-9),
                b.name
            ),
            _ => each.join(", "),
        }
    }

    /// The handshake rate of one kind, or `–` for plain HTTP.
    pub fn handshakes(&self, full: bool) -> String {
        let per_s = if full {
            self.summary.handshakes_full_per_s
        } else {
            self.summary.handshakes_resumed_per_s
        };
        per_s
            .map(|r| format!("{}/s", rate_suffixed(r)))
            .unwrap_or_else(|| "–".into())
    }
}

/// The production rows of `rows`' targets, in cell order.
pub(crate) fn production_rows<'a>(rows: &[&'a TargetResult]) -> Vec<ProductionRow<'a>> {
    rows.iter()
        .flat_map(|t| t.cells.iter().map(move |c| (t, c)))
        .filter_map(|(t, c)| {
            let s = c.summary.as_ref()?;
            (c.tls_resume.is_some() || s.costly_processes().len() > 1).then_some(ProductionRow {
                target: t,
                cell: c,
                summary: s,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
