//! Per-CPU time from `/proc/stat` (through `procfs`): what each CPU did over a window,
//! the vmstat columns, and the system's context switches.
//!
//! Unlike a process's CPU, these figures include the kernel's work charged to no process
//! (softirq and irq for TCP, kernel threads): a CPU spent on a connection per request
//! shows here and nowhere in the server's or the client's process figures.

use std::collections::BTreeMap;

use procfs::{CurrentSI, KernelStats};

use crate::ProbeError;

/// One CPU's cumulative time in each state, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// User mode.
    pub user: u64,
    /// User mode at low priority.
    pub nice: u64,
    /// Kernel mode: system calls and kernel threads.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle while I/O was outstanding.
    pub iowait: u64,
    /// Hardware interrupts.
    pub irq: u64,
    /// Soft interrupts (the network stack's receive path among them).
    pub softirq: u64,
    /// Time a hypervisor gave to someone else.
    pub steal: u64,
}

impl CpuTicks {
    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    fn since(&self, e: &CpuTicks) -> CpuTicks {
        CpuTicks {
            user: self.user.saturating_sub(e.user),
            nice: self.nice.saturating_sub(e.nice),
            system: self.system.saturating_sub(e.system),
            idle: self.idle.saturating_sub(e.idle),
            iowait: self.iowait.saturating_sub(e.iowait),
            irq: self.irq.saturating_sub(e.irq),
            softirq: self.softirq.saturating_sub(e.softirq),
            steal: self.steal.saturating_sub(e.steal),
        }
    }
}

/// One reading of `/proc/stat`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemStat {
    /// Each online CPU's ticks, by its number (an offline CPU has no line in `/proc/stat`,
    /// so the lines are numbered from the online list, never by position).
    pub cpus: BTreeMap<usize, CpuTicks>,
    /// Context switches since boot, all CPUs.
    pub ctxt: u64,
}

/// Reads `/proc/stat`.
pub fn system() -> Result<SystemStat, ProbeError> {
    let k = KernelStats::current().map_err(|e| ProbeError::Proc(e.to_string()))?;
    // `/proc/stat` lists the online CPUs in ascending order; without the online list, every
    // CPU is taken to be online.
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| parse_cpu_list(&t))
        .filter(|ids| ids.len() == k.cpu_time.len())
        .unwrap_or_else(|| (0..k.cpu_time.len()).collect());
    Ok(SystemStat {
        cpus: online
            .into_iter()
            .zip(&k.cpu_time)
            .map(|(id, c)| {
                (
                    id,
                    CpuTicks {
                        user: c.user,
                        nice: c.nice,
                        system: c.system,
                        idle: c.idle,
                        iowait: c.iowait.unwrap_or(0),
                        irq: c.irq.unwrap_or(0),
                        softirq: c.softirq.unwrap_or(0),
                        steal: c.steal.unwrap_or(0),
                    },
                )
            })
            .collect(),
        ctxt: k.ctxt,
    })
}

/// A kernel CPU list (`0-3,6,8-9`) in ascending order; `None` when it is not one.
fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut ids = Vec::new();
    for part in text.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
        if b < a || b - a > 65_536 {
            return None;
        }
        ids.extend(a..=b);
    }
    ids.windows(2).all(|w| w[0] < w[1]).then_some(ids)
}

/// What one CPU did over a window, each state as a percentage of the window's ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuShare {
    /// The CPU's number.
    pub cpu: usize,
    /// User mode, percent.
    pub user: f64,
    /// Niced user mode, percent.
    pub nice: f64,
    /// Kernel mode (system calls, kernel threads), percent.
    pub system: f64,
    /// Hardware interrupts, percent.
    pub irq: f64,
    /// Soft interrupts, percent.
    pub softirq: f64,
    /// Stolen by the hypervisor, percent.
    pub steal: f64,
    /// Idle, percent.
    pub idle: f64,
    /// Idle with I/O outstanding, percent.
    pub iowait: f64,
}

impl CpuShare {
    /// The CPU's busy share: user, nice, system, irq and softirq. Kernel work charged to
    /// no process counts; idle, iowait and steal do not.
    pub fn busy(&self) -> f64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }
}

impl SystemStat {
    /// What each of `cpus` did between `earlier` and `self`; a CPU without a line in
    /// either reading is left out, and one whose ticks did not advance is all idle.
    pub fn shares_since(&self, earlier: &SystemStat, cpus: &[usize]) -> Vec<CpuShare> {
        cpus.iter()
            .filter_map(|&cpu| {
                let d = self.cpus.get(&cpu)?.since(earlier.cpus.get(&cpu)?);
                let total = d.total();
                if total == 0 {
                    return Some(CpuShare {
                        cpu,
                        idle: 100.0,
                        ..Default::default()
                    });
                }
                let pct = |t: u64| 100.0 * t as f64 / total as f64;
                Some(CpuShare {
                    cpu,
                    user: pct(d.user),
                    nice: pct(d.nice),
                    system: pct(d.system),
                    irq: pct(d.irq),
                    softirq: pct(d.softirq),
                    steal: pct(d.steal),
                    idle: pct(d.idle),
                    iowait: pct(d.iowait),
                })
            })
            .collect()
    }

    /// Context switches per second, all CPUs, between `earlier` and `self`.
    pub fn ctxt_per_s_since(&self, earlier: &SystemStat, elapsed_s: f64) -> f64 {
        self.ctxt.saturating_sub(earlier.ctxt) as f64 / elapsed_s.max(1e-9)
    }
}

#[cfg(test)]
mod tests;
