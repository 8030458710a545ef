use measure::search::WindowRun;
use report::search::WindowPhase;

use super::*;

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
        client: report::Client::measure(1, 0.95, 0.0, 1.0, 100, 0),
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
        let w = window_row(
            100.0,
            WindowPhase::Bracket,
            &WindowRun::of_repeat(&r, None),
            &v,
        );
        assert_eq!(
            (w.passed, w.failed, w.client_saturated),
            (held, failed, true)
        );
        assert_eq!(w.p50_us, Some(h.percentile_ns(50.0) as f64 / 1e3));
    }
    // The same 95% of which 0.5 s of the 0.95 s was the open model's spin: not
    // saturated, the CPU still shown as measured.
    let mut spun = repeat(&h, 0);
    spun.client = spun.client.with_spin(0.5);
    let w = window_row(
        100.0,
        WindowPhase::Bracket,
        &WindowRun::of_repeat(&spun, None),
        &judge(&"p99<60ms".parse().unwrap(), &spun),
    );
    assert_eq!((w.client_saturated, w.client_cpu_percent), (false, 95.0));
    let empty = stats::Latency::new();
    let v = judge(&"p99<10ms".parse().unwrap(), &repeat(&empty, 0));
    assert!(!v.passed, "no response: the percentile cannot hold");
    assert_eq!(
        window_row(
            1.0,
            WindowPhase::Bisect,
            &WindowRun::of_repeat(&repeat(&empty, 0), None),
            &v
        )
        .p99_us,
        None
    );
}
