//! Latency recording for foxbench: HDR histograms, merging, summaries and serialization.
//!
//! This crate owns how samples are kept and summarised, and the outcome counters of a run
//! ([`Counts`]), with the failures by reason ([`reason`]: small codes for an errno, a TLS
//! alert, where a response stood; their words are the `report` crate's). It does no I/O
//! and touches no socket: the load engine
//! records durations into a [`Latency`] per worker and merges them, and the reports read
//! [`Summary`] values and [`Counts`]. Every sample lands in a
//! fixed-size histogram, so memory stays constant however long a run is. It also owns the
//! significance test that `foxbench compare` applies to repeats ([`significance`]).
//! It also holds [`setting`]: the settings an error or a hint names, worded by each edge.
#![forbid(unsafe_code)]

use std::time::Duration;

mod counts;
pub mod hlog;
mod interval;
pub mod reason;
pub mod setting;
pub mod significance;
pub use counts::Counts;
pub use interval::Interval;
pub use reason::{Reason, Reasons};

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// The largest value a histogram tracks: one hour, in nanoseconds. Larger values saturate.
pub const HIGHEST_NS: u64 = 3_600_000_000_000;

/// Significant decimal digits kept: values are exact to within 0.1%.
pub const SIGFIG: u8 = 3;

/// The percentiles every summary reports, as in wrk's and ab's tables.
pub const PERCENTILES: [f64; 9] = [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 99.0, 99.9, 99.99];

/// Errors from decoding a serialized histogram.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The text was not valid base64.
    #[error("histogram is not valid base64: {0}")]
    Base64(#[from] base64::DecodeError),
    /// The bytes were not an HdrHistogram V2 encoding, compressed or not.
    #[error("histogram is not a valid HdrHistogram V2 encoding (compressed or not): {0}")]
    Decode(String),
    /// Two histograms could not be merged.
    #[error("histograms cannot be merged: {0}")]
    Merge(String),
    /// A histogram tracks other bounds than foxbench's (1 ns to one hour, 3 digits).
    #[error("histogram bounds {low}..{high} ns at {sigfig} digits differ from foxbench's 1..{HIGHEST_NS} ns at {SIGFIG}: it was not written by this foxbench")]
    Bounds {
        /// Its lowest discernible value.
        low: u64,
        /// Its highest trackable value.
        high: u64,
        /// Its significant digits.
        sigfig: u8,
    },
}

/// A histogram of durations in nanoseconds, 1 ns to one hour, at 3 significant digits.
#[derive(Clone, Debug)]
pub struct Latency {
    hist: Histogram<u64>,
}

impl Default for Latency {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for Latency {
    fn eq(&self, other: &Self) -> bool {
        self.hist == other.hist
    }
}

impl Latency {
    /// An empty histogram.
    pub fn new() -> Self {
        let hist = Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG)
            .expect("constant histogram bounds are valid");
        Self { hist }
    }

