use std::collections::BTreeMap;

use report::shootout::ServerWindow;

use super::*;
use crate::window::zero_server;

/// A measured cell of one connection without repeats.
pub(super) fn a_cell() -> Cell {
    Cell {
        scenario: "s".into(),
        level: "c1".into(),
        connections: 1,
        keepalive: true,
        pipeline: 1,
        tls_resume: None,
        protocol: "http/1.1".into(),
        streams: None,
        idle: None,
        status: CellStatus::Measured,
        message: None,
        warmup_s: 0.0,
        warmup_rps: Vec::new(),
        repeats: Vec::new(),
        summary: None,
        diagnosis: None,
        limits: Vec::new(),
        thread_dumps: Vec::new(),
        tiers: Vec::new(),
        counters: Vec::new(),
        limiting_tier: None,
        capacity: None,
        settle: None,
        tcp: None,
    }
}

/// A repeat with the given throughput, latencies (ns) and server figures.
pub(super) fn rep(rps: f64, latencies_ns: &[u64], server: ServerWindow) -> Repeat {
    let mut h = Latency::new();
    for &ns in latencies_ns {
        h.record_ns(ns);
    }
    let counts = stats::Counts::default();
    Repeat {
        started_unix_ns: None,
        elapsed_s: 1.0,
        capped: false,
        requests: (&counts).into(),
        errors: (&counts).into(),
        errors_by_reason: Vec::new(),
        status: BTreeMap::new(),
        connections: (&counts).into(),
        rps,
        latency: h.summary(),
        hdr_base64: h.to_base64(),
        server,
        client: report::Client {
            cpu_percent: rps / 100.0,
            cpu_us_per_request: Some(rps / 10.0),
            ..report::Client::measure(1, 0.0, 0.0, 1.0, 0, 0)
        },
        series: Vec::new(),
        handshakes: None,
        intervals: Vec::new(),
        system: None,
        waits: None,
        services: Vec::new(),
        service_connections: Vec::new(),
        tcp: None,
        tcp_links: Vec::new(),
        connect_hdr_base64: None,
        service_hdr_base64: None,
        http2: None,
    }
}

pub(super) fn server(cpu_percent: f64, rss_peak: u64, rss_mean: u64) -> ServerWindow {
    ServerWindow {
        cpu_percent,
        busiest_thread_percent: cpu_percent / 2.0,
        cpu_us_per_request: (cpu_percent > 0.0).then_some(cpu_percent * 10.0),
        rss_peak_bytes: rss_peak,
        rss_mean_bytes: rss_mean,
        pss_peak_bytes: rss_peak / 2,
        threads_peak: rss_peak / 1000,
        fds_peak: rss_mean / 1000,
        ..zero_server()
    }
}

#[test]
fn spectrum_points_halve_the_distance_to_100() {
    let want = [
        0.0,
        50.0,
        75.0,
        87.5,
        93.75,
        96.875,
        98.4375,
        99.21875,
        99.609375,
        99.8046875,
        99.90234375,
        99.951171875,
        99.9755859375,
        99.98779296875,
        99.993896484375,
        99.9969482421875,
        99.99847412109375,
        99.999_237_060_546_88,
        100.0,
    ];
    assert_eq!(spectrum_points(), want);
}

#[test]
fn steady_when_the_last_two_slices_agree_within_ten_percent() {
    let cases: &[(&[f64], bool)] = &[
        (&[], false),
        (&[100.0], false),
        (&[100.0, 109.0], true),
        (&[100.0, 91.0], true),
        (&[100.0, 111.0], false),
        (&[100.0, 89.0], false),
        (&[0.0, 0.0], false),
        (&[10.0, 100.0, 105.0], true),
        (&[100.0, 105.0, 10.0], false),
    ];
    for (rps, want) in cases {
        assert_eq!(steady(rps), *want, "{rps:?}");
    }
}

