//! The kernel's TCP counters over a run or a cell, and the rules that read them: Nagle
//! against delayed ACKs, listen-queue overflows, retransmits and socket-memory pressure.
//!
//! One place for the rules: `foxbench load` and the shootout's diagnosis both call
//! [`findings`]. The counters are the network namespace's, not the run's own (the probe
//! reads `/proc/net/netstat` and `/proc/net/snmp` before and after), so other traffic in
//! the namespace adds to them; the rules ask for rates per request that a stray
//! connection does not reach.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::human_us;

macro_rules! tcp_counts {
    ($( $(#[$doc:meta])* $field:ident = $name:literal, )*) => {
        /// The TCP counters the rules read, by the kernel's names (TcpExt and Tcp): a
        /// window's growth (`u64`) or that per completed response (`f64`).
        #[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
        pub struct TcpCounts<T> {
            $( $(#[$doc])* #[serde(rename = $name)] pub $field: T, )*
        }

        impl<T: Copy> TcpCounts<T> {
            /// Each counter with the kernel's name, in order.
            pub fn named(&self) -> Vec<(&'static str, T)> {
                vec![$(($name, self.$field)),*]
            }

            /// Applies `f` to every counter.
            pub fn map<U>(&self, f: impl Fn(T) -> U) -> TcpCounts<U> {
                TcpCounts { $( $field: f(self.$field), )* }
            }
        }

        impl TcpCounts<u64> {
            /// The counters from (kernel name, value) pairs, as the probe gives them; a
            /// name not given is 0, one not known is left out.
            pub fn from_named<'a>(pairs: impl IntoIterator<Item = (&'a str, u64)>) -> Self {
                let mut c = TcpCounts::default();
                for (name, v) in pairs {
                    match name {
                        $( $name => c.$field = v, )*
                        _ => {}
                    }
                }
                c
            }

            /// The sum of two windows' counts.
            pub fn plus(&self, o: &TcpCounts<u64>) -> TcpCounts<u64> {
                TcpCounts { $( $field: self.$field.saturating_add(o.$field), )* }
            }
        }
    };
}

tcp_counts! {
    /// Delayed ACKs sent.
    delayed_acks = "DelayedACKs",
    /// Delayed ACKs further delayed by a locked socket.
    delayed_ack_locked = "DelayedACKLocked",
    /// Delayed ACKs lost.
    delayed_ack_lost = "DelayedACKLost",
    /// Connections dropped because an accept queue was full.
    listen_overflows = "ListenOverflows",
    /// Connections dropped at a listen socket (overflows included).
    listen_drops = "ListenDrops",
    /// Retransmission timeouts.
    tcp_timeouts = "TCPTimeouts",
    /// Retransmits lost again.
    tcp_lost_retransmit = "TCPLostRetransmit",
    /// SYN and SYN-ACK retransmits.
    tcp_syn_retrans = "TCPSynRetrans",
    /// Tail loss probes (counted in RetransSegs; spurious on a busy loopback).
    tcp_loss_probes = "TCPLossProbes",
    /// SYN cookies sent (a SYN queue overflowed).
    syncookies_sent = "SyncookiesSent",
    /// Entries into TCP memory pressure.
    tcp_memory_pressures = "TCPMemoryPressures",
    /// Packets pruned from receive queues for lack of memory.
    tcp_rcv_pruned = "RcvPruned",
    /// Connections aborted for lack of memory.
    tcp_abort_on_memory = "TCPAbortOnMemory",
    /// Packets dropped on a full socket backlog.
    tcp_backlog_drop = "TCPBacklogDrop",
    /// Segments retransmitted (Tcp).
    retrans_segs = "RetransSegs",
    /// Failed connection attempts (Tcp).
    attempt_fails = "AttemptFails",
    /// Established connections reset (Tcp).
    estab_resets = "EstabResets",
}

/// The TCP counters over a run (or a cell's repeats), and what the rules made of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TcpReport {
    /// How much each counter grew over the window: system-wide for the network namespace
    /// foxbench ran in, not only its own connections.
    pub deltas: TcpCounts<u64>,
    /// The same per completed response; absent when none completed.
    pub per_request: Option<TcpCounts<f64>>,
    /// What the rules found, most specific first; empty when nothing crossed a rule.
    pub warnings: Vec<TcpWarning>,
}

/// One rule that fired, with its evidence in words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TcpWarning {
    /// Which rule.
    pub kind: TcpFinding,
    /// The counters and latencies behind it, and the fix, in one line.
    pub detail: String,
}

/// The rules of [`findings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TcpFinding {
    /// Responses written in several segments without TCP_NODELAY waited for the client's
    /// delayed ACK (Nagle's algorithm).
    Nagle,
    /// A listen socket's accept queue overflowed: connects paid SYN retry times.
    ListenOverflow,
    /// TCP ran short of socket memory: packets pruned, dropped or connections aborted.
    MemoryPressure,
    /// Segments were retransmitted (on loopback: the kernel dropped them).
    Retransmits,
}

