use super::*;
use crate::tcp::{TcpCounts, TcpWarning};

#[test]
fn a_phase_is_named_as_the_json_names_it() {
    // The text and the dashboard once kept their own copies of these names.
    for phase in WindowPhase::ALL {
        let json = serde_json::to_value(phase).unwrap();
        assert_eq!(json.as_str(), Some(phase.name()));
    }
}

fn window(sent: u64, kinds: Option<&[TcpFinding]>) -> CapacityWindow {
    CapacityWindow {
        rate_per_sec: sent as f64,
        phase: WindowPhase::Bracket,
        passed: false,
        achieved_per_sec: sent as f64,
        sent,
        failed: 0,
        late: Some(0),
        corrected: None,
        service: None,
        p50_us: None,
        p99_us: None,
        client_cpu_percent: 1.0,
        client_spin_percent: 0.0,
        client_cpu_us_per_request: None,
        client_work_us_per_request: None,
        client_saturated: false,
        client_delay: None,
        server_cpu_percent: None,
        server_cpu_us_per_request: None,
        clauses: Vec::new(),
        tcp: kinds.map(|kinds| TcpReport {
            deltas: TcpCounts::default(),
            per_request: None,
            warnings: kinds
                .iter()
                .map(|&kind| TcpWarning {
                    kind,
                    detail: format!("{} at {sent}", kind.as_str()),
                })
                .collect(),
            links: Vec::new(),
        }),
    }
}

/// One warning per rule over the windows: which windows it fired in, and the detail of
/// the one with the most requests; the table's tcp column per window.
#[test]
fn tcp_warnings_name_the_windows_and_the_busiest_ones_detail() {
    use TcpFinding::{ListenOverflow, Nagle};
    let report = CapacityReport {
        objective: "p99<10ms".into(),
        rate_per_sec: None,
        bracket: Bracket {
            held_per_sec: None,
            failed_per_sec: Some(100.0),
        },
        stopped: Stopped::Floor,
        client_bound: false,
        window_s: 1.0,
        budget_s: 10.0,
        elapsed_s: 4.0,
        windows: vec![
            window(100, Some(&[Nagle])),
            window(400, Some(&[ListenOverflow, Nagle])),
            window(50, None),
            window(200, Some(&[])),
        ],
        spectra: Vec::new(),
    };
    assert_eq!(
        report.tcp_warnings(),
        [
            "nagle in windows 1, 2 of 4; at 400 req/s: nagle at 400",
            "listen-overflow in window 2 of 4; at 400 req/s: listen-overflow at 400",
        ]
    );
    let text = report.to_text();
    let column: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" bracket "))
        .map(|l| l.split_whitespace().last().unwrap())
        .collect();
    assert_eq!(
        column,
        ["nagle", "listen-overflow,nagle", "-", "ok"],
        "{text}"
    );
    assert!(
        text.ends_with(
            "warning: listen-overflow in window 2 of 4; at 400 req/s: listen-overflow at 400\n"
        ),
        "{text}"
    );
    // A window that spun (`--idle spin`) shows its CPU and its work per request.
    let mut spun = window(300, Some(&[]));
    spun.client_spin_percent = 60.0;
    spun.client_cpu_us_per_request = Some(12.0);
    spun.client_work_us_per_request = Some(4.5);
    let with_spin = CapacityReport {
        windows: vec![spun],
        ..report.clone()
    };
    let text = with_spin.to_text();
    assert!(text.contains("   spin  cpu/req work/req"), "{text}");
    assert!(text.contains("    60%   12.0µs    4.5µs"), "{text}");
    let none = CapacityReport {
        windows: vec![window(10, Some(&[])), window(20, None)],
        ..report
    };
    assert!(none.tcp_warnings().is_empty());
    assert!(!none.to_text().contains("warning"));
}

/// The progress line `--find-max` prints after each window, once formatted in the binary.
#[test]
fn a_windows_progress_line_names_its_rate_cpu_verdict_and_tcp_rules() {
    let mut w = window(1000, Some(&[TcpFinding::Nagle]));
    w.client_spin_percent = 3.0;
    w.passed = true;
    assert_eq!(
        w.progress_line(3),
        "window  3:      1000 req/s asked,      1000 achieved, p99         -, client   1% (3% spin): held (tcp: nagle)"
    );
    let quiet = window(20, None);
    assert_eq!(
        quiet.progress_line(12),
        "window 12:        20 req/s asked,        20 achieved, p99         -, client   1%: failed"
    );
}
