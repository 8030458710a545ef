//! The flat-throughput, rising-latency signature across a target's levels: requests per
//! second within 10% while the median latency rises with the connections, and the
//! cells' CPUs not saturated. More connections only queued for something: the "art of
//! benchmarking" post's CouchDB pool (42 req/s from 10 to 150 users, latency 233 ms to
//! 3.5 s, CPUs idle). The report flags it and points at the post's lesson.

use super::{Bottleneck, Cell, ShootoutResults};

/// Throughputs within this ratio (highest over lowest) count as flat.
pub const FLAT_RATIO: f64 = 1.10;

/// The median latency must rise at every step, and by at least this ratio overall.
pub const RISE_RATIO: f64 = 1.5;

/// The post's lesson, as the report says it.
pub const LESSON: &str = "more connections only queued: test what you think you test, and look at the system (each CPU's busy share, what the threads wait on, a thread dump) before believing the number";

/// One flagged series of levels.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The target.
    pub target: String,
    /// The scenario.
    pub scenario: String,
    /// (level, connections, req/s, p50 µs), by connections.
    pub levels: Vec<(String, u64, f64, f64)>,
}

impl Signature {
    /// `lock-bound plain: 198-201 req/s from 10 to 50 connections while p50 rose from
    /// 50.1ms to 248.0ms: ...`.
    pub fn line(&self) -> String {
        let (first, last) = (&self.levels[0], &self.levels[self.levels.len() - 1]);
        let rps = self.levels.iter().map(|l| l.2);
        let lo = rps.clone().fold(f64::INFINITY, f64::min);
        let hi = rps.fold(0.0, f64::max);
        format!(
            "{} {}: {:.0}-{:.0} req/s from {} to {} connections while p50 rose from {} to {}: the flat-throughput, rising-latency signature; {LESSON}",
            self.target,
            self.scenario,
            lo,
            hi,
            first.1,
            last.1,
            crate::human_us(first.3),
            crate::human_us(last.3),
        )
    }
}

/// Whether a cell's verdict leaves the signature to contention: no CPU saturated and no
/// errors (a saturated CPU queues too, and says so itself).
fn waiting(c: &Cell) -> bool {
    c.diagnosis.as_ref().is_some_and(|d| {
        !matches!(
            d.bottleneck,
            Bottleneck::ClientBound
                | Bottleneck::ServerCpuBound
                | Bottleneck::ServerThreadBound
                | Bottleneck::Errors
        )
    })
}

/// Whether `(connections, req/s, p50 µs)` by connections show the signature.
pub fn flat_and_rising(levels: &[(u64, f64, f64)]) -> bool {
    if levels.len() < 2 || levels.windows(2).any(|w| w[1].0 <= w[0].0) {
        return false;
    }
    let lo = levels.iter().map(|l| l.1).fold(f64::INFINITY, f64::min);
    let hi = levels.iter().map(|l| l.1).fold(0.0, f64::max);
    let rising = levels.windows(2).all(|w| w[1].2 > w[0].2);
    let (first, last) = (levels[0].2, levels[levels.len() - 1].2);
    lo > 0.0 && hi <= FLAT_RATIO * lo && rising && last >= RISE_RATIO * first
}

/// Every target and scenario whose measured closed-model levels of one kind (keep-alive or
/// not) show the signature, with at least one of them not CPU-bound.
pub fn signatures(r: &ShootoutResults) -> Vec<Signature> {
    let mut out = Vec::new();
    for t in r.ranked() {
        let mut series: Vec<(&str, bool)> = Vec::new();
        for c in &t.cells {
            if !series.contains(&(c.scenario.as_str(), c.keepalive)) {
                series.push((&c.scenario, c.keepalive));
            }
        }
        for (scenario, keepalive) in series {
            // The closed model's levels only: an open-model level's req/s is its schedule's
            // and a capacity level's is its search's, not what the connections carried.
            let closed = |c: &Cell| {
                !r.protocol
                    .plan
                    .levels
                    .iter()
                    .any(|l| l.name == c.level && (l.rate.is_some() || l.capacity.is_some()))
            };
            let mut cells: Vec<&Cell> = t
                .cells
                .iter()
                .filter(|c| c.scenario == scenario && c.keepalive == keepalive)
                .filter(|c| c.summary.is_some() && closed(c))
                .collect();
            cells.sort_by_key(|c| c.connections);
            let levels: Vec<(String, u64, f64, f64)> = cells
                .iter()
                .filter_map(|c| {
                    let s = c.summary.as_ref()?;
                    Some((
                        c.level.clone(),
                        c.connections,
                        s.rps_median,
                        s.latency.at(50.0)?,
                    ))
                })
                .collect();
            let figures: Vec<(u64, f64, f64)> = levels.iter().map(|l| (l.1, l.2, l.3)).collect();
            if levels.len() == cells.len()
                && flat_and_rising(&figures)
                && cells.iter().any(|c| waiting(c))
                && !cells.iter().any(|c| {
                    c.diagnosis
                        .as_ref()
                        .is_some_and(|d| d.bottleneck == Bottleneck::Errors)
                })
            {
                out.push(Signature {
                    target: t.name.clone(),
                    scenario: scenario.to_string(),
                    levels,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