/// (throughputs, server CPU %s, RSS peaks, RSS means) →
/// (rps median, min, max, server CPU % median, RSS peak, RSS mean).
#[test]
fn summaries_take_medians_spreads_peaks_and_means() {
    type Case = (
        &'static [f64],
        &'static [f64],
        &'static [u64],
        &'static [u64],
    );
    type Want = (f64, f64, f64, f64, u64, u64);
    let cases: &[(Case, Want)] = &[
        (
            (&[100.0], &[40.0], &[5000], &[4000]),
            (100.0, 100.0, 100.0, 40.0, 5000, 4000),
        ),
        (
            (
                &[300.0, 100.0, 200.0],
                &[30.0, 10.0, 20.0],
                &[1000, 3000, 2000],
                &[1000, 2000, 3000],
            ),
            (200.0, 100.0, 300.0, 20.0, 3000, 2000),
        ),
        (
            (&[100.0, 300.0], &[10.0, 40.0], &[7000, 6000], &[1000, 2001]),
            (200.0, 100.0, 300.0, 25.0, 7000, 1500),
        ),
    ];
    for ((rps, cpu, peak, mean), want) in cases {
        let reps: Vec<Repeat> = (0..rps.len())
            .map(|i| rep(rps[i], &[], server(cpu[i], peak[i], mean[i])))
            .collect();
        let s = summarize(&reps);
        let got = (
            s.rps_median,
            s.rps_min,
            s.rps_max,
            s.server_cpu_percent,
            s.rss_peak_bytes,
            s.rss_mean_bytes,
        );
        assert_eq!(got, *want, "{rps:?}");
        assert_eq!(s.busiest_thread_percent, want.3 / 2.0);
        assert_eq!(s.server_cpu_us_per_request, Some(want.3 * 10.0));
        assert_eq!(s.client_cpu_percent, want.0 / 100.0);
        assert_eq!(s.client_cpu_us_per_request, Some(want.0 / 10.0));
        assert_eq!(s.pss_peak_bytes, want.4 / 2);
        assert_eq!(s.threads_peak, want.4 / 1000);
    }
}

#[test]
fn summaries_merge_the_repeats_latencies() {
    let reps = [
        rep(1.0, &[1_000], zero_server()),
        rep(1.0, &[2_000, 2_000], zero_server()),
    ];
    let s = summarize(&reps);
    let mut all = Latency::new();
    for ns in [1_000, 2_000, 2_000] {
        all.record_ns(ns);
    }
    assert_eq!(s.latency, all.summary());
    assert_eq!(
        (s.latency.count, s.latency.min_us, s.latency.max_us),
        (3, 1.0, 2.0)
    );
    let spectrum: Vec<(f64, f64)> = spectrum_points()
        .into_iter()
        .map(|p| (p, if p <= 100.0 / 3.0 { 1.0 } else { 2.0 }))
        .collect();
    assert_eq!(s.spectrum, spectrum);
    // Nothing recorded: no spectrum, and no server figure to take a median of.
    let s = summarize(&[rep(5.0, &[], zero_server())]);
    assert_eq!((s.spectrum.len(), s.server_cpu_us_per_request), (0, None));
}

