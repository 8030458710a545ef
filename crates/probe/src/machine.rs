//! The machine's settings and limits, from `getrlimit`, `/proc/sys` and a few `/proc`
//! files: the figures `load::os_limits` judges, and what the shootout records of a run's
//! conditions. Reading only; the rules that judge the figures live with their callers.

/// The figures the checks read; `None` where they could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    /// RLIMIT_NOFILE (soft, hard).
    pub nofile: Option<(u64, u64)>,
    /// `fs.nr_open`: the ceiling of any hard limit.
    pub nr_open: Option<u64>,
    /// `fs.file-nr`: open files now, and `fs.file-max`.
    pub file_nr: Option<(u64, u64)>,
    /// `net.ipv4.ip_local_port_range`.
    pub port_range: Option<(u64, u64)>,
    /// `net.ipv4.tcp_tw_reuse` (0 off, 1 on, 2 loopback only).
    pub tw_reuse: Option<u64>,
    /// `net.core.somaxconn`.
    pub somaxconn: Option<u64>,
    /// `net.ipv4.tcp_max_syn_backlog`.
    pub syn_backlog: Option<u64>,
    /// `net.netfilter.nf_conntrack_count` and `_max`; `None` when conntrack is not loaded.
    pub conntrack: Option<(u64, u64)>,
    /// `net.ipv4.tcp_mem` (low, pressure, high) in pages.
    pub tcp_mem: Option<[u64; 3]>,
    /// TCP memory in use now, in pages (`/proc/net/sockstat`).
    pub tcp_mem_used: Option<u64>,
    /// RLIMIT_NPROC (soft, hard): processes and threads of this user.
    pub nproc: Option<(u64, u64)>,
    /// Whether this process runs as root, which RLIMIT_NPROC does not bind.
    pub root: bool,
    /// `kernel.threads-max`.
    pub threads_max: Option<u64>,
    /// `kernel.pid_max`: every thread takes a pid.
    pub pid_max: Option<u64>,
    /// Threads and processes on the machine now (`/proc/loadavg`'s fourth field).
    pub tasks_now: Option<u64>,
    /// `vm.max_map_count`: memory maps per process.
    pub max_map_count: Option<u64>,
    /// `net.core.rmem_max`: the most a socket may ask for as its receive buffer, bytes.
    pub rmem_max: Option<u64>,
    /// `net.core.wmem_max`: the most a socket may ask for as its send buffer, bytes.
    pub wmem_max: Option<u64>,
}

/// The value of a kernel setting by its sysctl name (`net.core.somaxconn`), as read from
/// `/proc/sys`; `None` when it cannot be read (its module is not loaded, or no `/proc`).
pub fn sysctl(name: &str) -> Option<String> {
    std::fs::read_to_string(sysctl_path(name)).ok()
}

/// Whether a kernel setting exists here (conntrack's exist only with its module loaded).
pub fn sysctl_exists(name: &str) -> bool {
    std::path::Path::new(&sysctl_path(name)).exists()
}

fn sysctl_path(name: &str) -> String {
    format!("/proc/sys/{}", name.replace('.', "/"))
}

/// The first `N` whitespace-separated numbers of a `/proc/sys` value, or `None`.
pub fn numbers<const N: usize>(text: &str) -> Option<[u64; N]> {
    let mut out = [0u64; N];
    let mut words = text.split_whitespace();
    for slot in &mut out {
        *slot = words.next()?.parse().ok()?;
    }
    Some(out)
}

/// The `mem` figure of `/proc/net/sockstat`'s `TCP:` line, in pages.
pub fn sockstat_tcp_pages(sockstat: &str) -> Option<u64> {
    let line = sockstat.lines().find(|l| l.starts_with("TCP:"))?;
    let mut words = line.split_whitespace();
    while let Some(w) = words.next() {
        if w == "mem" {
            return words.next()?.parse().ok();
        }
    }
    None
}

/// The threads and processes on the machine: `/proc/loadavg`'s `running/total`'s total.
pub fn loadavg_tasks(loadavg: &str) -> Option<u64> {
    let field = loadavg.split_whitespace().nth(3)?;
    field.split_once('/')?.1.parse().ok()
}

impl Machine {
    /// Reads this process's limits and the machine's (or network namespace's) settings.
    pub fn read() -> Machine {
        use nix::sys::resource::{getrlimit, Resource};
        let one = |name: &str| sysctl(name).and_then(|t| numbers::<1>(&t)).map(|[v]| v);
        let conntrack = match (
            one("net.netfilter.nf_conntrack_count"),
            one("net.netfilter.nf_conntrack_max"),
        ) {
            (Some(count), Some(max)) => Some((count, max)),
            _ => None,
        };
        Machine {
            nofile: getrlimit(Resource::RLIMIT_NOFILE).ok(),
            nr_open: one("fs.nr_open"),
            file_nr: sysctl("fs.file-nr")
                .and_then(|t| numbers::<3>(&t))
                .map(|[open, _, max]| (open, max)),
            port_range: sysctl("net.ipv4.ip_local_port_range")
                .and_then(|t| numbers::<2>(&t))
                .map(|[lo, hi]| (lo, hi)),
            tw_reuse: one("net.ipv4.tcp_tw_reuse"),
            somaxconn: one("net.core.somaxconn"),
            syn_backlog: one("net.ipv4.tcp_max_syn_backlog"),
            conntrack,
            tcp_mem: sysctl("net.ipv4.tcp_mem").and_then(|t| numbers::<3>(&t)),
            tcp_mem_used: std::fs::read_to_string("/proc/net/sockstat")
                .ok()
                .and_then(|t| sockstat_tcp_pages(&t)),
            nproc: getrlimit(Resource::RLIMIT_NPROC).ok(),
            root: std::fs::metadata("/proc/self").is_ok_and(|m| {
                use std::os::unix::fs::MetadataExt as _;
                m.uid() == 0
            }),
            threads_max: one("kernel.threads-max"),
            pid_max: one("kernel.pid_max"),
            tasks_now: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|t| loadavg_tasks(&t)),
            max_map_count: one("vm.max_map_count"),
            rmem_max: one("net.core.rmem_max"),
            wmem_max: one("net.core.wmem_max"),
        }
    }
}

/// The CPU model name (`/proc/cpuinfo`'s first `model name`).
pub fn cpu_model() -> Option<String> {
    let t = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    t.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// The kernel's release, as `uname -r` prints it.
pub fn kernel_release() -> Option<String> {
    sysctl("kernel.osrelease").map(|s| s.trim().to_string())
}

/// MemTotal in bytes (`/proc/meminfo`).
pub fn mem_total_bytes() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/meminfo").ok()?;
    let l = t.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib = l.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests;
