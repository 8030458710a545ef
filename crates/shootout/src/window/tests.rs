use std::collections::BTreeMap;
use std::time::Duration;

use stats::Latency;

use super::*;

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

/// A window of 2 s that spent nothing.
fn spent() -> measure::window::Spent {
    measure::window::Spent {
        wall: Duration::from_secs(2),
        client: probe::OwnUsage::default(),
        beside: None,
        helpers: probe::OwnUsage::default(),
        tcp: None,
        udp: None,
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
        h3: None,
        elapsed: Duration::from_secs(2),
        interrupted: false,
        interval_waits: 0,
        spin: Duration::from_millis(300),
        coalesced: load::Coalesced::default(),
        read_latency: latency.clone(),
        kernel_latency: None,
        client_delay: Latency::new(),
        latency_clock: load::ClockInUse::Kernel,
        stamps: load::StampCounts::default(),
        send_stamps: load::SendStampCounts::default(),
        send_lateness_kernel: load::Latency::new(),
        send_delay_kernel: load::Latency::new(),
    };
    let r = repeat(
        &res,
        false,
        true,
        zero_server(),
        measure::record::client(
            &res,
            &measure::window::Spent {
                client: probe::OwnUsage {
                    voluntary_ctxt: 250,
                    ..probe::OwnUsage::default()
                },
                ..spent()
            },
            1,
        ),
        Vec::new(),
        Vec::new(),
    );
    assert_eq!((r.elapsed_s, r.capped, r.rps), (2.0, true, 50.0));
    assert_eq!(
        r.client.spin_s, 0.3,
        "the open model's spin carried to results.json"
    );
    // The client's record is `foxbench load`'s: its context switches per response too.
    assert_eq!(r.client.voluntary_ctxt_per_request, Some(2.5));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["client"]["voluntary_ctxt_per_request"], 2.5);
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
