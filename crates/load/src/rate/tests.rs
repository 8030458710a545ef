use super::*;

/// Every request's due instant, inverted, gives back its index, and N is monotone.
#[track_caller]
fn consistent(rate: &Rate, n: u64) {
    let mut last = -1.0;
    for j in 0..n {
        let t = rate.due_ns(j as f64).unwrap();
        assert!(t >= last, "request {j} due at {t} before {last}");
        last = t;
        let back = rate.due_by(t);
        assert!(
            (back - j as f64).abs() < 1e-6 * (j as f64).max(1.0),
            "{j}: N(t) = {back}"
        );
    }
}

#[test]
fn constant_rate_is_j_times_the_interval() {
    let r = Rate::parse("1000").unwrap();
    assert!(r.is_constant());
    assert_eq!(r.constant_per_sec(), Some(1000.0));
    for j in [0u64, 1, 7, 999_999, 10_000_000_000] {
        let t = r.due_ns(j as f64).unwrap();
        assert!((t - j as f64 * 1e6).abs() <= 1e-6 * t.max(1.0), "{j}: {t}");
    }
}

#[test]
fn linear_ramp_integrates_exactly() {
    let r = Rate::parse("1000..20000/60s").unwrap();
    // (1000 + 20000) / 2 × 60 = 630,000 requests in the ramp, then 20,000/s.
    assert!((r.due_by(60e9) - 630_000.0).abs() < 1e-6);
    assert!((r.due_by(61e9) - 650_000.0).abs() < 1e-6);
    assert!((r.at(30e9) - 10_500.0).abs() < 1e-9);
    assert_eq!(r.stages_duration(), Some(Duration::from_secs(60)));
    consistent(&r, 700_000);
    // Requests per second follow the ramp, second by second.
    for s in 0..60 {
        let n = r.due_by((s + 1) as f64 * 1e9) - r.due_by(s as f64 * 1e9);
        let want = 1000.0 + 19000.0 * (s as f64 + 0.5) / 60.0;
        assert!((n - want).abs() < 1e-6, "second {s}: {n} against {want}");
    }
}

#[test]
fn stages_ramp_from_zero_or_a_given_start() {
    let r = Rate::parse("1000/10s,5000/30s,5000/60s").unwrap();
    assert_eq!(r.stages().len(), 3);
    assert_eq!(r.stages()[0].from_per_sec, 0.0);
    // 5,000 + 90,000 + 300,000
    assert!((r.due_by(100e9) - 395_000.0).abs() < 1e-6);
    consistent(&r, 400_000);
    let r = Rate::parse("500,1000/10s").unwrap();
    assert_eq!(r.stages()[0].from_per_sec, 500.0);
    assert!((r.due_by(10e9) - 7_500.0).abs() < 1e-6);
}

#[test]
fn steps_hold_each_rate() {
    let r = Rate::parse("1000+1000/10s..10000").unwrap();
    assert_eq!(r.stages().len(), 10);
    assert_eq!(r.stages_duration(), Some(Duration::from_secs(100)));
    // 10 s at each of 1000..=10000: 550,000.
    assert!((r.due_by(100e9) - 550_000.0).abs() < 1e-6);
    assert!((r.due_by(15e9) - 20_000.0).abs() < 1e-6);
    consistent(&r, 560_000);
}

#[test]
fn steps_with_a_huge_end_do_not_overflow_the_step_count() {
    let e = Rate::parse("1++2/4..99999999999999999999999999999999999999999999999934.4")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most 10,000"), "{e}");
}

#[test]
fn a_ramp_down_to_zero_ends_the_requests() {
    let r = Rate::parse("100..0/10s").unwrap();
    assert!((r.due_by(10e9) - 500.0).abs() < 1e-9);
    assert!(r.due_ns(499.0).is_some());
    assert!(
        r.due_ns(500.5).is_none(),
        "nothing after the schedule ends at 0"
    );
}

#[test]
fn bad_rates_say_what_to_write() {
    for (bad, want) in [
        ("", "not a number"),
        ("fast", "not a number"),
        ("-5", "0 or more"),
        ("0", "never sends"),
        ("1000..", "needs a duration"),
        ("1000..2000/", "duration"),
        ("1000..2000/10x", "unit"),
        ("1000/10s,2000", "has no duration"),
        ("1000+0/10s..2000", "step must be positive"),
        ("1000+1000/10s", "need an end"),
        ("1+1/1s..100000", "at most 10,000"),
        ("inf", "finite"),
    ] {
        let e = Rate::parse(bad).unwrap_err().to_string();
        assert!(e.contains(want), "{bad:?}: {e}");
        assert!(e.contains("1000..20000/60s") && !e.contains('\n'), "{e}");
    }
}
