//! What a process tree's threads are waiting on: every thread's state and `wchan` from
//! `/proc/<pid>/task/<tid>/`, classified, and many samples into a histogram. This is the
//! thread dump of a tool that cannot attach a debugger.
//!
//! The classes are a table of the kernel functions a thread sleeps in ([`WCHAN_RULES`]),
//! recorded on this project's kernel (6.18) by `waits_of_real_threads_on_this_kernel`,
//! with the syscall in progress (`/proc/.../syscall`) as the fallback when the kernel
//! gives no `wchan` ("0").

use std::collections::BTreeMap;

use procfs::process::Process;

use crate::{tree, ProbeError};

/// What one thread was doing at a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Wait {
    /// Running or runnable (`R`).
    Running,
    /// Asleep on a futex: a lock, a condition variable, a pool's queue.
    Futex,
    /// Asleep in a socket read, receive or accept.
    Socket,
    /// Idle in an event loop: epoll, poll or select.
    Epoll,
    /// Uninterruptible (`D`) or asleep in block I/O.
    Disk,
    /// Any other sleep (a timer, a pipe, a signal wait).
    Sleep,
}

impl Wait {
    /// Every class, in histogram order.
    pub const ALL: [Wait; 6] = [
        Wait::Running,
        Wait::Futex,
        Wait::Socket,
        Wait::Epoll,
        Wait::Disk,
        Wait::Sleep,
    ];
}

/// Kernel functions (`wchan`) a thread sleeps in, by prefix, and what the sleep means.
/// Recorded on Linux 6.18: a `std::sync::Mutex` or `Condvar` waits in `futex_do_wait`
/// (`futex_wait_queue` on older kernels), a TCP read in `wait_woken` under
/// `sk_wait_data`, a Unix stream read in `unix_stream_read_generic`, an accept in
/// `inet_csk_accept`, `epoll_wait` in `ep_poll` (`do_epoll_wait`), `poll` in
/// `do_sys_poll` or `poll_schedule_timeout`, a sleep in `hrtimer_nanosleep`.
pub const WCHAN_RULES: &[(&str, Wait)] = &[
    ("futex_", Wait::Futex),
    ("ep_poll", Wait::Epoll),
    ("do_epoll_wait", Wait::Epoll),
    ("do_sys_poll", Wait::Epoll),
    ("poll_schedule_timeout", Wait::Epoll),
    ("do_select", Wait::Epoll),
    ("core_sys_select", Wait::Epoll),
    ("sk_wait_data", Wait::Socket),
    ("wait_woken", Wait::Socket),
    ("tcp_recvmsg", Wait::Socket),
    ("inet_csk_accept", Wait::Socket),
    ("unix_stream_read_generic", Wait::Socket),
    ("unix_stream_data_wait", Wait::Socket),
    ("__skb_wait_for_more_packets", Wait::Socket),
    ("__skb_recv_datagram", Wait::Socket),
    ("sk_stream_wait_memory", Wait::Socket),
    ("inet_wait_for_connect", Wait::Socket),
    ("io_schedule", Wait::Disk),
    ("folio_wait", Wait::Disk),
    ("bit_wait_io", Wait::Disk),
    ("wait_on_page", Wait::Disk),
    ("blk_", Wait::Disk),
    ("jbd2_", Wait::Disk),
];

/// The class of a syscall in progress, for a sleeping thread whose `wchan` is 0: x86-64
/// and aarch64 numbers from `libc`.
fn syscall_class(nr: i64) -> Option<Wait> {
    let table: &[(i64, Wait)] = &[
        (libc::SYS_futex, Wait::Futex),
        (libc::SYS_epoll_pwait, Wait::Epoll),
        (libc::SYS_ppoll, Wait::Epoll),
        (libc::SYS_pselect6, Wait::Epoll),
        (libc::SYS_recvfrom, Wait::Socket),
        (libc::SYS_recvmsg, Wait::Socket),
        (libc::SYS_accept, Wait::Socket),
        (libc::SYS_accept4, Wait::Socket),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_epoll_wait, Wait::Epoll),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_poll, Wait::Epoll),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_select, Wait::Epoll),
    ];
    table.iter().find(|(n, _)| *n == nr).map(|(_, w)| *w)
}

/// Classifies one thread from its state letter, its `wchan` (`"0"` or empty when the
/// kernel gives none) and, if read, the first field of its `syscall` file.
pub fn classify(state: char, wchan: &str, syscall: Option<&str>) -> Wait {
    match state {
        'R' => return Wait::Running,
        'D' => return Wait::Disk,
        _ => {}
    }
    let wchan = wchan.trim();
    if let Some((_, w)) = WCHAN_RULES.iter().find(|(p, _)| wchan.starts_with(p)) {
        return *w;
    }
    if wchan.is_empty() || wchan == "0" {
        let nr = syscall.and_then(|s| s.split_whitespace().next()?.parse::<i64>().ok());
        if let Some(w) = nr.and_then(syscall_class) {
            return w;
        }
    }
    Wait::Sleep
}

/// One thread at one sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadWait {
    /// Its thread id.
    pub tid: i32,
    /// Its state letter (`R`, `S`, `D`, ...).
    pub state: char,
    /// Where it sleeps in the kernel, `0` when nowhere (or not given).
    pub wchan: String,
    /// What that means.
    pub wait: Wait,
}

/// Samples every thread of the tree rooted at `root` once. A thread that exits between
/// the listing and the read is left out.
pub fn thread_waits(root: i32) -> Result<Vec<ThreadWait>, ProbeError> {
    let mut out = Vec::new();
    for pid in tree(root)? {
        let Ok(p) = Process::new(pid) else { continue };
        let Ok(tasks) = p.tasks() else { continue };
        for task in tasks.flatten() {
            let Ok(stat) = task.stat() else { continue };
            if stat.state == 'Z' || stat.state == 'X' {
                continue;
            }
            let dir = format!("/proc/{pid}/task/{}", task.tid);
            let wchan = std::fs::read_to_string(format!("{dir}/wchan")).unwrap_or_default();
            let wchan = wchan.trim().to_string();
            let syscall = (stat.state != 'R' && (wchan.is_empty() || wchan == "0"))
                .then(|| std::fs::read_to_string(format!("{dir}/syscall")).ok())
                .flatten();
            let wait = classify(stat.state, &wchan, syscall.as_deref());
            out.push(ThreadWait {
                tid: task.tid,
                state: stat.state,
                wchan: if wchan.is_empty() { "0".into() } else { wchan },
                wait,
            });
        }
    }
    Ok(out)
}

/// Samples of a tree's threads over a window, added up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WaitHistogram {
    /// Samples taken.
    pub samples: u64,
    /// Thread observations in each class, summed over the samples.
    pub counts: BTreeMap<Wait, u64>,
    /// The most threads seen in one sample.
    pub threads_peak: u64,
    /// Thread observations by `wchan` of sleeping threads, summed over the samples.
    pub wchans: BTreeMap<String, u64>,
}

impl WaitHistogram {
    /// Adds one sample of every thread.
    pub fn add(&mut self, threads: &[ThreadWait]) {
        self.samples += 1;
        self.threads_peak = self.threads_peak.max(threads.len() as u64);
        for t in threads {
            *self.counts.entry(t.wait).or_default() += 1;
            if t.wait != Wait::Running {
                *self.wchans.entry(t.wchan.clone()).or_default() += 1;
            }
        }
    }

    /// Thread observations, all classes.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

#[cfg(test)]
mod tests;
