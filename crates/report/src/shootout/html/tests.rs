use super::super::svg::assert_finite;
use super::super::{
    Bottleneck, BuildInfo, Cell, CellStatus, CellSummary, Diagnosis, LevelInfo, Outcome, PlanInfo,
    ProbePoint, Protocol, Repeat, SuiteInfo, TargetResult, Verification,
};
use super::*;
use crate::units::rate_suffixed;

fn fixture() -> ShootoutResults {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/results.json"
    ))
    .expect("tests/data/results.json");
    ShootoutResults::from_json(&text).expect("fixture parses")
}

fn empty_results() -> ShootoutResults {
    ShootoutResults {
        schema: crate::shootout::SHOOTOUT_SCHEMA.into(),
        suite: SuiteInfo {
            name: "empty".into(),
            source: "built-in".into(),
            quick: true,
            text: String::new(),
        },
        protocol: Protocol {
            started_unix_s: 0,
            foxbench_version: "0.0.0".into(),
            cpu_model: "cpu".into(),
            kernel: "k".into(),
            nproc: 0,
            mem_total_bytes: 0,
            sysctl: Default::default(),
            ulimit_nofile: (0, 0),
            client_cpus: vec![],
            server_cpus: vec![],
            service_cpus: vec![],
            cpu_sharing: vec![],
            client_threads: 0,
            toolchains: Default::default(),
            command: String::new(),
            plan: PlanInfo {
                levels: vec![],
                repeats: 0,
                warmup_max_s: 0.0,
                warmup_slice_s: 0.0,
                sample_interval_s: 0.0,
                timeout_s: 0.0,
                stop_grace_s: 0.0,
            },
        },
        targets: vec![],
        services: vec![],
        interrupted: false,
        elapsed_s: 0.0,
    }
}

fn target(name: &str, outcome: Outcome) -> TargetResult {
    TargetResult {
        name: name.into(),
        base: None,
        params: vec![],
        skipped_scenarios: vec![],
        services: vec![],
        language: "L".into(),
        outcome,
        message: None,
        build: None,
        start_command: None,
        startup_ms: None,
        idle: None,
        verify: vec![],
        cells: vec![],
        log_tail: None,
    }
}

fn level(name: &str, connections: u64) -> LevelInfo {
    LevelInfo {
        name: name.into(),
        connections,
        duration_s: Some(1.0),
        requests: None,
        max_duration_s: None,
        keepalive: None,
        repeats: 1,
        tls_resume: None,
        capacity: None,
        rate: None,
        http2_streams: None,
        http3_streams: None,
    }
}

fn summary(rps: f64, us: f64) -> CellSummary {
    let latency = stats::Summary {
        count: 1,
        mean_us: us,
        stdev_us: 0.0,
        min_us: us,
        max_us: us,
        percentiles: vec![stats::Percentile {
            percentile: 99.0,
            value_us: us,
        }],
    };
    CellSummary {
        rps_median: rps,
        rps_min: rps,
        rps_max: rps,
        latency,
        hdr_base64: String::new(),
        spectrum: vec![(0.0, us), (50.0, us), (99.0, us), (100.0, us)],
        server_cpu_us_per_request: Some(rps),
        client_cpu_us_per_request: None,
        client_work_us_per_request: None,
        server_cpu_percent: 0.0,
        busiest_thread_percent: 0.0,
        client_cpu_percent: 0.0,
        rss_peak_bytes: 0,
        rss_mean_bytes: 0,
        pss_peak_bytes: 0,
        threads_peak: 0,
        fds_peak: 0,
        errors: 0,
        errors_by_reason: Vec::new(),
        failed_status: 0,
        sent: 0,
        handshakes_full_per_s: None,
        handshakes_resumed_per_s: None,
        processes: Vec::new(),
        system: None,
        waits: None,
    }
}

fn cell(
    level: &str,
    connections: u64,
    summary: Option<CellSummary>,
    series: Vec<ProbePoint>,
) -> Cell {
    let repeats = if series.is_empty() {
        vec![]
    } else {
        let mut rep: Repeat = serde_json::from_value(serde_json::json!({
                "elapsed_s": 0.0, "capped": false,
                "requests": {"sent":0,"ok":0,"failed_status":0,"completed":0,"errors":0,"in_flight":0,"unsent":0},
                "errors": {"connect":0,"connect_refused":0,"connect_ports_exhausted":0,"connect_timeout":0,"write":0,"read":0,"parse":0,"timeout":0},
                "status": {}, "connections": {"opened":0,"reconnects":0,"closed_by_server":0},
                "rps": 0.0,
                "latency": {"count":0,"mean_us":0.0,"stdev_us":0.0,"min_us":0.0,"max_us":0.0,"percentiles":[]},
                "hdr_base64": "",
                "server": {"cpu_user_s":0.0,"cpu_sys_s":0.0,"cpu_percent":0.0,"busiest_thread_percent":0.0,"cpu_us_per_request":null,
                    "rss_peak_bytes":0,"rss_mean_bytes":0,"pss_peak_bytes":0,"pss_mean_bytes":0,"threads_peak":0,"processes_peak":0,
                    "fds_peak":0,"voluntary_ctxt_per_s":0.0,"involuntary_ctxt_per_s":0.0},
                "client": {"cpu_user_s":0.0,"cpu_sys_s":0.0,"cpu_percent":0.0,"cpu_us_per_request":null},
                "series": []
            }))
            .expect("repeat template");
        rep.series = series;
        vec![rep]
    };
    Cell {
        scenario: "s".into(),
        level: level.into(),
        connections,
        keepalive: true,
        pipeline: 1,
        tls_resume: None,
        protocol: "http/1.1".into(),
        streams: None,
        idle: None,
        status: if summary.is_some() {
            CellStatus::Measured
        } else {
            CellStatus::Failed
        },
        message: None,
        warmup_s: 0.0,
        warmup_rps: vec![],
        repeats,
        summary,
        diagnosis: None,
        limits: Vec::new(),
        thread_dumps: Vec::new(),
        tiers: vec![],
        counters: vec![],
        limiting_tier: None,
        capacity: None,
        settle: None,
        tcp: None,
    }
}

