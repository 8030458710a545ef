//! What a live view of the run (`foxbench shootout --dashboard`) is told as it goes: each
//! cell's status as it changes, and the loads of the running cell with their intervals.
//! The runner tells; it never waits on the view, and the view never reaches the engine.

use std::fmt::Debug;

use report::shootout::{Cell, CellStatus, Outcome, TargetResult};

use crate::suite::Suite;

/// A cell of the matrix as it now stands.
#[derive(Debug, Clone, PartialEq)]
pub enum CellNow {
    /// Not reached yet.
    Waiting,
    /// Being measured: its loads follow ([`Watch::load`]).
    Running,
    /// Measured, at this many requests per second (the median repeat, or the capacity found).
    Measured {
        /// Requests per second.
        requests_per_sec: Option<f64>,
    },
    /// Not measured, and why.
    Ended {
        /// How it ended.
        how: Ended,
        /// Why.
        reason: String,
    },
}

/// How a cell ended without a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The target crashed, the load could not run, or the target never got to it.
    Failed,
    /// Verification showed it does not apply, or its target was skipped (a tool missing).
    Excluded,
    /// Ctrl-C.
    Interrupted,
}

/// A cell: its target, and its column (the level, after its scenario where a suite has
/// several).
#[derive(Debug, Clone, Copy)]
pub struct CellAt<'a> {
    /// The target's name.
    pub target: &'a str,
    /// The matrix's column.
    pub column: &'a str,
}

/// A live view of the run. Its methods are called on the runner's thread (`interval` on
/// the thread that runs the load's intervals, the caller's): each must return at once.
pub trait Watch: Debug + Send + Sync {
    /// A cell's status changed.
    fn cell(&self, at: CellAt<'_>, now: &CellNow);
    /// A load of the running cell begins (a warm-up slice, a repeat, a capacity window).
    fn load(&self, plan: &load::Plan);
    /// One interval of that load, as the engine hands it off, and its row as the results
    /// keep it (made once: encoding its histogram is the costly part).
    fn interval(&self, iv: &stats::Interval, row: &report::IntervalRow);
    /// foxbench is pinned to the client's CPUs: the view's own threads must be too, or they
    /// run on the target's.
    fn pinned(&self, cpus: &[usize]);
    /// The CPU the view's own threads have used so far (ended ones included), to be left
    /// out of the client's as the probe's is. The work of [`Watch::load`] and
    /// [`Watch::interval`], on the caller's thread, is measured by the caller.
    fn cpu(&self) -> probe::OwnUsage;
}

/// The matrix's column of a cell: its level, after its scenario where a suite has several.
pub fn column(suite: &Suite, scenario: &str, level: &str) -> String {
    if suite.scenarios.len() > 1 {
        format!("{scenario} {level}")
    } else {
        level.to_string()
    }
}

/// Tells the view of every cell the suite may run: waiting.
pub(crate) fn waiting(suite: &Suite, w: &dyn Watch) {
    for spec in &suite.targets {
        for s in suite.scenarios.iter().filter(|s| s.applies_to(spec)) {
            for level in suite.levels_for(s, spec) {
                let column = column(suite, &s.name, &level.name);
                w.cell(
                    CellAt {
                        target: &spec.name,
                        column: &column,
                    },
                    &CellNow::Waiting,
                );
            }
        }
    }
}

/// A cell's status as the view shows it.
pub(crate) fn now_of(cell: &Cell) -> CellNow {
    let reason = || cell.message.clone().unwrap_or_default();
    match cell.status {
        CellStatus::Measured => CellNow::Measured {
            requests_per_sec: match &cell.capacity {
                Some(c) => c.rate_per_sec,
                None => cell.summary.as_ref().map(|s| s.rps_median),
            },
        },
        CellStatus::Excluded => CellNow::Ended {
            how: Ended::Excluded,
            reason: reason(),
        },
        CellStatus::Failed => CellNow::Ended {
            how: Ended::Failed,
            reason: reason(),
        },
        CellStatus::Interrupted => CellNow::Ended {
            how: Ended::Interrupted,
            reason: reason(),
        },
    }
}

/// How a cell its target never reached ended, by the target's outcome: a target skipped
/// for a missing tool is excluded, not failed.
fn unreached(outcome: Outcome) -> Ended {
    match outcome {
        Outcome::Interrupted => Ended::Interrupted,
        Outcome::Skipped => Ended::Excluded,
        Outcome::BuildFailed
        | Outcome::StartFailed
        | Outcome::VerifyFailed
        | Outcome::Measured
        | Outcome::Crashed => Ended::Failed,
    }
}

/// Tells the view how a target's cells ended: each as measured, and those it never reached
/// (a failed build, start or verification) with the target's outcome.
pub(crate) fn ended(suite: &Suite, r: &TargetResult, w: &dyn Watch) {
    let spec = suite.targets.iter().find(|t| t.name == r.name);
    let reached: Vec<String> = r
        .cells
        .iter()
        .map(|c| column(suite, &c.scenario, &c.level))
        .collect();
    for (c, column) in r.cells.iter().zip(&reached) {
        let at = CellAt {
            target: &r.name,
            column,
        };
        w.cell(at, &now_of(c));
    }
    let Some(spec) = spec else {
        return;
    };
    for s in suite.scenarios.iter().filter(|s| s.applies_to(spec)) {
        for level in suite.levels_for(s, spec) {
            let column = column(suite, &s.name, &level.name);
            if !reached.contains(&column) {
                let now = CellNow::Ended {
                    how: unreached(r.outcome),
                    reason: format!(
                        "{}: {}",
                        r.outcome.as_str(),
                        r.message.as_deref().unwrap_or("not measured")
                    ),
                };
                let at = CellAt {
                    target: &r.name,
                    column: &column,
                };
                w.cell(at, &now);
            }
        }
    }
}

#[cfg(test)]
mod tests;
