//! The interval series of a long run in constant memory: the newest intervals at full
//! resolution, older ones merged pairwise into coarser ones, exactly.
//!
//! A run's intervals are numbered from its start (interval `i` covers
//! `[i, i + 1) × interval`). Every row is a whole dyadic block of that numbering: a row of
//! span `2^L` holds intervals `[b·2^L, (b + 1)·2^L)`. The blocks depend only on the
//! numbering, so agents that share a start instant (`--start-at`) coarsen onto the same
//! boundaries, and `foxbench merge` adds their rows block by block, exactly
//! ([`IntervalRow::merge`] adds the histograms). Dyadic blocks nest or are disjoint, never
//! overlap partially: that is what lets rows of different resolutions merge without
//! splitting one.
//!
//! [`Series`] keeps the newest `full` rows at span 1 and at most `coarse` rows before them,
//! their spans never growing from old to new. When a row leaves the full-resolution window
//! and the coarse rows are too many, the two oldest rows of the finest span that has two
//! merge into one of twice the span (like a binary counter). The number of rows is thus
//! bounded whatever the run's length; each row's span says its resolution.
//!
//! Rows are not all the same size: a row's histogram (compressed) grows with the distinct
//! latencies it holds, so a coarse row of 64 intervals weighs several times a row of one.
//! Bounded in rows only, the series grew by about a megabyte from 6,000 to 30,000 intervals
//! of 10 ms (issue 25, measured with a counting allocator in `tests/series_alloc.rs`). So the
//! coarse rows are bounded in bytes too ([`COARSE_BYTES`]): past it, more pairs merge, by
//! the same rule, until they fit. Merging the finest pair keeps the coarse rows' spans even
//! (merging the coarsest instead left the first 4 minutes of a 5-minute run in two rows):
//! for a given number of intervals, rows of one span hold the fewest bytes, since a row's
//! histogram grows more slowly than its span. Every merge removes a row and a push adds
//! one, so the merges stay one per push on average. How far a series coarsens now depends
//! on its rows' sizes, so two agents may coarsen a block differently; `merge` adds a
//! smaller block into the larger one that holds it, so their merge stays exact.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::IntervalRow;

/// Rows kept at full resolution by [`Series::for_load`]: the newest intervals.
pub const FULL_ROWS: usize = 2_000;
/// Coarse rows kept before them by [`Series::for_load`].
pub const COARSE_ROWS: usize = 500;
/// The most heap bytes the coarse rows of [`Series::for_load`] hold (their histograms'
/// text, mostly): 512 KiB, about a third of the 1.4 MB that its 500 coarse rows reached
/// over 30,000 intervals of 100 responses each, without it (`examples/series_bytes`).
pub const COARSE_BYTES: usize = 512 * 1024;

/// What a series is made of: a row that can take in the row that follows it.
pub trait Block: Clone {
    /// Why two rows cannot be merged.
    type Error;
    /// Sets how many base intervals the row's block spans (a power of two).
    fn set_span(&mut self, span: u64);
    /// Adds `later`, the rows that follow it in the same block, into this one.
    fn absorb(&mut self, later: &Self) -> Result<(), Self::Error>;
    /// Heap bytes the row holds (not counting the row itself).
    fn heap_bytes(&self) -> usize;
}

/// A bounded series: the newest rows at full resolution, older ones coarsened.
#[derive(Debug, Clone)]
pub struct Series<T> {
    full: usize,
    coarse_max: usize,
    coarse_bytes_max: usize,
    /// Heap bytes of the coarse rows now.
    coarse_bytes: usize,
    /// (first interval index, log2 of its span, row); spans never grow from old to new, so
    /// the rows of one span are consecutive.
    coarse: VecDeque<(u64, u32, T)>,
    fine: VecDeque<(u64, T)>,
    /// Rows pushed so far, merged or not.
    pushed: u64,
}

/// The fewest coarse rows a series keeps: with 64 there are always two of one span to merge
/// (spans are powers of two below 2^64).
pub const MIN_COARSE_ROWS: usize = 64;

impl<T: Block> Series<T> {
    /// A series that keeps `full` rows at full resolution (at least 1) and at most `coarse`
    /// before them (at least [`MIN_COARSE_ROWS`]), holding at most `coarse_bytes` of heap
    /// between them (exceeded only by rows no pair of which is left to merge, at most one
    /// per span).
    pub fn new(full: usize, coarse: usize, coarse_bytes: usize) -> Self {
        Self {
            full: full.max(1),
            coarse_max: coarse.max(MIN_COARSE_ROWS),
            coarse_bytes_max: coarse_bytes,
            coarse_bytes: 0,
            coarse: VecDeque::new(),
            fine: VecDeque::new(),
            pushed: 0,
        }
    }

    /// `foxbench load`'s bounds: [`FULL_ROWS`], [`COARSE_ROWS`] and [`COARSE_BYTES`].
    pub fn for_load() -> Self {
        Self::new(FULL_ROWS, COARSE_ROWS, COARSE_BYTES)
    }

