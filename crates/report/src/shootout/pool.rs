//! A target's connections to each service it uses, sampled through a repeat: how many of
//! its sockets were established to the service's port (min, mean, max) and what share of
//! them had bytes in flight: how full the target's pool to the service was. With the
//! Markdown line the report prints for a cell.
//!
//! New in results files since 2026-11-25: `Repeat::service_connections` is
//! `#[serde(default)]`, so old results load with none.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The target tree's connections to one service through one repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceConnections {
    /// The service's name.
    pub service: String,
    /// The service's port the connections go to.
    pub port: u16,
    /// Readings taken (the plan's `sample_interval`).
    pub samples: u32,
    /// The fewest established connections in a reading.
    pub min: u32,
    /// The mean established connections over the readings.
    pub mean: f64,
    /// The most established connections in a reading.
    pub max: u32,
    /// Share of the established connection-readings with bytes unacknowledged or unread
    /// (0 to 1): a lower bound on "in use", since a connection whose request was
    /// acknowledged and whose answer has not come has both queues empty.
    pub busy_share: Option<f64>,
    /// The service's `active` command's readings (for PostgreSQL, the client backends
    /// running a query): mean and max; `None` when the service has no such command or no
    /// reading succeeded.
    #[serde(default)]
    pub active_mean: Option<f64>,
    /// The most the `active` command read.
    #[serde(default)]
    pub active_max: Option<u64>,
}

impl ServiceConnections {
    /// `2 connections to postgres (2-2), busy 97%`.
    pub fn line(&self) -> String {
        let range = if self.min == self.max {
            format!("{}", self.max)
        } else {
            format!("{}-{}, mean {:.1}", self.min, self.max, self.mean)
        };
        let busy = self
            .busy_share
            .map(|b| format!(", busy {:.0}%", 100.0 * b))
            .unwrap_or_default();
        let active = match (self.active_mean, self.active_max) {
            (Some(m), Some(x)) => format!(", {m:.1} active in {} (max {x})", self.service),
            _ => String::new(),
        };
        format!("{range} connections to {}{busy}{active}", self.service)
    }

    /// The repeats' figures of each service as one: the fewest, the most, the means and
    /// busy shares weighted by readings.
    pub fn merge(repeats: &[&[ServiceConnections]]) -> Vec<ServiceConnections> {
        let mut out: Vec<ServiceConnections> = Vec::new();
        let mut weights: Vec<(f64, f64, f64)> = Vec::new(); // (readings, busy weight, active readings)
        for rep in repeats {
            for c in rep.iter().filter(|c| c.samples > 0) {
                let n = f64::from(c.samples);
                let i = match out.iter().position(|o| o.service == c.service) {
                    Some(i) => i,
                    None => {
                        out.push(ServiceConnections {
                            samples: 0,
                            min: c.min,
                            mean: 0.0,
                            max: 0,
                            busy_share: None,
                            active_mean: None,
                            active_max: None,
                            ..c.clone()
                        });
                        weights.push((0.0, 0.0, 0.0));
                        out.len() - 1
                    }
                };
                let (o, w) = (&mut out[i], &mut weights[i]);
                o.mean = (o.mean * w.0 + c.mean * n) / (w.0 + n);
                if let Some(b) = c.busy_share {
                    let bw = c.mean * n;
                    o.busy_share = Some(if w.1 + bw > 0.0 {
                        (o.busy_share.unwrap_or(0.0) * w.1 + b * bw) / (w.1 + bw)
                    } else {
                        b
                    });
                    w.1 += bw;
                }
                if let Some(a) = c.active_mean {
                    o.active_mean = Some((o.active_mean.unwrap_or(0.0) * w.2 + a * n) / (w.2 + n));
                    w.2 += n;
                }
                o.active_max = o.active_max.max(c.active_max);
                o.min = o.min.min(c.min);
                o.max = o.max.max(c.max);
                o.samples += c.samples;
                w.0 += n;
            }
        }
        out
    }
}

/// The Markdown section of the target's connections to its services, one row per cell and
/// service (the repeats merged); empty when no cell recorded any.
pub fn markdown(r: &super::ShootoutResults) -> String {
    let mut rows = String::new();
    for t in &r.targets {
        for c in &t.cells {
            let reps: Vec<&[ServiceConnections]> = c
                .repeats
                .iter()
                .map(|r| r.service_connections.as_slice())
                .collect();
            for s in ServiceConnections::merge(&reps) {
                rows.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} |\n",
                    t.name,
                    c.scenario,
                    c.level,
                    s.service,
                    s.port,
                    s.min,
                    s.mean,
                    s.max,
                    s.busy_share
                        .map(|b| format!("{:.0}%", 100.0 * b))
                        .unwrap_or_else(|| "–".into()),
                    match (s.active_mean, s.active_max) {
                        (Some(m), Some(x)) => format!("{m:.1} (max {x})"),
                        _ => "–".into(),
                    }
                ));
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\n### Connections to services\n\nThe target's TCP connections established to each service's port, sampled through each repeat: the fewest, mean and most; busy is the share of them with bytes unacknowledged or unread at a reading (a lower bound on in use); active is what the service's `active` command read (PostgreSQL: backends running a query).\n\n| target | scenario | level | service | port | min | mean | max | busy | active |\n|---|---|---|---|---:|---:|---:|---:|---:|---:|\n{rows}"
    )
}

#[cfg(test)]
mod tests;
