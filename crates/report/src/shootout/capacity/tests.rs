use super::*;
use crate::search::{CapacityWindow, WindowPhase};

fn window(rate: f64, passed: bool, saturated: bool) -> CapacityWindow {
    CapacityWindow {
        rate_per_sec: rate,
        phase: WindowPhase::Bisect,
        passed,
        achieved_per_sec: rate,
        sent: rate as u64,
        failed: 0,
        late: None,
        corrected: None,
        service: None,
        p50_us: Some(100.0),
        p99_us: Some(if passed { 900.0 } else { 20_000.0 }),
        client_cpu_percent: if saturated { 99.0 } else { 20.0 },
        client_spin_percent: 0.0,
        client_cpu_us_per_request: Some(10.0),
        client_work_us_per_request: Some(10.0),
        client_saturated: saturated,
        client_delay: None,
        server_cpu_percent: Some(50.0),
        server_cpu_us_per_request: Some(20.0),
        clauses: Vec::new(),
        tcp: None,
    }
}

#[test]
fn client_bound_only_when_a_bounding_window_was_saturated() {
    let bracket = Bracket {
        held_per_sec: Some(1000.0),
        failed_per_sec: Some(2000.0),
    };
    let cases = [
        // (saturated at 500, at 1000, at 2000) → client-bound
        ((false, false, false), false),
        ((true, false, false), false),
        ((false, true, false), true),
        ((false, false, true), true),
    ];
    for ((a, b, c), want) in cases {
        let windows = [
            window(500.0, true, a),
            window(1000.0, true, b),
            window(2000.0, false, c),
        ];
        assert_eq!(
            CapacityReport::client_bound_of(&windows, &[], bracket),
            want,
            "{a} {b} {c}"
        );
    }
}

/// The fixture's run with a capacity cell added to its first two measured targets:
/// the second sustains more, client-bound.
fn with_capacity() -> ShootoutResults {
    let text = include_str!("../../../tests/data/results.json");
    let mut r = ShootoutResults::from_json(text).unwrap();
    let measured: Vec<usize> = r
        .targets
        .iter()
        .enumerate()
        .filter(|(_, t)| t.cells.iter().any(|c| c.summary.is_some()))
        .map(|(i, _)| i)
        .take(2)
        .collect();
    assert_eq!(measured.len(), 2, "the fixture has two measured targets");
    for (n, &i) in measured.iter().enumerate() {
        let t = &mut r.targets[i];
        let mut cell = t
            .cells
            .iter()
            .find(|c| c.summary.is_some())
            .unwrap()
            .clone();
        cell.level = "cap".into();
        let (held, failed) = (1000.0 * (n + 1) as f64, 1100.0 * (n + 1) as f64);
        let windows = vec![
            window(held / 2.0, true, false),
            window(held, true, n == 1),
            window(failed, false, false),
        ];
        let bracket = Bracket {
            held_per_sec: Some(held),
            failed_per_sec: Some(failed),
        };
        cell.capacity = Some(CapacityReport {
            objective: "p99<10ms".into(),
            rate_per_sec: Some(held),
            bracket,
            stopped: Stopped::Converged,
            client_bound: CapacityReport::client_bound_of(&windows, &[], bracket),
            window_s: 0.5,
            budget_s: 8.0,
            elapsed_s: 2.4,
            windows,
            spectra: Vec::new(),
        });
        t.cells.push(cell);
    }
    r
}

#[test]
fn the_ranking_puts_the_highest_sustained_rate_first_and_marks_the_client_bound() {
    let r = with_capacity();
    let rows = ranking(&r);
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows.iter()
            .map(|r| (r.capacity.rate_per_sec, r.capacity.client_bound))
            .collect::<Vec<_>>(),
        [(Some(2000.0), true), (Some(1000.0), false)]
    );
    assert!(
        rows.iter().all(|r| r.closed_rps.is_some()),
        "closed loop beside it"
    );
    let md = crate::shootout::to_markdown(&r);
    let table: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("## Capacity under `p99<10ms`"))
        .filter(|l| l.starts_with("| 1 |") || l.starts_with("| 2 |"))
        .collect();
    assert_eq!(table.len(), 2, "{md}");
    assert!(
        table[0].contains(&format!("| {} |", rows[0].target)),
        "{}",
        table[0]
    );
    assert!(table[0].contains("| 2,000 ᶜ |"), "{}", table[0]);
    assert!(table[1].contains("| 1,000 |") && table[1].contains("| 1,000 – 1,100 |"));
    assert!(md.contains("ᶜ client-bound: foxbench's CPU was saturated"));
    let html = crate::shootout::to_html(&r);
    crate::shootout::svg::assert_finite(&html);
    assert!(html.contains("<div id=\"capacity\"><h3>Capacity under <code>p99&lt;10ms</code>"));
    assert!(
        html.contains("id=\"chart-capacity-0\""),
        "latency over the ramp"
    );
    assert!(html.contains("2,000 ᶜ"));
    // Without a capacity level, neither report has the section.
    let plain =
        ShootoutResults::from_json(include_str!("../../../tests/data/results.json")).unwrap();
    assert!(!crate::shootout::to_markdown(&plain).contains("Capacity under"));
    let html = crate::shootout::to_html(&plain);
    assert!(!html.contains("Capacity under") && !html.contains("chart-capacity"));
}

#[test]
fn rates_read_for_people() {
    let mut c = CapacityReport {
        objective: "p99<10ms".into(),
        rate_per_sec: Some(12_345.4),
        bracket: Bracket {
            held_per_sec: Some(12_345.4),
            failed_per_sec: None,
        },
        stopped: Stopped::Converged,
        client_bound: false,
        window_s: 1.0,
        budget_s: 20.0,
        elapsed_s: 19.0,
        windows: vec![window(12_345.4, true, false)],
        spectra: Vec::new(),
    };
    assert_eq!(rate_text(&c), "12,345");
    assert_eq!(
        c.line(),
        "capacity 12,345 req/s under p99<10ms (bracket 12,345 – -, converged, 1 window in 19.0 s)"
    );
    assert_eq!(bracket_text(c.bracket), "12,345 – -");
    assert_eq!(p99_at_rate(&c), Some(900.0));
    c.stopped = Stopped::Ceiling;
    assert_eq!(rate_text(&c), "≥ 12,345");
    c.rate_per_sec = None;
    assert_eq!(rate_text(&c), "none");
    assert_eq!(p99_at_rate(&c), None);
    assert_eq!(thousands(999.0), "999");
    assert_eq!(thousands(1_000_000.0), "1,000,000");
}
