//! Samples a process tree from `/proc`: CPU, RSS and PSS, threads, context switches, fds.
//!
//! This crate owns reading `/proc` (through the `procfs` crate) and nothing else: it does
//! not start, signal or wait for processes. A *tree* is a root pid and every process whose
//! parent chain leads to it, found afresh at each sample, so workers that a server forks
//! (php-fpm children, nginx workers) are counted.
//!
//! Two kinds of sample, by cost:
//! - [`sample`] reads one `stat`, one `smaps_rollup` and one fd directory per process.
//!   It is cheap enough for a time series (a few per second) during a measurement.
//! - [`by_name`] reads one `stat` per process and adds CPU up by process name, so a
//!   proxied target's proxy and app are told apart; taken at a window's edges.
//! - [`threads`] reads one `stat` and one `status` per *thread*: context switches and the
//!   busiest thread's CPU. A server with a thread per connection has thousands, so it is
//!   taken only at the edges of a measured window, never during it.
//! - [`thread_waits`] reads one `stat` and one `wchan` per thread and classifies what each
//!   waits on (a futex, a socket, epoll, disk); a [`WaitHistogram`] adds samples up. Its
//!   caller keeps it to a small share of a window (see the shootout's sampler).
//! - [`system`] reads `/proc/stat`: per-CPU time (user, system, softirq, ...) and the
//!   system's context switches, the vmstat columns, kernel work charged to no process
//!   included.
//! - [`connections`] reads the tree's fd directories and its network namespace's TCP
//!   tables: how many connections are established to a service's port ([`Peer::Remote`])
//!   or on a listening port ([`Peer::Local`]), and how many had bytes in flight or unread;
//!   a [`ConnectionSeries`] keeps min, mean and max through a window.
//! - [`tcp_counters`] reads the network namespace's TCP counters (`/proc/net/netstat` and
//!   `/proc/net/snmp`): delayed ACKs, listen overflows, retransmits, memory pressure. They
//!   are system-wide (per namespace), taken at a window's edges.
//! - [`udp_counters`] reads the network namespace's UDP counters (`/proc/net/snmp` and
//!   `/proc/net/snmp6`): datagrams in and out, and those dropped for a full socket buffer,
//!   which QUIC pays for in loss timeouts. Taken at a window's edges, as the TCP ones.
//! - [`tcp_sockets`] reads each TCP socket's `tcp_info` through sock_diag netlink (as `ss
//!   -ti`): its delayed-ACK timeout, round trips and retransmits, so that one link's
//!   figures (a [`LinkSeries`]: foxbench to a target, or a target to a service) can be told
//!   apart from the namespace's.
//! - [`machine`] reads the machine's settings and limits (`/proc/sys`, `getrlimit`, the CPU
//!   model, the memory) and [`processes`] the process table: every other crate asks here
//!   rather than reading `/proc` itself.
//! - [`placement`] finds where a load generator and its local target's server may run:
//!   this process's CPUs and those of the process listening on the target's port.
#![forbid(unsafe_code)]

mod connections;
mod cpu;
pub mod machine;
mod netstat;
pub mod placement;
pub mod processes;
mod sockets;
mod udp;
mod waits;

pub use cpu::{system, CpuShare, CpuTicks, SystemStat};
pub use netstat::{counter_pairs, net_counters, parse_tcp_counters, tcp_counters, TcpCounters};
pub use placement::{CpuList, Server};
pub use sockets::{
    tcp_sockets, LinkSeries, LinkWindow, Tally, TcpInfo, TcpSocket, TCP_DELACK_MAX_US,
    TCP_DELACK_MIN_US,
};
pub use udp::{parse_udp_counters, udp_counters, UdpCounters};
pub use waits::{classify, thread_waits, ThreadWait, Wait, WaitHistogram, WCHAN_RULES};

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use procfs::process::Process;

pub use connections::{
    connections, count, listens, ConnectionSeries, Connections, Peer, Socket, State,
};

/// Why a sample could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The root process no longer exists.
    #[error("process {0} has exited")]
    Gone(i32),
    /// `/proc` could not be read.
    #[error("cannot read /proc: {0}")]
    Proc(String),
}

