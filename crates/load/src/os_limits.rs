//! The machine's limits that a run of many connections hits, checked before it hits them:
//! `foxbench doctor`, and the shootout before each level.
//!
//! [`Machine::read`] (in `probe`, which owns `/proc`) takes the figures from `getrlimit` and
//! `/proc/sys` (and `/proc/net/sockstat`); [`check`] compares them with a [`Demand`] and returns one
//! [`Finding`] per check, each with the exact command that fixes it when it is short. The
//! checks are a table ([`CHECKS`]), each a pure function of the recorded figures, so they
//! are tested on recorded values as well as on this machine.
//!
//! The needed figures come from runs on this project's VM (a 2-core Debian, kernel 6.x),
//! against `targets/c-epoll` on loopback in a network namespace:
//! - a port range of 1,000 ports gave 1,027 connections and then `EADDRNOTAVAIL` on every
//!   connect (`-c 2000`);
//! - `somaxconn` 128 gave 1,192 listen-queue overflows and 303 SYN cookies at `-c 10000`;
//!   4,096 (with `tcp_max_syn_backlog` 2,048) gave none;
//! - 10,000 keep-alive connections (20,000 sockets on loopback) used 9,654 pages of TCP
//!   memory (`/proc/net/sockstat`): about half a page per socket;
//! - without keep-alive, foxbench sends `Connection: close` and the server closes first, so
//!   TIME_WAIT stays on the server's side: 32,000 connections went through 1,000 ports
//!   with `tcp_tw_reuse=0` and no error. A client that closes first (a front end's pool
//!   without keep-alive, or [`Demand::closes_per_s`]) holds each port 60 s.
//!
//! A finding's note names the demand's settings typed ([`Setting::ClosesPerS`],
//! [`Setting::ServerThreads`]): the edge that shows it words them ([`Finding::worded`]).

use serde::Serialize;

use crate::setting::{Setting, Text, Wording};
use crate::setup::fds_needed;
pub use probe::machine::Machine;

/// How long Linux holds a connection closed first by this side in TIME_WAIT
/// (`TCP_TIMEWAIT_LEN`, fixed at build time).
pub const TIME_WAIT_S: u64 = 60;
/// How long conntrack keeps a TIME_WAIT entry (`nf_conntrack_tcp_timeout_time_wait`'s
/// default).
pub const CONNTRACK_TIME_WAIT_S: u64 = 120;
/// The accept-queue length a burst of connects needs at most: measured clean at 10,000
/// connects (the kernel's default `somaxconn` since 5.4).
pub const ACCEPT_QUEUE_ENOUGH: u64 = 4096;
/// The SYN queue length measured clean beside [`ACCEPT_QUEUE_ENOUGH`].
pub const SYN_BACKLOG_ENOUGH: u64 = 2048;
/// Memory maps a thread adds to its process (its stack and the guard page below it):
/// measured 2,039 more maps for 1,000 Python threads.
pub const MAPS_PER_THREAD: u64 = 2;
/// Pages of TCP memory one socket is allowed for: twice the half page measured per
/// keep-alive socket, for responses larger than a redirect.
pub const TCP_PAGES_PER_SOCKET: u64 = 1;

/// What a run will ask of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Demand {
    /// Concurrent connections, all to one address and port.
    pub connections: u64,
    /// New connections per second that this side closes first (each then holds its port
    /// in TIME_WAIT); `None` when the server closes (foxbench without keep-alive) or
    /// connections are kept alive.
    pub closes_per_s: Option<u64>,
    /// Threads of the server, started by this user (a thread per connection); `None`
    /// when not asked.
    pub threads: Option<u64>,
    /// The target is on another host: `tcp_tw_reuse = 2` (the default) reuses TIME_WAIT
    /// ports on loopback only, so it does not help such a run.
    pub remote: bool,
    /// The run speaks HTTP/3: each connection's UDP socket asks for
    /// [`crate::UDP_BUFFER_BYTES`] of receive and send buffer.
    pub udp: bool,
}

/// Whether a limit is enough for the demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Enough.
    Ok,
    /// The figure could not be read.
    Unknown,
    /// Too low: the run will hit it.
    Short,
}

impl Severity {
    /// `ok`, `unknown` or `short`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Unknown => "unknown",
            Severity::Short => "short",
        }
    }
}

