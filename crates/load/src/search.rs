//! The capacity search of `foxbench load --find-max` and the shootout's capacity levels:
//! which constant rate to try next, given the verdicts of the windows tried so far.
//!
//! It is a pure state machine: it runs nothing and reads no clock. The caller asks
//! [`Search::next`] for the next window's rate (passing the time spent so far), runs a
//! constant-rate window of [`SearchConfig::window`] at that rate, judges the whole window
//! against the objective, and gives the verdict to [`Search::record`]. [`drive`] is that
//! loop; `measure::search` drives it, with its constants and configuration, for
//! `foxbench load --find-max` and the shootout's capacity levels, each with its own way of
//! running a window.
//!
//! Two phases. *Bracket*: from the start rate, double after every window that holds the
//! objective and halve after every one that fails, until a rate that held lies below one
//! that failed (or the floor fails, or the ceiling holds). *Bisect*: try the middle of the
//! bracket; a window that holds raises its floor, one that fails lowers its ceiling, until
//! the bracket is narrower than [`SearchConfig::precision`].
//!
//! Monotone by construction: every rate tried lies strictly inside the bracket of the
//! moment, so on any server, noisy or not, every window that held was at a lower rate than
//! every window that failed after the bracket closed, and the rate found never exceeds a
//! rate that failed. Each verdict is one whole window's, never one sample's.

use std::time::Duration;

/// How the search proceeds and when it stops.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    /// The first rate tried, requests per second.
    pub start_per_sec: f64,
    /// The lowest rate tried: when it fails, the objective is not met at all.
    pub floor_per_sec: f64,
    /// The highest rate tried: when it holds, the search stops there.
    pub ceiling_per_sec: f64,
    /// Bisection stops when `failed / held - 1` is at most this (0.02: within 2%).
    pub precision: f64,
    /// The length of each constant-rate window.
    pub window: Duration,
    /// The whole search's time budget, windows and what follows them.
    pub budget: Duration,
    /// Time kept back from the budget for what runs after the search (the spectrum).
    pub reserve: Duration,
}

impl SearchConfig {
    /// Checks the configuration, naming the first value that cannot work.
    pub fn validate(&self) -> Result<(), SearchError> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(self.floor_per_sec) || !positive(self.start_per_sec) {
            return Err(SearchError::Rate);
        }
        if !(self.floor_per_sec <= self.start_per_sec && self.start_per_sec <= self.ceiling_per_sec)
        {
            return Err(SearchError::Rate);
        }
        if !(self.precision.is_finite() && self.precision > 0.0 && self.precision < 1.0) {
            return Err(SearchError::Precision);
        }
        if self.window.is_zero() {
            return Err(SearchError::Window);
        }
        if self.window + self.reserve > self.budget {
            return Err(SearchError::Budget);
        }
        Ok(())
    }
}

/// What is wrong with a [`SearchConfig`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// The rates are not `0 < floor <= start <= ceiling`.
    #[error("the rates must be positive, with the floor at most the start rate")]
    Rate,
    /// The precision is not within (0, 1).
    #[error("the precision must lie between 0 and 1")]
    Precision,
    /// A window of no time.
    #[error("a window must last longer than zero")]
    Window,
    /// Not even one window fits the budget.
    #[error("the time budget does not hold one window and the spectrum after it: raise the budget or shorten the window")]
    Budget,
}

/// The search's phase when a window was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Doubling or halving to find a rate that holds below one that fails.
    Bracket,
    /// Halving the bracket.
    Bisect,
}

/// Why the search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The bracket is within the precision.
    Converged,
    /// The time budget had no room for another window: the bracket is the best known.
    Budget,
    /// The floor rate failed: the objective is not met at any rate tried.
    Floor,
    /// The ceiling rate held: the capacity is at least the ceiling.
    Ceiling,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run a constant-rate window at this rate (requests per second) and record its verdict.
    Window {
        /// The rate.
        rate_per_sec: f64,
        /// Which phase asks for it.
        phase: Phase,
    },
    /// The search is over.
    Done(Stopped),
}

/// The state of a capacity search: the bracket so far.
#[derive(Debug, Clone)]
pub struct Search {
    config: SearchConfig,
    /// The highest rate whose window held the objective.
    held: Option<f64>,
    /// The lowest rate whose window failed it.
    failed: Option<f64>,
    /// The rate handed out by `next` and not yet recorded.
    pending: Option<f64>,
}

