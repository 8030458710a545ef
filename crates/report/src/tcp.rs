//! The kernel's TCP counters over a run or a cell, and the rules that read them: Nagle
//! against delayed ACKs, listen-queue overflows, retransmits and socket-memory pressure.
//!
//! One place for the rules: `foxbench load` and the shootout's diagnosis both call
//! [`findings`]. The counters are the network namespace's, not the run's own (the probe
//! reads `/proc/net/netstat` and `/proc/net/snmp` before and after), so other traffic in
//! the namespace adds to them; the rules ask for rates per request that a stray
//! connection does not reach.
//!
//! Where the probe also read the sockets themselves ([`TcpLink`]: the kernel's `tcp_info`
//! per socket), the rules take what belongs to one link from there: the delayed-ACK
//! timeout and round trip of the client's sockets (the Nagle rule's timing), which link's
//! data waited for ACKs, and which link retransmitted. What only the namespace counts
//! (DelayedACKs, ListenOverflows, ...) is said to be the namespace's when a target's
//! traffic to its services shares it.

mod link;

pub use link::{DelayedAckWait, TcpLink};

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
    /// Each link's own figures, from its sockets' `tcp_info`: foxbench's connections to
    /// the server, and a target's to each of its services. Empty when the sockets were
    /// not read (results from before they were).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<TcpLink>,
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
    /// The links' own figures ([`TcpLink`]): foxbench's to the server (no service), and a
    /// target's to its services; empty when the sockets were not read.
    pub links: &'a [TcpLink],
}

impl Evidence<'_> {
    /// foxbench's link to the server, when its sockets were read.
    fn client_link(&self) -> Option<&TcpLink> {
        self.links.iter().find(|l| l.service.is_none())
    }

    /// The links to a target's services.
    fn service_links(&self) -> impl Iterator<Item = &TcpLink> {
        self.links.iter().filter(|l| l.service.is_some())
    }

    /// The delayed-ACK wait of the client's sockets as the kernel reported it, else
    /// Linux's 40 ms.
    pub fn delayed_ack_wait(&self) -> DelayedAckWait {
        self.client_link()
            .and_then(DelayedAckWait::of)
            .unwrap_or(DelayedAckWait::LINUX_MIN)
    }

    /// Said after a detail drawn from the namespace's counters when a target's traffic to
    /// its services moved them too: empty otherwise.
    fn namespace_note(&self) -> String {
        let services: Vec<&str> = self
            .service_links()
            .filter_map(|l| l.service.as_deref())
            .collect();
        if services.is_empty() {
            return String::new();
        }
        format!(
            "; these TcpExt and Tcp counters are the network namespace's: they include the target's own connections to {}, which they cannot tell apart from foxbench's to the target",
            services.join(", ")
        )
    }
}

/// The share of `latency`'s responses within the band of a Nagle stall behind one to five
/// delayed ACKs of `wait` ([`DelayedAckWait::stall_ms`]: the timeout and the round trips;
/// from 2 ms under to 10 ms over each, the timer plus a short service time; a queue's
/// latency spread wider rarely sits there).
pub fn delayed_ack_share(latency: &stats::Latency, wait: &DelayedAckWait) -> f64 {
    if latency.is_empty() {
        return 0.0;
    }
    let hits: u64 = (1..=5u64)
        .map(|k| {
            let t_ns = (wait.stall_ms(k) * 1e6) as u64;
            latency.count_between(t_ns.saturating_sub(2_000_000), t_ns + 10_000_000)
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
        links: e.links.to_vec(),
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
    let wait = e.delayed_ack_wait();
    let share = delayed_ack_share(e.latency, &wait);
    if per < NAGLE_ACKS_PER_REQUEST || share < CLUSTER_SHARE {
        return None;
    }
    let p50 = human_us(e.latency.percentile_ns(50.0) as f64 / 1e3);
    if let Some(link) = stalled_service(e) {
        return Some(TcpWarning {
            kind: TcpFinding::Nagle,
            detail: service_nagle(e, link, per, &p50, share),
        });
    }
    let jvm = match e.runtime {
        Runtime::Jvm => "; on a JVM with com.sun.net.httpserver: -Dsun.net.httpserver.nodelay=true",
        Runtime::Other => "",
    };
    let detail = match wait.ato_ms {
        // The kernel's own timing, read from the client's sockets.
        Some(ato) => format!(
            "{per:.2} delayed ACKs per request with p50 {p50}: the server likely writes responses in several segments without TCP_NODELAY (Nagle); each waits for the client's delayed ACK of {} (the kernel's timeout on the client's sockets: ato {}, bounded by the round trip){} (TcpExt DelayedACKs {} over {} responses, {:.0}% of latencies at {} or a multiple); fix: set TCP_NODELAY on the server's sockets{jvm}{}",
            ms(wait.wait_ms),
            ms(ato),
            round_trips(&wait),
            d.delayed_acks,
            e.completed,
            share * 100.0,
            ms(wait.stall_ms(1)),
            e.namespace_note()
        ),
        None => format!(
            "{per:.2} delayed ACKs per request with p50 {p50}: the server likely writes responses in several segments without TCP_NODELAY (Nagle); each waits for the client's delayed ACK (~40 ms) (TcpExt DelayedACKs {} over {} responses, {:.0}% of latencies at the 40 ms timer or a multiple); fix: set TCP_NODELAY on the server's sockets{jvm}{}",
            d.delayed_acks,
            e.completed,
            share * 100.0,
            e.namespace_note()
        ),
    };
    Some(TcpWarning {
        kind: TcpFinding::Nagle,
        detail,
    })
}

/// A time in ms as details write it: `40 ms`, `10.2 ms`.
fn ms(v: f64) -> String {
    if (v - v.round()).abs() < 0.05 {
        format!("{v:.0} ms")
    } else {
        format!("{v:.1} ms")
    }
}

/// The round trips a stall adds beyond the wait, when the path has one worth naming.
fn round_trips(wait: &DelayedAckWait) -> String {
    if wait.rtt_ms < 1.0 {
        return String::new();
    }
    format!(
        ", after the request's round trip and before the released segment's ({} each): {} a stall",
        ms(wait.rtt_ms),
        ms(wait.stall_ms(1))
    )
}

/// How long a link's server ends' data must have waited for ACKs beyond the round trip,
/// ms, to be the link a Nagle stall sits on: a fifth of the delayed-ACK timeout.
const HELD_ACK_MS: f64 = 8.0;

/// The service link whose data waited for delayed ACKs while foxbench's link's did not: the
/// Nagle stall is the target's calls to that service, not the target's answers.
fn stalled_service<'e>(e: &'e Evidence) -> Option<&'e TcpLink> {
    let client_held = e.client_link()?.held_ack_ms?;
    let worst = e
        .service_links()
        .filter(|l| l.held_ack_ms.is_some_and(|h| h >= HELD_ACK_MS))
        .max_by(|a, b| {
            let held = |l: &TcpLink| l.held_ack_ms.unwrap_or(0.0);
            held(a).total_cmp(&held(b))
        })?;
    (client_held < HELD_ACK_MS).then_some(worst)
}