#[test]
fn figures_sum_the_error_kinds() {
    let mut counts = stats::Counts {
        sent: 100,
        ok: 60,
        failed_status: 5,
        connect: 10,
        connect_refused: 4,
        connect_ports_exhausted: 3,
        connect_timeout: 1,
        write: 2,
        read: 3,
        parse: 4,
        timeout: 5,
        ..Default::default()
    };
    let mut a = rep(1.0, &[1_000], zero_server());
    (a.requests, a.errors) = ((&counts).into(), (&counts).into());
    // Sub-kinds over their total are counted as no other failure, not as a wrap.
    counts.connect = 2;
    let mut b = rep(1.0, &[], zero_server());
    (b.requests, b.errors) = ((&counts).into(), (&counts).into());
    // Reasons add exactly across the repeats.
    let reset = stats::Reason::new(
        stats::reason::Kind::Read,
        stats::reason::Cause::Reset(stats::reason::At::MidBody),
    );
    a.errors_by_reason = vec![report::errors_by_reason::ReasonRow::new(reset, 3)];
    b.errors_by_reason = vec![report::errors_by_reason::ReasonRow::new(reset, 4)];
    let reps = [a, b];
    let f = figures(&reps, &summarize(&reps), 3);
    let want = Figures {
        client_cpu_percent: 0.01,
        client_spin_percent: 0.0,
        server_cpu_percent: 0.0,
        busiest_thread_percent: 0.0,
        server_cpus: 3,
        sent: 200,
        errors: 24 + 16,
        ports_exhausted: 6,
        refused: 8,
        connect_timeouts: 2,
        connect_other: 2,
        timeouts: 10,
        resets: 10,
        parse: 8,
        reasons: vec![report::errors_by_reason::ReasonRow::new(reset, 7)],
        failed_status: 10,
        p99_us: Some(1.0),
        completed: 130,
        system: None,
        waits: None,
        level_connections: 0,
        // 1 req/s × a mean of 1 µs.
        in_flight: Some(1e-6),
        service_connections: Vec::new(),
        service_cpu_percent: Vec::new(),
        tcp: Vec::new(),
        client_delay: None,
    };
    assert_eq!(f, want);
}

#[test]
fn concluding_a_cell_sets_its_status_and_summary() {
    let cases = [
        // (status before, with a repeat) → (status after, summarized)
        ((CellStatus::Excluded, true), (CellStatus::Measured, true)),
        (
            (CellStatus::Interrupted, true),
            (CellStatus::Interrupted, true),
        ),
        (
            (CellStatus::Excluded, false),
            (CellStatus::Interrupted, false),
        ),
        (
            (CellStatus::Interrupted, false),
            (CellStatus::Interrupted, false),
        ),
    ];
    for ((before, measured), (after, summarized)) in cases {
        let mut cell = Cell {
            scenario: "s".into(),
            level: "c1".into(),
            connections: 1,
            keepalive: true,
            pipeline: 1,
            tls_resume: None,
            protocol: "http/1.1".into(),
            streams: None,
            idle: None,
            status: before,
            message: None,
            warmup_s: 0.0,
            warmup_rps: Vec::new(),
            repeats: Vec::new(),
            summary: None,
            diagnosis: None,
            limits: Vec::new(),
            thread_dumps: Vec::new(),
            tiers: Vec::new(),
            counters: Vec::new(),
            limiting_tier: None,
            capacity: None,
            settle: None,
            tcp: None,
        };
        if measured {
            cell.repeats.push(rep(10.0, &[1_000], zero_server()));
        }
        conclude(&mut cell, 1, &Net::default());
        assert_eq!(cell.status, after, "{before:?}");
        assert_eq!(cell.summary.is_some(), summarized);
        assert_eq!(cell.diagnosis.is_some(), summarized);
    }
}

#[test]
fn system_figures_take_each_cpus_median_and_waits_add_up() {
    use report::shootout::SystemWindow;
    let cpu = |cpu, busy| CpuUse {
        cpu,
        user: busy,
        nice: 0.0,
        system: 0.0,
        irq: 0.0,
        softirq: 0.0,
        steal: 0.0,
        idle: 100.0 - busy,
        iowait: 0.0,
        busy,
    };
    let with = |client: f64, server: f64, ctxt: f64, futex: u64| {
        let mut r = rep(1.0, &[1_000], zero_server());
        r.system = Some(SystemWindow {
            client: vec![cpu(0, client)],
            server: vec![cpu(1, server)],
            ctxt_per_s: ctxt,
        });
        r.waits = Some(ThreadWaits {
            samples: 2,
            threads_peak: futex,
            futex,
            ..Default::default()
        });
        r
    };
    let reps = [
        with(90.0, 10.0, 100.0, 4),
        with(30.0, 50.0, 300.0, 6),
        with(60.0, 20.0, 200.0, 8),
    ];
    let s = system_summary(&reps).unwrap();
    assert_eq!((s.client[0].cpu, s.client[0].busy), (0, 60.0));
    assert_eq!(
        (s.server[0].cpu, s.server[0].busy, s.server[0].idle),
        (1, 20.0, 80.0)
    );
    assert_eq!(s.ctxt_per_s, 200.0);
    let w = merged_waits(&reps).unwrap();
    assert_eq!((w.samples, w.futex, w.threads_peak), (6, 18, 8));
    // Results from before: neither figure.
    let old = [rep(1.0, &[1_000], zero_server())];
    assert_eq!((system_summary(&old), merged_waits(&old)), (None, None));
    let s = summarize(&reps);
    assert_eq!(s.system.map(|x| x.ctxt_per_s), Some(200.0));
}

