//! The tiers of a cell whose target uses services: each tier's figures (the target, each
//! service), and which tier limited the cell, refining the single-server diagnosis
//! (`diagnosis`) with rules written as a table.
//!
//! On a small machine tiers share CPUs (on 2 CPUs the services run beside the target), so
//! a CPU can be full while no tier alone is: the rules add up every tier's share of each
//! CPU set before naming the one that used most of it.

use report::shootout::{Bottleneck, Cell, Diagnosis, Tier, TierRole};
use report::SATURATED_PERCENT;

use crate::waiting::OWN_SHARE_PERCENT;

/// Where each side of the run is pinned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// foxbench's CPUs.
    pub client: Vec<usize>,
    /// The targets' CPUs.
    pub server: Vec<usize>,
    /// The services' CPUs.
    pub services: Vec<usize>,
}

/// One tier's CPU in a cell: its share of its own CPUs.
#[derive(Debug, Clone, PartialEq)]
struct Load<'a> {
    name: &'a str,
    /// What the verdict would be if this tier limited the cell.
    verdict: Bottleneck,
    cpus: &'a [usize],
    percent: f64,
}

impl Load<'_> {
    /// CPUs' worth of time it used, spread evenly over its CPUs.
    fn cores(&self) -> f64 {
        self.percent / 100.0 * self.cpus.len().max(1) as f64
    }

    /// Of that, what ran on `set`.
    fn cores_on(&self, set: &[usize]) -> f64 {
        if self.cpus.is_empty() {
            return 0.0;
        }
        let shared = self.cpus.iter().filter(|c| set.contains(c)).count();
        self.cores() * shared as f64 / self.cpus.len() as f64
    }
}

/// What the rules read: the single-server verdict, every tier's load, and each CPU's busy
/// share from `/proc/stat` when it was read.
struct Input<'a> {
    base: &'a Diagnosis,
    loads: Vec<Load<'a>>,
    cpu_busy: Vec<(usize, f64)>,
}

impl Input<'_> {
    /// How busy the CPUs of `load` were, percent: every tier that runs there added up, or
    /// `/proc/stat`'s figure for them when the tiers account for at least half of it (the
    /// kernel's network work for the tiers, softirq, is charged to none of them; a CPU
    /// busy mostly with other work on the machine is not blamed on a tier).
    fn busy(&self, load: &Load) -> f64 {
        let (tiers, stat) = self.shares(load);
        stat.map_or(tiers, |b| tiers.max(b))
    }

    /// `/proc/stat`'s busy share of `load`'s CPUs, when it counted for [`Input::busy`]
    /// (above the tiers' sum).
    fn stat_busy(&self, load: &Load) -> Option<f64> {
        let (tiers, stat) = self.shares(load);
        stat.filter(|b| *b > tiers)
    }

    /// The tiers' summed share of `load`'s CPUs, and `/proc/stat`'s when it was read for
    /// all of them and the tiers used at least half of it.
    fn shares(&self, load: &Load) -> (f64, Option<f64>) {
        let cores: f64 = self.loads.iter().map(|l| l.cores_on(load.cpus)).sum();
        let tiers = 100.0 * cores / load.cpus.len().max(1) as f64;
        let stat: Vec<f64> = self
            .cpu_busy
            .iter()
            .filter(|(c, _)| load.cpus.contains(c))
            .map(|(_, b)| *b)
            .collect();
        if stat.len() != load.cpus.len() || stat.is_empty() || tiers < OWN_SHARE_PERCENT {
            return (tiers, None);
        }
        (tiers, Some(stat.iter().sum::<f64>() / stat.len() as f64))
    }

    fn services(&self) -> impl Iterator<Item = &Load<'_>> {
        self.loads
            .iter()
            .filter(|l| l.verdict == Bottleneck::ServiceCpuBound)
    }
}

/// A rule's finding: the verdict, the tier it names, and why.
type Finding = (Bottleneck, String, String);

