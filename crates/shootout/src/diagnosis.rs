//! What limited a cell: the load generator, the server's CPU, one server thread, errors,
//! a lock the target's threads wait on, or neither (CPUs idle while requests waited: a
//! pool, a sleep). The CPU verdicts read the per-CPU figures when there are any, and the
//! waiting verdicts are a table ([`WAIT_RULES`]) of rules in [`crate::waiting`] and
//! [`crate::pools`].

use report::shootout::{Bottleneck, Diagnosis};
use report::tcp::TcpFinding;
use report::SATURATED_PERCENT;

use crate::figures::Figures;
use crate::pools::{backend_wait, pool_bound};
use crate::waiting::{
    client_saturated, cpus_line, idle_workers, lock_bound, other_work, server_saturated,
};
use crate::wording::SuiteKeys;

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
    // The measured form: foxbench's own delay (read minus kernel receive stamp) was a large
    // share of the latency, whatever its CPU share. After the server's CPU verdicts: a
    // server whose CPU (or one thread) was saturated limited the cell whatever the client
    // added to its latencies, and a saturated server's slow answers make the client's
    // share look large as readily as a slow client does. After the waiting rules and
    // Nagle's: a pool, a lock or a delayed ACK with its own evidence explains the waits,
    // and on a machine whose other work takes the client's CPU (a test suite beside it: a
    // client delay of 107 ms at p99 against a pool's 749 ms p50) the delay would name the
    // client where the figures name the pool.
    if let Some(d) = f.client_delay.filter(report::ClientDelay::client_bound) {
        return Diagnosis {
            bottleneck: Bottleneck::ClientBound,
            detail: format!("{}: {cpus}", d.warning().unwrap_or_default()),
        };
    }
    let idle = idle_workers(f)
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

/// A waiting verdict: its name and the test that returns its evidence.
pub struct WaitRule {
    /// The verdict it gives.
    pub bottleneck: Bottleneck,
    /// The evidence, when the figures show it.
    pub evidence: fn(&Figures) -> Option<String>,
}

/// The waiting verdicts, in order (pool-bound and service-bound go before lock-bound: a
/// pool's waiters sit on a futex too, and the connection count names the pool).
pub const WAIT_RULES: &[WaitRule] = &[
    WaitRule {
        bottleneck: Bottleneck::PoolBound,
        evidence: pool_bound,
    },
    WaitRule {
        bottleneck: Bottleneck::LockBound,
        evidence: lock_bound,
    },
    WaitRule {
        bottleneck: Bottleneck::BackendWait,
        evidence: backend_wait,
    },
];

/// The first waiting verdict whose evidence the figures show.
pub fn waiting(f: &Figures) -> Option<(Bottleneck, String)> {
    WAIT_RULES
        .iter()
        .find_map(|r| (r.evidence)(f).map(|e| (r.bottleneck, e)))
}

#[cfg(test)]
mod tests;
