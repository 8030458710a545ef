//! What limited a cell: the load generator, the server's CPU, one server thread, errors,
//! a lock the target's threads wait on, or neither (CPUs idle while requests waited: a
//! pool, a sleep). The CPU verdicts read the per-CPU figures when there are any, and the
//! waiting verdicts are a table: both in [`crate::waiting`].

use report::shootout::{Bottleneck, Diagnosis, SystemSummary, ThreadWaits};
use report::tcp::{TcpFinding, TcpWarning};
use report::SATURATED_PERCENT;

use crate::waiting::{client_saturated, cpus_line, other_work, server_saturated, waiting};
use crate::wording::SuiteKeys;

/// The figures a diagnosis is made from (medians over a cell's repeats).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// foxbench's share of its CPUs, percent.
    pub client_cpu_percent: f64,
    /// Of that, the open model's spin before send instants (median over the repeats),
    /// percent of the same CPUs: time to spare, left out before judging saturation.
    pub client_spin_percent: f64,
    /// The server tree's share of its CPUs, percent.
    pub server_cpu_percent: f64,
    /// The busiest server thread's share of one CPU, percent.
    pub busiest_thread_percent: f64,
    /// CPUs the server may use.
    pub server_cpus: usize,
    /// Requests issued.
    pub sent: u64,
    /// Requests that ended in an error.
    pub errors: u64,
    /// Of those: connect failures for lack of ports.
    pub ports_exhausted: u64,
    /// Of those: connects refused.
    pub refused: u64,
    /// Of those: connects not accepted in time.
    pub connect_timeouts: u64,
    /// Of those: other connect failures (fd limits among them).
    pub connect_other: u64,
    /// Of those: requests without a response in time.
    pub timeouts: u64,
    /// Of those: resets or early EOF.
    pub resets: u64,
    /// Of those: malformed responses.
    pub parse: u64,
    /// The errors by reason, most frequent first.
    pub reasons: Vec<report::reasons::ReasonRow>,
    /// Responses with a failing status.
    pub failed_status: u64,
    /// p99 latency, µs.
    pub p99_us: Option<f64>,
    /// Complete responses.
    pub completed: u64,
    /// The client's and the server's CPUs from `/proc/stat`, when read.
    pub system: Option<SystemSummary>,
    /// What the target's threads waited on, when sampled.
    pub waits: Option<ThreadWaits>,
    /// The level's connections from foxbench: the most requests in flight.
    pub level_connections: usize,
    /// The mean requests in flight at the target over the repeats, by Little's law
    /// (throughput × mean latency); `None` without responses.
    pub in_flight: Option<f64>,
    /// The target's connections to each service it uses, over the repeats.
    pub service_connections: Vec<report::shootout::pool::ServiceConnections>,
    /// Each service's share of its CPUs (median over the repeats), percent.
    pub service_cpu_percent: Vec<(String, f64)>,
    /// What the kernel's TCP counters showed ([`report::tcp::findings`]), most specific
    /// first.
    pub tcp: Vec<TcpWarning>,
}

/// More than this share of requests failing makes a cell error-bound.
pub const ERROR_SHARE: f64 = 0.01;