/// One reading of a process tree. CPU figures are cumulative since each process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// Processes in the tree.
    pub processes: u32,
    /// Threads in the tree.
    pub threads: u32,
    /// User CPU of the tree, including children it has reaped.
    pub cpu_user_ns: u64,
    /// System CPU of the tree, including children it has reaped.
    pub cpu_sys_ns: u64,
    /// Resident set, summed over the processes (shared pages counted in each).
    pub rss_bytes: u64,
    /// Proportional set size, summed: shared pages divided among their sharers.
    pub pss_bytes: u64,
    /// Open file descriptors, summed.
    pub fds: u32,
}

impl Sample {
    /// User plus system CPU.
    pub fn cpu_ns(&self) -> u64 {
        self.cpu_user_ns + self.cpu_sys_ns
    }
}

/// Per-thread counters of a tree, for a measured window's edges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Threads {
    /// Voluntary context switches (the thread waited), summed over live threads.
    pub voluntary_ctxt: u64,
    /// Involuntary context switches (the thread was preempted), summed over live threads.
    pub involuntary_ctxt: u64,
    /// CPU (user + system) of each live thread, by thread id.
    pub cpu_ns: BTreeMap<i32, u64>,
}

impl Threads {
    /// The largest CPU increase of any one thread between `earlier` and `self`.
    pub fn busiest_since(&self, earlier: &Threads) -> u64 {
        self.cpu_ns
            .iter()
            .map(|(tid, &ns)| ns.saturating_sub(earlier.cpu_ns.get(tid).copied().unwrap_or(0)))
            .max()
            .unwrap_or(0)
    }
}

fn ticks_to_ns(ticks: u64) -> u64 {
    let hz = procfs::ticks_per_second().max(1);
    ticks.saturating_mul(1_000_000_000) / hz
}

/// The root and all its descendants, root first. Fails when the root is gone.
///
/// Walks down from the root through each thread's `/proc/<pid>/task/<tid>/children`, so a
/// reading costs the tree's size, not the machine's: the probe reads trees several times a
/// second (a one-process server on a machine of 300 processes: 2 small reads instead of
/// 300 `stat`s). Without that file (a kernel without `CONFIG_PROC_CHILDREN`), every
/// process's parent is read instead.
pub fn tree(root: i32) -> Result<Vec<i32>, ProbeError> {
    match tree_by_children(root) {
        Walk::Tree(t) => Ok(t),
        Walk::Gone => Err(ProbeError::Gone(root)),
        Walk::Unsupported => tree_by_parents(root),
    }
}

enum Walk {
    Tree(Vec<i32>),
    Gone,
    Unsupported,
}

/// The tree from the kernel's lists of each thread's children. A process that exits
/// during the walk is left out, as one that starts after its parent was read.
fn tree_by_children(root: i32) -> Walk {
    // The root's state: a zombie root has exited, its tree is gone.
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{root}/stat")) else {
        return Walk::Gone;
    };
    if stat_state(&stat) == Some("Z") {
        return Walk::Gone;
    }
    let mut out = vec![root];
    let mut seen: std::collections::HashSet<i32> = [root].into();
    let mut i = 0;
    while i < out.len() {
        let pid = out[i];
        i += 1;
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let mut path = task.path();
            path.push("children");
            match std::fs::read_to_string(&path) {
                Ok(list) => {
                    for child in children_list(&list) {
                        if seen.insert(child) {
                            out.push(child);
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && pid == root => {
                    // The root's own thread exists but has no list: no kernel support.
                    if std::path::Path::new(&format!("/proc/{pid}/task")).exists()
                        && task.path().exists()
                    {
                        return Walk::Unsupported;
                    }
                }
                Err(_) => {}
            }
        }
    }
    Walk::Tree(out)
}

/// The state letter of a `/proc/<pid>/stat` line: the first field after the command name,
/// which is in parentheses and may itself hold spaces and parentheses (so the last `)`).
pub fn stat_state(stat: &str) -> Option<&str> {
    let i = stat.rfind(')')?;
    stat[i + 1..].split_whitespace().next()
}

/// The pids of a `/proc/<pid>/task/<tid>/children` list (space-separated); anything else
/// in it is skipped.
pub fn children_list(text: &str) -> impl Iterator<Item = i32> + '_ {
    text.split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
        .filter(|p| *p > 0)
}