#[test]
fn each_process_names_median_cost_most_first() {
    use report::shootout::ProcessCpu;
    let with = |procs: &[(&str, Option<f64>)]| {
        let mut r = rep(1000.0, &[1_000], zero_server());
        r.server.processes = procs
            .iter()
            .map(|&(name, us)| ProcessCpu {
                name: name.into(),
                processes: 1,
                cpu_s: 0.0,
                cpu_us_per_request: us,
            })
            .collect();
        r
    };
    let reps = [
        with(&[("nginx", Some(30.0)), ("avatar", Some(8.0))]),
        with(&[
            ("nginx", Some(32.0)),
            ("avatar", Some(6.0)),
            ("sh", Some(0.0)),
        ]),
        with(&[("nginx", Some(31.0)), ("avatar", Some(7.0)), ("sh", None)]),
    ];
    let got: Vec<(String, f64)> = process_costs(&reps)
        .into_iter()
        .map(|p| (p.name, p.cpu_us_per_request))
        .collect();
    assert_eq!(
        got,
        vec![
            ("nginx".into(), 31.0),
            ("avatar".into(), 7.0),
            ("sh".into(), 0.0)
        ]
    );
    assert!(process_costs(&[with(&[("x", None)])]).is_empty());
    let s = summarize(&reps);
    assert_eq!(s.processes.len(), 3);
    assert_eq!(
        (s.handshakes_full_per_s, s.handshakes_resumed_per_s),
        (None, None)
    );
}

/// A JVM level limited by its server CPU still has most of its waiting threads on a futex
/// (a pool's idle workers, calls waiting on a future): it was dumped, though the dump could
/// not name its limit (15 of 18 automatic dumps in one backend-suite run, 5-13 s each for a
/// JVM of 10,000 threads). Only a level whose CPUs did not limit it is taken for a wait.
#[test]
fn a_cpu_bound_level_is_not_taken_for_a_wait_on_a_futex() {
    let waits = ThreadWaits {
        samples: 10,
        threads_peak: 200,
        running: 100,
        futex: 1800,
        socket: 50,
        epoll: 50,
        disk: 0,
        sleep: 0,
        wchans: Vec::new(),
        futex_idle: 10,
    };
    let level = |server_cpu: f64, waits: &ThreadWaits| {
        let r = Repeat {
            waits: Some(waits.clone()),
            ..rep(1000.0, &[1_000_000], server(server_cpu, 1, 1))
        };
        [r.clone(), r]
    };
    assert!(!waited_on_futex(&level(99.0, &waits), 1), "CPU-bound");
    assert!(waited_on_futex(&level(30.0, &waits), 1), "waiting");
    // With the CPUs idle, a wait elsewhere (sockets) is not one on a futex, and no samples
    // is no wait at all.
    let sockets = ThreadWaits {
        futex: 200,
        socket: 1650,
        ..waits.clone()
    };
    assert!(!waited_on_futex(&level(30.0, &sockets), 1), "sockets");
    let unsampled = [rep(1000.0, &[1_000_000], server(30.0, 1, 1))];
    assert!(!waited_on_futex(&unsampled, 1), "no samples");
}
