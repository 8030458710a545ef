//! Capacity levels (`capacity = "p99<10ms"` in a suite's levels): the highest constant
//! arrival rate a target sustains under a latency objective.
//!
//! The search is `load::search::Search`, driven by `measure::search` (its constants,
//! configuration and errors, as for `foxbench load --find-max`) with the shootout's own
//! window runner (`Meter::probed_repeat`), so each window is an open-model load at one
//! constant rate with the server tree probed around it (server CPU per request) and
//! foxbench's own CPU measured (client-bound). Each window is judged whole by the
//! objective (`report::slo`). The cell keeps every window in `capacity`, and as its one
//! repeat the window at the rate found (or at the lowest rate tried), so its summary and
//! charts read like any level's.

use std::time::Duration;

use measure::search::{window_row, After, Capacity, WindowRun};
use report::search::Stopped;
use report::shootout::capacity::LevelCapacity;
use report::shootout::{Cell, CellStatus, Repeat};
use report::slo::{Figures, Slo, SloReport};

use crate::lifecycle::Running;
use load::{Arrival, Stop};

use crate::measure::{Tally, Task};
use crate::meter::{CellFailure, Meter};
use crate::suite::SEARCH_KEYS;

/// The level's capacity as the protocol records it.
pub fn info(level: &Capacity, budget: Duration) -> LevelCapacity {
    LevelCapacity {
        objective: level.objective.clone(),
        window_s: level.window.as_secs_f64(),
        budget_s: budget.as_secs_f64(),
    }
}

/// The objective's verdict on one window's repeat.
pub fn judge(slo: &Slo, r: &Repeat) -> SloReport {
    slo.judge_figures(
        &Figures {
            corrected: &r.hdr_base64,
            service: None,
            sent: r.requests.sent,
            failed: r.requests.errors + r.requests.failed_status,
            requests_per_sec: r.rps,
        },
        None,
    )
}

impl Meter<'_> {
    /// Runs a capacity level's search into `cell` (no warm-up: its first windows are): its windows in
    /// `cell.capacity`, the window at the rate found as its repeat. Ctrl-C ends it with the
    /// windows so far; a target that exits or cannot be probed fails it, windows kept.
    pub(crate) fn capacity(
        &self,
        target: &mut Running,
        task: &Task,
        level: &Capacity,
        cell: &mut Cell,
    ) -> Result<(), CellFailure> {
        let budget = task.level.max_duration;
        let search = level
            .search(budget, After::Nothing)
            .map_err(|e| CellFailure::Capacity(e.worded(&SEARCH_KEYS)))?;
        cell.idle = Some(self.idle_of(target.addr, task));
        let mut windows = Vec::new();
        let mut repeats = Vec::new();
        let mut failure = None;
        let interrupted = || self.interrupt.load(std::sync::atomic::Ordering::Relaxed);
        let found =
            measure::search::drive(search, After::Nothing, &interrupted, &mut |rate, phase| {
                let arrival = Arrival::Open {
                    rate: load::Rate::constant(rate),
                };
                // A window after one that failed starts once the server has finished the
                // requests that window gave up.
                self.settle(target, cell);
                // Windows take no thread dumps, and no service counters are checked against them.
                let (repeat, failed) = self.probed_repeat(
                    target,
                    task,
                    Some(arrival),
                    (Stop::Duration(level.window), Duration::ZERO),
                    0,
                    &mut Tally::default(),
                )?;
                let verdict = judge(&level.slo, &repeat);
                let tcp = crate::summary::window_tcp(&repeat, self.server_cpus, &self.net);
                let run = WindowRun::of_repeat(&repeat, tcp.as_ref());
                windows.push(window_row(rate, phase, &run, &verdict));
                repeats.push(repeat);
                // A target that exited or could not be probed ends the search here.
                Ok(match failed {
                    Some(f) => {
                        failure = Some(f);
                        None
                    }
                    None => Some(verdict.passed),
                })
            })?;
        // The cell's repeat: the window at the rate found, else the lowest rate tried.
        if let Some(i) = found.body {
            cell.repeats.push(repeats.swap_remove(i));
        }
        if found.stopped == Stopped::Interrupted && failure.is_none() {
            cell.status = CellStatus::Interrupted;
            cell.message = Some("interrupted: the windows measured so far are kept".into());
        }
        cell.capacity = Some(found.report(level, budget, windows));
        failure.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests;