impl TcpFinding {
    /// The kebab-case name used in JSON and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            TcpFinding::Nagle => "nagle",
            TcpFinding::ListenOverflow => "listen-overflow",
            TcpFinding::MemoryPressure => "memory-pressure",
            TcpFinding::Retransmits => "retransmits",
        }
    }
}

/// What ran the server, when known: it decides the fix a detail names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// A JVM: the JDK's `com.sun.net.httpserver` writes without TCP_NODELAY by default.
    Jvm,
    /// Anything else, or not known (a remote server).
    Other,
}

/// Delayed ACKs per completed response from which a Nagle stall is considered.
pub const NAGLE_ACKS_PER_REQUEST: f64 = 0.5;
/// Linux's delayed-ACK timer (`TCP_DELACK_MIN`), ms.
pub const DELAYED_ACK_MS: f64 = 40.0;
/// Share of responses whose latency sits at the delayed-ACK timer or a multiple of it, from
/// which the latency counts as clustered there.
pub const CLUSTER_SHARE: f64 = 0.5;
/// Listen-queue overflows (or drops, or SYN cookies) per completed response from which
/// the queue is named: a burst of connects at a window's start that overflowed a few times
/// is not what limited thousands of responses.
pub const LISTEN_OVERFLOWS_PER_REQUEST: f64 = 0.01;
/// A connect that took this long paid a SYN retry (the first after 1 s), µs.
pub const SYN_RETRY_US: f64 = 900_000.0;
/// Data segments retransmitted per completed response from which retransmits are named
/// (with at least [`RETRANS_MIN`] of them).
pub const RETRANS_PER_REQUEST: f64 = 0.001;
/// Fewest data retransmits named: a few are noise from other sockets of the namespace.
pub const RETRANS_MIN: u64 = 10;
/// Socket-memory events (TCPMemoryPressures, RcvPruned, TCPAbortOnMemory, TCPBacklogDrop
/// together) per completed response from which memory pressure is named (with at least
/// [`MEMORY_PRESSURE_MIN`] of them): the counters are the whole namespace's, and a stray
/// backlog drop on another socket is not what limited the window's responses.
pub const MEMORY_PRESSURE_PER_REQUEST: f64 = 0.001;
/// Fewest socket-memory events named: a few are noise from other sockets of the namespace.
pub const MEMORY_PRESSURE_MIN: u64 = 10;

/// The figures the rules read, besides the counters.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The counters' growth over the window.
    pub deltas: &'a TcpCounts<u64>,
    /// Complete responses in the window.
    pub completed: u64,
    /// Request latency of the window.
    pub latency: &'a stats::Latency,
    /// Connect times of the window, when connections were opened.
    pub connect: Option<&'a stats::Latency>,
    /// True when the client's or the server's CPUs were saturated: waits are then queueing
    /// for a CPU, and no Nagle stall is named.
    pub cpu_saturated: bool,
    /// `net.core.somaxconn`, when read.
    pub somaxconn: Option<u64>,
    /// True when the server is on loopback (nothing is lost on the wire).
    pub loopback: bool,
    /// What runs the server.
    pub runtime: Runtime,
}

/// The share of `latency`'s responses within the band of the delayed-ACK timer or one of
/// its first five multiples (from 2 ms under to 10 ms over each: the timer plus a short
/// service time; a queue's latency spread wider rarely sits there).
pub fn delayed_ack_share(latency: &stats::Latency) -> f64 {
    if latency.is_empty() {
        return 0.0;
    }
    let hits: u64 = (1..=5u64)
        .map(|k| {
            let t_ns = DELAYED_ACK_MS as u64 * 1_000_000 * k;
            latency.count_between(t_ns - 2_000_000, t_ns + 10_000_000)
        })
        .sum();
    hits as f64 / latency.len() as f64
}

/// Connects of `connect` that took a SYN retry or more (≥ [`SYN_RETRY_US`]).
pub fn slow_connects(connect: &stats::Latency) -> u64 {
    connect.count_between(SYN_RETRY_US as u64 * 1000, u64::MAX)
}

/// The report of a window: its counters, per response, and the rules' findings.
pub fn report(e: &Evidence) -> TcpReport {
    let per = e.completed as f64;
    TcpReport {
        deltas: *e.deltas,
        per_request: (e.completed > 0).then(|| e.deltas.map(|v| v as f64 / per)),
        warnings: findings(e),
    }
}

