use report::shootout::{Bottleneck, CpuUse, SystemSummary, ThreadWaits};

use super::*;
use crate::diagnosis::diagnose;

fn cpu(cpu: u64, busy: f64) -> CpuUse {
    CpuUse {
        cpu,
        user: busy * 0.7,
        nice: 0.0,
        system: busy * 0.3,
        irq: 0.0,
        softirq: 0.0,
        steal: 0.0,
        idle: 100.0 - busy,
        iowait: 0.0,
        busy,
    }
}

/// A cell at `level` connections: process CPU %s, per-CPU busy %s, the target's
/// thread waits (samples, running, futex, socket, epoll), its connections to
/// postgres (min, mean, max, busy share), postgres's CPU % and the requests in flight.
struct Case {
    level: usize,
    procs: (f64, f64),
    cpus: (f64, f64),
    waits: (u64, u64, u64, u64, u64),
    pool: Option<(u32, f64, u32, f64)>,
    service_cpu: f64,
    /// Requests in flight by Little's law.
    in_flight: Option<f64>,
}

fn figures(c: &Case) -> Figures {
    let (samples, running, futex, socket, epoll) = c.waits;
    Figures {
        client_cpu_percent: c.procs.0,
        server_cpu_percent: c.procs.1,
        busiest_thread_percent: c.procs.1,
        server_cpus: 1,
        sent: 10_000,
        completed: 9_990,
        system: Some(SystemSummary {
            client: vec![cpu(0, c.cpus.0)],
            server: vec![cpu(1, c.cpus.1)],
            ctxt_per_s: 20_000.0,
        }),
        waits: Some(ThreadWaits {
            samples,
            threads_peak: (running + futex + socket + epoll) / samples,
            running,
            futex,
            socket,
            epoll,
            ..Default::default()
        }),
        level_connections: c.level,
        in_flight: c.in_flight,
        service_connections: c
            .pool
            .map(|(min, mean, max, busy)| ServiceConnections {
                service: "postgres".into(),
                port: 5432,
                samples: 6,
                min,
                mean,
                max,
                busy_share: Some(busy),
                active_mean: None,
                active_max: None,
            })
            .into_iter()
            .collect(),
        service_cpu_percent: vec![("postgres".into(), c.service_cpu)],
        ..Default::default()
    }
}

