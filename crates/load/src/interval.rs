//! Interval recording: each worker records into the current interval's histogram and hands
//! it off at the boundary; the caller's thread merges the workers' parts into one
//! [`Interval`] per period and passes it on.
//!
//! A response is recorded once, into its interval; the whole run's histogram is the merge
//! of every interval. The engine keeps no interval after passing it on, so memory stays
//! constant however long the run.

use std::collections::VecDeque;
use std::sync::mpsc::Sender;
use std::time::Duration;

use stats::{Counts, Interval, Latency};

use crate::schedule::ns;

/// One worker's share of one interval.
#[derive(Debug)]
pub(crate) struct Part {
    worker: usize,
    index: u64,
    /// The worker will send nothing more for intervals up to this one.
    through: u64,
    latency: Latency,
    service: Latency,
    counts: Counts,
}

/// The worker's side: the current interval's histogram and where to hand it off.
#[derive(Debug)]
pub(crate) struct CurrentInterval {
    worker: usize,
    interval_ns: u64,
    index: u64,
    next_ns: u64,
    /// Latency of responses completed in the current interval.
    pub latency: Latency,
    /// Their service time (open model only).
    pub service: Latency,
    /// The counters as they stood when the current interval began.
    base: Counts,
    tx: Sender<Part>,
}

impl CurrentInterval {
    pub fn new(worker: usize, interval: Duration, tx: Sender<Part>) -> Self {
        let interval_ns = ns(interval).max(1);
        Self {
            worker,
            interval_ns,
            index: 0,
            next_ns: interval_ns,
            latency: Latency::new(),
            service: Latency::new(),
            base: Counts::default(),
            tx,
        }
    }

    /// Hands off the current interval if `now_ns` is past its end. One comparison per call
    /// otherwise.
    #[inline]
    pub fn rotate(&mut self, now_ns: u64, counts: &Counts) {
        if now_ns >= self.next_ns {
            let next = now_ns / self.interval_ns;
            self.hand_off(next - 1, counts);
            self.index = next;
            self.next_ns = (next + 1).saturating_mul(self.interval_ns);
        }
    }

    /// Hands off the last, partial interval.
    pub fn finish(&mut self, counts: &Counts) {
        self.hand_off(u64::MAX, counts);
    }

    fn hand_off(&mut self, through: u64, counts: &Counts) {
        let part = Part {
            worker: self.worker,
            index: self.index,
            through,
            latency: std::mem::take(&mut self.latency),
            service: std::mem::take(&mut self.service),
            counts: counts.since(&self.base),
        };
        self.base = *counts;
        // The collector outlives the workers; a send can only fail if it panicked.
        let _ = self.tx.send(part);
    }
}

/// The caller's side: merges parts into intervals and the run's total histogram.
#[derive(Debug)]
pub(crate) struct Collector {
    interval: Duration,
    /// Per worker: every interval up to this one is complete (`u64::MAX`: finished).
    through: Vec<Option<u64>>,
    /// Intervals not yet passed on, consecutive from index `next`.
    pending: VecDeque<Interval>,
    next: u64,
    /// The whole run's latency: every part merged.
    pub total: Latency,
    /// The whole run's service time.
    pub total_service: Latency,
}

impl Collector {
    pub fn new(interval: Duration, workers: usize) -> Self {
        Self {
            interval,
            through: vec![None; workers],
            pending: VecDeque::new(),
            next: 0,
            total: Latency::new(),
            total_service: Latency::new(),
        }
    }

    fn slot(&mut self, index: u64) -> &mut Interval {
        // A worker's parts come after everything it declared complete, and nothing is passed
        // on before every worker declared it complete: so `index >= self.next`.
        debug_assert!(index >= self.next);
        while self.next + (self.pending.len() as u64) <= index {
            let k = self.next + self.pending.len() as u64;
            self.pending.push_back(self.empty(k));
        }
        &mut self.pending[(index - self.next) as usize]
    }

