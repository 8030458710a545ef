//! `--slo-abort`: watching an objective interval by interval, to stop a run that can no
//! longer meet it.
//!
//! The rule, per clause, checked at the end of each interval:
//! - a latency percentile must hold in every interval: the first interval whose own
//!   percentile breaks the clause stops the run (so under `--slo-abort` the clause is judged
//!   per interval as well as over the whole run);
//! - `errors` in a `-n N` run: once the failures so far make the final share at least
//!   `failures / N`, and that already breaks the clause, the run stops; in a `-d` run, which
//!   has no known total, the first interval whose own failure share breaks it stops the run;
//! - `rps` never stops a run: a slow interval can be made up later.

use super::{Clause, Metric, Series, Slo};

/// Why a run was stopped early: the clause (its index in [`Slo::clauses`]) and what broke it.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    /// Index of the clause.
    pub clause: usize,
    /// One line: the clause, the interval and the value seen.
    pub reason: String,
}

/// A series' histogram in one interval; None when the engine does not record it.
fn histogram(series: Series, iv: &stats::Interval) -> Option<&stats::Latency> {
    match series {
        Series::Corrected => Some(&iv.latency),
        Series::Service => Some(&iv.service),
    }
}

/// Follows a run's intervals for `--slo-abort`.
#[derive(Debug, Clone)]
pub struct Watch<'a> {
    slo: &'a Slo,
    /// `-n`: the number of requests the run will send.
    total: Option<u64>,
    /// Failed requests so far.
    failed: u64,
}

impl<'a> Watch<'a> {
    /// Watches `slo` over a run that sends `total` requests (`-n`), or runs for a duration.
    pub fn new(slo: &'a Slo, total: Option<u64>) -> Self {
        Self {
            slo,
            total,
            failed: 0,
        }
    }

    /// Takes in the next interval; returns the first clause it shows can no longer be met.
    pub fn observe(&mut self, iv: &stats::Interval) -> Option<Breach> {
        let failed = iv.counts.errors() + iv.counts.failed_status;
        self.failed += failed;
        let when = format!(
            "interval {} ({:.1}s to {:.1}s)",
            iv.index,
            iv.start.as_secs_f64(),
            (iv.start + iv.duration).as_secs_f64()
        );
        self.slo.clauses.iter().enumerate().find_map(|(i, c)| {
            let reason = self.broken(c, iv, failed, &when)?;
            Some(Breach {
                clause: i,
                reason: format!("{}: {reason}", c.text),
            })
        })
    }

    /// Why `c` can no longer be met after `iv`, if it cannot.
    fn broken(&self, c: &Clause, iv: &stats::Interval, failed: u64, when: &str) -> Option<String> {
        let unit = c.unit();
        match c.metric {
            Metric::Percentile { p, series } => {
                let h = histogram(series, iv).filter(|h| !h.is_empty())?;
                let us = h.percentile_ns(p) as f64 / 1e3;
                (!c.op.holds(us, c.threshold)).then(|| {
                    let name = c.metric_name();
                    format!("{when} had {name} {}", unit.show(us))
                })
            }
            Metric::Errors => match self.total {
                Some(n) => {
                    // The share can only grow from here; for > and >= it could still be met.
                    let at_least = 100.0 * self.failed as f64 / n.max(1) as f64;
                    let can_only_grow = matches!(c.op, super::Op::Lt | super::Op::Le);
                    (can_only_grow && !c.op.holds(at_least, c.threshold)).then(|| {
                        format!(
                            "{} failed of {n} by the end of {when}: at least {}",
                            self.failed,
                            unit.show(at_least)
                        )
                    })
                }
                None => {
                    let sent = iv.counts.sent.max(failed);
                    if sent == 0 {
                        return None;
                    }
                    let share = 100.0 * failed as f64 / sent as f64;
                    (!c.op.holds(share, c.threshold)).then(|| {
                        format!(
                            "{when} had {failed} failed of {sent} ({})",
                            unit.show(share)
                        )
                    })
                }
            },
            Metric::Rps => None,
        }
    }
}