/// The verdicts on recorded figures, the existing ones beside the new: (name, case,
/// verdict, a phrase of its evidence).
#[test]
fn pool_bound_and_waiting_on_the_backend_on_recorded_figures() {
    let table: Vec<(&str, Case, Bottleneck, &str)> = vec![
            (
                // The post's servlet: 200 threads, a pool of 2, CPUs mostly idle.
                "pool-bound, thread per request",
                Case {
                    level: 150,
                    procs: (20.0, 18.0),
                    cpus: (31.0, 22.0),
                    waits: (30, 30, 5880, 60, 30),
                    pool: Some((2, 2.0, 2, 0.97)),
                    service_cpu: 12.0,
                    in_flight: Some(150.0),
                },
                Bottleneck::PoolBound,
                "2 of 2 connections to postgres busy 97% of the level; 150 requests in flight for 2 connections; 196 of 200 threads waiting on a futex; client CPU 0 31% busy",
            ),
            (
                // An event loop: one thread in epoll, the requests queued in the pool.
                "pool-bound, event loop",
                Case {
                    level: 50,
                    procs: (25.0, 30.0),
                    cpus: (40.0, 45.0),
                    waits: (30, 6, 0, 0, 54),
                    pool: Some((2, 2.0, 2, 0.8)),
                    service_cpu: 15.0,
                    in_flight: Some(50.0),
                },
                Bottleneck::PoolBound,
                "2 of 2 connections to postgres busy 80% of the level; 50 requests in flight for 2 connections",
            ),
            (
                // A pool of 150 at 150 connections is no small pool: its threads wait
                // on their sockets to an idle database.
                "pool of 150",
                Case {
                    level: 150,
                    procs: (20.0, 30.0),
                    cpus: (35.0, 40.0),
                    waits: (30, 30, 300, 4200, 30),
                    pool: Some((150, 150.0, 150, 0.3)),
                    service_cpu: 20.0,
                    in_flight: Some(150.0),
                },
                Bottleneck::BackendWait,
                "150 of 150 connections to postgres busy 30% of the level; 141 of 152 threads waiting on a socket read or in epoll; postgres 20% of its CPUs",
            ),
            (
                // The hello backend with delay_ms=10 at 12 connections: idle, but slow.
                "waiting on the backend",
                Case {
                    level: 12,
                    procs: (5.0, 4.0),
                    cpus: (10.0, 8.0),
                    waits: (30, 3, 0, 357, 30),
                    pool: Some((12, 12.0, 12, 0.1)),
                    service_cpu: 2.0,
                    in_flight: Some(12.0),
                },
                Bottleneck::BackendWait,
                "12 of 12 connections to postgres busy 10% of the level",
            ),
            (
                // A pool that grows and shrinks is not the limit, however few.
                "a pool that moves",
                Case {
                    level: 50,
                    procs: (20.0, 25.0),
                    cpus: (30.0, 30.0),
                    waits: (30, 30, 0, 0, 30),
                    pool: Some((1, 3.0, 10, 0.9)),
                    service_cpu: 60.0,
                    in_flight: Some(50.0),
                },
                Bottleneck::Neither,
                "both sides had CPU to spare",
            ),
            (
                // Pool 2 sharing CPU 1 with the database: the CPU verdict comes first.
                "pool 2, server CPU saturated",
                Case {
                    level: 150,
                    procs: (30.0, 92.0),
                    cpus: (45.0, 97.0),
                    waits: (30, 600, 5400, 0, 0),
                    pool: Some((2, 2.0, 2, 0.97)),
                    service_cpu: 40.0,
                    in_flight: Some(150.0),
                },
                Bottleneck::ServerCpuBound,
                "server CPU 1 97% busy",
            ),
            (
                // No service: the mutex-around-a-sleep target stays lock-bound.
                "lock-bound, no services",
                Case {
                    level: 50,
                    procs: (3.0, 2.0),
                    cpus: (20.0, 15.0),
                    waits: (30, 30, 1500, 0, 30),
                    pool: None,
                    service_cpu: 0.0,
                    in_flight: Some(50.0),
                },
                Bottleneck::LockBound,
                "50 of 52 threads waiting on a futex",
            ),
            (
                // A busy service is not "idle but slow".
                "service busy",
                Case {
                    level: 10,
                    procs: (10.0, 10.0),
                    cpus: (20.0, 30.0),
                    waits: (30, 0, 0, 300, 30),
                    pool: Some((10, 10.0, 10, 0.5)),
                    service_cpu: 85.0,
                    in_flight: Some(10.0),
                },
                Bottleneck::Neither,
                "both sides had CPU to spare",
            ),
            (
                // A pool of 2 to a database 1 ms away (the suite's link): the connections'
                // queues are empty while each waits for its answer, so "busy" is low, but
                // 49 requests in flight for 2 connections can only be waiting for them.
                "pool-bound behind a link",
                Case {
                    level: 50,
                    procs: (25.0, 10.0),
                    cpus: (40.0, 30.0),
                    waits: (30, 6, 0, 0, 27),
                    pool: Some((2, 2.0, 2, 0.1)),
                    service_cpu: 15.0,
                    in_flight: Some(49.1),
                },
                Bottleneck::PoolBound,
                "2 of 2 connections to postgres busy 10% of the level; 49 requests in flight for 2 connections",
            ),
            (
                // go-sql's pool of 2 at the end of a load: pgx opened a connection for each
                // PostgreSQL cancel request of a query the load abandoned. Brief, so the
                // pool is still 2 (merged over 3 repeats: 2-5, 2.14 on average).
                "a pool of 2 with cancel connections",
                Case {
                    level: 50,
                    procs: (25.0, 10.0),
                    cpus: (40.0, 30.0),
                    waits: (30, 6, 0, 0, 27),
                    pool: Some((2, 2.14, 5, 0.1)),
                    service_cpu: 15.0,
                    in_flight: Some(49.8),
                },
                Bottleneck::PoolBound,
                "2.1 (of 2-5) connections to postgres busy 10% of the level; 50 requests in flight for 2 connections",
            ),
            (
                // go-sql's pool of 2 at c150 in a CI run: pgx closed a connection whose
                // query was cancelled and the next request opened it again, so the pool
                // sat at its ceiling of 2 with dips to 1 (1.8 on average). Judged steady by
                // its floor alone, it read as "neither".
                "a pool of 2 that dips below its ceiling",
                Case {
                    level: 150,
                    procs: (22.0, 15.0),
                    cpus: (22.0, 30.0),
                    waits: (30, 6, 0, 0, 27),
                    pool: Some((1, 1.8, 2, 0.86)),
                    service_cpu: 23.0,
                    in_flight: Some(149.0),
                },
                Bottleneck::PoolBound,
                "1.8 (of 1-2) connections to postgres busy 86% of the level; 149 requests in flight for 2 connections",
            ),
            (
                // The same pool at 400 req/s (the open model over up to 150 connections):
                // under one request in flight, the pool is not where they wait.
                "a pool of 2 at a rate it carries",
                Case {
                    level: 150,
                    procs: (5.0, 5.0),
                    cpus: (10.0, 10.0),
                    waits: (30, 1, 0, 0, 28),
                    pool: Some((2, 2.0, 2, 0.05)),
                    service_cpu: 5.0,
                    in_flight: Some(0.7),
                },
                Bottleneck::BackendWait,
                "2 of 2 connections to postgres busy 5% of the level; 1 of 1 threads waiting on a socket read or in epoll",
            ),
            (
                // A thread pool of 200 (the JDK HttpServer's) at 10 connections: 210 threads
                // on a futex are its idle workers, waiting for work, not a lock.
                "idle workers",
                Case {
                    level: 10,
                    procs: (15.0, 30.0),
                    cpus: (30.0, 40.0),
                    waits: (30, 45, 6291, 12, 228),
                    pool: Some((150, 150.0, 150, 0.05)),
                    service_cpu: 20.0,
                    in_flight: Some(10.3),
                },
                Bottleneck::Neither,
                "210 of 219 threads idle on a futex, waiting for work: 10 requests in flight",
            ),
        ];
    for (name, case, want, phrase) in table {
        let d = diagnose(&figures(&case));
        assert_eq!(d.bottleneck, want, "{name}: {}", d.detail);
        assert!(d.detail.contains(phrase), "{name}: {}", d.detail);
    }
}
