//! The process table: which processes live, their parent and group, their environment
//! and executable. The shootout finds a target's processes with it; it signals none.

use std::path::PathBuf;

use procfs::process::Process;

/// A live process: not a zombie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    /// Its parent's pid.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
}

/// Every live process on the machine (zombies left out); empty when `/proc` cannot be read.
pub fn live() -> Vec<Proc> {
    let Ok(all) = procfs::process::all_processes() else {
        return Vec::new();
    };
    all.flatten()
        .filter_map(|p| p.stat().ok())
        .filter(|s| s.state != 'Z')
        .map(|s| Proc {
            pid: s.pid,
            ppid: s.ppid,
            pgrp: s.pgrp,
        })
        .collect()
}

/// The process `pid`, if it exists and is not a zombie.
pub fn get(pid: i32) -> Option<Proc> {
    let s = Process::new(pid).and_then(|p| p.stat()).ok()?;
    (s.state != 'Z').then_some(Proc {
        pid: s.pid,
        ppid: s.ppid,
        pgrp: s.pgrp,
    })
}

/// Whether the environment of `pid` holds `key=value`; false when it cannot be read.
pub fn has_env(pid: i32, key: &str, value: &str) -> bool {
    let needle = format!("{key}={value}");
    Process::new(pid)
        .and_then(|p| p.environ())
        .map(|e| {
            e.iter()
                .any(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()) == needle)
        })
        .unwrap_or(false)
}

/// The executable of `pid` (`/proc/PID/exe`).
pub fn exe(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The CPUs `pid` may run on, as ranges (`Cpus_allowed_list`).
pub fn cpus_allowed(pid: i32) -> Option<Vec<(u32, u32)>> {
    Process::new(pid)
        .and_then(|p| p.status())
        .ok()?
        .cpus_allowed_list
}

#[cfg(test)]
mod tests;
