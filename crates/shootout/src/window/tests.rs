use std::collections::BTreeMap;
use std::time::Duration;

use stats::Latency;

use super::*;

/// The counter names live in two lists (the probe's, the report's) joined only by
/// strings, and `from_named` skips a name it does not know: a typo in either list read 0
/// forever. The two lists must be the same names in the same order, and every counter
/// the probe reads must land in the report.
#[test]
fn probe_and_report_tcp_counter_names_are_one_list() {
    let probe: Vec<&str> = probe::TcpCounters::NAMES.iter().map(|p| p.1).collect();
    let report: Vec<&str> = TcpCounts::<u64>::default()
        .named()
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(probe, report);
    let all_ones = TcpCounts::from_named(probe.iter().map(|&n| (n, 1)));
    assert!(all_ones.named().iter().all(|p| p.1 == 1), "{all_ones:?}");
    // Every counter of a reading crosses: a parse of a text holding each name once.
    let header: Vec<&str> = probe::TcpCounters::NAMES
        .iter()
        .filter(|p| p.0 == "TcpExt")
        .map(|p| p.1)
        .collect();
    let snmp: Vec<&str> = probe::TcpCounters::NAMES
        .iter()
        .filter(|p| p.0 == "Tcp")
        .map(|p| p.1)
        .collect();
    let ones = |n: usize| vec!["1"; n].join(" ");
    let after = probe::parse_tcp_counters(
        &format!(
            "TcpExt: {}\nTcpExt: {}\n",
            header.join(" "),
            ones(header.len())
        ),
        &format!("Tcp: {}\nTcp: {}\n", snmp.join(" "), ones(snmp.len())),
    );
    let got = tcp_delta(&probe::TcpCounters::default(), &after);
    assert!(got.named().iter().all(|p| p.1 == 1), "{got:?}");
}

#[test]
fn server_windows_from_edges_and_series() {
    let edge = |cpu_user_ns, cpu_sys_ns, rss_bytes, threads, busiest_ns, voluntary| Edge {
        sample: probe::Sample {
            processes: 1,
            threads,
            cpu_user_ns,
            cpu_sys_ns,
            rss_bytes,
            pss_bytes: rss_bytes / 2,
            fds: 10,
        },
        threads: probe::Threads {
            voluntary_ctxt: voluntary,
            involuntary_ctxt: voluntary / 10,
            cpu_ns: BTreeMap::from([(1, busiest_ns), (2, 0)]),
        },
        by_name: probe::ByName::new(),
    };
    let from = edge(1_000_000_000, 0, 1000, 2, 0, 100);
    let to = edge(2_000_000_000, 500_000_000, 3000, 2, 1_000_000_000, 300);
    let series = [ProbePoint {
        t_s: 0.5,
        cpu_percent: 25.0,
        rss_bytes: 8000,
        pss_bytes: 4000,
        threads: 7,
        processes: 3,
        fds: 9,
    }];
    let w = server_window(&from, &to, &series, 2.0, 1000, 3);
    let want = ServerWindow {
        cpu_user_s: 1.0,
        cpu_sys_s: 0.5,
        cpu_percent: 25.0,
        busiest_thread_percent: 50.0,
        cpu_us_per_request: Some(1500.0),
        rss_peak_bytes: 8000,
        rss_mean_bytes: 4000,
        pss_peak_bytes: 4000,
        pss_mean_bytes: 2000,
        threads_peak: 7,
        processes_peak: 3,
        fds_peak: 10,
        voluntary_ctxt_per_s: 100.0,
        involuntary_ctxt_per_s: 10.0,
        processes: Vec::new(),
    };
    assert_eq!(w, want);
    let idle = server_window(&from, &from, &[], 2.0, 0, 0);
    assert_eq!(
        (
            idle.cpu_percent,
            idle.cpu_us_per_request,
            idle.rss_mean_bytes
        ),
        (0.0, None, 1000)
    );
}

#[test]
fn system_windows_split_the_cpus_by_side() {
    let t = |user, softirq, idle| probe::CpuTicks {
        user,
        softirq,
        idle,
        ..Default::default()
    };
    let from = probe::SystemStat {
        cpus: [(0, t(0, 0, 0)), (1, t(0, 0, 0))].into(),
        ctxt: 0,
    };
    let to = probe::SystemStat {
        cpus: [(0, t(53, 40, 7)), (1, t(20, 2, 78))].into(),
        ctxt: 5000,
    };
    let w = system_window(&from, &to, (&[0], &[1]), 2.0);
    assert_eq!(w.ctxt_per_s, 2500.0);
    let got: Vec<(u64, f64, f64, f64)> = w
        .client
        .iter()
        .chain(&w.server)
        .map(|c| (c.cpu, c.busy, c.softirq, c.idle))
        .collect();
    assert_eq!(got, vec![(0, 93.0, 40.0, 7.0), (1, 22.0, 2.0, 78.0)]);
}

