//! One agent's share of a plan run by several (`--shard I/N`), k6 execution-segment style.
//!
//! Whole-number parts of a plan (connections, `-n`) are spread by [`share`], the one rule
//! that also spreads connections over worker threads: the first `total % parts` parts get
//! one more, so the shares of all parts sum to the total exactly. The open model's
//! arrivals are striped: arrival `j` of the whole schedule (any [`crate::Rate`] shape) is
//! sent by shard `j % N`, so the shards' arrivals together are exactly the unsharded
//! schedule's, each at the instant it had there, and shard `i` of `-n` total requests
//! sends the arrivals `j < n` with `j % N == i`: [`share`]`(n, N, i)` of them.

use std::fmt;
use std::str::FromStr;

/// Part `index` of `total` spread over `parts`: `total / parts`, plus one for the first
/// `total % parts` parts. The shares of `0..parts` sum to `total` exactly.
pub fn share(total: u64, parts: u64, index: u64) -> u64 {
    debug_assert!(parts > 0 && index < parts);
    total / parts + u64::from(index < total % parts)
}

/// Shard `index` of `count` (`--shard I/N`, `0 <= I < N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    /// This agent's index, from 0.
    pub index: u64,
    /// How many agents share the plan.
    pub count: u64,
}

/// The largest `N` of `--shard I/N`: more agents than this is a typo.
pub const MAX_SHARDS: u64 = 100_000;

/// A `--shard` value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not `I/N` with two whole numbers.
    #[error("invalid shard {0:?}: expected I/N, e.g. 0/3 (agent 0 of 3; I from 0 to N-1)")]
    Syntax(String),
    /// `N` is 0 or too large.
    #[error("invalid shard {0:?}: N must be 1 to {MAX_SHARDS}")]
    Count(String),
    /// `I` is not below `N`.
    #[error("invalid shard {0:?}: I must be below N (agents are numbered 0 to N-1)")]
    Index(String),
}

impl Shard {
    /// The whole plan: shard 0 of 1.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// This shard's part of `total`.
    pub fn share(&self, total: u64) -> u64 {
        share(total, self.count, self.index)
    }

    /// Parses `I/N`.
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(text.to_string());
        let (i, n) = text.trim().split_once('/').ok_or_else(syntax)?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(i) || !digits(n) {
            return Err(syntax());
        }
        let count: u64 = n.parse().map_err(|_| ShardError::Count(text.to_string()))?;
        if count == 0 || count > MAX_SHARDS {
            return Err(ShardError::Count(text.to_string()));
        }
        let index: u64 = i.parse().map_err(|_| ShardError::Index(text.to_string()))?;
        if index >= count {
            return Err(ShardError::Index(text.to_string()));
        }
        Ok(Shard { index, count })
    }
}

impl FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Shard::parse(s)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests;
