//! When requests fall due, and how a connection with room gets work.
//!
//! The worker never asks which load model is running: it offers a connection's room to
//! its [`Schedule`] and gets a [`Grant`]. The closed model grants at once, up to the room
//! (and the `-n` budget); the open model grants what has fallen due by now and times each
//! request from its due instant. A rate ramp is another due-time function here, not new
//! branches in the worker.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::{Arrival, Rate, Shard, Stop};

/// Shared request budget for `-n`: workers claim requests in chunks, not one by one,
/// so there is no atomic operation per request.
#[derive(Debug)]
pub(crate) struct Budget {
    total: u64,
    claimed: AtomicU64,
    chunk: u64,
}

impl Budget {
    pub(crate) fn new(total: u64, threads: usize) -> Self {
        // Chunks of at most 1/64 of a worker's share (and 256) keep the workers balanced at
        // the end; anything larger than one keeps claims rare.
        Self {
            total,
            claimed: AtomicU64::new(0),
            chunk: (total / (threads as u64 * 64).max(1)).clamp(1, 256),
        }
    }

    /// Requests not yet claimed by any worker.
    fn remaining(&self) -> u64 {
        self.total
            .saturating_sub(self.claimed.load(Ordering::Relaxed))
    }

    fn claim(&self, want: u64) -> u64 {
        let want = want.max(self.chunk);
        let before = self.claimed.fetch_add(want, Ordering::Relaxed);
        self.total.saturating_sub(before).min(want)
    }
}

/// The open model's due instants: request `j` of the whole run (all agents, all workers) is
/// due when the [`Rate`]'s integral reaches `j` (`j * interval` at a constant rate). Shard
/// `i` of `N` sends arrivals `i, i+N, i+2N...`, and its worker `w` of `T` every `T`th of
/// those from the `w`th: arrivals `i + N*w + N*T*k`. The phase offsets spread the agents'
/// and workers' arrivals evenly instead of firing `N*T` requests at each instant.
#[derive(Debug, Clone, PartialEq)]
struct Due {
    rate: Rate,
    phase: u64,
    stride: u64,
}

impl Due {
    /// When this worker's `k`-th request falls due, in ns from the start (`u64::MAX`: never).
    fn due_ns(&self, k: u64) -> u64 {
        self.rate
            .due_ns((k * self.stride + self.phase) as f64)
            .map_or(u64::MAX, |t| t as u64)
    }

    /// How many of this worker's requests are due by `now_ns`: the first `k` with
    /// `due_ns(k) > now_ns`. Consistent with `due_ns` at every boundary.
    fn due_by(&self, now_ns: u64) -> u64 {
        let j = self.rate.due_by(now_ns as f64).max(0.0) as u64;
        let mut k = if j < self.phase {
            0
        } else {
            (j - self.phase) / self.stride + 1
        };
        // Float rounding can put the estimate one off either way; settle it exactly.
        while k > 0 && self.due_ns(k - 1) > now_ns {
            k -= 1;
        }
        while self.due_ns(k) <= now_ns {
            k += 1;
        }
        k
    }
}

/// What a connection with room gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    /// `n` requests, this worker's sequence numbers `first..first + n`.
    Now { n: u64, first: u64 },
    /// Nothing is due yet: offer again at [`Schedule::next_due_ns`].
    Later,
    /// Nothing more will be sent.
    Never,
}

/// One worker's view of when requests are due and when the run ends.
#[derive(Debug)]
pub(crate) struct Schedule {
    /// `None`: the closed model, where a request is due as soon as there is room.
    rate: Option<Due>,
    budget: Option<Arc<Budget>>,
    /// Requests claimed from the budget and not yet granted.
    credit: u64,
    budget_done: bool,
    end_ns: Option<u64>,
    stopping: bool,
    /// Requests granted so far (this worker's next sequence number).
    issued: u64,
}