#[test]
fn thread_waits_keep_every_class_and_the_top_eight_wchans() {
    let mut h = probe::WaitHistogram::default();
    let tw = |tid, wait, wchan: &str| probe::ThreadWait {
        tid,
        state: if wait == probe::Wait::Running {
            'R'
        } else {
            'S'
        },
        wchan: wchan.into(),
        wait,
    };
    let mut sample = vec![
        tw(1, probe::Wait::Running, "0"),
        tw(2, probe::Wait::Epoll, "do_epoll_wait"),
        tw(3, probe::Wait::Socket, "wait_woken"),
        tw(4, probe::Wait::Disk, "io_schedule"),
        tw(5, probe::Wait::Sleep, "hrtimer_nanosleep"),
    ];
    for i in 0..10 {
        sample.push(tw(10 + i, probe::Wait::Futex, "futex_do_wait"));
        sample.push(tw(30 + i, probe::Wait::Sleep, &format!("f{i}")));
    }
    h.add(&sample);
    let w = thread_waits(&h);
    assert_eq!(
        (
            w.samples,
            w.threads_peak,
            w.running,
            w.futex,
            w.socket,
            w.epoll,
            w.disk,
            w.sleep
        ),
        (1, 25, 1, 10, 1, 1, 1, 11)
    );
    assert_eq!(w.wchans.len(), 8);
    assert_eq!(
        (w.wchans[0].wchan.as_str(), w.wchans[0].count),
        ("futex_do_wait", 10)
    );
}

#[test]
fn client_windows_share_the_client_cpus() {
    let used = probe::OwnUsage {
        user: Duration::from_secs(1),
        sys: Duration::from_millis(500),
        max_rss_bytes: 1 << 20,
    };
    let cases = [
        // (elapsed s, CPUs, completed) → (CPU %, µs per request)
        ((1.5, 1, 3), (100.0, Some(500_000.0))),
        ((3.0, 2, 1500), (25.0, Some(1000.0))),
        ((1.5, 4, 0), (25.0, None)),
    ];
    for ((elapsed, cpus, completed), (percent, per_req)) in cases {
        let w = client_window(&used, elapsed, cpus, completed);
        assert_eq!(
            (
                w.cpu_user_s,
                w.cpu_sys_s,
                w.cpu_percent,
                w.cpu_us_per_request
            ),
            (1.0, 0.5, percent, per_req),
            "{elapsed} s on {cpus} CPUs"
        );
    }
}

#[test]
fn a_repeat_counts_the_loads_responses_per_second() {
    let mut latency = Latency::new();
    latency.record_ns(1_000);
    let res = RunResult {
        counts: stats::Counts {
            sent: 100,
            ok: 90,
            failed_status: 10,
            ..Default::default()
        },
        latency: latency.clone(),
        service: Latency::new(),
        lateness: Latency::new(),
        late: Latency::new(),
        connect: Latency::new(),
        handshake_full: Latency::new(),
        handshake_resumed: Latency::new(),
        tls: None,
        client_cert_asked: false,
        status: vec![(200, 90), (500, 10)],
        shapes: Vec::new(),
        h2: None,
        elapsed: Duration::from_secs(2),
        interrupted: false,
        interval_waits: 0,
        spin: Duration::from_millis(300),
        coalesced: load::Coalesced::default(),
    };
    let r = repeat(
        &res,
        false,
        true,
        zero_server(),
        client_window(&Default::default(), 2.0, 1, 100),
        Vec::new(),
        Vec::new(),
    );
    assert_eq!((r.elapsed_s, r.capped, r.rps), (2.0, true, 50.0));
    assert_eq!(
        r.client.spin_s, 0.3,
        "the open model's spin carried to results.json"
    );
    assert_eq!((r.requests.completed, r.requests.failed_status), (100, 10));
    assert_eq!(
        r.status,
        BTreeMap::from([("200".to_string(), 90), ("500".to_string(), 10)])
    );
    assert_eq!(r.hdr_base64, latency.to_base64());
    assert_eq!(r.handshakes, None, "plain HTTP has no handshakes");
    let tls = RunResult {
        counts: stats::Counts {
            handshakes_full: 30,
            handshakes_resumed: 70,
            ..res.counts
        },
        ..res
    };
    assert_eq!(
        handshakes(&tls, true),
        Some(Handshakes {
            full: 30,
            resumed: 70,
            full_per_s: 15.0,
            resumed_per_s: 35.0
        })
    );
}

#[test]
fn each_process_names_cpu_over_the_window() {
    let named = |v: &[(&str, u32, u64)]| -> probe::ByName {
        v.iter()
            .map(|&(n, processes, cpu_ns)| (n.to_string(), probe::NamedCpu { processes, cpu_ns }))
            .collect()
    };
    let from = named(&[
        ("nginx", 2, 1_000_000_000),
        ("avatar", 1, 500_000_000),
        ("sh", 1, 10),
    ]);
    // nginx used 3.1 s, avatar 0.7 s, sh nothing; a helper appeared mid-window.
    let to = named(&[
        ("nginx", 2, 4_100_000_000),
        ("avatar", 1, 1_200_000_000),
        ("sh", 1, 10),
        ("helper", 1, 100_000_000),
    ]);
    let p = processes(&from, &to, 100_000);
    let got: Vec<(&str, u64, f64, Option<f64>)> = p
        .iter()
        .map(|c| (c.name.as_str(), c.processes, c.cpu_s, c.cpu_us_per_request))
        .collect();
    assert_eq!(
        got,
        vec![
            ("nginx", 2, 3.1, Some(31.0)),
            ("avatar", 1, 0.7, Some(7.0)),
            ("helper", 1, 0.1, Some(1.0)),
            ("sh", 1, 0.0, Some(0.0)),
        ]
    );
    assert!(processes(&from, &to, 0)
        .iter()
        .all(|c| c.cpu_us_per_request.is_none()));
}