/// The tree from every process's parent: the whole of `/proc` read once.
fn tree_by_parents(root: i32) -> Result<Vec<i32>, ProbeError> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let all = procfs::process::all_processes().map_err(|e| ProbeError::Proc(e.to_string()))?;
    let mut root_seen = false;
    for p in all.flatten() {
        // A process that exits between the listing and the read is simply not in the tree.
        if let Ok(stat) = p.stat() {
            if stat.pid == root {
                // A zombie root has exited: its tree is gone even though the pid remains.
                root_seen = stat.state != 'Z';
            }
            children.entry(stat.ppid).or_default().push(stat.pid);
        }
    }
    if !root_seen {
        return Err(ProbeError::Gone(root));
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = children.get(&out[i]) {
            out.extend(kids.iter().copied().filter(|k| *k != root));
        }
        i += 1;
    }
    Ok(out)
}

/// Samples the tree rooted at `root`.
pub fn sample(root: i32) -> Result<Sample, ProbeError> {
    let page = procfs::page_size();
    let mut s = Sample::default();
    for pid in tree(root)? {
        let Ok(p) = Process::new(pid) else { continue };
        let Ok(stat) = p.stat() else { continue };
        if stat.state == 'Z' {
            continue;
        }
        s.processes += 1;
        s.threads += u32::try_from(stat.num_threads.max(0)).unwrap_or(u32::MAX);
        let reaped_user = u64::try_from(stat.cutime.max(0)).unwrap_or(0);
        let reaped_sys = u64::try_from(stat.cstime.max(0)).unwrap_or(0);
        s.cpu_user_ns += ticks_to_ns(stat.utime + reaped_user);
        s.cpu_sys_ns += ticks_to_ns(stat.stime + reaped_sys);
        // RSS and PSS both from smaps_rollup, which is exact and consistent (PSS ≤ RSS);
        // stat's RSS comes from per-thread counters that may lag by a few pages.
        match p.smaps_rollup() {
            Ok(r) => {
                let field = |name: &str| -> u64 {
                    r.memory_map_rollup
                        .iter()
                        .filter_map(|m| m.extension.map.get(name).copied())
                        .sum()
                };
                s.rss_bytes += field("Rss");
                s.pss_bytes += field("Pss");
            }
            Err(_) => s.rss_bytes += stat.rss * page,
        }
        if let Ok(n) = p.fd_count() {
            s.fds += u32::try_from(n).unwrap_or(u32::MAX);
        }
    }
    if s.processes == 0 {
        return Err(ProbeError::Gone(root));
    }
    Ok(s)
}

/// Reads every thread of the tree rooted at `root`: context switches and CPU per thread.
pub fn threads(root: i32) -> Result<Threads, ProbeError> {
    let mut t = Threads::default();
    for pid in tree(root)? {
        let Ok(p) = Process::new(pid) else { continue };
        let Ok(tasks) = p.tasks() else { continue };
        for task in tasks.flatten() {
            if let Ok(status) = task.status() {
                t.voluntary_ctxt += status.voluntary_ctxt_switches.unwrap_or(0);
                t.involuntary_ctxt += status.nonvoluntary_ctxt_switches.unwrap_or(0);
            }
            if let Ok(stat) = task.stat() {
                t.cpu_ns
                    .insert(task.tid, ticks_to_ns(stat.utime + stat.stime));
            }
        }
    }
    Ok(t)
}

/// The CPU of a tree's processes that share a name (`comm`): nginx's master and workers
/// together, the app behind them apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NamedCpu {
    /// Live processes of that name.
    pub processes: u32,
    /// Their CPU (user + system, reaped children included), cumulative.
    pub cpu_ns: u64,
}

/// A tree's CPU by process name, for a measured window's edges.
pub type ByName = BTreeMap<String, NamedCpu>;

/// Groups `(comm, cpu_ns)` of a tree's processes by name.
pub fn group_by_name<'a>(procs: impl IntoIterator<Item = (&'a str, u64)>) -> ByName {
    let mut out = ByName::new();
    for (name, cpu_ns) in procs {
        let e = out.entry(name.to_string()).or_default();
        e.processes += 1;
        e.cpu_ns += cpu_ns;
    }
    out
}

