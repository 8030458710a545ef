//! The open model's part of a load result: what the schedule asked for against what was
//! sent, service time beside the corrected latency, the client's own send lateness, the
//! requests that waited for a connection, and the warnings that say what to do.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::{human_us, Distribution};

/// What the engine measured of an open-model run: the input of [`OpenReport::new`].
#[derive(Debug, Clone, Copy)]
pub struct OpenMeasured<'a> {
    /// The highest rate the schedule asks for, requests per second.
    pub peak_per_sec: f64,
    /// Requests the schedule made due over the run.
    pub scheduled: u64,
    /// Connections of the run.
    pub connections: u64,
    /// Corrected latency (from each request's due instant).
    pub latency: &'a stats::Latency,
    /// Service time (from each request's hand-off to its connection).
    pub service: &'a stats::Latency,
    /// Send lateness of requests that found a free connection.
    pub lateness: &'a stats::Latency,
    /// How late the requests that waited for a connection were sent.
    pub late: &'a stats::Latency,
}

/// The open model's figures, in `foxbench load --json` as `open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OpenReport {
    /// Requests the schedule made due over the run.
    pub scheduled: u64,
    /// Requests sent.
    pub sent: u64,
    /// How far `sent` fell short of `scheduled`, percent (0 when it did not).
    pub shortfall_percent: f64,
    /// Requests sent late because every connection was busy when they fell due.
    pub late: u64,
    /// Service time: from when each request was handed to its connection to its response,
    /// as wrk2's `-U` reports; the corrected latency is `latency`.
    pub service: Option<Distribution>,
    /// Send lateness of the requests that found a free connection: the client's own
    /// dispatch error, included in `latency`.
    pub send_lateness: Option<Distribution>,
    /// How late the `late` requests were sent.
    pub late_wait: Option<Distribution>,
    /// What the figures say to do, one line each.
    pub warnings: Vec<String>,
}

/// Send lateness at p99 above this share of the latency's p99 shapes the figure.
const LATENESS_SHARE: f64 = 0.10;

impl OpenReport {
    /// Builds the open model's figures and warnings.
    pub fn new(m: OpenMeasured<'_>, counts: &stats::Counts) -> OpenReport {
        let dist = |h: &stats::Latency| (!h.is_empty()).then(|| Distribution::of(h));
        let sent = counts.sent;
        let shortfall_percent = if m.scheduled > sent && m.scheduled > 0 {
            100.0 * (m.scheduled - sent) as f64 / m.scheduled as f64
        } else {
            0.0
        };
        let mut warnings = Vec::new();
        let us = |h: &stats::Latency, p: f64| h.percentile_ns(p) as f64 / 1e3;
        if !m.lateness.is_empty() && !m.latency.is_empty() {
            let (late99, lat99) = (us(m.lateness, 99.0), us(m.latency, 99.0));
            if lat99 > 0.0 && late99 > LATENESS_SHARE * lat99 {
                warnings.push(format!(
                    "the client sent requests late (p99 {}), {:.0}% of the p99 latency ({}): the load generator, not the server, shaped this figure",
                    human_us(late99),
                    100.0 * late99 / lat99,
                    human_us(lat99)
                ));
            }
        }
        if !m.service.is_empty() {
            let p50_s = us(m.service, 50.0) / 1e6;
            if p50_s > 0.0 {
                let carry = m.connections as f64 / p50_s;
                if carry < m.peak_per_sec {
                    warnings.push(format!(
                        "{} connections at {} each carry at most {:.0} req/s, below the {:.0} req/s asked for: raise -c",
                        m.connections,
                        human_us(p50_s * 1e6),
                        carry,
                        m.peak_per_sec
                    ));
                }
            }
        }
        if shortfall_percent > 1.0 {
            warnings.push(format!(
                "sent {sent} of the {} requests the schedule made due ({shortfall_percent:.1}% short): the figures describe a lighter load than asked",
                m.scheduled
            ));
        }
        OpenReport {
            scheduled: m.scheduled,
            sent,
            shortfall_percent,
            late: counts.late,
            service: dist(m.service),
            send_lateness: dist(m.lateness),
            late_wait: dist(m.late),
            warnings,
        }
    }

    /// The report's open-model lines.
    pub fn write_text(&self, o: &mut String) {
        let _ = writeln!(
            o,
            "Schedule:      {} requests due, {} sent{}; {} late (every connection busy when due)",
            self.scheduled,
            self.sent,
            if self.shortfall_percent > 0.0 {
                format!(" ({:.1}% short)", self.shortfall_percent)
            } else {
                String::new()
            },
            self.late
        );
        for (name, d) in [
            ("service time", &self.service),
            ("send lateness", &self.send_lateness),
            ("late by", &self.late_wait),
        ] {
            if let Some(d) = d {
                let s = &d.summary;
                let _ = writeln!(
                    o,
                    "  {name:<14} p50 {}, p99 {}, max {}",
                    human_us(s.at(50.0).unwrap_or(0.0)),
                    human_us(s.at(99.0).unwrap_or(0.0)),
                    human_us(s.max_us)
                );
            }
        }
        for w in &self.warnings {
            let _ = writeln!(o, "warning: {w}");
        }
    }
}

#[cfg(test)]
mod tests;