impl Search {
    /// A search that has tried nothing yet.
    pub fn new(config: SearchConfig) -> Result<Search, SearchError> {
        config.validate()?;
        Ok(Search {
            config,
            held: None,
            failed: None,
            pending: None,
        })
    }

    /// Its configuration.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// The rate to try next, or why the search is over; `elapsed` is the time the search
    /// has taken so far. Asking again before [`record`](Self::record) repeats the answer.
    pub fn next(&mut self, elapsed: Duration) -> Next {
        let c = &self.config;
        let (rate, phase) = match (self.held, self.failed) {
            (None, None) => (c.start_per_sec, Phase::Bracket),
            (Some(held), None) if held >= c.ceiling_per_sec => return Next::Done(Stopped::Ceiling),
            (Some(held), None) => ((held * 2.0).min(c.ceiling_per_sec), Phase::Bracket),
            (None, Some(failed)) if failed <= c.floor_per_sec => return Next::Done(Stopped::Floor),
            (None, Some(failed)) => ((failed / 2.0).max(c.floor_per_sec), Phase::Bracket),
            (Some(held), Some(failed)) => {
                if failed / held - 1.0 <= c.precision {
                    return Next::Done(Stopped::Converged);
                }
                (Self::middle(held, failed), Phase::Bisect)
            }
        };
        if elapsed + c.window + c.reserve > c.budget {
            return Next::Done(Stopped::Budget);
        }
        self.pending = Some(rate);
        Next::Window {
            rate_per_sec: rate,
            phase,
        }
    }

    /// The middle of a bracket, in whole requests per second when that still lies inside.
    fn middle(held: f64, failed: f64) -> f64 {
        let m = (held + failed) / 2.0;
        let rounded = m.round();
        if rounded > held && rounded < failed {
            rounded
        } else {
            m
        }
    }

    /// Records the verdict of the window at `rate_per_sec` (the rate `next` gave).
    ///
    /// A verdict for any other rate is ignored: the bracket moves only on windows the
    /// search asked for, which all lie inside it.
    pub fn record(&mut self, rate_per_sec: f64, held: bool) {
        if self.pending != Some(rate_per_sec) {
            return;
        }
        self.pending = None;
        if held {
            self.held = Some(self.held.map_or(rate_per_sec, |h| h.max(rate_per_sec)));
        } else {
            self.failed = Some(self.failed.map_or(rate_per_sec, |f| f.min(rate_per_sec)));
        }
    }

    /// The highest rate that held and the lowest that failed, so far.
    pub fn bracket(&self) -> (Option<f64>, Option<f64>) {
        (self.held, self.failed)
    }
}

/// Why a driven search ended: the search's own reason, or an interrupt between windows
/// (or a window that asked to end it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The search stopped by itself.
    Search(Stopped),
    /// `interrupted` held, or a window answered `None`.
    Interrupted,
}

/// Drives `search` to its end: asks it for each window, runs that window with `window`
/// (given the rate and phase, it answers whether the objective held, or `None` when the
/// search must end there, its caller keeping why), and records the verdict. `elapsed` is
/// the time spent so far; `interrupted` is asked before each window, and a verdict is not
/// recorded when an interrupt came during its window. An error from `window` ends the
/// search at once.
pub fn drive<E>(
    search: &mut Search,
    elapsed: impl Fn() -> Duration,
    interrupted: impl Fn() -> bool,
    mut window: impl FnMut(f64, Phase) -> Result<Option<bool>, E>,
) -> Result<Ended, E> {
    loop {
        if interrupted() {
            return Ok(Ended::Interrupted);
        }
        let (rate, phase) = match search.next(elapsed()) {
            Next::Window {
                rate_per_sec,
                phase,
            } => (rate_per_sec, phase),
            Next::Done(why) => return Ok(Ended::Search(why)),
        };
        let Some(held) = window(rate, phase)? else {
            return Ok(Ended::Interrupted);
        };
        if !interrupted() {
            search.record(rate, held);
        }
    }
}

/// The window a result's body comes from, given each window's rate and whether it was a
/// spectrum window (run after the search): the search's window at the rate found (`held`),
/// else the lowest rate tried.
pub fn body_window(windows: &[(f64, bool)], held: Option<f64>) -> Option<usize> {
    match held {
        Some(rate) => windows
            .iter()
            .position(|&(r, spectrum)| r == rate && !spectrum),
        None => windows
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
            .map(|(i, _)| i),
    }
}

#[cfg(test)]
mod tests;
