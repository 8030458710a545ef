use super::*;
use report::shootout::{CpuUse, SystemSummary, ThreadWaits, WchanCount};
use report::tcp::TcpWarning;

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

/// The client's delay of a run: its p99 against the latency's p50, µs.
fn delay(p99_us: f64, latency_p50_us: f64) -> report::ClientDelay {
    report::ClientDelay {
        latency_clock: report::LatencyClock::Kernel,
        p50_us: p99_us / 10.0,
        p99_us,
        max_us: p99_us * 2.0,
        latency_p50_us,
        stamped_reads: 1000,
        unstamped_reads: 0,
        send_stamps: None,
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
        // The client's measured delay: its p99 above 10% of the latency's p50, its CPU
        // share low, neither side's CPU saturated. Below that share, no client verdict.
        (
            Figures {
                client_delay: Some(delay(150.0, 1000.0)),
                ..f(30.0, 40.0, 40.0)
            },
            Bottleneck::ClientBound,
        ),
        (
            Figures {
                client_delay: Some(delay(90.0, 1000.0)),
                ..f(30.0, 40.0, 40.0)
            },
            Bottleneck::Neither,
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
fn a_saturated_server_is_server_bound_whatever_the_clients_delay() {
    // A server at 97% CPU with the client's delay at 15% of the latency: the server's
    // saturation decides, not the delay.
    let saturated = Figures {
        client_delay: Some(delay(150.0, 1000.0)),
        ..f(30.0, 97.0, 97.0)
    };
    assert_eq!(diagnose(&saturated).bottleneck, Bottleneck::ServerCpuBound);
    // One server thread saturated, with CPUs to spare: that thread decides.
    let one_thread = Figures {
        client_delay: Some(delay(150.0, 1000.0)),
        server_cpus: 2,
        ..f(30.0, 50.0, 99.0)
    };
    assert_eq!(
        diagnose(&one_thread).bottleneck,
        Bottleneck::ServerThreadBound
    );
}

/// One CPU's figures as `/proc/stat` gave them: (cpu, user, system, softirq, idle).
fn cpu(cpu: u64, user: f64, system: f64, softirq: f64, idle: f64) -> CpuUse {
    CpuUse {
        cpu,
        user,
        nice: 0.0,
        system,
        irq: 0.0,
        softirq,
        steal: 0.0,
        idle,
        iowait: 0.0,
        busy: user + system + softirq,
    }
}

fn with_cpus(f: Figures, client: CpuUse, server: CpuUse, waits: Option<ThreadWaits>) -> Figures {
    Figures {
        system: Some(SystemSummary {
            client: vec![client],
            server: vec![server],
            ctxt_per_s: 42_000.0,
        }),
        waits,
        ..f
    }
}

fn waits(samples: u64, running: u64, futex: u64, socket: u64, epoll: u64) -> ThreadWaits {
    ThreadWaits {
        samples,
        threads_peak: (running + futex + socket + epoll) / samples.max(1),
        running,
        futex,
        socket,
        epoll,
        wchans: vec![WchanCount {
            wchan: "futex_do_wait".into(),
            count: futex,
        }],
        ..Default::default()
    }
}

/// The open model spins through the last 50 µs before each send instant: CPU spent
/// waiting, not working. 98% of the client's CPU of which 60 points spin (nginx at
/// 20,000 req/s h2c, bench/runs/2026-11-25-capacity-quiet) is not client-bound, on the
/// process figure nor on `/proc/stat`; without the spin the same figures are.
#[test]
fn a_client_spinning_before_send_instants_is_not_client_bound() {
    let spinning = |spin: f64| Figures {
        client_spin_percent: spin,
        ..with_cpus(
            f(98.0, 40.0, 40.0),
            cpu(0, 60.0, 38.0, 0.0, 2.0),
            cpu(1, 25.0, 15.0, 0.0, 60.0),
            None,
        )
    };
    let d = diagnose(&spinning(60.0));
    assert_ne!(d.bottleneck, Bottleneck::ClientBound, "{d:?}");
    assert!(!client_saturated(&spinning(60.0)));
    assert_eq!(
        diagnose(&spinning(0.0)).bottleneck,
        Bottleneck::ClientBound,
        "no spin: today's verdict"
    );
    // Spin that leaves 90% of real work still saturates.
    assert_eq!(diagnose(&spinning(7.0)).bottleneck, Bottleneck::ClientBound);
    // The detail says the client's busy CPU was partly spin, once.
    let d = diagnose(&spinning(60.0));
    assert_eq!(
        d.detail.matches("foxbench's spin 60% of its CPUs").count(),
        1,
        "{d:?}"
    );
    assert!(!diagnose(&spinning(0.0)).detail.contains("spin"));
}

/// The rules on recorded figures: (process %s, per-CPU figures, thread waits) →
/// verdict, and a phrase its detail must carry.
#[test]
fn verdicts_on_per_cpu_figures_and_thread_waits() {
    let table: Vec<(&str, Figures, Bottleneck, &str)> = vec![
            (
                // The ab level against go-tcp (BENCHMARKING.md): both processes under 90%,
                // but /proc/stat shows CPU 0 93% busy, 40% of it softirq.
                "softirq-heavy",
                with_cpus(
                    f(86.0, 84.0, 84.0),
                    cpu(0, 20.0, 33.0, 40.0, 7.0),
                    cpu(1, 30.0, 40.0, 18.0, 12.0),
                    Some(waits(30, 12, 0, 0, 18)),
                ),
                Bottleneck::ClientBound,
                "client CPU 0 93% busy (40% softirq, 33% system)",
            ),
            (
                "client-bound",
                with_cpus(
                    f(97.0, 60.0, 60.0),
                    cpu(0, 70.0, 28.0, 1.0, 1.0),
                    cpu(1, 40.0, 20.0, 2.0, 38.0),
                    None,
                ),
                Bottleneck::ClientBound,
                "client CPU 0 99% busy",
            ),
            (
                "server-CPU-bound",
                with_cpus(
                    f(55.0, 88.0, 88.0),
                    cpu(0, 40.0, 15.0, 2.0, 43.0),
                    cpu(1, 50.0, 30.0, 15.0, 5.0),
                    Some(waits(30, 28, 0, 0, 2)),
                ),
                Bottleneck::ServerCpuBound,
                "server CPU 1 95% busy (15% softirq, 30% system)",
            ),
            (
                // The CPU is busy, but not with foxbench: another job's work is reported,
                // not blamed on the load generator.
                "busy with other work",
                with_cpus(
                    f(3.0, 4.0, 4.0),
                    cpu(0, 90.0, 8.0, 0.0, 2.0),
                    cpu(1, 10.0, 5.0, 0.0, 85.0),
                    Some(waits(30, 30, 5700, 0, 270)),
                ),
                Bottleneck::LockBound,
                "190 of 200 threads waiting on a futex (futex_do_wait); client CPU 0 98% busy",
            ),
            (
                // A loaded machine: both CPUs taken by other jobs, the target in epoll.
                "machine busy with other work",
                with_cpus(
                    f(6.0, 3.0, 3.0),
                    cpu(0, 80.0, 19.0, 0.0, 1.0),
                    cpu(1, 85.0, 14.0, 0.0, 1.0),
                    Some(waits(30, 3, 0, 0, 27)),
                ),
                Bottleneck::Neither,
                "client CPUs 99% busy, foxbench 6% of them, server CPUs 99% busy, the server 3% of them: other work on the machine",
            ),
            (
                "lock-bound",
                with_cpus(
                    f(2.0, 3.0, 3.0),
                    cpu(0, 20.0, 9.0, 2.0, 69.0),
                    cpu(1, 12.0, 8.0, 2.0, 78.0),
                    Some(waits(30, 30, 5880, 0, 90)),
                ),
                Bottleneck::LockBound,
                "196 of 200 threads waiting on a futex (futex_do_wait); client CPU 0 31% busy (9% system), server CPU 1 22% busy (8% system)",
            ),
            (
                // Recorded at a load average of 30: the lock's waiters are most of the
                // threads not running (the running ones wait for a CPU others took).
                "lock-bound on a busy machine",
                with_cpus(
                    f(5.0, 2.0, 0.0),
                    cpu(0, 85.0, 15.0, 0.0, 0.0),
                    cpu(1, 84.0, 16.0, 0.0, 0.0),
                    Some(waits(7, 13, 34, 13, 7)),
                ),
                Bottleneck::LockBound,
                "5 of 10 threads waiting on a futex (futex_do_wait)",
            ),
            (
                // Recorded: the JDK HttpServer's ab level on a busy machine, 15 of 16
                // threads on a futex, all 15 parked there before the load (GC, JIT,
                // reference handler): the runtime's own threads are no lock.
                "a JVM's parked threads",
                with_cpus(
                    f(14.0, 14.0, 8.0),
                    cpu(0, 81.0, 19.0, 0.0, 0.0),
                    cpu(1, 81.0, 19.0, 0.0, 0.0),
                    Some(ThreadWaits {
                        futex_idle: 15,
                        ..waits(200, 100, 3000, 100, 0)
                    }),
                ),
                Bottleneck::Neither,
                "94% futex",
            ),
            (
                // One thread waiting for work on a futex is no contention.
                "one idle worker",
                with_cpus(
                    f(20.0, 15.0, 15.0),
                    cpu(0, 15.0, 5.0, 0.0, 80.0),
                    cpu(1, 10.0, 5.0, 0.0, 85.0),
                    Some(waits(30, 0, 30, 0, 0)),
                ),
                Bottleneck::Neither,
                "100% futex",
            ),
            (
                "none",
                with_cpus(
                    f(20.0, 15.0, 15.0),
                    cpu(0, 15.0, 5.0, 0.0, 80.0),
                    cpu(1, 10.0, 5.0, 0.0, 85.0),
                    Some(waits(30, 3, 0, 300, 27)),
                ),
                Bottleneck::Neither,
                "threads over 30 samples, 11 on average: 91% socket read, 8% epoll, 1% running",
            ),
        ];
    for (name, fig, want, phrase) in table {
        let d = diagnose(&fig);
        assert_eq!(d.bottleneck, want, "{name}: {}", d.detail);
        assert!(d.detail.contains(phrase), "{name}: {}", d.detail);
        assert!(
            d.detail.contains("processes: client CPU"),
            "{name}: the process figures stay beside: {}",
            d.detail
        );
    }
}

fn warning(kind: TcpFinding) -> TcpWarning {
    TcpWarning {
        kind,
        detail: format!("{} evidence", kind.as_str()),
    }
}

/// Where the TCP findings stand among the other verdicts: drops and retransmits before
/// errors and CPUs (never server-CPU-bound), Nagle after the waiting rules' evidence.
#[test]
fn tcp_findings_among_the_verdicts() {
    let idle = with_cpus(
        f(20.0, 15.0, 15.0),
        cpu(0, 15.0, 5.0, 0.0, 80.0),
        cpu(1, 10.0, 5.0, 0.0, 85.0),
        Some(waits(30, 3, 0, 300, 27)),
    );
    let lock = with_cpus(
        f(2.0, 3.0, 3.0),
        cpu(0, 20.0, 9.0, 2.0, 69.0),
        cpu(1, 12.0, 8.0, 2.0, 78.0),
        Some(waits(30, 30, 5880, 0, 90)),
    );
    let table: Vec<(&str, Figures, Vec<TcpFinding>, Bottleneck)> = vec![
        (
            "nagle, CPUs idle",
            idle.clone(),
            vec![TcpFinding::Nagle],
            Bottleneck::Nagle,
        ),
        ("no finding", idle.clone(), vec![], Bottleneck::Neither),
        (
            "a lock's evidence stands before nagle",
            lock,
            vec![TcpFinding::Nagle],
            Bottleneck::LockBound,
        ),
        (
            "retransmits, server CPU saturated: not server-CPU-bound",
            f(50.0, 97.0, 97.0),
            vec![TcpFinding::Retransmits],
            Bottleneck::Retransmits,
        ),
        (
            "memory pressure before errors",
            Figures {
                errors: 50,
                resets: 50,
                ..f(20.0, 20.0, 20.0)
            },
            vec![TcpFinding::MemoryPressure],
            Bottleneck::MemoryPressure,
        ),
        (
            "a full accept queue before the connect errors it caused",
            Figures {
                errors: 300,
                connect_timeouts: 300,
                ..f(20.0, 20.0, 20.0)
            },
            vec![TcpFinding::ListenOverflow, TcpFinding::Nagle],
            Bottleneck::ListenOverflow,
        ),
        (
            "nothing completed stays errors",
            Figures {
                completed: 0,
                ..f(20.0, 20.0, 20.0)
            },
            vec![TcpFinding::ListenOverflow],
            Bottleneck::Errors,
        ),
    ];
    for (name, fig, kinds, want) in table {
        let fig = Figures {
            tcp: kinds.into_iter().map(warning).collect(),
            ..fig
        };
        let d = diagnose(&fig);
        assert_eq!(d.bottleneck, want, "{name}: {}", d.detail);
        if let Some(w) = fig
            .tcp
            .first()
            .filter(|_| want.as_str() == fig.tcp[0].kind.as_str())
        {
            assert!(
                d.detail.starts_with(&w.detail) && d.detail.contains("client CPU"),
                "{name}: {}",
                d.detail
            );
        }
    }
}

#[test]
fn errors_name_their_top_reasons() {
    use stats::reason::{At, Cause, Kind, Reason};
    let row = |k, c, n| report::errors_by_reason::ReasonRow::new(Reason::new(k, c), n);
    let d = diagnose(&Figures {
        sent: 1000,
        errors: 300,
        resets: 300,
        reasons: vec![
            row(Kind::Read, Cause::Reset(At::MidBody), 200),
            row(Kind::Write, Cause::Errno(32), 90),
            row(Kind::Read, Cause::Closed(At::MidHead), 10),
        ],
        ..f(50.0, 50.0, 50.0)
    });
    assert!(
            d.detail.contains("top reasons: read 200 (20%): connection reset by the server mid-body (ECONNRESET); write 90 (9.0%)"),
            "{}",
            d.detail
        );
    assert!(
        !d.detail.contains("mid-head"),
        "only the top two: {}",
        d.detail
    );
}

/// The reasons' hints were the CLI's ("raise --timeout"), though a suite author's fix is
/// the plan's `timeout`: a diagnosis words them as suite keys.
#[test]
fn a_reason_hint_in_a_diagnosis_names_suite_keys_not_flags() {
    use stats::reason::{At, Cause, CertProblem, Kind, Reason};
    let row = |k, c, n| report::errors_by_reason::ReasonRow::new(Reason::new(k, c), n);
    let d = diagnose(&Figures {
        sent: 1000,
        errors: 300,
        reasons: vec![
            row(Kind::Timeout, Cause::Timeout(At::MidBody), 200),
            row(Kind::Tls, Cause::Cert(CertProblem::UnknownIssuer), 100),
        ],
        ..f(50.0, 50.0, 50.0)
    });
    assert!(
        d.detail
            .contains("the server stalled; raise the plan's timeout if it is just slow")
            && d.detail
                .contains("set the scenario's cacert = \"FILE\" or insecure = true in the suite"),
        "{}",
        d.detail
    );
    assert!(!d.detail.contains("--"), "{}", d.detail);
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
    assert!(!d.detail.contains("top reasons"), "{}", d.detail);
    assert!(
        d.detail.contains("client CPU 20%") && d.detail.contains("server CPU 15%"),
        "{}",
        d.detail
    );
}

/// A machine whose other work took the client's CPU (the test suite beside a shootout)
/// delays the client's reads too: a pool, a lock or Nagle with its own evidence keeps its
/// verdict, and the client's delay names the client only when nothing else explains the
/// waits.
#[test]
fn a_lock_or_nagle_with_its_evidence_stands_before_the_clients_delay() {
    let lock = Figures {
        client_delay: Some(delay(38_860.0, 99_940.0)),
        ..with_cpus(
            f(25.0, 4.0, 0.0),
            cpu(0, 60.0, 28.0, 2.0, 10.0),
            cpu(1, 30.0, 7.0, 2.0, 61.0),
            Some(waits(30, 30, 5880, 0, 90)),
        )
    };
    assert_eq!(diagnose(&lock).bottleneck, Bottleneck::LockBound);
    let idle = with_cpus(
        f(20.0, 15.0, 15.0),
        cpu(0, 15.0, 5.0, 0.0, 80.0),
        cpu(1, 10.0, 5.0, 0.0, 85.0),
        Some(waits(30, 3, 0, 300, 27)),
    );
    let nagle = Figures {
        client_delay: Some(delay(11_960.0, 47_910.0)),
        tcp: vec![warning(TcpFinding::Nagle)],
        ..idle.clone()
    };
    assert_eq!(diagnose(&nagle).bottleneck, Bottleneck::Nagle);
    // With no other evidence, the delay decides.
    let delayed = Figures {
        client_delay: Some(delay(11_960.0, 47_910.0)),
        ..idle
    };
    assert_eq!(diagnose(&delayed).bottleneck, Bottleneck::ClientBound);
}