fn service_nagle(e: &Evidence, link: &TcpLink, per: f64, p50: &str, share: f64) -> String {
    let service = link.service.as_deref().unwrap_or_default();
    format!(
        "{per:.2} delayed ACKs per request with p50 {p50}, on the target's calls to {service}: {service}'s sockets' data waited {} for ACKs beyond the round trip, the target's answers to foxbench {}; {service} likely writes responses in several segments without TCP_NODELAY (Nagle) and each waits for the target's delayed ACK (TcpExt DelayedACKs {} over {} responses, {:.0}% of latencies at {} or a multiple){}; fix: set TCP_NODELAY on {service}'s sockets",
        ms(link.held_ack_ms.unwrap_or(0.0)),
        ms(e.client_link().and_then(|l| l.held_ack_ms).unwrap_or(0.0)),
        e.deltas.delayed_acks,
        e.completed,
        share * 100.0,
        ms(e.delayed_ack_wait().stall_ms(1)),
        e.namespace_note()
    )
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
            "the server's accept queue overflowed: TcpExt ListenOverflows {}, ListenDrops {}, TCPSynRetrans {}, SyncookiesSent {}{connects}; the server accepts too slowly for its listen backlog: raise the backlog it passes to listen() and net.core.somaxconn{somaxconn}, which caps it{}",
            d.listen_overflows,
            d.listen_drops,
            d.tcp_syn_retrans,
            d.syncookies_sent,
            e.namespace_note()
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
            "TCP was short of socket memory: TcpExt TCPMemoryPressures {}, RcvPruned {}, TCPAbortOnMemory {}, TCPBacklogDrop {}; the waits are the kernel's, not the server's CPU: check net.ipv4.tcp_mem and net.ipv4.tcp_rmem/tcp_wmem, and the machine's free memory{}",
            d.tcp_memory_pressures,
            d.tcp_rcv_pruned,
            d.tcp_abort_on_memory,
            d.tcp_backlog_drop,
            e.namespace_note()
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
            "{data} segments retransmitted (Tcp RetransSegs {} less TCPSynRetrans {} and TCPLossProbes {}), {:.3} per request, TCPTimeouts {}: {where_}; the waits are retransmit timers, not the server's CPU{}{}",
            d.retrans_segs,
            d.tcp_syn_retrans,
            d.tcp_loss_probes,
            data as f64 / e.completed.max(1) as f64,
            d.tcp_timeouts,
            retransmits_by_link(e),
            e.namespace_note()
        ),
    })
}

/// Where the sockets retransmitted, link by link, when more than one link was read: `; per
/// socket (tcp_info): foxbench→server 3 of 20,000 data segments, target→hello 950 of 20,400`.
fn retransmits_by_link(e: &Evidence) -> String {
    if e.links.len() < 2 {
        return String::new();
    }
    let each: Vec<String> = e
        .links
        .iter()
        .map(|l| {
            format!(
                "{} {} of {} data segments",
                l.name(),
                l.retransmits,
                l.data_segments
            )
        })
        .collect();
    format!("; per socket (tcp_info): {}", each.join(", "))
}

#[cfg(test)]
mod tests;
