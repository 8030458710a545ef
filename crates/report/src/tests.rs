use super::*;
use crate::units::bytes_one_decimal;
use stats::setting::PlanWording;

pub(crate) fn sample() -> LoadReport {
    LoadReport {
        schema: LOAD_SCHEMA.into(),
        tool: Tool {
            name: "foxbench".into(),
            version: "0".into(),
        },
        target: TargetInfo {
            url: "http://127.0.0.1:1/".into(),
            address: "127.0.0.1:1".into(),
            method: "GET".into(),
        },
        config: LoadConfig {
            model: Model::Closed,
            rate_per_sec: None,
            rate_schedule: None,
            connections: 10,
            threads: 1,
            pipeline: 1,
            streams: None,
            keepalive: false,
            requests: Some(10),
            duration_s: None,
            timeout_s: 1.0,
            connect_timeout_s: 1.0,
            selection: Selection::Random,
            seed: 7,
            interval_s: 1.0,
            coalesce: "auto".into(),
            idle: "sleep".into(),
            idle_reason: "asked".into(),
        },
        elapsed_s: 1.0,
        interrupted: false,
        requests: Requests {
            sent: 10,
            ok: 8,
            failed_status: 1,
            completed: 9,
            errors: 1,
            in_flight: 0,
            unsent: 0,
        },
        errors: Errors {
            connect: 1,
            connect_refused: 0,
            connect_ports_exhausted: 1,
            connect_timeout: 0,
            write: 0,
            read: 0,
            parse: 0,
            timeout: 0,
            tls: 0,
            reset: 0,
            protocol: 0,
        },
        errors_by_reason: vec![errors_by_reason::ReasonRow::new(
            stats::Reason::new(
                stats::reason::Kind::Connect,
                stats::reason::Cause::Errno(stats::reason::EADDRNOTAVAIL),
            ),
            1,
        )],
        status: [("302".to_string(), 8), ("500".to_string(), 1)].into(),
        throughput: Throughput {
            requests_per_sec: 9.0,
            bytes_read: 900,
            bytes_written: 800,
            read_bytes_per_sec: 900.0,
        },
        read_latency: None,
        kernel_latency: None,
        latency: Distribution {
            summary: Summary {
                count: 9,
                mean_us: 100.0,
                stdev_us: 1.0,
                min_us: 90.0,
                max_us: 120.0,
                percentiles: vec![Percentile {
                    percentile: 99.9,
                    value_us: 119.0,
                }],
            },
            hdr_base64: String::new(),
            buckets: vec![(100.0, 5), (120.0, 4)],
        },
        connect: None,
        connections: Connections {
            opened: 10,
            reconnects: 9,
            closed_by_server: 0,
        },
        protocol: None,
        http2: None,
        http3: None,
        tls: None,
        open: None,
        client: Client {
            cpus: 1,
            cpu_user_s: 0.5,
            cpu_sys_s: 0.47,
            cpu_percent: 97.0,
            cpu_us_per_request: Some(1.0),
            work_us_per_request: Some(1.0),
            max_rss_bytes: 4 << 20,
            voluntary_ctxt_per_request: None,
            involuntary_ctxt_per_request: None,
            spin_s: 0.0,
            coalesced_waits: 0,
            coalesced_s: 0.0,
            saturated: true,
            probe_cpu_s: None,
            dashboard_cpu_s: None,
            client_delay: None,
        },
        request_table: vec![
            RequestShape {
                method: "GET".into(),
                path: "/{hex:6}.svg".into(),
                sent: 6,
                completed: 5,
            },
            RequestShape {
                method: "GET".into(),
                path: "/".into(),
                sent: 4,
                completed: 4,
            },
        ],
        intervals: [(0.0, 300.0), (1.0, 0.0), (2.0, 1_200_000.0), (3.0, 250.0)]
            .iter()
            .map(|&(start_s, p99_us)| IntervalRow {
                start_s,
                duration_s: 1.0,
                requests: u64::from(p99_us > 0.0) * 3,
                errors: 0,
                errors_by_kind: Errors::default(),
                errors_by_reason: Vec::new(),
                requests_per_sec: 3.0,
                p50_us: p99_us / 2.0,
                p99_us,
                max_us: p99_us,
                hdr_base64: None,
                span_intervals: 1,
                client_delay_p99_us: None,
            })
            .collect(),
        interval_segments: Vec::new(),
        slo: None,
        shard: None,
        start: None,
        agents: None,
        capacity: None,
        tcp: None,
        udp: None,
    }
}