    /// Records one duration given in nanoseconds; values beyond one hour saturate.
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.hist.saturating_record(ns.max(1));
    }

    /// Records one duration.
    #[inline]
    pub fn record(&mut self, d: Duration) {
        self.record_ns(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Adds every sample of `other` into this histogram.
    pub fn merge(&mut self, other: &Latency) -> Result<(), Error> {
        self.hist
            .add(&other.hist)
            .map_err(|e| Error::Merge(format!("{e:?}")))
    }

    /// Number of samples recorded.
    pub fn len(&self) -> u64 {
        self.hist.len()
    }

    /// True when nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// Forgets every sample, keeping the allocation.
    pub fn clear(&mut self) {
        self.hist.reset();
    }

    /// The value at percentile `p` (0..=100), in nanoseconds; 0 when empty.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        if self.hist.is_empty() {
            return 0;
        }
        self.hist.value_at_percentile(p)
    }

    /// Samples recorded between `low_ns` and `high_ns` inclusive (at the histogram's
    /// precision: values equivalent to either bound count).
    pub fn count_between(&self, low_ns: u64, high_ns: u64) -> u64 {
        if low_ns > high_ns {
            return 0;
        }
        self.hist
            .count_between(low_ns.clamp(1, HIGHEST_NS), high_ns.clamp(1, HIGHEST_NS))
    }

    /// The smallest value that is equivalent to `ns` at this histogram's precision.
    pub fn lowest_equivalent(&self, ns: u64) -> u64 {
        self.hist.lowest_equivalent(ns)
    }

    /// The largest value that is equivalent to `ns` at this histogram's precision.
    pub fn highest_equivalent(&self, ns: u64) -> u64 {
        self.hist.highest_equivalent(ns)
    }

    /// Mean, spread, extremes and the standard percentiles.
    pub fn summary(&self) -> Summary {
        if self.hist.is_empty() {
            return Summary::default();
        }
        let us = |ns: u64| ns as f64 / 1_000.0;
        Summary {
            count: self.hist.len(),
            mean_us: self.hist.mean() / 1_000.0,
            stdev_us: self.hist.stdev() / 1_000.0,
            min_us: us(self.hist.min()),
            max_us: us(self.hist.max()),
            percentiles: PERCENTILES
                .iter()
                .map(|&p| Percentile {
                    percentile: p,
                    value_us: us(self.hist.value_at_percentile(p)),
                })
                .collect(),
        }
    }

    /// Sample counts in `bars` buckets between min and max, spaced logarithmically so a
    /// long tail stays readable. Returns (upper bound µs, count) pairs; counts sum to len.
    pub fn buckets(&self, bars: usize) -> Vec<(f64, u64)> {
        if self.hist.is_empty() || bars == 0 {
            return Vec::new();
        }
        let lo = self.hist.min().max(1) as f64;
        let hi = self.hist.max().max(self.hist.min() + 1) as f64;
        let ratio = (hi / lo).powf(1.0 / bars as f64);
        let mut out = Vec::with_capacity(bars);
        let mut below = 0u64;
        for i in 1..=bars {
            let upper = if i == bars {
                self.hist.max()
            } else {
                (lo * ratio.powi(i as i32)) as u64
            };
            let upto = self.hist.count_between(0, upper);
            if upto > below || i == bars {
                out.push((upper as f64 / 1_000.0, upto - below));
            }
            below = upto;
        }
        // Values equivalent to max at the histogram's precision may sit above it.
        let rest = self.hist.len() - below;
        if let Some(last) = out.last_mut() {
            last.1 += rest;
        }
        out
    }

    /// The histogram in HdrHistogram's compressed V2 encoding (cookie `0x1c849314`, the V2
    /// bytes deflated with zlib), base64: the form HdrHistogram's Java, Python and C readers
    /// decode, and the one interval logs carry.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.hist, &mut bytes)
            .expect("serializing into a Vec cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Reads a histogram written by [`Latency::to_base64`] with exactly this crate's bounds,
    /// for merges that must be exact: a histogram of other bounds is [`Error::Bounds`],
    /// never rescaled.
    pub fn from_base64_exact(text: &str) -> Result<Self, Error> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
        let decoded: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| Error::Decode(format!("{e:?}")))?;
        let mine = Self::new();
        if decoded.low() != mine.hist.low()
            || decoded.high() != mine.hist.high()
            || decoded.sigfig() != mine.hist.sigfig()
        {
            return Err(Error::Bounds {
                low: decoded.low(),
                high: decoded.high(),
                sigfig: decoded.sigfig(),
            });
        }
        Ok(Self { hist: decoded })
    }

    /// Reads a histogram written by [`Latency::to_base64`]: compressed V2, or the uncompressed
    /// V2 (cookie `0x1c849313`) that foxbench wrote before, so that old results still load.
    pub fn from_base64(text: &str) -> Result<Self, Error> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
        let decoded: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| Error::Decode(format!("{e:?}")))?;
        let mut out = Self::new();
        out.hist
            .add(&decoded)
            .map_err(|e| Error::Decode(format!("{e:?}")))?;
        Ok(out)
    }
}

/// One percentile of a distribution.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Percentile {
    /// The percentile, 0..=100.
    pub percentile: f64,
    /// The value at that percentile, in microseconds.
    pub value_us: f64,
}

/// The figures reports print about a distribution; all durations in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Arithmetic mean.
    pub mean_us: f64,
    /// Standard deviation.
    pub stdev_us: f64,
    /// Smallest sample.
    pub min_us: f64,
    /// Largest sample.
    pub max_us: f64,
    /// The values at [`PERCENTILES`].
    pub percentiles: Vec<Percentile>,
}

impl Summary {
    /// The value at percentile `p` if it is one of the reported ones.
    pub fn at(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|x| (x.percentile - p).abs() < 1e-9)
            .map(|x| x.value_us)
    }
}

#[cfg(test)]
mod tests;