fn probe(t: f64, rss: u64) -> ProbePoint {
    ProbePoint {
        t_s: t,
        cpu_percent: 0.0,
        rss_bytes: rss,
        pss_bytes: 0,
        threads: 0,
        processes: 0,
        fds: 0,
    }
}

/// No NaN or inf in any attribute, no resource outside the file, well-formed ends.
fn assert_sane(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    assert_finite(html);
    assert_no_external(html);
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
}

/// No tag refers to anything outside the file: no `src`, no `href` but `#fragment`, no
/// embedding element, and the style sheet imports nothing.
fn assert_no_external(html: &str) {
    let lower = html.to_ascii_lowercase();
    let mut rest = lower.as_str();
    let mut tags = 0;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let end = rest.find('>').expect("tag closes");
        let tag = &rest[..end];
        tags += 1;
        for bad in [
            "src=",
            "srcset=",
            "xlink:href",
            "action=",
            "formaction=",
            "poster=",
            "data=",
        ] {
            assert!(!tag.contains(bad), "<{tag}> refers outside the file");
        }
        for name in [
            "img", "link", "iframe", "object", "embed", "image", "use", "audio", "video", "source",
            "base",
        ] {
            let named = tag.split_whitespace().next() == Some(name);
            assert!(!named, "<{tag}> may load something");
        }
        if let Some(h) = tag.find("href=") {
            let value = tag[h + 5..].trim_start_matches(['"', '\'']);
            assert!(value.starts_with('#'), "<{tag}> links outside the file");
        }
    }
    assert!(tags > 10);
    let style = &lower[lower.find("<style>").unwrap()..lower.find("</style>").unwrap()];
    assert!(!style.contains("url(") && !style.contains("@import") && !style.contains("@font-face"));
}

#[test]
fn fixture_renders_finite_and_self_contained() {
    let r = fixture();
    let html = to_html(&r);
    assert_sane(&html);
    // The concurrency charts, the ab bars, the spectrum, RSS and CPU bars, RSS over time.
    assert!(
        html.matches("<svg").count() >= 7,
        "{} charts",
        html.matches("<svg").count()
    );
    for t in r.ranked() {
        assert!(html.contains(&esc(&t.name)));
    }
    // The suite's Location URLs appear only as escaped text.
    assert!(html.contains("https://avatar.example"));
    // Markdown and HTML agree on the headline numbers.
    for t in r.ranked() {
        for c in &t.cells {
            if let Some(s) = &c.summary {
                assert!(
                    html.contains(&rate_suffixed(s.rps_median)),
                    "{} {}",
                    t.name,
                    c.level
                );
            }
        }
    }
}

#[test]
fn no_targets_measured_renders() {
    let mut r = empty_results();
    let html = to_html(&r);
    assert_sane(&html);
    assert!(html.contains("No target was measured"));
    let mut t = target("skipped-one", Outcome::Skipped);
    t.message = Some("zig missing".into());
    r.targets.push(t);
    r.targets
        .push(target("verify-failed", Outcome::VerifyFailed));
    r.interrupted = true;
    let html = to_html(&r);
    assert_sane(&html);
    assert!(html.contains("zig missing") && html.contains("Interrupted"));
}

