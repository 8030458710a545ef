//! One interval of a run: what completed in it, merged across the workers.

use std::time::Duration;

use crate::{Counts, Latency};

/// What happened in one interval of a run (by default one second), all workers merged.
///
/// Responses are counted in the interval in which they completed; so is their latency.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    /// 0 for the first interval of the run.
    pub index: u64,
    /// When it began, from the start of the run.
    pub start: Duration,
    /// How long it lasted: the interval length, or less for the run's last one.
    pub duration: Duration,
    /// Latency of the responses that completed in it: from when each was due (open
    /// model) or sent (closed model).
    pub latency: Latency,
    /// Open model: service time of the same responses, from when each request was handed
    /// to its connection (wrk2's `-U`); empty in the closed model, where it is `latency`.
    pub service: Latency,
    /// Latency of the same responses to their read by the client, whichever clock
    /// `latency` holds (the kernel's receive stamp, or the read).
    pub read_latency: Latency,
    /// What the client added to each response's latency: its read latency minus its
    /// latency to the kernel's receive stamp.
    pub client_delay: Latency,
    /// What the counters gained in it.
    pub counts: Counts,
}

impl Interval {
    /// Completed responses per second in this interval.
    pub fn rate_per_sec(&self) -> f64 {
        self.counts.completed() as f64 / self.duration.as_secs_f64().max(1e-9)
    }
}