/// What the counters say about a window, most specific first.
pub fn findings(e: &Evidence) -> Vec<TcpWarning> {
    [
        listen_overflow(e),
        memory_pressure(e),
        retransmits(e),
        nagle(e),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn nagle(e: &Evidence) -> Option<TcpWarning> {
    if e.completed == 0 || e.cpu_saturated {
        return None;
    }
    let d = e.deltas;
    let per = d.delayed_acks as f64 / e.completed as f64;
    let share = delayed_ack_share(e.latency);
    if per < NAGLE_ACKS_PER_REQUEST || share < CLUSTER_SHARE {
        return None;
    }
    let p50 = human_us(e.latency.percentile_ns(50.0) as f64 / 1e3);
    let jvm = match e.runtime {
        Runtime::Jvm => "; on a JVM with com.sun.net.httpserver: -Dsun.net.httpserver.nodelay=true",
        Runtime::Other => "",
    };
    Some(TcpWarning {
        kind: TcpFinding::Nagle,
        detail: format!(
            "{per:.2} delayed ACKs per request with p50 {p50}: the server likely writes responses in several segments without TCP_NODELAY (Nagle); each waits for the client's delayed ACK (~40 ms) (TcpExt DelayedACKs {} over {} responses, {:.0}% of latencies at the 40 ms timer or a multiple); fix: set TCP_NODELAY on the server's sockets{jvm}",
            d.delayed_acks,
            e.completed,
            share * 100.0
        ),
    })
}

fn listen_overflow(e: &Evidence) -> Option<TcpWarning> {
    let d = e.deltas;
    let dropped = d
        .listen_overflows
        .max(d.listen_drops)
        .max(d.syncookies_sent);
    if dropped == 0 || (dropped as f64) < LISTEN_OVERFLOWS_PER_REQUEST * e.completed as f64 {
        return None;
    }
    let connects = e
        .connect
        .map(|c| {
            format!(
                ", {} of {} connects took 1 s or more (SYN retries at 1 s, 3 s, ...)",
                slow_connects(c),
                c.len()
            )
        })
        .unwrap_or_default();
    let somaxconn = e
        .somaxconn
        .map(|s| format!(" (now {s})"))
        .unwrap_or_default();
    Some(TcpWarning {
        kind: TcpFinding::ListenOverflow,
        detail: format!(
            "the server's accept queue overflowed: TcpExt ListenOverflows {}, ListenDrops {}, TCPSynRetrans {}, SyncookiesSent {}{connects}; the server accepts too slowly for its listen backlog: raise the backlog it passes to listen() and net.core.somaxconn{somaxconn}, which caps it",
            d.listen_overflows, d.listen_drops, d.tcp_syn_retrans, d.syncookies_sent
        ),
    })
}

fn memory_pressure(e: &Evidence) -> Option<TcpWarning> {
    let d = e.deltas;
    let events = d
        .tcp_memory_pressures
        .saturating_add(d.tcp_rcv_pruned)
        .saturating_add(d.tcp_abort_on_memory)
        .saturating_add(d.tcp_backlog_drop);
    if events < MEMORY_PRESSURE_MIN
        || (events as f64) < MEMORY_PRESSURE_PER_REQUEST * e.completed as f64
    {
        return None;
    }
    Some(TcpWarning {
        kind: TcpFinding::MemoryPressure,
        detail: format!(
            "TCP was short of socket memory: TcpExt TCPMemoryPressures {}, RcvPruned {}, TCPAbortOnMemory {}, TCPBacklogDrop {}; the waits are the kernel's, not the server's CPU: check net.ipv4.tcp_mem and net.ipv4.tcp_rmem/tcp_wmem, and the machine's free memory",
            d.tcp_memory_pressures, d.tcp_rcv_pruned, d.tcp_abort_on_memory, d.tcp_backlog_drop
        ),
    })
}

fn retransmits(e: &Evidence) -> Option<TcpWarning> {
    let d = e.deltas;
    // SYN retransmits are the listen queue's (named by its own rule), and tail loss probes
    // fire when a busy peer is slow to ACK (measured: 24 in 95k responses on an idle
    // loopback namespace, every one DSACKed as spurious); the rest are data resent.
    let data = d
        .retrans_segs
        .saturating_sub(d.tcp_syn_retrans)
        .saturating_sub(d.tcp_loss_probes);
    if data < RETRANS_MIN || (data as f64) < RETRANS_PER_REQUEST * e.completed as f64 {
        return None;
    }
    let where_ = if e.loopback {
        "on loopback nothing is lost on the wire: the kernel dropped them (socket memory, a full backlog)"
    } else {
        "packets were lost between client and server"
    };
    Some(TcpWarning {
        kind: TcpFinding::Retransmits,
        detail: format!(
            "{data} segments retransmitted (Tcp RetransSegs {} less TCPSynRetrans {} and TCPLossProbes {}), {:.3} per request, TCPTimeouts {}: {where_}; the waits are retransmit timers, not the server's CPU",
            d.retrans_segs,
            d.tcp_syn_retrans,
            d.tcp_loss_probes,
            data as f64 / e.completed.max(1) as f64,
            d.tcp_timeouts
        ),
    })
}

#[cfg(test)]
mod tests;
