//! A shootout capacity level's result (`capacity = "p99<10ms"` in a suite): the search's
//! outcome per cell, each window with the server's and the client's CPU, and the ranking of
//! servers by the rate they sustain under the objective. The search is
//! `load::search::Search`; the windows are run by the shootout runner.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CellStatus, ShootoutResults};
use crate::human_us;
use crate::search::{Bracket, CapacityReport, Stopped};

/// A capacity level as the suite gave it (in the protocol's levels).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelCapacity {
    /// The objective, as written (`p99<10ms`).
    pub objective: String,
    /// The length of each constant-rate window, seconds.
    pub window_s: f64,
    /// The search's time budget per cell (the level's `max_duration`), seconds.
    pub budget_s: f64,
}

/// A cell's capacity search is a [`CapacityReport`], as `--find-max`'s is, without the
/// spectrum (its `spectra` is empty).
impl CapacityReport {
    /// The search in one line, for the progress output: `capacity 16,000 req/s under
    /// p99<10ms (bracket 16,000 – 16,250, converged, 9 windows in 4.8 s)`.
    pub fn line(&self) -> String {
        format!(
            "capacity {} req/s under {}{} (bracket {}, {}, {} window{} in {:.1} s)",
            rate_text(self),
            self.objective,
            if self.client_bound {
                ", client-bound"
            } else {
                ""
            },
            bracket_text(self.bracket),
            stopped_text(self.stopped),
            self.windows.len(),
            if self.windows.len() == 1 { "" } else { "s" },
            self.elapsed_s
        )
    }
}

/// One row of the capacity ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityRow<'a> {
    /// The target.
    pub target: &'a str,
    /// The scenario.
    pub scenario: &'a str,
    /// The level.
    pub level: &'a str,
    /// Connections of the level.
    pub connections: u64,
    /// The cell's search.
    pub capacity: &'a CapacityReport,
    /// The closed-loop median req/s of the same scenario at the same connections, if a
    /// timed level measured it: the figure the capacity is compared with.
    pub closed_rps: Option<f64>,
}

/// Every capacity cell, highest sustainable rate first (cells that found none last).
pub fn ranking(r: &ShootoutResults) -> Vec<CapacityRow<'_>> {
    let mut rows: Vec<CapacityRow> = r
        .targets
        .iter()
        .flat_map(|t| t.cells.iter().map(move |c| (t, c)))
        .filter_map(|(t, c)| {
            let capacity = c.capacity.as_ref()?;
            let closed_rps = t
                .cells
                .iter()
                .filter(|o| {
                    o.capacity.is_none()
                        && o.scenario == c.scenario
                        && o.connections == c.connections
                        && o.status == CellStatus::Measured
                })
                .find_map(|o| o.summary.as_ref().map(|s| s.rps_median));
            Some(CapacityRow {
                target: &t.name,
                scenario: &c.scenario,
                level: &c.level,
                connections: c.connections,
                capacity,
                closed_rps,
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        let key = |r: &CapacityRow| r.capacity.rate_per_sec.unwrap_or(-1.0);
        key(b).total_cmp(&key(a)).then(a.target.cmp(b.target))
    });
    rows
}

/// The rate found, for people: `12,300 req/s`, `≥ 12,300` when the ceiling held, `-`.
pub fn rate_text(c: &CapacityReport) -> String {
    match c.rate_per_sec {
        Some(r) if c.stopped == Stopped::Ceiling => format!("≥ {}", thousands(r)),
        Some(r) => thousands(r),
        None => "none".into(),
    }
}

/// The bracket, for people: `12,300 – 12,500`.
pub fn bracket_text(b: Bracket) -> String {
    let r = |v: Option<f64>| v.map_or("-".to_string(), thousands);
    format!("{} – {}", r(b.held_per_sec), r(b.failed_per_sec))
}

/// Why the search stopped, in a word.
pub fn stopped_text(s: Stopped) -> &'static str {
    match s {
        Stopped::Converged => "converged",
        Stopped::Budget => "budget",
        Stopped::Floor => "failed at the floor",
        Stopped::Ceiling => "ceiling",
        Stopped::Interrupted => "interrupted",
    }
}

/// A whole number with thousands separators: `12,345`.
pub fn thousands(v: f64) -> String {
    let n = v.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The window's p99 at the rate found, for the table.
pub fn p99_at_rate(c: &CapacityReport) -> Option<f64> {
    let r = c.rate_per_sec?;
    c.windows
        .iter()
        .find(|w| w.rate_per_sec == r && w.passed)
        .and_then(|w| w.p99_us)
}

/// The Markdown section: servers ranked by sustainable rate under each objective; empty
/// when no cell ran a capacity level.
pub fn markdown(r: &ShootoutResults) -> String {
    let rows = ranking(r);
    if rows.is_empty() {
        return String::new();
    }
    let mut o = String::new();
    let objectives: Vec<&str> = {
        let mut v: Vec<&str> = rows.iter().map(|r| r.capacity.objective.as_str()).collect();
        v.dedup();
        v
    };
    let _ = writeln!(
        o,
        "## Capacity under {}\n",
        objectives
            .iter()
            .map(|o| format!("`{o}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    o.push_str(
        "The highest constant arrival rate (open model) whose whole window held the objective: \
         the rate each server sustains, ranked. Closed-loop req/s cannot give this ranking when \
         the client is the bottleneck; a capacity marked ᶜ is foxbench's limit, not the server's.\n\n",
    );
    o.push_str("| # | target | scenario | level | capacity (req/s) | p99 at it | bracket (held – failed) | closed-loop req/s, same connections | search | stopped |\n");
    o.push_str("|---:|---|---|---|---:|---:|---|---:|---:|---|\n");
    for (i, row) in rows.iter().enumerate() {
        let c = row.capacity;
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} (c{}) | {}{} | {} | {} | {} | {} windows, {:.0} s of {:.0} s | {} |",
            i + 1,
            row.target,
            row.scenario,
            row.level,
            row.connections,
            rate_text(c),
            if c.client_bound { " ᶜ" } else { "" },
            p99_at_rate(c).map_or("-".into(), human_us),
            bracket_text(c.bracket),
            row.closed_rps.map_or("-".into(), thousands),
            c.windows.len(),
            c.elapsed_s,
            c.budget_s,
            stopped_text(c.stopped),
        );
    }
    o.push('\n');
    if rows.iter().any(|r| r.capacity.client_bound) {
        o.push_str(
            "ᶜ client-bound: foxbench's CPU was saturated at the rate found or at the rate that \
             failed; the server may sustain more.\n\n",
        );
    }
    o
}

#[cfg(test)]
mod tests;
