use super::*;

#[test]
fn each_engine_reason_is_the_reports_reason_of_the_same_name() {
    use load::capacity::Stopped as Why;
    for why in [Why::Converged, Why::Budget, Why::Floor, Why::Ceiling] {
        let got = stopped(Ended::Search(why));
        assert_eq!(format!("{got:?}"), format!("{why:?}"));
    }
    assert_eq!(stopped(Ended::Interrupted), Stopped::Interrupted);
}

fn level(window_ms: u64, start: f64) -> CapacityLevel {
    CapacityLevel {
        objective: "p99<10ms".into(),
        slo: "p99<10ms".parse().unwrap(),
        window: Duration::from_millis(window_ms),
        start_per_sec: start,
    }
}

#[test]
fn a_level_checks_its_search_against_its_budget() {
    let ok = level(1000, 1000.0).config(Duration::from_secs(10)).unwrap();
    assert_eq!(
        ok.window,
        Duration::from_millis(1250),
        "the slack is budgeted"
    );
    assert_eq!((ok.floor_per_sec, ok.start_per_sec), (10.0, 1000.0));
    assert_eq!(
        level(1000, 5.0)
            .config(Duration::from_secs(10))
            .unwrap()
            .floor_per_sec,
        5.0
    );
    let cases = [
        (
            level(1000, 1000.0),
            1000,
            "max_duration 1s does not hold one window",
        ),
        (level(0, 1000.0), 10_000, "window must be longer than zero"),
        (level(1000, 0.0), 10_000, "start_rate 0 is not a rate"),
        (
            level(1000, f64::NAN),
            10_000,
            "start_rate NaN is not a rate",
        ),
    ];
    for (l, budget_ms, want) in cases {
        let e = l.config(Duration::from_millis(budget_ms)).unwrap_err();
        assert!(e.starts_with(want), "{e}");
    }
}

#[test]
fn a_window_is_judged_on_its_whole_histogram_and_counts() {
    let mut h = stats::Latency::new();
    for _ in 0..98 {
        h.record_ns(1_000_000);
    }
    h.record_ns(50_000_000);
    h.record_ns(50_000_000);
    let repeat = |h: &stats::Latency, failed: u64| Repeat {
        started_unix_ns: None,
        elapsed_s: 1.0,
        capped: false,
        requests: report::Requests {
            sent: 100,
            ok: 100 - failed,
            failed_status: failed,
            completed: 100,
            errors: 0,
            in_flight: 0,
            unsent: 0,
        },
        errors: Default::default(),
        errors_by_reason: Vec::new(),
        status: Default::default(),
        connections: (&stats::Counts::default()).into(),
        rps: 100.0,
        latency: h.summary(),
        hdr_base64: h.to_base64(),
        server: crate::window::zero_server(),
        client: report::shootout::ClientWindow {
            cpu_user_s: 0.95,
            cpu_sys_s: 0.0,
            cpu_percent: 95.0,
            cpu_us_per_request: Some(9500.0),
            probe_cpu_s: None,
            dashboard_cpu_s: None,
            spin_s: 0.0,
            coalesced_s: 0.0,
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
    };
    let cases = [
        // (objective, failed) → held
        ("p99<10ms", 0, false),
        ("p99<60ms", 0, true),
        ("p98<=2ms", 0, true),
        ("p99<60ms,errors<1%", 2, false),
        ("p99<60ms,rps>=100", 0, true),
    ];
    for (objective, failed, held) in cases {
        let slo: Slo = objective.parse().unwrap();
        let r = repeat(&h, failed);
        let v = judge(&slo, &r);
        assert_eq!(v.passed, held, "{objective}");
        let w = window_row(100.0, WindowPhase::Bracket, &r, &v, None);
        assert_eq!(
            (w.passed, w.failed, w.client_saturated),
            (held, failed, true)
        );
        assert_eq!(w.p50_us, Some(h.percentile_ns(50.0) as f64 / 1e3));
    }
    // The same 95% of which 0.5 s of the 0.95 s was the open model's spin: not
    // saturated, the CPU still shown as measured.
    let mut spun = repeat(&h, 0);
    spun.client.spin_s = 0.5;
    let w = window_row(
        100.0,
        WindowPhase::Bracket,
        &spun,
        &judge(&"p99<60ms".parse().unwrap(), &spun),
        None,
    );
    assert_eq!((w.client_saturated, w.client_cpu_percent), (false, 95.0));
    let empty = stats::Latency::new();
    let v = judge(&"p99<10ms".parse().unwrap(), &repeat(&empty, 0));
    assert!(!v.passed, "no response: the percentile cannot hold");
    assert_eq!(
        window_row(1.0, WindowPhase::Bisect, &repeat(&empty, 0), &v, None).p99_us,
        None
    );
}
