//! The system's side of a measured window, beside the process figures: what each of the
//! client's and the server's CPUs did (`/proc/stat`: kernel work charged to no process
//! included) and what the target's threads waited on (state and `wchan` per thread).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What one CPU did over a window, each state in percent of the window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuUse {
    /// The CPU's number.
    pub cpu: u64,
    /// User mode.
    pub user: f64,
    /// Niced user mode.
    pub nice: f64,
    /// Kernel mode: system calls and kernel threads.
    pub system: f64,
    /// Hardware interrupts.
    pub irq: f64,
    /// Soft interrupts (the network stack's receive and transmit work among them).
    pub softirq: f64,
    /// Taken by the hypervisor.
    pub steal: f64,
    /// Idle.
    pub idle: f64,
    /// Idle with I/O outstanding.
    pub iowait: f64,
    /// Busy: user + nice + system + irq + softirq.
    pub busy: f64,
}

/// The client's and the server's CPUs over one repeat, from `/proc/stat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SystemWindow {
    /// The load generator's CPUs.
    pub client: Vec<CpuUse>,
    /// The targets' CPUs.
    pub server: Vec<CpuUse>,
    /// Context switches per second, whole system (`ctxt`).
    pub ctxt_per_s: f64,
}

impl SystemWindow {
    /// The busiest client CPU's busy share, percent.
    pub fn client_busy(&self) -> Option<f64> {
        busiest(&self.client)
    }

    /// The busiest server CPU's busy share, percent.
    pub fn server_busy(&self) -> Option<f64> {
        busiest(&self.server)
    }
}

/// The highest busy share of `cpus`, percent.
pub fn busiest(cpus: &[CpuUse]) -> Option<f64> {
    cpus.iter().map(|c| c.busy).max_by(f64::total_cmp)
}

/// A wait class's name, for reports and diagnoses.
pub const WAIT_NAMES: [&str; 6] = [
    "running",
    "futex",
    "socket read",
    "epoll",
    "disk",
    "other sleep",
];

/// The target tree's threads sampled through a window: how many thread observations
/// fell in each class (a thread counts once per sample).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadWaits {
    /// Samples of every thread taken.
    pub samples: u64,
    /// The most threads seen in one sample.
    pub threads_peak: u64,
    /// Running or runnable (`R`).
    pub running: u64,
    /// Asleep on a futex: a lock, a condition variable, a pool's queue.
    pub futex: u64,
    /// Asleep in a socket read, receive or accept.
    pub socket: u64,
    /// Idle in epoll, poll or select.
    pub epoll: u64,
    /// Uninterruptible, or in block I/O.
    pub disk: u64,
    /// Any other sleep (timers, pipes, signals).
    pub sleep: u64,
    /// The kernel functions sleeping threads were seen in, most first (at most 8).
    pub wchans: Vec<WchanCount>,
    /// Threads on a futex before the level's load, in one sample: a runtime's parked
    /// housekeeping threads (a JVM's GC and compiler threads, Go's idle Ms), which are not
    /// waiting for a request's lock. 0 in results from before it was sampled.
    #[serde(default)]
    pub futex_idle: u64,
}

/// How often sleeping threads were seen in one kernel function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WchanCount {
    /// The function (`futex_do_wait`, `do_epoll_wait`, ...), `0` when none was given.
    pub wchan: String,
    /// Thread observations.
    pub count: u64,
}

impl ThreadWaits {
    /// The counts in [`WAIT_NAMES`] order.
    pub fn counts(&self) -> [u64; 6] {
        [
            self.running,
            self.futex,
            self.socket,
            self.epoll,
            self.disk,
            self.sleep,
        ]
    }

    /// Thread observations, all classes.
    pub fn total(&self) -> u64 {
        self.counts().iter().sum()
    }

    /// Mean threads per sample.
    pub fn threads_mean(&self) -> f64 {
        self.total() as f64 / self.samples.max(1) as f64
    }

    /// Mean threads per sample in a class count.
    pub fn mean_of(&self, count: u64) -> f64 {
        count as f64 / self.samples.max(1) as f64
    }

    /// Adds another window's samples to these.
    pub fn merge(&mut self, o: &ThreadWaits) {
        self.samples += o.samples;
        self.threads_peak = self.threads_peak.max(o.threads_peak);
        self.running += o.running;
        self.futex += o.futex;
        self.socket += o.socket;
        self.epoll += o.epoll;
        self.disk += o.disk;
        self.sleep += o.sleep;
        self.futex_idle = self.futex_idle.max(o.futex_idle);
        for w in &o.wchans {
            match self.wchans.iter_mut().find(|x| x.wchan == w.wchan) {
                Some(x) => x.count += w.count,
                None => self.wchans.push(w.clone()),
            }
        }
        self.wchans
            .sort_by(|a, b| b.count.cmp(&a.count).then(a.wchan.cmp(&b.wchan)));
        self.wchans.truncate(8);
    }

    /// `of 200 threads: 98% futex, 1% running, 1% epoll (futex_do_wait 196)`: the
    /// non-empty classes, most first, and the top kernel function.
    pub fn line(&self) -> String {
        let total = self.total().max(1) as f64;
        let mut parts: Vec<(u64, &str)> = self
            .counts()
            .into_iter()
            .zip(WAIT_NAMES)
            .filter(|(n, _)| *n > 0)
            .collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.0));
        let shares: Vec<String> = parts
            .iter()
            .map(|(n, name)| format!("{:.0}% {name}", 100.0 * *n as f64 / total))
            .collect();
        let top = self
            .wchans
            .first()
            .map(|w| format!(" (mostly in {})", w.wchan))
            .unwrap_or_default();
        format!(
            "threads over {} samples, {:.0} on average: {}{top}",
            self.samples,
            self.threads_mean(),
            shares.join(", ")
        )
    }
}

/// A cell's system figures: medians over its repeats, and its thread samples merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SystemSummary {
    /// Each client CPU, the median of every state over the repeats.
    pub client: Vec<CpuUse>,
    /// Each server CPU, likewise.
    pub server: Vec<CpuUse>,
    /// Median context switches per second, whole system.
    pub ctxt_per_s: f64,
}

/// A JVM thread dump (`jcmd <pid> Thread.print`) of a level under load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadDump {
    /// The JVM's pid.
    pub pid: u64,
    /// The file in the results directory, relative to it.
    pub path: String,
    /// Seconds into the load it was taken in (its `slice`) when `jcmd` started.
    pub t_s: f64,
    /// The load it was taken in: an unmeasured slice after the level's repeats, or (in
    /// results written before the dumps left the repeats) the middle repeat.
    #[serde(default)]
    pub slice: DumpSlice,
    /// When `jcmd` started, nanoseconds since the Unix epoch; absent in results written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ns: Option<u64>,
}

/// The load a thread dump was taken in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DumpSlice {
    /// The level's middle repeat, which it disturbed: `jcmd` is a JVM of its own, started
    /// on the client's CPUs. Only in results written before the dumps left the repeats.
    #[default]
    Repeat,
    /// A slice of the level's load after its repeats, recorded in none of them.
    Unmeasured,
}

impl DumpSlice {
    /// How the reports word it beside the dump's link.
    pub fn label(self) -> &'static str {
        match self {
            DumpSlice::Repeat => "during a measured repeat",
            DumpSlice::Unmeasured => "in an unmeasured slice after the repeats",
        }
    }
}

#[cfg(test)]
mod tests;