/// One check's result; its note a [`Text`] until an edge words it ([`Finding::worded`]),
/// which gives a `Finding<String>` to print or serialize.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding<Note = Text> {
    /// The limit, as `sysctl` or `ulimit` names it.
    pub check: &'static str,
    /// What the machine has, as read.
    pub observed: String,
    /// What the demand needs.
    pub needed: String,
    /// Whether it is enough.
    pub severity: Severity,
    /// The command that fixes it, when short.
    pub fix: Option<String>,
    /// What the figure means for the run, in one line.
    pub note: Note,
}

impl Finding {
    /// The finding with its note's settings worded by `wording` (the CLI's flags).
    pub fn worded(&self, wording: &dyn Wording) -> Finding<String> {
        Finding {
            check: self.check,
            observed: self.observed.clone(),
            needed: self.needed.clone(),
            severity: self.severity,
            fix: self.fix.clone(),
            note: self.note.worded(wording),
        }
    }
}

/// A check: its name and how it judges the figures.
pub type Check = (&'static str, fn(&Machine, &Demand) -> Finding);

/// Every check, in the order `foxbench doctor` prints them.
pub const CHECKS: &[Check] = &[
    ("ulimit -Hn", nofile_hard),
    ("ulimit -n", nofile_soft),
    ("fs.nr_open", nr_open),
    ("fs.file-max", file_max),
    ("net.ipv4.ip_local_port_range", port_range),
    ("net.ipv4.tcp_tw_reuse", tw_reuse),
    ("net.core.somaxconn", somaxconn),
    ("net.ipv4.tcp_max_syn_backlog", syn_backlog),
    ("net.netfilter.nf_conntrack_max", conntrack),
    ("net.ipv4.tcp_mem", tcp_mem),
    ("ulimit -u", nproc),
    ("kernel.threads-max", threads_max),
    ("kernel.pid_max", pid_max),
    ("vm.max_map_count", max_map_count),
    ("net.core.rmem_max", rmem_max),
    ("net.core.wmem_max", wmem_max),
];

/// Every check of `machine` against `demand`.
pub fn check(machine: &Machine, demand: &Demand) -> Vec<Finding> {
    CHECKS.iter().map(|(_, f)| f(machine, demand)).collect()
}

/// The findings that are short.
pub fn short<Note>(findings: &[Finding<Note>]) -> impl Iterator<Item = &Finding<Note>> {
    findings.iter().filter(|f| f.severity == Severity::Short)
}

fn unknown(check: &'static str, needed: String, what: &str) -> Finding {
    Finding {
        check,
        observed: "unreadable".into(),
        needed,
        severity: Severity::Unknown,
        fix: None,
        note: format!("cannot read {what}").into(),
    }
}

fn judged(
    check: &'static str,
    observed: impl ToString,
    needed: impl ToString,
    enough: bool,
    fix: String,
    note: impl Into<Text>,
) -> Finding {
    Finding {
        check,
        observed: observed.to_string(),
        needed: needed.to_string(),
        severity: if enough {
            Severity::Ok
        } else {
            Severity::Short
        },
        fix: (!enough).then_some(fix),
        note: note.into(),
    }
}

fn nofile_hard(m: &Machine, d: &Demand) -> Finding {
    let need = fds_needed(d.connections);
    let Some((_, hard)) = m.nofile else {
        return unknown("ulimit -Hn", need.to_string(), "RLIMIT_NOFILE");
    };
    judged(
        "ulimit -Hn",
        hard,
        need,
        hard >= need,
        format!("ulimit -n {need}"),
        format!("the hard open-files limit: one file per connection and 64 more; below it foxbench refuses to start, and a process that reaches it fails with \"Too many open files\" (root may raise it; to keep it: '* - nofile {need}' in /etc/security/limits.conf, or LimitNOFILE={need} in a systemd unit)"),
    )
}

fn nofile_soft(m: &Machine, d: &Demand) -> Finding {
    let need = fds_needed(d.connections);
    let Some((soft, hard)) = m.nofile else {
        return unknown("ulimit -n", need.to_string(), "RLIMIT_NOFILE");
    };
    let note = if soft >= need {
        "the soft open-files limit".to_string()
    } else if hard >= need {
        format!("foxbench raises its own soft limit to the hard one ({hard}), and the shootout's targets inherit that; a server started from this shell keeps {soft} and fails to accept past it")
    } else {
        format!("even raised to the hard limit ({hard}) it is short: fix the hard limit first")
    };
    judged(
        "ulimit -n",
        soft,
        need,
        soft >= need,
        format!("ulimit -n {}", hard.max(need)),
        note,
    )
}

fn nr_open(m: &Machine, d: &Demand) -> Finding {
    let need = fds_needed(d.connections);
    let Some(v) = m.nr_open else {
        return unknown("fs.nr_open", need.to_string(), "/proc/sys/fs/nr_open");
    };
    judged(
        "fs.nr_open",
        v,
        need,
        v >= need,
        format!("sysctl -w fs.nr_open={need}"),
        "the ceiling of any process's open-files limit: ulimit -n cannot go above it",
    )
}

fn file_max(m: &Machine, d: &Demand) -> Finding {
    // Client and server on one machine: a socket at each end of every connection.
    let extra = 2 * fds_needed(d.connections);
    let Some((open, max)) = m.file_nr else {
        return unknown("fs.file-max", extra.to_string(), "/proc/sys/fs/file-nr");
    };
    let need = open + extra;
    judged(
        "fs.file-max",
        max,
        need,
        max >= need,
        format!("sysctl -w fs.file-max={need}"),
        format!("open files for the whole machine: {open} open now, and a socket at each end of every connection when client and server share it"),
    )
}

/// Whether connect() may reuse this side's TIME_WAIT ports for the demand's target: with
/// `tcp_tw_reuse` 1, or 2 on loopback.
fn reuses(d: &Demand, tw_reuse: Option<u64>) -> bool {
    match tw_reuse {
        Some(0) | None => false,
        Some(2) => !d.remote,
        Some(_) => true,
    }
}

/// Ports a client that closes first holds in TIME_WAIT, given `tw_reuse`: 60 s of closes,
/// or about a second's when connect() may reuse them.
fn time_wait_ports(d: &Demand, tw_reuse: Option<u64>) -> u64 {
    let hold_s = if reuses(d, tw_reuse) { 1 } else { TIME_WAIT_S };
    d.closes_per_s.unwrap_or(0) * hold_s
}

fn port_range(m: &Machine, d: &Demand) -> Finding {
    let tw = time_wait_ports(d, m.tw_reuse);
    let need = d.connections + tw;
    let Some((lo, hi)) = m.port_range else {
        return unknown(
            "net.ipv4.ip_local_port_range",
            need.to_string(),
            "/proc/sys/net/ipv4/ip_local_port_range",
        );
    };
    let ports = (hi + 1).saturating_sub(lo);
    let note = match d.closes_per_s {
        Some(r) => Text::plain(format!("{ports} ports ({lo}-{hi}) to one address and port, for {} connections and {tw} in TIME_WAIT ({r}/s closed by this side, held {} s); past it connect() fails with \"Cannot assign requested address\"", d.connections, tw / r.max(1))),
        None => Text::plain(format!("{ports} ports ({lo}-{hi}) to one address and port; past it connect() fails with \"Cannot assign requested address\" (EADDRNOTAVAIL). TIME_WAIT is assumed on the server's side: foxbench without keep-alive lets the server close (give "))
            .name(Setting::ClosesPerS)
            .then(" for a client that closes first)"),
    };
    // 1024 and up: the ports below are reserved for root's services.
    let fix = if need <= 65535 - 1024 + 1 {
        "sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"".to_string()
    } else {
        format!("{need} ports is more than one source address has: spread the connections over more addresses (127.0.0.2, ...) or fewer connections")
    };
    judged(
        "net.ipv4.ip_local_port_range",
        format!("{lo} {hi}"),
        format!("{need} ports"),
        ports >= need,
        fix,
        note,
    )
}

fn tw_reuse(m: &Machine, d: &Demand) -> Finding {
    let Some(v) = m.tw_reuse else {
        return unknown(
            "net.ipv4.tcp_tw_reuse",
            "1 or 2".into(),
            "/proc/sys/net/ipv4/tcp_tw_reuse",
        );
    };
    let ports = m
        .port_range
        .map(|(lo, hi)| (hi + 1).saturating_sub(lo))
        .unwrap_or(0);
    // Short only when TIME_WAIT would take ports the run needs.
    let hurts = !reuses(d, Some(v)) && d.connections + time_wait_ports(d, Some(v)) > ports;
    let note = match v {
        0 => {
            "connect() never reuses a port in TIME_WAIT: each port closed by this side is held 60 s"
                .to_string()
        }
        2 if d.remote => "reuse on loopback only (the default): this remote target holds each port closed by this side 60 s".to_string(),
        2 => "reuse on loopback only (the default): a remote target needs 1".to_string(),
        _ => "connect() reuses a TIME_WAIT port after a second (needs TCP timestamps)".to_string(),
    };
    judged(
        "net.ipv4.tcp_tw_reuse",
        v,
        if d.remote { "1" } else { "1 or 2" },
        !hurts,
        "sysctl -w net.ipv4.tcp_tw_reuse=1".into(),
        note,
    )
}

fn somaxconn(m: &Machine, d: &Demand) -> Finding {
    let need = d.connections.min(ACCEPT_QUEUE_ENOUGH);
    let Some(v) = m.somaxconn else {
        return unknown(
            "net.core.somaxconn",
            need.to_string(),
            "/proc/sys/net/core/somaxconn",
        );
    };
    judged(
        "net.core.somaxconn",
        v,
        need,
        v >= need,
        format!("sysctl -w net.core.somaxconn={need}"),
        format!("a server's accept queue is min(its listen() backlog, somaxconn); a burst of connects past it overflows (dropped handshakes, retried after 1 s); the server's own backlog must be {need} too"),
    )
}

fn syn_backlog(m: &Machine, d: &Demand) -> Finding {
    let need = d.connections.min(SYN_BACKLOG_ENOUGH);
    let Some(v) = m.syn_backlog else {
        return unknown(
            "net.ipv4.tcp_max_syn_backlog",
            need.to_string(),
            "/proc/sys/net/ipv4/tcp_max_syn_backlog",
        );
    };
    judged(
        "net.ipv4.tcp_max_syn_backlog",
        v,
        need,
        v >= need,
        format!("sysctl -w net.ipv4.tcp_max_syn_backlog={need}"),
        "half-open connections a listener holds; past it the kernel answers with SYN cookies or drops",
    )
}

fn conntrack(m: &Machine, d: &Demand) -> Finding {
    let Some((count, max)) = m.conntrack else {
        return Finding {
            check: "net.netfilter.nf_conntrack_max",
            observed: "not loaded".into(),
            needed: "-".into(),
            severity: Severity::Ok,
            fix: None,
            note: "connection tracking is not loaded: no table to fill".into(),
        };
    };
    let tw = d.closes_per_s.unwrap_or(0) * CONNTRACK_TIME_WAIT_S;
    let need = count + d.connections + tw;
    judged(
        "net.netfilter.nf_conntrack_max",
        max,
        need,
        max >= need,
        format!("sysctl -w net.netfilter.nf_conntrack_max={need}"),
        format!("{count} tracked now; a full table drops new connections (\"nf_conntrack: table full\" in dmesg); closed connections stay tracked {CONNTRACK_TIME_WAIT_S} s"),
    )
}

fn tcp_mem(m: &Machine, d: &Demand) -> Finding {
    let extra = 2 * d.connections * TCP_PAGES_PER_SOCKET;
    let (Some([low, pressure, high]), Some(used)) = (m.tcp_mem, m.tcp_mem_used) else {
        return unknown(
            "net.ipv4.tcp_mem",
            format!("{extra} pages"),
            "/proc/sys/net/ipv4/tcp_mem or /proc/net/sockstat",
        );
    };
    let need = used + extra;
    let scale = |v: u64| v.max((v * need).div_ceil(pressure.max(1)));
    judged(
        "net.ipv4.tcp_mem",
        format!("{low} {pressure} {high}"),
        format!("{need} pages under pressure"),
        pressure >= need,
        format!(
            "sysctl -w net.ipv4.tcp_mem=\"{} {} {}\"",
            scale(low),
            scale(pressure),
            scale(high)
        ),
        format!("TCP buffer memory in pages: {used} in use now, and about a page per socket (half measured at 10,000 keep-alive connections); past the pressure figure every socket's buffers are cut"),
    )
}

/// The finding of a thread check when no server threads were asked about.
fn not_asked(check: &'static str, observed: Option<u64>) -> Finding {
    shown_only(
        check,
        observed,
        "for a server with a thread per connection: give ",
        Setting::ServerThreads,
    )
}

/// A check that needs nothing unless `setting` is given: the figure, and how to ask.
fn shown_only(
    check: &'static str,
    observed: Option<u64>,
    when: &'static str,
    setting: Setting,
) -> Finding {
    Finding {
        check,
        observed: observed.map_or("unreadable".into(), |v| v.to_string()),
        needed: "-".into(),
        severity: Severity::Ok,
        fix: None,
        note: Text::plain(when).name(setting),
    }
}

fn nproc(m: &Machine, d: &Demand) -> Finding {
    let Some(threads) = d.threads else {
        return not_asked("ulimit -u", m.nproc.map(|(soft, _)| soft));
    };
    let need = threads + 64;
    let Some((soft, _)) = m.nproc else {
        return unknown("ulimit -u", need.to_string(), "RLIMIT_NPROC");
    };
    let note = if m.root {
        "processes and threads of this user; not enforced for root, so a server run as root ignores it".to_string()
    } else {
        format!("processes and threads of this user (all of them, not only this server's); past it a new thread fails with EAGAIN (\"can't start new thread\", \"unable to create native thread\"); to keep it: '* - nproc {need}' in /etc/security/limits.conf")
    };
    judged(
        "ulimit -u",
        soft,
        need,
        m.root || soft >= need,
        format!("ulimit -u {need}"),
        note,
    )
}

fn threads_max(m: &Machine, d: &Demand) -> Finding {
    let Some(threads) = d.threads else {
        return not_asked("kernel.threads-max", m.threads_max);
    };
    let (Some(max), Some(now)) = (m.threads_max, m.tasks_now) else {
        return unknown(
            "kernel.threads-max",
            threads.to_string(),
            "/proc/sys/kernel/threads-max or /proc/loadavg",
        );
    };
    let need = now + threads;
    judged(
        "kernel.threads-max",
        max,
        need,
        max >= need,
        format!("sysctl -w kernel.threads-max={need}"),
        format!("threads on the whole machine: {now} now"),
    )
}

fn pid_max(m: &Machine, d: &Demand) -> Finding {
    let Some(threads) = d.threads else {
        return not_asked("kernel.pid_max", m.pid_max);
    };
    let (Some(max), Some(now)) = (m.pid_max, m.tasks_now) else {
        return unknown(
            "kernel.pid_max",
            threads.to_string(),
            "/proc/sys/kernel/pid_max or /proc/loadavg",
        );
    };
    let need = now + threads;
    judged(
        "kernel.pid_max",
        max,
        need,
        max >= need,
        format!("sysctl -w kernel.pid_max={}", need.max(4_194_304)),
        format!("every thread takes a pid: {now} taken now"),
    )
}

fn max_map_count(m: &Machine, d: &Demand) -> Finding {
    let Some(threads) = d.threads else {
        return not_asked("vm.max_map_count", m.max_map_count);
    };
    // The maps of the program itself besides its threads' (a JVM has a few thousand).
    let need = threads * MAPS_PER_THREAD + 4096;
    let Some(v) = m.max_map_count else {
        return unknown(
            "vm.max_map_count",
            need.to_string(),
            "/proc/sys/vm/max_map_count",
        );
    };
    judged(
        "vm.max_map_count",
        v,
        need,
        v >= need,
        format!("sysctl -w vm.max_map_count={need}"),
        "memory maps per process: each thread's stack and guard page are two",
    )
}

/// A UDP socket buffer cap against what an HTTP/3 connection's socket asks for: the kernel
/// caps the ask silently, and a burst past the buffer is dropped.
fn udp_buffer(check: &'static str, observed: Option<u64>, d: &Demand, what: &str) -> Finding {
    if !d.udp {
        return shown_only(check, observed, "for a run over UDP: give ", Setting::Http3);
    }
    let need = crate::UDP_BUFFER_BYTES as u64;
    let Some(v) = observed else {
        return unknown(
            check,
            need.to_string(),
            &format!("/proc/sys/{}", check.replace('.', "/")),
        );
    };
    judged(
        check,
        v,
        need,
        v >= need,
        format!("sysctl -w {check}={need}"),
        format!("each HTTP/3 connection's UDP socket asks for a {what} buffer of {need} bytes, cut to this cap without a word; a burst past the buffer is dropped (Udp {}), and QUIC pays for each datagram lost with a loss detection and half its congestion window", if what == "receive" { "RcvbufErrors" } else { "SndbufErrors" }),
    )
}

fn rmem_max(m: &Machine, d: &Demand) -> Finding {
    udp_buffer("net.core.rmem_max", m.rmem_max, d, "receive")
}

fn wmem_max(m: &Machine, d: &Demand) -> Finding {
    udp_buffer("net.core.wmem_max", m.wmem_max, d, "send")
}

#[cfg(test)]
mod tests;
