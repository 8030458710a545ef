//! What limited a cell: the load generator, the server's CPU, one server thread, errors,
//! or neither (CPUs idle while requests waited: a pool, a lock, a sleep).

use report::shootout::{Bottleneck, Diagnosis};
use report::SATURATED_PERCENT;

/// The figures a diagnosis is made from (medians over a cell's repeats).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    /// foxbench's share of its CPUs, percent.
    pub client_cpu_percent: f64,
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
    /// Responses with a failing status.
    pub failed_status: u64,
    /// p99 latency, µs.
    pub p99_us: Option<f64>,
    /// Complete responses.
    pub completed: u64,
}

/// More than this share of requests failing makes a cell error-bound.
pub const ERROR_SHARE: f64 = 0.01;

/// Names the bottleneck of a cell, with the figures behind it.
pub fn diagnose(f: &Figures) -> Diagnosis {
    let cpus = format!(
        "client CPU {:.0}%, server CPU {:.0}% of {} CPU{}, busiest server thread {:.0}%",
        f.client_cpu_percent,
        f.server_cpu_percent,
        f.server_cpus,
        if f.server_cpus == 1 { "" } else { "s" },
        f.busiest_thread_percent
    );
    if f.sent > 0 && f.completed == 0 {
        return Diagnosis {
            bottleneck: Bottleneck::Errors,
            detail: format!(
                "no response completed in the window ({} requests sent, {} failed): the server did not keep up with accepting and answering; {cpus}",
                f.sent, f.errors
            ),
        };
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
                "{:.1}% of requests failed, mostly {n} {what}; {cpus}",
                100.0 * failed as f64 / f.sent as f64
            ),
        };
    }
    if f.client_cpu_percent >= SATURATED_PERCENT {
        return Diagnosis {
            bottleneck: Bottleneck::ClientBound,
            detail: format!(
                "{cpus}: foxbench could not send faster, the server may be faster than this"
            ),
        };
    }
    if f.server_cpu_percent >= SATURATED_PERCENT {
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
    Diagnosis {
        bottleneck: Bottleneck::Neither,
        detail: format!(
            "{cpus}{}: requests waited while both sides had CPU to spare: a pool, a lock, a sleep or the kernel",
            f.p99_us.map(|p| format!(", p99 {}", report::human_us(p))).unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(client: f64, server: f64, thread: f64) -> Figures {
        Figures {
            client_cpu_percent: client,
            server_cpu_percent: server,
            busiest_thread_percent: thread,
            server_cpus: 1,
            sent: 1000,
            completed: 990,
            ..Default::default()
        }
    }

    #[test]
    fn verdicts() {
        let table = [
            (f(99.0, 60.0, 60.0), Bottleneck::ClientBound),
            (f(50.0, 97.0, 97.0), Bottleneck::ServerCpuBound),
            (
                Figures {
                    server_cpus: 2,
                    ..f(40.0, 50.0, 99.0)
                },
                Bottleneck::ServerThreadBound,
            ),
            (f(20.0, 15.0, 15.0), Bottleneck::Neither),
            (
                Figures {
                    errors: 50,
                    timeouts: 50,
                    ..f(99.0, 99.0, 99.0)
                },
                Bottleneck::Errors,
            ),
            (
                Figures {
                    errors: 5,
                    timeouts: 5,
                    ..f(20.0, 97.0, 97.0)
                },
                Bottleneck::ServerCpuBound,
            ),
            // Nothing answered in the window (5,000 connections to a slow accepter).
            (
                Figures {
                    completed: 0,
                    ..f(30.0, 40.0, 40.0)
                },
                Bottleneck::Errors,
            ),
        ];
        for (fig, want) in table {
            assert_eq!(diagnose(&fig).bottleneck, want, "{fig:?}");
        }
    }

    #[test]
    fn errors_name_their_main_kind() {
        let d = diagnose(&Figures {
            errors: 300,
            ports_exhausted: 290,
            connect_timeouts: 10,
            ..f(50.0, 50.0, 50.0)
        });
        assert!(
            d.detail.contains("30.0% of requests failed") && d.detail.contains("ephemeral ports"),
            "{}",
            d.detail
        );
        let d = diagnose(&f(20.0, 15.0, 15.0));
        assert!(
            d.detail.contains("client CPU 20%") && d.detail.contains("server CPU 15%"),
            "{}",
            d.detail
        );
    }
}