#[test]
fn text_has_the_figures_ab_users_look_for() {
    let t = sample().to_text(&PlanWording);
    for needle in [
        "Requests per second:    9.00 [#/sec] (mean)",
        "Time per request:       0.100 [ms] (mean)",
        "Percentage of the requests served within a certain time (ms)",
        "  99.9%       0.119",
        "(longest request)",
        "Complete requests:      9",
        "Failed requests:        2",
        "10 sent = 8 ok + 1 failed status + 1 errors + 0 in flight",
        "302: 8, 500: 1",
        "ports exhausted 1",
        "EADDRNOTAVAIL",
        "warning: foxbench used 97% of its CPUs: the result may be limited by the load generator, not the server",
        "Request table: 2 shapes, random selection, seed 7",
        "         6 sent          5 completed  GET /{hex:6}.svg",
        "Intervals:     4 of 1s; p99 per interval min 250.0µs, median 300.0µs, max 1.20s (at 2s); 1 with no response",
    ] {
        assert!(t.contains(needle), "missing {needle:?} in\n{t}");
    }
}

/// Under HTTP/2 the config line said "pipeline 1", which has no meaning there.
#[test]
fn config_line_says_streams_under_http2_not_pipeline() {
    let mut r = sample();
    assert!(
        r.to_text(&PlanWording).contains(", pipeline 1, "),
        "{}",
        r.to_text(&PlanWording)
    );
    let json = serde_json::json!({
        "alpn": null, "streams": 10, "server_max_streams": 5, "streams_used_max": 5,
        "connections": 1, "retries": 0, "id_rollovers": 0, "pings_answered": 0,
        "header_bytes_sent": 1, "header_bytes_sent_decoded": 2,
        "header_bytes_received": 1, "header_bytes_received_decoded": 2,
        "hpack_saving_sent_percent": 50.0, "hpack_saving_received_percent": 50.0,
        "rst_stream": {}, "goaway": {}, "stream_window": 1, "connection_window": 1
    });
    r.http2 = Some(serde_json::from_value(json).unwrap());
    let t = r.to_text(&PlanWording);
    let config = t.lines().nth(1).unwrap();
    assert!(config.contains(", streams 10, "), "{config}");
    assert!(!t.contains("pipeline"), "{t}");
}

#[test]
fn json_round_trips() {
    let r = sample();
    let text = serde_json::to_string(&r).unwrap();
    let back: LoadReport = serde_json::from_str(&text).unwrap();
    assert_eq!(back, r);
}

#[test]
fn client_measure_holds_the_saturation_rule() {
    let c = Client::measure(2, 0.9, 0.9, 2.0, 1000, 0);
    assert!((c.cpu_percent - 45.0).abs() < 1e-9);
    assert_eq!(c.cpu_us_per_request, Some(1800.0));
    assert!(!c.saturated);
    let c = Client::measure(1, 0.5, 0.4, 1.0, 0, 0);
    assert!(c.saturated, "90% of one CPU is the threshold");
    assert_eq!(c.cpu_us_per_request, None);
}

/// The open model's spin is time to spare: the saturation verdict leaves it out, while
/// the CPU totals keep it.
#[test]
fn saturation_leaves_the_open_models_spin_out() {
    // (CPU %, spin %) → saturated
    let cases = [
        ((98.0, 0.0), true),  // no spin: today's verdict
        ((89.0, 0.0), false), // no spin: today's verdict
        ((90.0, 0.0), true),  // the bar itself
        ((98.0, 60.0), false),
        ((98.0, 8.0), true), // 90% of work left: still saturated
        ((98.0, 8.5), false),
        ((50.0, 80.0), false), // spin over the CPU clamps at 0
    ];
    for ((cpu, spin), want) in cases {
        assert_eq!(
            client_saturated(cpu, spin),
            want,
            "{cpu}% CPU, {spin}% spin"
        );
    }
    // 1.96 s of CPU over 2 s on one CPU, 1.2 s of it spin.
    let c = Client::measure(1, 1.5, 0.46, 2.0, 1000, 0);
    assert!(c.saturated);
    let c = c.with_spin(1.2);
    assert!(!c.saturated, "{c:?}");
    assert_eq!((c.spin_s, c.cpu_percent), (1.2, 98.0), "totals as measured");
    // 1.2 s of the 1.96 s that made 98%: 60 points of it.
    assert!((spin_percent(98.0, 1.96, 1.2) - 60.0).abs() < 1e-9);
    // A worker preempted mid-poll spins longer in wall time than it ran: the share is
    // capped at the CPU it is part of.
    assert_eq!(spin_percent(2.5, 0.05, 0.08), 2.5);

    // The text says how much of the CPU spun, and only when some did.
    let mut r = sample();
    assert!(!r.to_text(&PlanWording).contains("spun with nothing to do"));
    r.client.spin_s = 0.4;
    let t = r.to_text(&PlanWording);
    assert!(
        t.contains("97% of 1 CPU, of which 0.40s spun with nothing to do (time to spare)"),
        "{t}"
    );
}

