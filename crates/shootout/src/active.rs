//! A service's own account of how busy it is (its `active` command, e.g. PostgreSQL's
//! backends running a query from `pg_stat_activity`), read a few times through a measured
//! repeat on a thread of its own, so a slow command never delays the probe's samples.

use std::io::Read as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest one reading may take before it is killed and skipped.
pub const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// Runs `cmd` with `sh -c` and reads its stdout as an integer.
pub fn read(cmd: &str, timeout: Duration) -> Result<u64, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{cmd:?}: no answer in {timeout:?}"));
            }
            Err(e) => return Err(format!("{cmd:?}: {e}")),
        }
    };
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if !status.success() {
        return Err(format!("{cmd:?}: {status}"));
    }
    out.trim()
        .parse()
        .map_err(|_| format!("{cmd:?} printed {:?}, not an integer", out.trim()))
}

/// Reads each command (`None`: a service without one) every `interval` until `done`: the
/// readings of each, in order, and the reading thread's own CPU (the probe's, not the
/// load generator's).
pub fn sample(
    cmds: Vec<Option<String>>,
    interval: Duration,
    done: Arc<AtomicBool>,
) -> Option<JoinHandle<(Vec<Vec<u64>>, probe::OwnUsage)>> {
    if interval.is_zero() || cmds.iter().all(Option::is_none) {
        return None;
    }
    std::thread::Builder::new()
        .name("foxbench-active".into())
        .spawn(move || {
            let mut out = vec![Vec::new(); cmds.len()];
            let mut next = Instant::now();
            while !done.load(Ordering::Relaxed) {
                if Instant::now() >= next {
                    next += interval;
                    for (readings, cmd) in out.iter_mut().zip(&cmds) {
                        if let Some(Ok(n)) = cmd.as_deref().map(|c| read(c, READ_TIMEOUT)) {
                            readings.push(n);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            (out, probe::thread_usage())
        })
        .ok()
}

#[cfg(test)]
mod tests;
