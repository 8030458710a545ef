//! The HdrHistogram interval log (`.hlog`): one compressed histogram per interval and series.
//!
//! The format is the one HdrHistogram's Java `HistogramLogWriter` writes and its
//! `HistogramLogReader` and `HistogramLogProcessor` read: a format-version comment, the
//! `#[StartTime: …]` and `#[BaseTime: …]` headers, the legend line, then one line per interval
//! and series, `Tag=NAME,start,length,max,histogram`, where start is seconds since BaseTime,
//! max is in milliseconds (values are recorded in ns, divided by 10⁶ as the Java writer does) and
//! the histogram is compressed V2 in base64. The histogram lines are written by the
//! `hdrhistogram` crate's `IntervalLogWriter`; the legend line, which that writer does not
//! emit, is written here. This module formats into any [`std::io::Write`]; the caller owns the
//! file.

use std::io::{self, Write};
use std::time::SystemTime;

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;

use crate::{Interval, Latency};

/// The legend line of the Java writer: the names of an interval line's fields.
pub const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"";

/// The divisor of the max column: ns recorded, ms written, as the Java writer does.
const MAX_VALUE_DIVISOR: f64 = 1e6;

/// One tagged series of an interval: its tag and which histogram of [`Interval`] it logs.
pub struct Series {
    /// The `Tag=` of its lines (no ',', ' ' or newline).
    pub tag: &'static str,
    /// Its histogram in an interval, or `None` when the run did not record it.
    pub histogram: fn(&Interval) -> Option<&Latency>,
}

/// Every series the log carries, in the order their lines appear within an interval.
///
/// `corrected` is the latency from when each request was due (coordinated omission corrected
/// in the open model; from when it was sent in the closed one); `service`, open model only,
/// from when each request was handed to its connection.
pub const SERIES: &[Series] = &[
    Series {
        tag: "corrected",
        histogram: |iv| Some(&iv.latency),
    },
    Series {
        tag: "service",
        histogram: |iv| (!iv.service.is_empty()).then_some(&iv.service),
    },
];

/// Writes an interval log to `out`: the header at [`IntervalLog::begin`], then one call of
/// [`IntervalLog::write`] per interval.
pub struct IntervalLog<W: Write> {
    out: W,
    serializer: V2DeflateSerializer,
    /// One line as the crate's writer formats it, before it goes to `out`.
    line: Vec<u8>,
}

impl<W: Write> IntervalLog<W> {
    /// Writes the header: format version, `StartTime` and `BaseTime` (both `start`, the
    /// moment the run began, so that each line's start is seconds into the run), the legend.
    pub fn begin(mut out: W, start: SystemTime) -> io::Result<Self> {
        let mut serializer = V2DeflateSerializer::new();
        IntervalLogWriterBuilder::new()
            .add_comment("[Histogram log format version 1.3]")
            .add_comment("[Logged with foxbench; values in ns, Interval_Max in ms]")
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(MAX_VALUE_DIVISOR)
            .begin_log_with(&mut out, &mut serializer)?;
        writeln!(out, "{LEGEND}")?;
        Ok(Self {
            out,
            serializer,
            line: Vec::new(),
        })
    }

    /// Writes one line per series of `iv` that the run recorded, each `Tag=…`.
    pub fn write(&mut self, iv: &Interval) -> io::Result<()> {
        for series in SERIES {
            let Some(h) = (series.histogram)(iv) else {
                continue;
            };
            let tag = Tag::new(series.tag).expect("series tags hold no ',', ' ' or newline");
            // The crate's line writer is reached through a builder, which cannot be kept
            // across the legend line it does not write; a fresh one repeats its
            // `#[MaxValueDivisor]` header line, which is dropped here.
            self.line.clear();
            let mut writer = IntervalLogWriterBuilder::new()
                .with_max_value_divisor(MAX_VALUE_DIVISOR)
                .begin_log_with(&mut self.line, &mut self.serializer)?;
            writer
                .write_histogram(&h.hist, iv.start, iv.duration, Some(tag))
                .map_err(|e| io::Error::other(e.to_string()))?;
            let body = match self.line.iter().position(|&b| b == b'\n') {
                Some(end) if self.line.starts_with(b"#[MaxValueDivisor") => &self.line[end + 1..],
                _ => &self.line[..],
            };
            self.out.write_all(body)?;
        }
        Ok(())
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests;