    fn empty(&self, index: u64) -> Interval {
        Interval {
            index,
            start: Duration::from_nanos(ns(self.interval).saturating_mul(index)),
            duration: self.interval,
            latency: Latency::new(),
            service: Latency::new(),
            counts: Counts::default(),
        }
    }

    /// Merges one part, then passes on every interval that no worker can add to any more.
    pub fn add(&mut self, part: Part, sink: &mut dyn FnMut(&Interval)) {
        let slot = self.slot(part.index);
        slot.latency.merge(&part.latency).expect("same bounds");
        slot.counts.merge(&part.counts);
        slot.service.merge(&part.service).expect("same bounds");
        self.total.merge(&part.latency).expect("same bounds");
        self.total_service
            .merge(&part.service)
            .expect("same bounds");
        self.through[part.worker] = Some(part.through);
        let complete = self
            .through
            .iter()
            .map(|t| t.unwrap_or(0))
            .min()
            .unwrap_or(0);
        let started = self.through.iter().all(Option::is_some);
        while started && self.pending.front().is_some_and(|iv| iv.index <= complete) {
            if complete == u64::MAX {
                // Every worker finished: the rest wait for the run's end to get their length.
                break;
            }
            let iv = self.pending.pop_front().expect("checked");
            self.next += 1;
            sink(&iv);
        }
    }

    /// Passes on what is left once every worker ended, the last interval cut at `elapsed`.
    pub fn finish(&mut self, elapsed: Duration, sink: &mut dyn FnMut(&Interval)) {
        while let Some(mut iv) = self.pending.pop_front() {
            self.next += 1;
            if iv.start >= elapsed && iv.counts == Counts::default() && iv.latency.is_empty() {
                continue; // an empty interval that began after the run ended
            }
            iv.duration = iv.duration.min(elapsed.saturating_sub(iv.start));
            sink(&iv);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn parts_from_skewed_workers_merge_into_consecutive_intervals() {
        let (tx, rx) = channel();
        let mut a = CurrentInterval::new(0, Duration::from_millis(10), tx.clone());
        let mut b = CurrentInterval::new(1, Duration::from_millis(10), tx);
        let mut ca = Counts::default();
        let mut cb = Counts::default();
        let ms = 1_000_000;
        // Worker a: one response in each of intervals 0, 1 and 3; b: two in 0, then idle
        // until it finishes inside interval 3.
        a.latency.record_ns(5 * ms);
        ca.ok += 1;
        a.rotate(12 * ms, &ca);
        a.latency.record_ns(7 * ms);
        ca.ok += 1;
        a.rotate(35 * ms, &ca);
        a.latency.record_ns(9 * ms);
        ca.ok += 1;
        b.latency.record_ns(ms);
        b.latency.record_ns(2 * ms);
        cb.ok += 2;
        b.rotate(31 * ms, &cb);
        b.finish(&cb);
        a.finish(&ca);

        let mut c = Collector::new(Duration::from_millis(10), 2);
        let mut seen: Vec<Interval> = Vec::new();
        for part in rx.try_iter() {
            c.add(part, &mut |iv| seen.push(iv.clone()));
        }
        assert_eq!(seen.len(), 3, "0, 1 and 2 complete before the end");
        c.finish(Duration::from_millis(37), &mut |iv| seen.push(iv.clone()));
        let got: Vec<(u64, u64, u64, u64)> = seen
            .iter()
            .map(|iv| {
                (
                    iv.index,
                    iv.counts.ok,
                    iv.latency.len(),
                    iv.duration.as_millis() as u64,
                )
            })
            .collect();
        assert_eq!(
            got,
            [(0, 3, 3, 10), (1, 1, 1, 10), (2, 0, 0, 10), (3, 1, 1, 7)]
        );
        assert_eq!(c.total.len(), 5, "the total is every part merged");
        assert_eq!(seen[3].start, Duration::from_millis(30));
    }
}
