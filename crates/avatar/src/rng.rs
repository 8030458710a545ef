//! A small per-worker pseudo-random generator: wyrand, with unbiased bounded draws.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

/// wyrand: one add and one 128-bit multiply per draw, no syscall, not cryptographic.
///
/// Avatars only need to look random to a person, so a fast statistical generator is enough.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// Creates a generator from a fixed seed (tests, fuzzing).
    pub fn from_seed(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// Creates a generator seeded from the OS (through std's `RandomState`) and `stream`.
    pub fn from_entropy(stream: u64) -> Self {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(stream);
        Rng::from_seed(hasher.finish())
    }

    /// Returns the next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0xa076_1d64_78bd_642f);
        let t = u128::from(self.state) * u128::from(self.state ^ 0xe703_7ed1_a0b4_28db);
        ((t >> 64) as u64) ^ (t as u64)
    }

    /// Returns a uniform value in `0..n` without modulo bias (Lemire's method); `n` must be > 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            // Only here can the low word fall in the biased zone; `threshold` is 2^64 mod n.
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }
}

#[cfg(test)]
mod tests;