#[test]
fn old_results_without_the_table_or_intervals_still_load() {
    let mut v: serde_json::Value = serde_json::to_value(sample()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("request_table");
    o.remove("intervals");
    let mut old_interval = serde_json::to_value(&sample().intervals[0]).unwrap();
    old_interval
        .as_object_mut()
        .unwrap()
        .remove("errors_by_kind");
    let iv: IntervalRow = serde_json::from_value(old_interval).unwrap();
    assert_eq!(iv.errors_by_kind, Errors::default());
    for k in ["selection", "seed", "interval_s", "coalesce"] {
        o["config"].as_object_mut().unwrap().remove(k);
    }
    for k in ["coalesced_waits", "coalesced_s"] {
        o["client"].as_object_mut().unwrap().remove(k);
    }
    let r: LoadReport = serde_json::from_value(v).unwrap();
    assert!(r.intervals.is_empty() && r.request_table.is_empty());
    assert_eq!(r.config.interval_s, 1.0);
    // Before 2026-11-26 no run waited before sleeping.
    assert_eq!(r.config.coalesce, "off");
    assert_eq!(r.client.coalesced_waits, 0);
    assert!(!r.to_text(&PlanWording).contains("Coalescing:"));
    assert_eq!(r.interval_line(), None);
}

#[test]
fn human_units() {
    assert_eq!(human_us(12.34), "12.3µs");
    assert_eq!(human_us(1234.0), "1.23ms");
    assert_eq!(human_us(2_500_000.0), "2.50s");
    assert_eq!(bytes_one_decimal(1536.0), "1.5 KiB");
}

#[test]
fn coalescing_waits_are_reported_where_some_were_made() {
    let mut r = sample();
    assert_eq!(r.client.coalesced_note(r.requests.completed), None);
    assert!(!r.to_text(&PlanWording).contains("Coalescing:"));
    r.client.coalesced_waits = 20;
    r.client.coalesced_s = 20.0 * 140e-6;
    r.requests.completed = 1000;
    let want = "Coalescing:    auto (20 waits of 140µs on average before sleeping, 20 per 1000 requests, to read several responses per wake-up)";
    let text = r.to_text(&PlanWording);
    assert!(text.contains(want), "missing {want:?} in\n{text}");
    let html = crate::load_html::to_html(&r);
    assert!(
        html.contains("<dt>coalescing</dt><dd>auto (20 waits of 140µs"),
        "{html}"
    );
    // A few waits in a long run show as a fraction, not as "0 per 1000".
    r.client.coalesced_waits = 3;
    r.client.coalesced_s = 3.0 * 50e-6;
    r.requests.completed = 100_000;
    let note = r.client.coalesced_note(r.requests.completed).unwrap();
    assert!(note.contains(", 0.03 per 1000 requests"), "{note}");
}

/// `--dashboard`'s CPU was left out of the client's figures but recorded nowhere: the
/// JSON has it, and the text and the page say it where they give foxbench's CPU. A result
/// without it (no dashboard, or written before) loads, writes and reads as it did.
#[test]
fn dashboard_cpu_was_recorded_nowhere() {
    let mut r = sample();
    r.client.dashboard_cpu_s = Some(0.0125);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["client"]["dashboard_cpu_s"], 0.0125);
    let cpu_line = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("foxbench CPU:"))
            .unwrap()
            .to_string()
    };
    let line = cpu_line(&r.to_text(&stats::setting::PlanWording));
    assert!(
        line.contains("97% of 1 CPU, the dashboard's 0.013s left out, 1.00µs per request"),
        "{line}"
    );
    let html = crate::load_html::to_html(&r);
    assert!(
        html.contains("<dd>97% of 1, the dashboard&#39;s 0.013s left out"),
        "{html}"
    );
    let old = sample();
    let json = serde_json::to_string(&old).unwrap();
    assert!(!json.contains("dashboard_cpu_s"), "{json}");
    let back: LoadReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.client.dashboard_cpu_s, None);
    assert!(!back
        .to_text(&stats::setting::PlanWording)
        .contains("dashboard"));
    assert!(!crate::load_html::to_html(&back).contains("dashboard"));
}

/// Every report says which idle mode ran and why, and a run that spun gives its work per
/// request (CPU less spin) beside its CPU per request.
#[test]
fn the_idle_mode_and_the_work_per_request_are_reported() {
    let mut r = sample();
    let t = r.to_text(&PlanWording);
    assert!(t.contains("Idle:          sleep (asked)\n"), "{t}");
    assert!(!t.contains("(work"), "no spin, no work note: {t}");
    r.config.idle = "spin".into();
    r.config.idle_reason = "foxbench on CPU 0, the server on CPU 1".into();
    r.client = r.client.clone().with_spin(0.485);
    let t = r.to_text(&PlanWording);
    assert!(
        t.contains("Idle:          spin (foxbench on CPU 0, the server on CPU 1), coalescing not in effect"),
        "{t}"
    );
    // 0.97 s of CPU, half of it spin: 1.00µs per request, 0.50 of it work.
    assert!(
        t.contains("1.00µs per request (work 0.50µs, less the spin)"),
        "{t}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["config"]["idle"], "spin");
    assert!((json["client"]["work_us_per_request"].as_f64().unwrap() - 0.5).abs() < 1e-9);
    let html = crate::load_html::to_html(&r);
    assert!(html.contains("work 0.50µs"), "{html}");
    assert!(html.contains("coalescing not in effect"));
}
