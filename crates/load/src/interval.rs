//! Interval recording: each worker records into the current interval's histogram and hands
//! it off at the boundary; the caller's thread merges the workers' parts into one
//! [`Interval`] per period and passes it on.
//!
//! A response is recorded once, into its interval; the whole run's histogram is the merge
//! of every interval. The engine keeps no interval after passing it on, so memory stays
//! constant however long the run.
//!
//! The histograms are recycled, not made per interval (issue 25: a new 270 KB histogram per
//! worker per interval, over an unbounded channel, let a slow consumer grow a debug build
//! to 213 MB): the collector empties each part's histograms once merged and sends them back
//! to their worker, which records the next interval into them. A worker holds at most
//! [`PAIRS`] pairs (the one it records into and those on their way through the collector and
//! back); when every one is in the collector's hands (the consumer of the intervals is that
//! far behind), its hand-off waits for one to come back. Nothing is dropped: the wait is
//! counted ([`CurrentInterval::waits`], the run's `interval_waits`, which `foxbench load`
//! warns of), and the requests it delays are measured late, as any stall of the client is.
//! A fixed count, not a time's worth: a second's worth at 10 ms (up to 64 pairs of 270 KB)
//! let one lag of the consumer in a 5-minute soak on a loaded machine raise RSS by 15 MiB
//! for the rest of the run (freed pairs stay in the allocator's arenas); four pairs kept
//! it flat, at the price of waits counted (150 in that soak at load average 36).

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::time::Duration;

use stats::{Counts, Interval, Latency};

use crate::schedule::ns;

/// The most histogram pairs (latency, service) one worker holds: 2.2 MB at 270 KB a histogram.
pub(crate) const PAIRS: usize = 4;

/// An emptied pair of histograms on its way back to its worker.
pub(crate) type Spare = (Latency, Latency);

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
    /// Emptied pairs back from the collector.
    spares: Receiver<Spare>,
    /// Pairs made so far, at most `pairs`.
    made: usize,
    /// The most pairs it makes ([`PAIRS`]).
    pairs: usize,
    /// Hand-offs that waited for the collector to send a pair back.
    pub waits: u64,
}

