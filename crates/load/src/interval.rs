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

/// The most histogram sets ([`Spare`]) one worker holds: 4.4 MB at 270 KB a histogram.
pub(crate) const PAIRS: usize = 4;

/// An emptied set of one interval's histograms on its way back to its worker.
#[derive(Debug, Default)]
pub(crate) struct Spare {
    latency: Latency,
    service: Latency,
    read_latency: Latency,
    client_delay: Latency,
}

impl Spare {
    fn clear(&mut self) {
        self.latency.clear();
        self.service.clear();
        self.read_latency.clear();
        self.client_delay.clear();
    }
}

/// One worker's share of one interval.
#[derive(Debug)]
pub(crate) struct Part {
    worker: usize,
    index: u64,
    /// The worker will send nothing more for intervals up to this one.
    through: u64,
    hists: Spare,
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
    /// Their latency to the read, whichever clock `latency` holds.
    pub read_latency: Latency,
    /// What the client added to each: the read latency minus the kernel latency.
    pub client_delay: Latency,
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
            read_latency: Latency::new(),
            client_delay: Latency::new(),
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
        let new = Spare::default;
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
        let empty = self.empty_pair();
        let part = Part {
            worker: self.worker,
            index: self.index,
            through,
            hists: Spare {
                latency: std::mem::replace(&mut self.latency, empty.latency),
                service: std::mem::replace(&mut self.service, empty.service),
                read_latency: std::mem::replace(&mut self.read_latency, empty.read_latency),
                client_delay: std::mem::replace(&mut self.client_delay, empty.client_delay),
            },
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
    /// The whole run's read latency.
    pub total_read: Latency,
    /// The whole run's client delay.
    pub total_client_delay: Latency,
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
            total_read: Latency::new(),
            total_client_delay: Latency::new(),
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
        let h = self.free.pop().unwrap_or_default();
        Interval {
            index,
            start: Duration::from_nanos(ns(self.interval).saturating_mul(index)),
            duration: self.interval,
            latency: h.latency,
            service: h.service,
            read_latency: h.read_latency,
            client_delay: h.client_delay,
            counts: Counts::default(),
        }
    }

    /// Keeps a passed-on interval's histograms, emptied, for a later slot.
    fn recycle(&mut self, iv: Interval) {
        if self.free.len() < FREE_SLOTS {
            let mut h = Spare {
                latency: iv.latency,
                service: iv.service,
                read_latency: iv.read_latency,
                client_delay: iv.client_delay,
            };
            h.clear();
            self.free.push(h);
        }
    }

    /// Merges one part, then passes on every interval that no worker can add to any more.
    pub fn add(&mut self, part: Part, sink: &mut dyn FnMut(&Interval)) {
        let Part {
            worker,
            index,
            through,
            mut hists,
            counts,
        } = part;
        let slot = self.slot(index);
        slot.latency.merge(&hists.latency).expect("same bounds");
        slot.counts.merge(&counts);
        slot.service.merge(&hists.service).expect("same bounds");
        slot.read_latency
            .merge(&hists.read_latency)
            .expect("same bounds");
        slot.client_delay
            .merge(&hists.client_delay)
            .expect("same bounds");
        self.total.merge(&hists.latency).expect("same bounds");
        self.total_service
            .merge(&hists.service)
            .expect("same bounds");
        self.total_read
            .merge(&hists.read_latency)
            .expect("same bounds");
        self.total_client_delay
            .merge(&hists.client_delay)
            .expect("same bounds");
        hists.clear();
        // A worker that has finished no longer listens: its set is dropped.
        let _ = self.spares[worker].send(hists);
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
mod tests;
