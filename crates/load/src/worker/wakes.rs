//! The instants the worker's connections asked to be woken at ([`super::http::Http::wake_at`]):
//! one deadline per slot, earliest first.
//!
//! A deadline moves on nearly every packet under QUIC, so moving one must be cheap: the
//! old entry is left in the heap and skipped when it surfaces (it no longer matches its
//! slot's stamp), and the heap is compacted once such stale entries outnumber the live
//! ones, so that it holds at most about twice as many entries as there are deadlines. A
//! deadline fires once: taking it clears it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One slot's deadline.
#[derive(Debug, Clone, Copy, Default)]
struct Deadline {
    /// When, if the slot has one.
    at: Option<u64>,
    /// The slot's generation (its connection) when it was set.
    generation: u32,
    /// Bumped at each change: the one heap entry carrying it is the live one.
    stamp: u32,
}

/// Every slot's deadline, earliest first.
#[derive(Debug, Default)]
pub(super) struct Wakes {
    slots: Vec<Deadline>,
    /// `(at, slot, stamp)`: live when the slot's deadline still has that instant and stamp.
    heap: BinaryHeap<Reverse<(u64, usize, u32)>>,
    /// Slots with a deadline.
    live: usize,
}

impl Wakes {
    /// Room for `slots` slots' deadlines; `0` allocates nothing (a protocol with no timers).
    pub(super) fn new(slots: usize) -> Self {
        Self {
            slots: vec![Deadline::default(); slots],
            heap: BinaryHeap::with_capacity(2 * slots),
            live: 0,
        }
    }

    /// Sets (`Some`) or clears (`None`) the deadline of `slot`, whose connection is
    /// `generation`. Setting the deadline it already has changes nothing.
    pub(super) fn set(&mut self, slot: usize, generation: u32, at: Option<u64>) {
        let d = &mut self.slots[slot];
        if d.at == at && (at.is_none() || d.generation == generation) {
            return;
        }
        match (d.at.is_some(), at.is_some()) {
            (false, true) => self.live += 1,
            (true, false) => self.live -= 1,
            _ => {}
        }
        d.at = at;
        d.generation = generation;
        d.stamp = d.stamp.wrapping_add(1);
        if let Some(at) = at {
            self.heap.push(Reverse((at, slot, d.stamp)));
        }
        if self.heap.len() - self.live.min(self.heap.len()) > self.live {
            self.compact();
        }
    }

    /// The earliest deadline, if any slot has one.
    pub(super) fn next(&mut self) -> Option<u64> {
        self.skip_stale();
        self.heap.peek().map(|&Reverse((at, _, _))| at)
    }

    /// Takes the earliest deadline at or before `now`, clearing it: its slot and the
    /// generation it was set for.
    pub(super) fn take_due(&mut self, now: u64) -> Option<(usize, u32)> {
        self.skip_stale();
        let &Reverse((at, slot, _)) = self.heap.peek()?;
        if at > now {
            return None;
        }
        self.heap.pop();
        let d = &mut self.slots[slot];
        d.at = None;
        d.stamp = d.stamp.wrapping_add(1);
        self.live -= 1;
        Some((slot, d.generation))
    }

    /// Entries in the heap, stale ones included (for the tests' bound).
    #[cfg(test)]
    fn entries(&self) -> usize {
        self.heap.len()
    }

    fn is_live(
        slots: &[Deadline],
        &Reverse((at, slot, stamp)): &Reverse<(u64, usize, u32)>,
    ) -> bool {
        let d = slots[slot];
        d.at == Some(at) && d.stamp == stamp
    }

    /// Drops the stale entries on top of the heap.
    fn skip_stale(&mut self) {
        while let Some(top) = self.heap.peek() {
            if Self::is_live(&self.slots, top) {
                return;
            }
            self.heap.pop();
        }
    }

    /// Drops every stale entry: linear in the heap, which at least halves.
    fn compact(&mut self) {
        let slots = &self.slots;
        self.heap.retain(|e| Self::is_live(slots, e));
    }
}

#[cfg(test)]
mod tests;
