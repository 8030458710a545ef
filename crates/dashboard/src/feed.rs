//! The bounded lists a page gets besides the interval rows, as data: one [`Feed`] per kind,
//! each with its event name and how many items a late page gets.

use std::collections::VecDeque;

use serde::Serialize;

/// A kind of item the pages are sent as it comes, besides the interval rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// The client's CPU and connections, once a second ([`crate::Gauge`]).
    Gauges,
    /// Open model: each interval's service time ([`crate::ServicePoint`]).
    Service,
    /// `--find-max`: each window of the search as it ends ([`crate::WindowPoint`]).
    Windows,
    /// `foxbench shootout`: a cell of the matrix each time its status changes
    /// ([`crate::CellState`]); the page keeps the newest per cell.
    Cells,
}

impl Feed {
    /// Every feed, in the order a page is sent them.
    pub const ALL: [Feed; 4] = [Feed::Gauges, Feed::Service, Feed::Windows, Feed::Cells];

    /// The event's name.
    pub fn event(self) -> &'static str {
        match self {
            Feed::Gauges => "gauges",
            Feed::Service => "service",
            Feed::Windows => "windows",
            Feed::Cells => "cells",
        }
    }

    /// Items kept for a late page; older ones are dropped (the final report has them all).
    pub fn kept(self) -> usize {
        match self {
            // An hour at one a second.
            Feed::Gauges => crate::GAUGES_KEPT,
            // As many as the series keeps at full resolution; coarse rows have none.
            Feed::Service => report::series::FULL_ROWS,
            // A search runs a few dozen windows; a thousand is days of them.
            Feed::Windows => 1_000,
            // A few updates per cell: thousands of cells.
            Feed::Cells => 10_000,
        }
    }

    /// Whether the feed belongs to one run (a cell, a window) and starts empty with the next.
    pub fn per_run(self) -> bool {
        matches!(self, Feed::Gauges | Feed::Service)
    }

    fn index(self) -> usize {
        Feed::ALL.iter().position(|f| *f == self).unwrap_or(0)
    }
}

/// One feed's newest items, as JSON, and how many were ever pushed.
#[derive(Debug, Default)]
struct Kept {
    items: VecDeque<String>,
    pushed: u64,
}

/// Every feed's items.
#[derive(Debug, Default)]
pub(crate) struct Feeds {
    kept: [Kept; 4],
}

impl Feeds {
    /// Adds one item to `feed`, dropping its oldest beyond [`Feed::kept`].
    pub fn push(&mut self, feed: Feed, item: &impl Serialize) {
        let k = &mut self.kept[feed.index()];
        if k.items.len() >= feed.kept() {
            k.items.pop_front();
        }
        k.items
            .push_back(serde_json::to_string(item).expect("feed items serialize"));
        k.pushed += 1;
    }

    /// Empties the feeds of one run, for the next (their counts go on).
    pub fn next_run(&mut self) {
        for f in Feed::ALL.into_iter().filter(|f| f.per_run()) {
            self.kept[f.index()].items.clear();
        }
    }

    /// Items pushed to every feed so far.
    pub fn pushed(&self) -> [u64; 4] {
        std::array::from_fn(|i| self.kept[i].pushed)
    }

    /// The items of each feed pushed after `seen` (those still kept), as one JSON array per
    /// feed with any; and the new counts.
    pub fn since(&self, seen: [u64; 4]) -> (Vec<(Feed, String)>, [u64; 4]) {
        let mut out = Vec::new();
        for f in Feed::ALL {
            let k = &self.kept[f.index()];
            let new = (k.pushed.saturating_sub(seen[f.index()]) as usize).min(k.items.len());
            if new > 0 {
                let items: Vec<&str> = k
                    .items
                    .iter()
                    .skip(k.items.len() - new)
                    .map(String::as_str)
                    .collect();
                out.push((f, format!("[{}]", items.join(","))));
            }
        }
        (out, self.pushed())
    }
}

#[cfg(test)]
mod tests;