/// The CPU each process name of the tree rooted at `root` has used so far.
pub fn by_name(root: i32) -> Result<ByName, ProbeError> {
    let mut procs: Vec<(String, u64)> = Vec::new();
    for pid in tree(root)? {
        let Ok(stat) = Process::new(pid).and_then(|p| p.stat()) else {
            continue;
        };
        if stat.state == 'Z' {
            continue;
        }
        let reaped = u64::try_from(stat.cutime.max(0) + stat.cstime.max(0)).unwrap_or(0);
        procs.push((stat.comm, ticks_to_ns(stat.utime + stat.stime + reaped)));
    }
    Ok(group_by_name(procs.iter().map(|(n, c)| (n.as_str(), *c))))
}

/// What this process (all its threads) has cost so far, CPU and context switches: the load generator's own figure,
/// for `foxbench load` and the shootout alike.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OwnUsage {
    /// User CPU.
    pub user: Duration,
    /// System CPU.
    pub sys: Duration,
    /// Peak resident set so far.
    pub max_rss_bytes: u64,
    /// Voluntary context switches (`ru_nvcsw`): a thread gave up the CPU, as a worker does
    /// when it sleeps in epoll_wait with nothing to do.
    pub voluntary_ctxt: u64,
    /// Involuntary context switches (`ru_nivcsw`): the kernel took the CPU away.
    pub involuntary_ctxt: u64,
}

impl OwnUsage {
    /// The CPU spent between `earlier` and `self`; the peak RSS is `self`'s.
    pub fn since(&self, earlier: &OwnUsage) -> OwnUsage {
        OwnUsage {
            user: self.user.saturating_sub(earlier.user),
            sys: self.sys.saturating_sub(earlier.sys),
            max_rss_bytes: self.max_rss_bytes,
            voluntary_ctxt: self.voluntary_ctxt.saturating_sub(earlier.voluntary_ctxt),
            involuntary_ctxt: self
                .involuntary_ctxt
                .saturating_sub(earlier.involuntary_ctxt),
        }
    }

    /// User plus system CPU.
    pub fn cpu(&self) -> Duration {
        self.user + self.sys
    }

    /// This CPU with `other`'s left out (a helper thread's), and `self`'s peak RSS.
    pub fn without(&self, other: &OwnUsage) -> OwnUsage {
        OwnUsage {
            user: self.user.saturating_sub(other.user),
            sys: self.sys.saturating_sub(other.sys),
            max_rss_bytes: self.max_rss_bytes,
            voluntary_ctxt: self.voluntary_ctxt.saturating_sub(other.voluntary_ctxt),
            involuntary_ctxt: self.involuntary_ctxt.saturating_sub(other.involuntary_ctxt),
        }
    }

    /// The CPU of both (two helper threads'), with the larger peak RSS.
    pub fn plus(&self, other: &OwnUsage) -> OwnUsage {
        OwnUsage {
            user: self.user + other.user,
            sys: self.sys + other.sys,
            max_rss_bytes: self.max_rss_bytes.max(other.max_rss_bytes),
            voluntary_ctxt: self.voluntary_ctxt + other.voluntary_ctxt,
            involuntary_ctxt: self.involuntary_ctxt + other.involuntary_ctxt,
        }
    }
}

/// This process's CPU and peak RSS, from getrusage(2): its CPU is exact to the
/// microsecond, where `/proc/self/stat` counts 10 ms ticks (±1% of a 1.5 s window).
pub fn own_usage() -> OwnUsage {
    usage(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

/// The calling thread's CPU since it started (getrusage(2) `RUSAGE_THREAD`), with the
/// process's peak RSS: what a helper thread (the shootout's probe) cost, to be told apart
/// from the load generator's own figure.
pub fn thread_usage() -> OwnUsage {
    usage(nix::sys::resource::UsageWho::RUSAGE_THREAD)
}

fn usage(who: nix::sys::resource::UsageWho) -> OwnUsage {
    use nix::sys::resource::getrusage;
    let Ok(u) = getrusage(who) else {
        return OwnUsage::default();
    };
    let tv = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec().max(0) as u64)
            + Duration::from_micros(t.tv_usec().max(0) as u64)
    };
    OwnUsage {
        user: tv(u.user_time()),
        sys: tv(u.system_time()),
        // ru_maxrss is in KiB on Linux.
        max_rss_bytes: u.max_rss().max(0) as u64 * 1024,
        voluntary_ctxt: u.voluntary_context_switches().max(0) as u64,
        involuntary_ctxt: u.involuntary_context_switches().max(0) as u64,
    }
}

#[cfg(test)]
mod tests;
