//! Capacity levels (`capacity = "p99<10ms"` in a suite's levels): the highest constant
//! arrival rate a target sustains under a latency objective.
//!
//! The search is `load::capacity::Search`; this module drives it with the shootout's own
//! window runner (`Meter::probed_repeat`), so each window is an open-model load at one
//! constant rate with the server tree probed around it (server CPU per request) and
//! foxbench's own CPU measured (client-bound). Each window is judged whole by the
//! objective (`report::slo`). The cell keeps every window in `capacity`, and as its one
//! repeat the window at the rate found (or at the lowest rate tried), so its summary and
//! charts read like any level's.

use std::time::{Duration, Instant};

use load::capacity::{Ended, Phase, Search, SearchConfig, SearchError};
use load::{Arrival, Stop};
use report::capacity::{Bracket, Stopped, WindowPhase};
use report::shootout::capacity::{CellCapacity, CellWindow, LevelCapacity};
use report::shootout::{Cell, CellStatus, Repeat};
use report::slo::{Figures, Slo, SloReport};

use crate::lifecycle::Running;
use crate::measure::{CellFailure, Meter, Tally, Task};

/// The lowest rate a search tries, requests per second (or the start rate if lower).
const FLOOR_PER_SEC: f64 = 10.0;
/// The highest rate a search tries, requests per second.
const CEILING_PER_SEC: f64 = 10_000_000.0;
/// The bisection stops when the bracket is this narrow (relative).
const PRECISION: f64 = 0.02;
/// Setup time a window costs beyond its length (connecting, starting the workers,
/// probing the server at its edges), counted against the budget.
const WINDOW_SLACK: Duration = Duration::from_millis(250);
/// A window's length when the level gives none.
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(1);
/// The first rate tried when the level gives none, requests per second.
pub const DEFAULT_START_RATE: f64 = 1000.0;

/// A level's capacity search, as the suite gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityLevel {
    /// The objective as written, such as `p99<10ms`.
    pub objective: String,
    /// It parsed (`report::slo`'s syntax).
    pub slo: Slo,
    /// Each constant-rate window's length (`window`).
    pub window: Duration,
    /// The first rate tried (`start_rate`), requests per second.
    pub start_per_sec: f64,
}

impl CapacityLevel {
    /// The level's search within `budget` (its `max_duration`); the error says which key
    /// to change.
    pub fn config(&self, budget: Duration) -> Result<SearchConfig, String> {
        if self.window.is_zero() {
            return Err("window must be longer than zero".into());
        }
        let config = SearchConfig {
            start_per_sec: self.start_per_sec,
            floor_per_sec: FLOOR_PER_SEC.min(self.start_per_sec),
            ceiling_per_sec: CEILING_PER_SEC.max(self.start_per_sec),
            precision: PRECISION,
            window: self.window + WINDOW_SLACK,
            budget,
            reserve: Duration::ZERO,
        };
        config.validate().map_err(|e| match e {
            SearchError::Rate => format!(
                "start_rate {} is not a rate: give a positive number of requests per second",
                self.start_per_sec
            ),
            SearchError::Window => "window must be longer than zero".into(),
            SearchError::Budget => format!(
                "max_duration {:?} does not hold one window of {:?} (and {:?} to set it up): raise max_duration or shorten window",
                budget, self.window, WINDOW_SLACK
            ),
            SearchError::Precision => e.to_string(),
        })?;
        Ok(config)
    }

