//! What a cell's figures must be read with, beyond its diagnosis: the machine limits that
//! were short for its level, and the work an earlier load left the server when the cell's
//! own loads began. Both are one line each in the progress output and the report.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Cell;

/// A machine limit short for a level, as `foxbench doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LimitNote {
    /// The limit, as sysctl or ulimit names it (`net.core.somaxconn`, `ulimit -n`).
    pub check: String,
    /// The machine's figure.
    pub observed: String,
    /// What the level needs.
    pub needed: String,
    /// The command that fixes it.
    pub fix: Option<String>,
}

/// The waits before a cell's loads (each warm-up slice, each window) for the server to
/// finish what an earlier load left it. A load that ends gives up on the requests still
/// unanswered and closes their connections; a server that goes on working on them holds
/// those connections closed by their client (`CLOSE_WAIT`) until it is done. The next load
/// waits for them to be gone, up to `limit_s`, so that it does not measure their work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Settle {
    /// Loads that began only after a wait.
    pub waits: u32,
    /// The time spent waiting, seconds.
    pub waited_s: f64,
    /// The most connections the server held after their client had closed them, at the
    /// start of a wait.
    pub held_max: u32,
    /// Loads that began with the server still holding some when the wait ran out: their
    /// figures include work left by the load before.
    pub unsettled: u32,
    /// The longest a load waits, seconds (the plan's request timeout).
    pub limit_s: f64,
}

impl Settle {
    /// Adds one wait: `held` connections at its start, `waited_s` long, and whether the
    /// server still held some when it ended.
    pub fn add(&mut self, held: u32, waited_s: f64, settled: bool) {
        self.waits += 1;
        self.waited_s += waited_s;
        self.held_max = self.held_max.max(held);
        self.unsettled += u32::from(!settled);
    }
}

impl Cell {
    /// The short limits in one line, for the progress output and the report, if any.
    pub fn limits_line(&self) -> Option<String> {
        if self.limits.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .limits
            .iter()
            .map(|l| {
                let fix = l
                    .fix
                    .as_deref()
                    .map(|f| format!(": {f}"))
                    .unwrap_or_default();
                format!("{} {}, needs {}{fix}", l.check, l.observed, l.needed)
            })
            .collect();
        Some(format!(
            "machine limits short for {} connections: {}",
            self.connections,
            each.join("; ")
        ))
    }

    /// The waits for the server to finish an earlier load's requests, in one line, if any
    /// load had to wait.
    pub fn settle_line(&self) -> Option<String> {
        let s = self.settle.filter(|s| s.waits > 0)?;
        let mut line = format!(
            "{} load{} waited {:.2} s in all for the server to finish requests an earlier load had given up (up to {} connections closed by the client and still held)",
            s.waits,
            if s.waits == 1 { "" } else { "s" },
            s.waited_s,
            s.held_max
        );
        if s.unsettled > 0 {
            line.push_str(&format!(
                "; {} began with the server still busy with them after {:.0} s: their figures include that work",
                s.unsettled, s.limit_s
            ));
        }
        Some(line)
    }

    /// The kernel's TCP warnings that the verdict did not already name (a Nagle stall
    /// under a pool's verdict, say), one after the other.
    pub fn tcp_line(&self) -> Option<String> {
        let verdict = self.diagnosis.as_ref().map(|d| d.bottleneck);
        let lines: Vec<String> = self
            .tcp
            .iter()
            .flat_map(|t| &t.warnings)
            .filter(|w| Some(super::Bottleneck::from(w.kind)) != verdict)
            .map(|w| format!("TCP {}: {}", w.kind.as_str(), w.detail))
            .collect();
        (!lines.is_empty()).then(|| lines.join("; "))
    }

    /// `why` (a diagnosis' detail or a cell's message) with the cell's notes after it.
    pub fn why_with_notes(&self, why: String) -> String {
        [
            Some(why),
            self.limits_line(),
            self.settle_line(),
            self.tcp_line(),
        ]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
    }
}

#[cfg(test)]
mod tests;