/// Names the bottleneck of a cell, with the figures behind it.
pub fn diagnose(f: &Figures) -> Diagnosis {
    let processes = format!(
        "client CPU {:.0}%, server CPU {:.0}% of {} CPU{}, busiest server thread {:.0}%",
        f.client_cpu_percent,
        f.server_cpu_percent,
        f.server_cpus,
        if f.server_cpus == 1 { "" } else { "s" },
        f.busiest_thread_percent
    );
    // The per-CPU figures first, the process figures beside them.
    let cpus = match cpus_line(f) {
        Some(line) => format!("{line}; processes: {processes}"),
        None => processes,
    };
    let cpus = match other_work(f) {
        Some(note) => format!("{cpus}; {note}"),
        None => cpus,
    };
    if f.sent > 0 && f.completed == 0 {
        return Diagnosis {
            bottleneck: Bottleneck::Errors,
            detail: format!(
                "no response completed in the window ({} requests sent, {} failed): the server did not keep up with accepting and answering{}; {cpus}",
                f.sent, f.errors, top_reasons(f)
            ),
        };
    }
    // The kernel's drops and retransmits come before errors and CPUs: requests that
    // waited on a retransmit timer or a full accept queue were not limited by a CPU.
    let network = [
        TcpFinding::ListenOverflow,
        TcpFinding::MemoryPressure,
        TcpFinding::Retransmits,
    ];
    if let Some(d) = tcp_verdict(f, &network, &cpus) {
        return d;
    }
    let failed = f.errors + f.failed_status;
    if f.sent > 0 && failed as f64 > ERROR_SHARE * f.sent as f64 {
        let kinds = [
            (f.ports_exhausted, "ephemeral ports exhausted (EADDRNOTAVAIL: TIME_WAIT; widen net.ipv4.ip_local_port_range or use keep-alive)"),
            (f.refused, "connections refused (the listen backlog overflowed or the server stopped listening)"),
            (f.connect_timeouts, "connects not accepted in time (listen backlog full: net.core.somaxconn and the server's backlog)"),
            (f.connect_other, "connects failed (fd limit? check ulimit -n on both sides)"),
            (f.timeouts, "requests timed out (the server stopped answering some connections)"),
            (f.resets, "connections reset or closed mid-request"),
            (f.parse, "malformed responses"),
            (f.failed_status, "responses with a failing status"),
        ];
        let (n, what) = kinds
            .iter()
            .max_by_key(|(n, _)| *n)
            .copied()
            .unwrap_or((0, ""));
        return Diagnosis {
            bottleneck: Bottleneck::Errors,
            detail: format!(
                "{:.1}% of requests failed, mostly {n} {what}{}; {cpus}",
                100.0 * failed as f64 / f.sent as f64,
                top_reasons(f)
            ),
        };
    }
    if client_saturated(f) {
        return Diagnosis {
            bottleneck: Bottleneck::ClientBound,
            detail: format!(
                "{cpus}: foxbench could not send faster, the server may be faster than this"
            ),
        };
    }
    if server_saturated(f) {
        return Diagnosis {
            bottleneck: Bottleneck::ServerCpuBound,
            detail: cpus,
        };
    }
    if f.busiest_thread_percent >= SATURATED_PERCENT {
        return Diagnosis {
            bottleneck: Bottleneck::ServerThreadBound,
            detail: format!("{cpus}: one thread does the work while other CPU is free"),
        };
    }
    if let Some((bottleneck, evidence)) = waiting(f) {
        return Diagnosis {
            bottleneck,
            detail: format!("{evidence}; {cpus}"),
        };
    }
    // After the waiting rules: a pool or a lock with its own evidence keeps its verdict (a
    // request held past 40 ms gets a delayed ACK from the server's kernel too).
    if let Some(d) = tcp_verdict(f, &[TcpFinding::Nagle], &cpus) {
        return d;
    }
    let idle = crate::waiting::idle_workers(f)
        .map(|w| format!("; {w}"))
        .unwrap_or_default();
    Diagnosis {
        bottleneck: Bottleneck::Neither,
        detail: format!(
            "{cpus}{}: requests waited while both sides had CPU to spare: a pool, a lock, a sleep or the kernel{idle}{}",
            f.p99_us.map(|p| format!(", p99 {}", report::human_us(p))).unwrap_or_default(),
            f.waits
                .as_ref()
                .filter(|w| w.samples > 0)
                .map(|w| format!("; {}", w.line()))
                .unwrap_or_default()
        ),
    }
}

/// The first TCP finding of one of `kinds`, as the verdict.
fn tcp_verdict(f: &Figures, kinds: &[TcpFinding], cpus: &str) -> Option<Diagnosis> {
    let w = f.tcp.iter().find(|w| kinds.contains(&w.kind))?;
    Some(Diagnosis {
        bottleneck: w.kind.into(),
        detail: format!("{}; {cpus}", w.detail),
    })
}

/// The top reasons of a cell's errors, as "; top reasons: ...", or nothing; their hints
/// name suite keys (the plan's `timeout`), not the CLI's flags.
fn top_reasons(f: &Figures) -> String {
    let lines: Vec<String> = f
        .reasons
        .iter()
        .take(2)
        .map(|r| r.line(f.sent, &SuiteKeys))
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!("; top reasons: {}", lines.join("; "))
}

#[cfg(test)]
mod tests;