#[test]
fn one_target_one_point_and_zeros_render() {
    let mut r = empty_results();
    r.protocol.plan.levels = vec![level("c10", 10)];
    let mut t = target("solo", Outcome::Measured);
    t.cells.push(cell(
        "c10",
        10,
        Some(summary(0.0, 0.0)),
        vec![probe(0.0, 0)],
    ));
    t.idle = Some(probe(0.0, 0));
    t.build = Some(BuildInfo {
        command: "true".into(),
        key: "k".into(),
        cached: false,
        seconds: 0.0,
        artifact_bytes: Some(0),
        artifact: None,
    });
    r.targets.push(t);
    assert_sane(&to_html(&r));

    // One real point, a cell without summary, an empty series, a connections count of 0,
    // and the extremes JSON can carry (it has no NaN or infinity).
    let mut r2 = empty_results();
    r2.protocol.plan.levels = vec![level("c10", 10), level("c0", 0)];
    let mut t = target("a", Outcome::Measured);
    t.cells.push(cell(
        "c10",
        10,
        Some(summary(1234.0, 56.0)),
        vec![probe(0.5, 2 << 20)],
    ));
    t.cells.push(cell("c0", 0, None, vec![]));
    r2.targets.push(t);
    let mut t = target("b", Outcome::Crashed);
    t.cells.push(cell(
        "c10",
        10,
        Some(summary(f64::MAX, 1e300)),
        vec![probe(1e300, u64::MAX)],
    ));
    r2.targets.push(t);
    let html = to_html(&r2);
    assert_sane(&html);
    assert!(html.contains("1.2k"));
}

#[test]
fn fourteen_targets_get_fourteen_colours() {
    let mut r = empty_results();
    r.protocol.plan.levels = vec![level("c10", 10), level("c100", 100)];
    for i in 0..14 {
        let mut t = target(&format!("t{i}"), Outcome::Measured);
        let rps = 1000.0 * (i + 1) as f64;
        t.cells.push(cell(
            "c10",
            10,
            Some(summary(rps, 50.0 + i as f64)),
            vec![probe(0.0, 1 << 20), probe(1.0, 2 << 20)],
        ));
        t.cells.push(cell(
            "c100",
            100,
            Some(summary(rps * 2.0, 500.0)),
            vec![probe(0.0, 3 << 20)],
        ));
        r.targets.push(t);
    }
    let html = to_html(&r);
    assert_sane(&html);
    for c in svg::PALETTE {
        assert!(html.contains(&format!("stroke=\"{c}\"")), "{c} unused");
    }
}

#[test]
fn hostile_text_is_escaped() {
    let mut r = fixture();
    let evil = "<script>alert(\"x\")</script>&'";
    r.suite.name = evil.into();
    r.suite.text = format!("{evil}\n</pre><img src=x onerror=alert(1)>");
    r.protocol.command = evil.into();
    r.protocol.cpu_model = evil.into();
    r.protocol.sysctl.insert(evil.into(), evil.into());
    r.protocol.toolchains.insert(evil.into(), evil.into());
    r.targets[0].name = evil.into();
    r.targets[0].language = evil.into();
    r.targets[0].message = Some(evil.into());
    r.targets[0].log_tail = Some(evil.into());
    r.targets[0].start_command = Some(evil.into());
    r.targets[0].verify.push(Verification {
        scenario: evil.into(),
        passed: false,
        checks: vec![super::super::Check {
            name: evil.into(),
            passed: false,
            detail: Some(evil.into()),
        }],
        images_seen: None,
        images_expected: None,
        keepalive: None,
        http2: None,
        http3: None,
    });
    for c in &mut r.targets[0].cells {
        c.message = Some(evil.into());
        c.diagnosis = Some(Diagnosis {
            bottleneck: Bottleneck::Errors,
            detail: evil.into(),
        });
    }
    let html = to_html(&r);
    assert_sane(&html);
    assert!(!html.contains("<script>alert"), "unescaped script");
    assert!(!html.contains("<img"), "unescaped img");
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;"));
    // The only script is the report's own.
    assert_eq!(html.matches("<script").count(), 1);
}

#[test]
fn short_limits_show_in_both_reports_and_survive_json() {
    let mut r = fixture();
    assert!(
        r.targets
            .iter()
            .flat_map(|t| &t.cells)
            .all(|c| c.limits.is_empty()),
        "an old results file has none"
    );
    let cell = &mut r.targets[0].cells[0];
    cell.limits.push(super::super::LimitNote {
        check: "net.core.somaxconn".into(),
        observed: "128".into(),
        needed: "4096".into(),
        fix: Some("sysctl -w net.core.somaxconn=4096".into()),
    });
    let line = cell.limits_line().unwrap();
    assert!(
        line.ends_with("net.core.somaxconn 128, needs 4096: sysctl -w net.core.somaxconn=4096"),
        "{line}"
    );
    assert!(crate::shootout::to_markdown(&r).contains(&line));
    assert!(to_html(&r).contains(&line));
    let back = ShootoutResults::from_json(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(
        back.targets[0].cells[0].limits,
        r.targets[0].cells[0].limits
    );
}

#[test]
fn utc_dates() {
    for (unix_s, want) in [
        (0, "1970-01-01 00:00 UTC"),
        (59, "1970-01-01 00:00 UTC"),
        (86_399, "1970-01-01 23:59 UTC"),
        (951_782_400, "2000-02-29 00:00 UTC"),
        (1_795_378_759, "2026-11-22 20:19 UTC"),
        (4_107_542_400, "2100-03-01 00:00 UTC"),
    ] {
        assert_eq!(utc(unix_s), want, "{unix_s}");
    }
}