/// A rule: its name (for reading the table), and its test.
type Rule = (&'static str, fn(&Input) -> Option<Finding>);

/// The rules, first match wins. The single-server verdicts come first: errors, a full
/// client, a full target are what they were.
const RULES: &[Rule] = &[
    ("errors", |i| {
        (i.base.bottleneck == Bottleneck::Errors)
            .then(|| (Bottleneck::Errors, "errors".into(), String::new()))
    }),
    // The kernel's TCP counters named the wait (Nagle, a full accept queue, drops): they
    // are the namespace's, so no one tier is named, and no CPU took the requests' time.
    ("network", |i| {
        let b = i.base.bottleneck;
        matches!(
            b,
            Bottleneck::Nagle
                | Bottleneck::ListenOverflow
                | Bottleneck::MemoryPressure
                | Bottleneck::Retransmits
        )
        .then(|| (b, "network".into(), String::new()))
    }),
    ("client alone", |i| {
        (i.base.bottleneck == Bottleneck::ClientBound)
            .then(|| (Bottleneck::ClientBound, "client".into(), String::new()))
    }),
    ("target alone", |i| {
        (i.base.bottleneck == Bottleneck::ServerCpuBound).then(|| {
            let t = i
                .loads
                .iter()
                .find(|l| l.verdict == Bottleneck::ServerCpuBound);
            (
                Bottleneck::ServerCpuBound,
                t.map_or("target".into(), |t| t.name.to_string()),
                String::new(),
            )
        })
    }),
    ("service alone", |i| {
        i.services()
            .filter(|l| l.percent >= SATURATED_PERCENT)
            .max_by(|a, b| a.percent.total_cmp(&b.percent))
            .map(|l| {
                (
                    Bottleneck::ServiceCpuBound,
                    format!("service {}", l.name),
                    format!(
                        "service {} CPU-bound ({:.0}% of its CPUs)",
                        l.name, l.percent
                    ),
                )
            })
    }),
    ("shared CPUs full", |i| {
        // The tier with the most CPU on a set that is full, all tiers there added up.
        i.loads
            .iter()
            .filter(|l| i.busy(l) >= SATURATED_PERCENT)
            .filter(|l| {
                i.loads
                    .iter()
                    .any(|o| o.name != l.name && o.cores_on(l.cpus) > 0.0)
            })
            .max_by(|a, b| a.cores_on(a.cpus).total_cmp(&b.cores_on(b.cpus)))
            .map(|l| {
                let sharing: Vec<String> = i
                    .loads
                    .iter()
                    .filter(|o| o.cores_on(l.cpus) > 0.0)
                    .map(|o| {
                        format!(
                            "{} {:.0}%",
                            o.name,
                            100.0 * o.cores_on(l.cpus) / l.cpus.len().max(1) as f64
                        )
                    })
                    .collect();
                let tier = match l.verdict {
                    Bottleneck::ServiceCpuBound => format!("service {}", l.name),
                    Bottleneck::ClientBound => "client".into(),
                    _ => l.name.to_string(),
                };
                let what = match l.verdict {
                    Bottleneck::ServiceCpuBound => format!("service {} CPU-bound", l.name),
                    Bottleneck::ClientBound => "client-bound".into(),
                    _ => format!("{} CPU-bound", l.name),
                };
                (
                    l.verdict,
                    tier,
                    format!(
                        "{what}: CPU {} is full between tiers ({}{}), {} the most",
                        cpus(l.cpus),
                        sharing.join(" + "),
                        i.stat_busy(l)
                            .map(|b| format!("; {b:.0}% busy on /proc/stat"))
                            .unwrap_or_default(),
                        l.name
                    ),
                )
            })
    }),
    ("one thread", |i| {
        (i.base.bottleneck == Bottleneck::ServerThreadBound).then(|| {
            let t = i
                .loads
                .iter()
                .find(|l| l.verdict == Bottleneck::ServerCpuBound);
            (
                Bottleneck::ServerThreadBound,
                t.map_or("target".into(), |t| t.name.to_string()),
                String::new(),
            )
        })
    }),
    // What the target waited on (a lock, its pool, the backend's answers): the waiting
    // verdicts of the single-server diagnosis, with their evidence, stand.
    ("waiting", |i| {
        let b = i.base.bottleneck;
        let tier = match b {
            Bottleneck::LockBound | Bottleneck::PoolBound => i
                .loads
                .iter()
                .find(|l| l.verdict == Bottleneck::ServerCpuBound)
                .map_or("target".into(), |t| t.name.to_string()),
            Bottleneck::BackendWait => i
                .services()
                .next()
                .map_or("a service".into(), |s| format!("service {}", s.name)),
            _ => return None,
        };
        Some((b, tier, String::new()))
    }),
    ("neither", |_| {
        Some((
            Bottleneck::Neither,
            "neither".into(),
            "neither: every tier had CPU to spare while requests waited (a pool, a lock, a sleep, the backend's delay)".into(),
        ))
    }),
];

fn cpus(c: &[usize]) -> String {
    c.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The tiers of a measured cell whose target uses services, and the tier that limited it:
/// fills `tiers` and `limiting_tier`, and refines the diagnosis. Does nothing for a cell
/// without service figures.
pub fn conclude(cell: &mut Cell, target: &str, layout: &Layout) {
    let (Some(summary), Some(base)) = (&cell.summary, &cell.diagnosis) else {
        return;
    };
    let Some(first) = cell.repeats.first() else {
        return;
    };
    if first.services.is_empty() {
        return;
    }
    let mut tiers = vec![Tier {
        name: target.to_string(),
        role: TierRole::Target,
        cpu_us_per_request: summary.server_cpu_us_per_request,
        cpu_percent: summary.server_cpu_percent,
        rss_peak_bytes: summary.rss_peak_bytes,
        threads_peak: summary.threads_peak,
    }];
    for (i, w) in first.services.iter().enumerate() {
        let of = |f: fn(&report::shootout::TierWindow) -> Option<f64>| {
            let mut v: Vec<f64> = cell
                .repeats
                .iter()
                .filter_map(|r| r.services.get(i).and_then(f))
                .collect();
            report::shootout::median(&mut v)
        };
        tiers.push(Tier {
            name: w.name.clone(),
            role: TierRole::Service,
            cpu_us_per_request: of(|w| w.cpu_us_per_request),
            cpu_percent: of(|w| Some(w.cpu_percent)).unwrap_or(0.0),
            rss_peak_bytes: cell
                .repeats
                .iter()
                .filter_map(|r| r.services.get(i))
                .map(|w| w.rss_peak_bytes)
                .max()
                .unwrap_or(0),
            threads_peak: cell
                .repeats
                .iter()
                .filter_map(|r| r.services.get(i))
                .map(|w| w.threads_peak)
                .max()
                .unwrap_or(0),
        });
    }
    let mut loads = vec![Load {
        name: "foxbench",
        verdict: Bottleneck::ClientBound,
        cpus: &layout.client,
        percent: summary.client_cpu_percent,
    }];
    loads.extend(tiers.iter().map(|t| Load {
        name: &t.name,
        verdict: match t.role {
            TierRole::Target => Bottleneck::ServerCpuBound,
            TierRole::Service => Bottleneck::ServiceCpuBound,
        },
        cpus: match t.role {
            TierRole::Target => &layout.server,
            TierRole::Service => &layout.services,
        },
        percent: t.cpu_percent,
    }));
    let cpu_busy = summary
        .system
        .iter()
        .flat_map(|s| s.client.iter().chain(&s.server))
        .map(|c| (c.cpu as usize, c.busy))
        .collect();
    let input = Input {
        base,
        loads,
        cpu_busy,
    };
    let (bottleneck, tier, why) = RULES
        .iter()
        .find_map(|(_, rule)| rule(&input))
        .expect("the last rule always matches");
    let figures: Vec<String> = tiers
        .iter()
        .map(|t| {
            format!(
                "{} {:.0}% of CPU {}{}",
                t.name,
                t.cpu_percent,
                cpus(match t.role {
                    TierRole::Target => &layout.server,
                    TierRole::Service => &layout.services,
                }),
                t.cpu_us_per_request
                    .map(|u| format!(" ({u:.1} µs/req)"))
                    .unwrap_or_default()
            )
        })
        .collect();
    let detail = if why.is_empty() {
        format!("{}; tiers: {}", base.detail, figures.join(", "))
    } else {
        format!("{why}; tiers: {}; {}", figures.join(", "), base.detail)
    };
    let diagnosis = Diagnosis { bottleneck, detail };
    cell.diagnosis = Some(diagnosis);
    cell.tiers = tiers;
    cell.limiting_tier = Some(tier);
}

#[cfg(test)]
mod tests;