impl CurrentInterval {
    pub fn new(
        worker: usize,
        interval: Duration,
        tx: Sender<Part>,
        spares: Receiver<Spare>,
    ) -> Self {
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
            spares,
            made: 1,
            pairs: PAIRS,
            waits: 0,
        }
    }

    /// An empty pair to record the next interval into: one sent back, else a new one while
    /// fewer than `pairs` exist, else one waited for.
    fn empty_pair(&mut self) -> Spare {
        let new = || (Latency::new(), Latency::new());
        match self.spares.try_recv() {
            Ok(pair) => pair,
            Err(TryRecvError::Empty) if self.made < self.pairs => {
                self.made += 1;
                new()
            }
            Err(TryRecvError::Empty) => {
                self.waits += 1;
                // The collector sends a pair back as soon as it has merged the part, whatever
                // its consumer does with the interval; it is gone only if it panicked.
                self.spares.recv().unwrap_or_else(|_| new())
            }
            Err(TryRecvError::Disconnected) => new(),
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
        let (latency, service) = self.empty_pair();
        let part = Part {
            worker: self.worker,
            index: self.index,
            through,
            latency: std::mem::replace(&mut self.latency, latency),
            service: std::mem::replace(&mut self.service, service),
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
    /// Per worker: where its parts' histograms go back, emptied.
    spares: Vec<Sender<Spare>>,
    /// Emptied histograms of intervals passed on, for the next intervals' slots.
    free: Vec<Spare>,
}

/// The most emptied interval slots the collector keeps for reuse.
const FREE_SLOTS: usize = 4;

impl Collector {
    /// A collector for `spares.len()` workers, sending each its parts' histograms back.
    pub fn new(interval: Duration, spares: Vec<Sender<Spare>>) -> Self {
        Self {
            interval,
            through: vec![None; spares.len()],
            pending: VecDeque::new(),
            next: 0,
            total: Latency::new(),
            total_service: Latency::new(),
            spares,
            free: Vec::new(),
        }
    }

    fn slot(&mut self, index: u64) -> &mut Interval {
        // A worker's parts come after everything it declared complete, and nothing is passed
        // on before every worker declared it complete: so `index >= self.next`.
        debug_assert!(index >= self.next);
        while self.next + (self.pending.len() as u64) <= index {
            let k = self.next + self.pending.len() as u64;
            let iv = self.empty(k);
            self.pending.push_back(iv);
        }
        &mut self.pending[(index - self.next) as usize]
    }

    fn empty(&mut self, index: u64) -> Interval {
        let (latency, service) = self
            .free
            .pop()
            .unwrap_or_else(|| (Latency::new(), Latency::new()));
        Interval {
            index,
            start: Duration::from_nanos(ns(self.interval).saturating_mul(index)),
            duration: self.interval,
            latency,
            service,
            counts: Counts::default(),
        }
    }

    /// Keeps a passed-on interval's histograms, emptied, for a later slot.
    fn recycle(&mut self, iv: Interval) {
        if self.free.len() < FREE_SLOTS {
            let (mut latency, mut service) = (iv.latency, iv.service);
            latency.clear();
            service.clear();
            self.free.push((latency, service));
        }
    }

    /// Merges one part, then passes on every interval that no worker can add to any more.
    pub fn add(&mut self, part: Part, sink: &mut dyn FnMut(&Interval)) {
        let Part {
            worker,
            index,
            through,
            mut latency,
            mut service,
            counts,
        } = part;
        let slot = self.slot(index);
        slot.latency.merge(&latency).expect("same bounds");
        slot.counts.merge(&counts);
        slot.service.merge(&service).expect("same bounds");
        self.total.merge(&latency).expect("same bounds");
        self.total_service.merge(&service).expect("same bounds");
        latency.clear();
        service.clear();
        // A worker that has finished no longer listens: its pair is dropped.
        let _ = self.spares[worker].send((latency, service));
        self.through[worker] = Some(through);
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
            self.recycle(iv);
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
        let (spare_a, spares_a) = channel();
        let (spare_b, spares_b) = channel();
        let mut a = CurrentInterval::new(0, Duration::from_millis(10), tx.clone(), spares_a);
        let mut b = CurrentInterval::new(1, Duration::from_millis(10), tx, spares_b);
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

        let mut c = Collector::new(Duration::from_millis(10), vec![spare_a, spare_b]);
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

    /// Issue 25: each hand-off made two new 270 KB histograms, and nothing bounded how many
    /// a slow consumer let pile up. A worker now makes at most `PAIRS` pairs, gets
    /// them back emptied once merged, and waits (counted) when all are out.
    #[test]
    fn a_worker_reuses_its_histograms_and_waits_when_all_are_out() {
        let (tx, rx) = channel();
        let (spare_tx, spares) = channel();
        let mut w = CurrentInterval::new(0, Duration::from_millis(1), tx, spares);
        let pairs = w.pairs;
        assert_eq!(pairs, PAIRS);
        let mut counts = Counts::default();
        let ms = 1_000_000;
        // No collector yet: the worker makes its pairs, up to the bound, and never waits.
        for i in 1..pairs as u64 {
            w.latency.record_ns(i * ms);
            counts.ok += 1;
            w.rotate(i * ms, &counts);
        }
        assert_eq!((w.made, w.waits), (pairs, 0));
        let parts: Vec<Part> = rx.try_iter().collect();
        assert_eq!(parts.len(), pairs - 1);
        // The collector merges them and sends every pair back, emptied.
        let mut c = Collector::new(Duration::from_millis(1), vec![spare_tx]);
        let mut seen = Vec::new();
        for part in parts {
            c.add(part, &mut |iv| seen.push((iv.index, iv.latency.len())));
        }
        let want: Vec<(u64, u64)> = (0..pairs as u64 - 1).map(|i| (i, 1)).collect();
        assert_eq!(seen, want);
        // The next hand-offs take the pairs sent back: no new one, no wait, and each starts
        // empty.
        for i in pairs as u64..2 * pairs as u64 - 1 {
            assert!(w.latency.is_empty() && w.service.is_empty());
            w.latency.record_ns(i * ms);
            counts.ok += 1;
            w.rotate(i * ms, &counts);
        }
        assert_eq!((w.made, w.waits), (pairs, 0));
        // Every pair is out again and none comes back until the collector runs: the next
        // hand-off waits, counted, and goes on once one is back. The collector starts only
        // once the worker sleeps in that wait: started at once, it could send a pair back
        // before the hand-off looked, and the hand-off would not wait (a flaky failure).
        let (tid_tx, tid_rx) = channel();
        let worker = std::thread::spawn(move || {
            let _ = tid_tx.send(nix::unistd::gettid().as_raw());
            w.latency.record_ns(ms);
            counts.ok += 1;
            w.rotate(200 * ms, &counts);
            w.finish(&counts);
            (w, counts)
        });
        let tid = tid_rx.recv().unwrap();
        testkit::wait_until(
            Duration::from_secs(30),
            "the worker to wait for a pair",
            || {
                probe::thread_waits(std::process::id() as i32).is_ok_and(|threads| {
                    threads
                        .iter()
                        .any(|t| t.tid == tid && t.wait == probe::Wait::Futex)
                })
            },
        );
        let collector = std::thread::spawn(move || {
            let mut total = 0;
            for part in rx {
                c.add(part, &mut |iv| total += iv.latency.len());
            }
            c.finish(Duration::from_millis(300), &mut |iv| {
                total += iv.latency.len()
            });
            total
        });
        let (w, counts) = worker.join().unwrap();
        assert!(w.waits >= 1, "a hand-off with every pair out waits");
        assert_eq!(w.made, pairs, "and makes no new pair");
        drop(w);
        let total = collector.join().unwrap();
        assert_eq!(
            total + seen.len() as u64,
            counts.ok,
            "every response is in one interval"
        );
    }
}