impl Schedule {
    /// Worker `worker`'s schedule among `threads`, in `shard`'s share of the plan.
    pub fn new(
        arrival: Arrival,
        stop: Stop,
        budget: Option<Arc<Budget>>,
        shard: Shard,
        worker: usize,
        threads: usize,
    ) -> Self {
        let rate = match arrival {
            Arrival::Closed => None,
            Arrival::Open { rate } => Some(Due {
                rate,
                phase: shard.index + shard.count * worker as u64,
                stride: shard.count * threads.max(1) as u64,
            }),
        };
        Self {
            rate,
            budget,
            credit: 0,
            budget_done: false,
            end_ns: match stop {
                Stop::Duration(d) => Some(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
                Stop::Requests(_) => None,
            },
            stopping: false,
            issued: 0,
        }
    }

    /// Offers `room` requests' worth of a connection at `now_ns`.
    #[inline]
    pub fn grant(&mut self, room: u64, now_ns: u64) -> Grant {
        if self.stopping || room == 0 {
            return Grant::Never;
        }
        let want = match &self.rate {
            None => room,
            Some(rate) => {
                let due = rate.due_by(self.within_run(now_ns));
                if due <= self.issued {
                    // Nothing more falls due within a timed run: the next is at or after
                    // its end.
                    let past_end = self.end_ns.is_some_and(|e| rate.due_ns(self.issued) >= e);
                    return if self.exhausted() || past_end {
                        Grant::Never
                    } else {
                        Grant::Later
                    };
                }
                room.min(due - self.issued)
            }
        };
        let n = self.take(want);
        if n == 0 {
            return Grant::Never;
        }
        let first = self.issued;
        self.issued += n;
        Grant::Now { n, first }
    }

    /// When request `seq` of this worker started, for its latency: when it was due in the
    /// open model, `now_ns` (when it was granted) in the closed model.
    #[inline]
    pub fn start_ns(&self, seq: u64, now_ns: u64) -> u64 {
        self.rate.as_ref().map_or(now_ns, |r| r.due_ns(seq))
    }

    /// When the next request falls due, if requests wait for an instant.
    pub fn next_due_ns(&self) -> Option<u64> {
        self.rate
            .as_ref()
            .map(|r| r.due_ns(self.issued))
            .filter(|&t| t != u64::MAX)
    }

    /// True in the open model, where requests wait for their due instant.
    pub fn is_open(&self) -> bool {
        self.rate.is_some()
    }

    /// Open model: how many of this worker's requests are due by `now_ns`.
    pub fn due_count(&self, now_ns: u64) -> u64 {
        self.rate.as_ref().map_or(0, |r| r.due_by(now_ns))
    }

    /// When a timed run ends, in ns from the start.
    pub fn end_ns(&self) -> Option<u64> {
        self.end_ns
    }

    /// `now_ns`, or the last instant of a timed run that is past: a request due at or
    /// after the end falls outside the run, so a worker that comes round late (preempted,
    /// or busy with other connections) neither sends it nor counts it unsent.
    fn within_run(&self, now_ns: u64) -> u64 {
        self.end_ns
            .map_or(now_ns, |end| now_ns.min(end.saturating_sub(1)))
    }

    /// True once the run should stop issuing: stopped, or past its end.
    pub fn ended(&mut self, now_ns: u64) -> bool {
        if self.end_ns.is_some_and(|e| now_ns >= e) {
            self.stopping = true;
        }
        self.stopping
    }

    /// Stops granting.
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    /// True when the `-n` budget is spent: nothing more will be granted.
    pub fn exhausted(&self) -> bool {
        self.budget.is_some() && self.budget_done && self.credit == 0
    }

    /// Requests that fell due by `now_ns` and were never granted (open model only).
    pub fn unsent(&self, now_ns: u64) -> u64 {
        let Some(rate) = &self.rate else {
            return 0;
        };
        let mut unsent = rate
            .due_by(self.within_run(now_ns))
            .saturating_sub(self.issued);
        if let Some(budget) = &self.budget {
            // Under -n, only requests the budget still held were ever going to be sent.
            unsent = unsent.min(self.credit + budget.remaining());
        }
        unsent
    }

    /// Takes up to `want` requests from the `-n` budget (always `want` without one).
    fn take(&mut self, want: u64) -> u64 {
        let Some(budget) = &self.budget else {
            return want;
        };
        if self.credit < want && !self.budget_done {
            let got = budget.claim(want - self.credit);
            if got == 0 {
                self.budget_done = true;
            }
            self.credit += got;
        }
        let n = want.min(self.credit);
        self.credit -= n;
        n
    }
}

/// The time a duration takes in whole nanoseconds, saturating.
pub(crate) fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
