//! Shared between the caller and the workers: the stop switch and live progress.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Live counters of one worker, published once per event-loop turn.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Progress {
    pub(crate) sent: AtomicU64,
    pub(crate) completed: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) connections_open: AtomicU64,
    pub(crate) spin_ns: AtomicU64,
}

/// Shared between the caller and the workers: the stop switch and live progress.
#[derive(Debug)]
pub struct Control {
    stop: AtomicBool,
    pub(crate) progress: Vec<Progress>,
}

/// A consistent-enough view of progress for a live display.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Requests issued.
    pub sent: u64,
    /// Responses completed.
    pub completed: u64,
    /// Requests failed with an error.
    pub errors: u64,
    /// Connections established and not closed yet: the engine's own count, so that a live
    /// display need not read the kernel's socket tables for it.
    pub connections_open: u64,
    /// Nanoseconds the workers have spun so far (every empty poll without a timeout: the
    /// open model's last stretch before a due instant, every empty turn of a worker that
    /// spins; [`crate::RunResult::spin`]), so that a live display can tell spin from work.
    pub spin_ns: u64,
}

impl Control {
    /// A control block for `threads` workers.
    pub fn new(threads: usize) -> Arc<Self> {
        Arc::new(Self {
            stop: AtomicBool::new(false),
            progress: (0..threads).map(|_| Progress::default()).collect(),
        })
    }

    /// Asks every worker to stop; they finish their current turn and report.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// True once [`Control::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sums the workers' live counters.
    pub fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        for p in &self.progress {
            s.sent += p.sent.load(Ordering::Relaxed);
            s.completed += p.completed.load(Ordering::Relaxed);
            s.errors += p.errors.load(Ordering::Relaxed);
            s.connections_open += p.connections_open.load(Ordering::Relaxed);
            s.spin_ns += p.spin_ns.load(Ordering::Relaxed);
        }
        s
    }
}
