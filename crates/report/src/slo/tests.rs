use std::time::Duration;

use super::*;

fn clause(text: &str) -> Clause {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn parses_every_operator_and_unit() {
    let corrected = |p| Metric::Percentile {
        p,
        series: Series::Corrected,
    };
    let table: &[(&str, Metric, Op, f64)] = &[
        ("p99<5ms", corrected(99.0), Op::Lt, 5_000.0),
        ("p99.9<=20ms", corrected(99.9), Op::Le, 20_000.0),
        ("p50 < 250us", corrected(50.0), Op::Lt, 250.0),
        ("p50<250µs", corrected(50.0), Op::Lt, 250.0),
        ("p100<=1.5s", corrected(100.0), Op::Le, 1_500_000.0),
        ("p90>500ns", corrected(90.0), Op::Gt, 0.5),
        ("p99.99>=0.5ms", corrected(99.99), Op::Ge, 500.0),
        (
            "p99[service]<2ms",
            Metric::Percentile {
                p: 99.0,
                series: Series::Service,
            },
            Op::Lt,
            2_000.0,
        ),
        ("p99[corrected]<2ms", corrected(99.0), Op::Lt, 2_000.0),
        ("errors<0.1%", Metric::Errors, Op::Lt, 0.1),
        ("errors<=0%", Metric::Errors, Op::Le, 0.0),
        ("rps>=9500", Metric::Rps, Op::Ge, 9_500.0),
        ("rps>9500.5", Metric::Rps, Op::Gt, 9_500.5),
        ("req/s<100", Metric::Rps, Op::Lt, 100.0),
    ];
    for &(text, metric, op, threshold) in table {
        let c = clause(text);
        assert_eq!((c.metric, c.op), (metric, op), "{text}");
        assert!(
            (c.threshold - threshold).abs() < 1e-9,
            "{text}: {}",
            c.threshold
        );
        assert_eq!(c.text, text.trim());
    }
}

#[test]
fn bad_clauses_fail_in_one_line_naming_the_fix() {
    let table: &[(&str, &str)] = &[
        ("p99<5", "needs a time unit"),
        ("p99<5kb", "needs a time unit"),
        ("p99<ms", "needs a time unit"),
        ("p99<-5ms", "is not a duration"),
        ("latency<5ms", "unknown metric \"latency\""),
        ("p0<5ms", "unknown metric"),
        ("p101<5ms", "unknown metric"),
        ("p-1<5ms", "unknown metric"),
        ("pinf<5ms", "unknown metric"),
        ("p99[cpu]<5ms", "unknown histogram \"[cpu]\""),
        // Found by the fuzz target: a newline inside the brackets stays escaped.
        ("p[\n]>\nn\n\n\nn", "unknown histogram \"[\\n]\""),
        ("p99[service<5ms", "closing ']'"),
        ("errors<0.1", "needs the unit %"),
        ("errors<101%", "not a percentage"),
        ("errors<NaN%", "not a percentage"),
        ("rps>=9500/s", "plain number"),
        ("rps>=inf", "plain number"),
        ("p99=5ms", "give a metric, an operator"),
        ("", "is empty"),
        (" , ", "is empty"),
    ];
    for &(text, needle) in table {
        let e = text.parse::<Slo>().unwrap_err().to_string();
        assert!(e.contains(needle), "{text:?}: {e}");
        assert!(!e.contains('\n'), "{text:?}: {e}");
    }
}

#[test]
fn lt_and_le_differ_at_the_threshold() {
    assert!(!Op::Lt.holds(5.0, 5.0));
    assert!(Op::Le.holds(5.0, 5.0));
    assert!(!Op::Gt.holds(5.0, 5.0));
    assert!(Op::Ge.holds(5.0, 5.0));
    assert!(Op::Lt.holds(4.9, 5.0) && Op::Gt.holds(5.1, 5.0));
}

#[test]
fn service_is_refused_until_it_is_recorded() {
    let slo: Slo = "p99<5ms,p99[service]<2ms".parse().unwrap();
    let e = slo.check_measurable(false).unwrap_err().to_string();
    assert!(
        e.contains("[service] needs the open model's service-time histogram"),
        "{e}"
    );
    assert!(e.contains("(\"p99<2ms\")"), "{e}");
    let e = "p99[service]<\n2ms"
        .parse::<Slo>()
        .unwrap()
        .check_measurable(false)
        .unwrap_err();
    assert!(!e.to_string().contains('\n'), "{e}");
    assert!("p99<5ms"
        .parse::<Slo>()
        .unwrap()
        .check_measurable(false)
        .is_ok());
    assert!(slo.check_measurable(true).is_ok());
}

/// A report whose latency histogram holds 1..=1000 µs once each, 1000 sent, 3 failed.
fn report() -> LoadReport {
    let mut r = crate::tests::sample();
    let mut h = stats::Latency::new();
    for us in 1..=1000u64 {
        h.record_ns(us * 1000);
    }
    r.latency = crate::Distribution::of(&h);
    r.requests.sent = 1000;
    r.requests.errors = 1;
    r.requests.failed_status = 2;
    r.throughput.requests_per_sec = 9_500.0;
    r
}

#[test]
fn judges_each_clause_on_the_whole_run() {
    let r = report();
    let table: &[(&str, bool)] = &[
        ("p99<990us", false),
        ("p99<=990.5us", true),
        ("p99<1ms", true),
        ("p50<500us", false),
        ("p50<=500.5us", true),
        ("errors<0.3%", false),
        ("errors<=0.3%", true),
        ("rps>=9500", true),
        ("rps>9500", false),
    ];
    for &(text, passed) in table {
        let slo: Slo = text.parse().unwrap();
        let v = slo.judge(&r, None);
        assert_eq!(v.passed, passed, "{text}: {v:?}");
        assert_eq!(v.clauses[0].passed, passed, "{text}");
        assert!(v.clauses[0].observed.is_some());
    }
    let slo: Slo = "p99<1ms,errors<0.1%,rps>=9500".parse().unwrap();
    let v = slo.judge(&r, None);
    assert!(!v.passed);
    assert_eq!(
        v.clauses.iter().map(|c| c.passed).collect::<Vec<_>>(),
        [true, false, true]
    );
    assert_eq!(v.clauses[1].observed, Some(0.3));
    assert_eq!(v.clauses[1].unit, Unit::Percent);
    let mut text = String::new();
    v.write_text(&mut text);
    assert!(text.contains("SLO:           FAILED"), "{text}");
    assert!(text.contains("FAIL   errors<0.1%"), "{text}");
    assert!(text.contains("observed 0.300%"), "{text}");
}

#[test]
fn a_run_with_no_response_fails_its_latency_clauses() {
    let mut r = report();
    r.latency = crate::Distribution::of(&stats::Latency::new());
    let v = "p99<1s".parse::<Slo>().unwrap().judge(&r, None);
    assert_eq!(v.clauses[0].observed, None);
    assert!(!v.passed);
}

fn interval(index: u64, latency_us: &[u64], sent: u64, failed: u64) -> stats::Interval {
    let mut latency = stats::Latency::new();
    for &us in latency_us {
        latency.record_ns(us * 1000);
    }
    stats::Interval {
        index,
        start: Duration::from_secs(index),
        duration: Duration::from_secs(1),
        latency,
        service: stats::Latency::new(),
        read_latency: stats::Latency::new(),
        client_delay: stats::Latency::new(),
        counts: stats::Counts {
            sent,
            timeout: failed,
            ..Default::default()
        },
    }
}

#[test]
fn abort_on_a_latency_clause_broken_in_one_interval() {
    let slo: Slo = "rps>=1000000,p99<5ms".parse().unwrap();
    let mut w = Watch::new(&slo, None);
    assert_eq!(w.observe(&interval(0, &[1_000; 100], 100, 0)), None);
    assert_eq!(w.observe(&interval(1, &[], 0, 0)), None, "an idle interval");
    let b = w.observe(&interval(2, &[6_000; 100], 100, 0)).unwrap();
    assert_eq!(b.clause, 1);
    assert!(
        b.reason
            .starts_with("p99<5ms: interval 2 (2.0s to 3.0s) had p99 6.00ms"),
        "{}",
        b.reason
    );
    // The breach fails its clause even when the whole run's value would pass.
    let v = slo.judge(&report(), Some(&b));
    assert!(!v.clauses[1].passed && !v.passed);
    assert_eq!(v.aborted.as_deref(), Some(b.reason.as_str()));
}

#[test]
fn abort_on_errors_over_the_budget_of_n_requests() {
    let slo: Slo = "errors<1%".parse().unwrap();
    // -n 1000: a budget of fewer than 10 failures.
    let mut w = Watch::new(&slo, Some(1000));
    assert_eq!(
        w.observe(&interval(0, &[], 100, 9)),
        None,
        "9 of 1000 may still pass"
    );
    let b = w.observe(&interval(1, &[], 100, 1)).unwrap();
    assert!(b.reason.contains("10 failed of 1000"), "{}", b.reason);
    // With <=, exactly 1% still holds.
    let le: Slo = "errors<=1%".parse().unwrap();
    let mut w = Watch::new(&le, Some(1000));
    assert_eq!(w.observe(&interval(0, &[], 100, 10)), None);
    assert!(w.observe(&interval(1, &[], 100, 1)).is_some());
    // In a -d run, one interval's own share decides.
    let mut w = Watch::new(&slo, None);
    assert_eq!(w.observe(&interval(0, &[], 1000, 9)), None);
    assert!(w.observe(&interval(1, &[], 100, 1)).is_some());
}
