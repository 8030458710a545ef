//! The conditions of a run, read off the machine: CPU, kernel, limits, kernel settings and
//! tool versions. Everything a reader needs to repeat or doubt the numbers.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Kernel settings that change results, by sysctl name: the listen backlogs, the
/// ephemeral ports and TIME_WAIT (a run without keep-alive, or 10,000 connections), and the
/// file and connection-tracking limits.
pub const SYSCTLS: [&str; 10] = [
    "net.core.somaxconn",
    "net.core.netdev_max_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_max_tw_buckets",
    "fs.file-max",
    "fs.nr_open",
    "net.netfilter.nf_conntrack_max",
];

/// Settings that exist only when their module is loaded (conntrack): left out of the
/// protocol when absent, rather than recorded as unreadable.
const OPTIONAL: [&str; 1] = ["net.netfilter.nf_conntrack_max"];

/// The CPU model name.
pub fn cpu_model() -> String {
    probe::machine::cpu_model().unwrap_or_else(|| "unknown".into())
}

/// CPUs online on the machine (not just those this thread may use).
pub fn nproc() -> u64 {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| crate::suite::parse_cpus(&t).ok().flatten())
        .map(|v| v.len() as u64)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() as u64)
                .unwrap_or(1)
        })
}

/// `uname -r`.
pub fn kernel() -> String {
    probe::machine::kernel_release().unwrap_or_else(|| "unknown".into())
}

/// MemTotal in bytes.
pub fn mem_total_bytes() -> u64 {
    probe::machine::mem_total_bytes().unwrap_or(0)
}

/// The values of [`SYSCTLS`], as read from `/proc/sys`.
pub fn sysctls() -> BTreeMap<String, String> {
    SYSCTLS
        .iter()
        .filter(|name| !OPTIONAL.contains(name) || probe::machine::sysctl_exists(name))
        .map(|name| {
            let v = probe::machine::sysctl(name)
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_else(|| "unreadable".into());
            (name.to_string(), v)
        })
        .collect()
}

/// The version line of a tool, asked the way that tool answers.
pub fn tool_version(tool: &str) -> Option<String> {
    let args: &[&str] = match tool {
        "java" | "javac" => &["-version"],
        "go" => &["version"],
        "nginx" => &["-v"],
        "erl" => &["-noshell", "-eval", "io:format(\"Erlang/OTP ~s, ERTS ~s~n\", [erlang:system_info(otp_release), erlang:system_info(version)]), halt()."],
        "erlc" => return None,
        _ => &["--version"],
    };
    let mut child = Command::new(crate::cache::which(tool)?)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // A tool that hangs on --version must not hang the run.
    let end = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(10))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(160).collect())
}

#[cfg(test)]
mod tests;
