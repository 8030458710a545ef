//! What a live view of the run (`foxbench shootout --dashboard`) is told as it goes: each
//! cell's status as it changes, and the loads of the running cell with their intervals.
//! The runner tells; it never waits on the view, and the view never reaches the engine.

use std::fmt::Debug;

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
    /// Verification showed it does not apply.
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
}
