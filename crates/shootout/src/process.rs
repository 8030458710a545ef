//! Target processes: started pinned, in their own process group and marked, and stopped
//! with SIGTERM then SIGKILL so that nothing they started survives.
//!
//! A target may fork helpers (php-fpm children, nginx workers) or misbehave (ignore
//! SIGTERM, leave a daemon behind with `setsid`). Three nets catch its processes: its
//! process group; its descendants in `/proc`; and an environment variable every process
//! it starts inherits ([`MARK_VAR`]), which finds even a double-forked daemon in a new
//! session. Only processes caught by one of these are ever signalled.

use std::fs::File;
use std::io;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;

/// The environment variable that marks every process of a target.
pub const MARK_VAR: &str = "FOXBENCH_TARGET";

static SERIAL: AtomicU64 = AtomicU64::new(0);

/// A started command: a target server, or a build.
#[derive(Debug)]
pub struct Spawned {
    child: Child,
    /// The process id (also its process group id).
    pub pid: i32,
    mark: String,
    status: Option<ExitStatus>,
    stopped: bool,
}

/// What stopping took.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopReport {
    /// SIGKILL was needed: something ignored SIGTERM for the whole grace period.
    pub killed: bool,
    /// Processes other than the root that were still running at the stop.
    pub leftovers: usize,
    /// Processes still present after SIGKILL (should be 0).
    pub survivors: usize,
}

/// The CPUs this thread may run on.
pub fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => (0..std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1))
            .collect(),
    }
}

/// Pins the calling thread (and the threads and processes it starts later) to `cpus`.
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(io::Error::from)?;
    }
    sched_setaffinity(Pid::from_raw(0), &set).map_err(io::Error::from)
}

/// How [`spawn`] hands the command to `sh -c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// `exec <command>`: the server replaces the shell, so its pid is the root's.
    Exec,
    /// `<command>` as a script (builds: several commands, `&&`, `exit`).
    Script,
}

/// Starts the command with `sh -c` in `dir`, in a new process group, pinned to `cpus`,
/// with stdout and stderr appended to `log`.
pub fn spawn(
    command: &str,
    shell: Shell,
    dir: &Path,
    env: &[(String, String)],
    cpus: &[usize],
    log: &Path,
) -> io::Result<Spawned> {
    let out = File::options().create(true).append(true).open(log)?;
    let err = out.try_clone()?;
    let mark = format!(
        "{}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(match shell {
            Shell::Exec => format!("exec {command}"),
            Shell::Script => command.to_string(),
        })
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env(MARK_VAR, &mark)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    // The child inherits the spawning thread's CPU mask, so the mask is set before the fork
    // and restored after: no window in which the target runs unpinned.
    let before = allowed_cpus();
    pin_current_thread(cpus)?;
    let spawned = cmd.spawn();
    pin_current_thread(&before)?;
    let child = spawned?;
    Ok(Spawned {
        pid: child.id() as i32,
        child,
        mark,
        status: None,
        stopped: false,
    })
}

impl Spawned {
    /// The exit status, once the root process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Every live process of this target: its group, its descendants, and anything marked.
    pub fn members(&self) -> Vec<i32> {
        let tree = probe::tree(self.pid).unwrap_or_default();
        probe::processes::live()
            .into_iter()
            .filter(|p| {
                let marked = probe::processes::has_env(p.pid, MARK_VAR, &self.mark);
                p.pgrp == self.pid || tree.contains(&p.pid) || marked
            })
            .map(|p| p.pid)
            .collect()
    }

    /// Waits for the root to exit, up to `limit`.
    pub fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + limit;
        loop {
            if let Some(s) = self.exited() {
                return Some(s);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM to everything, SIGKILL after `grace` to whatever is left, then reaps.
    pub fn stop(&mut self, grace: Duration) -> StopReport {
        let mut report = StopReport::default();
        if self.stopped {
            return report;
        }
        self.stopped = true;
        let first = self.members();
        report.leftovers = first.iter().filter(|&&p| p != self.pid).count();
        let _ = killpg(Pid::from_raw(self.pid), Signal::SIGTERM);
        for &p in &first {
            let _ = kill(Pid::from_raw(p), Signal::SIGTERM);
        }
        let end = Instant::now() + grace;
        let mut left = first;
        while !left.is_empty() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
            self.reap(&left);
            left = self.members();
        }
        if !left.is_empty() {
            report.killed = true;
            let _ = killpg(Pid::from_raw(self.pid), Signal::SIGKILL);
            for &p in &left {
                let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
            }
            let end = Instant::now() + Duration::from_secs(5);
            while !left.is_empty() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(20));
                self.reap(&left);
                left = self.members();
            }
        }
        self.reap(&[]);
        report.survivors = left.len();
        report
    }

    /// Reaps the root and any of `pids` that are our children (orphans reparented to a
    /// subreaper foxbench), so none is left a zombie.
    fn reap(&mut self, pids: &[i32]) {
        let _ = self.exited();
        let me = std::process::id() as i32;
        for &p in pids {
            if p == self.pid {
                continue;
            }
            let ours = probe::processes::get(p).is_some_and(|s| s.ppid == me);
            if ours {
                let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
            }
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // A panic or an early return still leaves no process behind.
        self.stop(Duration::from_secs(1));
    }
}

/// Makes foxbench the reaper of orphans its targets leave, so that a daemonizing target's
/// children stay findable and get reaped. Best effort.
pub fn become_subreaper() {
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// The last `lines` lines of a log file, for error messages.
pub fn tail(log: &Path, lines: usize) -> String {
    let text = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests;