    /// The most rows it ever holds.
    pub fn max_rows(&self) -> usize {
        self.full + self.coarse_max
    }

    /// Heap bytes the coarse rows hold now.
    pub fn coarse_bytes(&self) -> usize {
        self.coarse_bytes
    }

    /// Rows held now.
    pub fn len(&self) -> usize {
        self.coarse.len() + self.fine.len()
    }

    /// Rows pushed so far: a reader that holds the series' lock learns from it how many
    /// of the newest rows it has not seen.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// True before the first push.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends interval `index`; indices must follow each other from 0 (the engine passes
    /// on every interval, empty ones too).
    pub fn push(&mut self, index: u64, row: T) -> Result<(), T::Error> {
        self.fine.push_back((index, row));
        self.pushed += 1;
        if self.fine.len() > self.full {
            let (i, row) = self.fine.pop_front().expect("longer than full");
            self.coarse_bytes += row.heap_bytes();
            self.coarse.push_back((i, 0, row));
            if self.coarse.len() > self.coarse_max {
                if let Some(p) = self.finest_pair() {
                    self.merge_pair(p)?;
                }
            }
            while self.coarse_bytes > self.coarse_bytes_max {
                let Some(p) = self.finest_pair() else {
                    break;
                };
                self.merge_pair(p)?;
            }
        }
        Ok(())
    }

    /// The two oldest rows of the finest span that has two.
    fn finest_pair(&self) -> Option<usize> {
        let mut pair = None;
        for p in (1..self.coarse.len()).rev() {
            if self.coarse[p - 1].1 == self.coarse[p].1 {
                pair = Some(p - 1);
            } else if pair.is_some() {
                break;
            }
        }
        pair
    }

    /// Merges rows `p` and `p + 1`, the two oldest of their span. The first row of a span
    /// starts on a block of twice that span (every row before it is of a larger span, a
    /// multiple of it), so the pair is a whole dyadic block, and the merged row's span is no
    /// larger than those before it.
    fn merge_pair(&mut self, p: usize) -> Result<(), T::Error> {
        let (_, _, later) = self.coarse.remove(p + 1).expect("a pair");
        let (_, level, row) = &mut self.coarse[p];
        let before = row.heap_bytes() + later.heap_bytes();
        row.absorb(&later)?;
        *level += 1;
        row.set_span(1 << *level);
        self.coarse_bytes = self.coarse_bytes - before + row.heap_bytes();
        Ok(())
    }

    /// The rows, oldest first: coarse ones, then the full-resolution ones.
    pub fn rows(&self) -> impl Iterator<Item = &T> {
        let coarse = self.coarse.iter().map(|(_, _, r)| r);
        coarse.chain(self.fine.iter().map(|(_, r)| r))
    }

    /// The rows, oldest first, taken out.
    pub fn into_rows(self) -> Vec<T> {
        let coarse = self.coarse.into_iter().map(|(_, _, r)| r);
        coarse
            .chain(self.fine.into_iter().map(|(_, r)| r))
            .collect()
    }
}

/// Why two interval rows cannot be merged exactly.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RowMergeError {
    /// A row without its histogram (written before 2026-11-24).
    #[error("an interval without its histogram (hdr_base64; written before 2026-11-24) cannot be merged exactly")]
    NoHistogram,
    /// A histogram that does not decode, or of other bounds.
    #[error("{0}")]
    Histogram(String),
}

impl Block for IntervalRow {
    type Error = RowMergeError;

    fn set_span(&mut self, span: u64) {
        self.span_intervals = span;
    }

    fn absorb(&mut self, later: &Self) -> Result<(), RowMergeError> {
        self.merge(later)
    }

    fn heap_bytes(&self) -> usize {
        let text = |s: &String| s.capacity();
        let reasons = self.errors_by_reason.capacity()
            * std::mem::size_of::<crate::errors_by_reason::ReasonRow>()
            + self
                .errors_by_reason
                .iter()
                .map(|r| {
                    text(&r.kind)
                        + text(&r.code)
                        + text(&r.reason)
                        + r.hint.as_ref().map_or(0, text)
                })
                .sum::<usize>();
        self.hdr_base64.as_ref().map_or(0, text) + reasons
    }
}

/// A stretch of a series at one resolution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Segment {
    /// Its first row's start, seconds from the start of the run.
    pub start_s: f64,
    /// Its last row's end.
    pub end_s: f64,
    /// How long each of its rows is (the last may be shorter), seconds.
    pub resolution_s: f64,
    /// Rows in it.
    pub rows: u64,
}

/// The stretches of `rows` at one resolution each, oldest first.
pub fn segments(rows: &[IntervalRow], interval_s: f64) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    for row in rows {
        let resolution_s = row.span_intervals.max(1) as f64 * interval_s;
        let end_s = row.start_s + row.duration_s;
        match out.last_mut() {
            Some(s) if s.resolution_s == resolution_s => {
                s.end_s = end_s;
                s.rows += 1;
            }
            _ => out.push(Segment {
                start_s: row.start_s,
                end_s,
                resolution_s,
                rows: 1,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests;