    /// The level's capacity as the protocol records it.
    pub fn info(&self, budget: Duration) -> LevelCapacity {
        LevelCapacity {
            objective: self.objective.clone(),
            window_s: self.window.as_secs_f64(),
            budget_s: budget.as_secs_f64(),
        }
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

/// One window's row from its repeat and verdict.
pub fn window_row(
    rate: f64,
    phase: WindowPhase,
    r: &Repeat,
    verdict: &SloReport,
    tcp: Option<report::tcp::TcpReport>,
) -> CellWindow {
    CellWindow {
        rate_per_sec: rate,
        phase,
        passed: verdict.passed,
        achieved_per_sec: r.rps,
        sent: r.requests.sent,
        failed: r.requests.errors + r.requests.failed_status,
        p50_us: (r.latency.count > 0).then(|| r.latency.at(50.0)).flatten(),
        p99_us: (r.latency.count > 0).then(|| r.latency.at(99.0)).flatten(),
        client_cpu_percent: r.client.cpu_percent,
        client_spin_percent: r.client.spin_percent(),
        client_cpu_us_per_request: r.client.cpu_us_per_request,
        client_saturated: r.client.saturated(),
        server_cpu_percent: r.server.cpu_percent,
        server_cpu_us_per_request: r.server.cpu_us_per_request,
        clauses: verdict.clauses.clone(),
        tcp,
    }
}

impl Meter<'_> {
    /// Runs a capacity level's search into `cell` (no warm-up: its first windows are): its windows in
    /// `cell.capacity`, the window at the rate found as its repeat. Ctrl-C ends it with the
    /// windows so far; a target that exits or cannot be probed fails it, windows kept.
    pub(crate) fn capacity(
        &self,
        target: &mut Running,
        task: &Task,
        level: &CapacityLevel,
        cell: &mut Cell,
    ) -> Result<(), CellFailure> {
        let budget = task.level.max_duration;
        let config = level.config(budget).map_err(CellFailure::Capacity)?;
        let mut search = Search::new(config).map_err(|e| CellFailure::Capacity(e.to_string()))?;
        let started = Instant::now();
        let mut windows = Vec::new();
        let mut repeats = Vec::new();
        let mut failure = None;
        let interrupted = || self.interrupt.load(std::sync::atomic::Ordering::Relaxed);
        let ended = load::capacity::drive(
            &mut search,
            || started.elapsed(),
            interrupted,
            |rate, phase| {
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
                let phase = window_phase(phase);
                let tcp = crate::summary::window_tcp(&repeat, self.server_cpus, &self.net);
                windows.push(window_row(rate, phase, &repeat, &verdict, tcp));
                repeats.push(repeat);
                // A target that exited or could not be probed ends the search here.
                Ok(match failed {
                    Some(f) => {
                        failure = Some(f);
                        None
                    }
                    None => Some(verdict.passed),
                })
            },
        )?;
        let stopped = stopped(ended);
        let (held, failed) = search.bracket();
        let bracket = Bracket {
            held_per_sec: held,
            failed_per_sec: failed,
        };
        // The cell's repeat: the window at the rate found, else the lowest rate tried.
        let rates: Vec<(f64, bool)> = windows.iter().map(|w| (w.rate_per_sec, false)).collect();
        let body = load::capacity::body_window(&rates, held);
        if let Some(i) = body {
            cell.repeats.push(repeats.swap_remove(i));
        }
        if stopped == Stopped::Interrupted && failure.is_none() {
            cell.status = CellStatus::Interrupted;
            cell.message = Some("interrupted: the windows measured so far are kept".into());
        }
        cell.capacity = Some(CellCapacity {
            objective: level.objective.clone(),
            rate_per_sec: held,
            bracket,
            stopped,
            client_bound: CellCapacity::client_bound_of(&windows, bracket),
            window_s: level.window.as_secs_f64(),
            budget_s: budget.as_secs_f64(),
            elapsed_s: started.elapsed().as_secs_f64(),
            windows,
        });
        failure.map_or(Ok(()), Err)
    }
}

/// How a driven search ended, as a result records it: the one mapping from the engine's
/// reasons to the report's, for the shootout's capacity levels and `foxbench load
/// --find-max` alike (this crate is the lowest that sees both types).
pub fn stopped(ended: Ended) -> Stopped {
    match ended {
        Ended::Search(load::capacity::Stopped::Converged) => Stopped::Converged,
        Ended::Search(load::capacity::Stopped::Budget) => Stopped::Budget,
        Ended::Search(load::capacity::Stopped::Floor) => Stopped::Floor,
        Ended::Search(load::capacity::Stopped::Ceiling) => Stopped::Ceiling,
        Ended::Interrupted => Stopped::Interrupted,
    }
}

/// The search's phase as a result's window records it: the one mapping, for the
/// shootout's capacity levels and `foxbench load --find-max` alike.
pub fn window_phase(phase: Phase) -> WindowPhase {
    match phase {
        Phase::Bracket => WindowPhase::Bracket,
        Phase::Bisect => WindowPhase::Bisect,
    }
}

#[cfg(test)]
mod tests;
