//! `--slo` and `--slo-abort` end to end: verdicts in the text and JSON, exit codes 0, 1 and 2.

use std::time::{Duration, Instant};

use super::support::{redirect_server, Server};
use super::{result, run, usage_error};

/// Runs `foxbench load -n 300` with `slo` against `url`; returns the exit code and the JSON.
#[track_caller]
fn load_with(slo: &str, url: &str, extra: &[&str]) -> (Option<i32>, serde_json::Value) {
    let mut args = vec![
        "load", "-n", "300", "-c", "2", "-t", "1", "--json", "-", "--slo", slo,
    ];
    args.extend_from_slice(extra);
    args.push(url);
    let out = run(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.stdout.is_empty(), "{slo}: no JSON; stderr {err}");
    (out.status.code(), result(&out.stdout))
}

fn verdicts(v: &serde_json::Value) -> Vec<(String, bool)> {
    v["slo"]["clauses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["clause"].as_str().unwrap().to_string(),
                c["passed"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_clause_passes_exit_0() {
    let s = redirect_server();
    let (code, v) = load_with("p99<60s,p99.9<=60s,errors<=0%,rps>=1", &s.url(), &[]);
    assert_eq!(code, Some(0), "{}", v["slo"]);
    assert_eq!(v["slo"]["passed"], true);
    assert!(v["slo"].get("aborted").is_none());
    let c = &v["slo"]["clauses"];
    assert_eq!(c.as_array().unwrap().len(), 4);
    assert_eq!(c[0]["metric"], "p99");
    assert_eq!(c[0]["unit"], "us");
    assert_eq!(c[0]["threshold"], 60e6);
    let p99 = c[0]["observed"].as_f64().unwrap();
    assert!(p99 > 0.0, "{c}");
    // The observed p99 is the run's own p99, read from the same histogram.
    let reported = v["latency"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["percentile"] == 99.0)
        .unwrap()["value_us"]
        .as_f64()
        .unwrap();
    assert_eq!(p99, reported);
    assert_eq!(c[2]["observed"], 0.0);
    assert_eq!(c[2]["unit"], "%");
    assert!(c[3]["observed"].as_f64().unwrap() > 1.0);
}

#[test]
fn a_failed_clause_exits_1_and_says_which() {
    let s = redirect_server();
    // No loopback round trip through a thread per connection takes under a microsecond.
    let (code, v) = load_with("errors<=0%,p50<1us,rps>=1000000000", &s.url(), &[]);
    assert_eq!(code, Some(1), "{}", v["slo"]);
    assert_eq!(v["slo"]["passed"], false);
    assert_eq!(
        verdicts(&v),
        [
            ("errors<=0%".to_string(), true),
            ("p50<1us".to_string(), false),
            ("rps>=1000000000".to_string(), false)
        ]
    );
    assert!(v["slo"]["clauses"][1]["observed"].as_f64().unwrap() >= 1.0);
}

#[test]
fn lt_and_le_differ_at_the_threshold() {
    let s = redirect_server();
    let (code, v) = load_with("errors<0%", &s.url(), &[]);
    assert_eq!(
        (code, verdicts(&v)[0].1),
        (Some(1), false),
        "0 < 0 is false"
    );
    let (code, _) = load_with("errors<=0%", &s.url(), &[]);
    assert_eq!(code, Some(0), "0 <= 0 holds");
}

#[test]
fn the_text_report_prints_each_verdict() {
    let s = redirect_server();
    let out = run(&[
        "load",
        "-n",
        "50",
        "-c",
        "1",
        "-t",
        "1",
        "--slo",
        "p99<60s,rps>=1000000000",
        &s.url(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SLO:           FAILED"), "{text}");
    assert!(text.contains("pass   p99<60s"), "{text}");
    assert!(text.contains("FAIL   rps>=1000000000"), "{text}");
    // Quiet runs still say which clause failed, on stderr.
    let out = run(&[
        "load",
        "-q",
        "-n",
        "50",
        "-c",
        "1",
        "-t",
        "1",
        "--slo",
        "p99<60s,rps>=1000000000",
        &s.url(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    // The verdict first; warnings (saturation on a loaded machine, the kernel's counters)
    // may follow it.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.lines().next(),
        Some("foxbench: --slo failed: rps>=1000000000"),
        "{err}"
    );
    assert!(
        err.lines()
            .skip(1)
            .all(|l| l.starts_with("foxbench: warning: ")),
        "{err}"
    );
}

#[test]
fn bad_clauses_are_usage_errors() {
    let s = redirect_server();
    let url = s.url();
    for (slo, needle) in [
        ("latency<5ms", "unknown metric \"latency\""),
        ("p99<5", "needs a time unit"),
        ("errors<1", "needs the unit %"),
        ("rps>=9.5k", "plain number"),
        ("p99=5ms", "an operator (<, <=, >, >=)"),
        (
            "p99[service]<2ms",
            "[service] needs the open model's service-time histogram",
        ),
    ] {
        usage_error(&["load", "-n", "1", "--slo", slo, &url], needle);
    }
    usage_error(&["load", "-n", "1", "--slo-abort", &url], "--slo");
    assert_eq!(
        s.requests(),
        0,
        "a bad objective is refused before any request"
    );
}

#[test]
fn abort_on_errors_over_the_budget_of_n() {
    let s = Server::spawn(|mut c| {
        while c.next_request().is_some() {
            if !c.send(b"HTTP/1.1 500 Internal\r\nContent-Length: 0\r\n\r\n") {
                return;
            }
        }
    });
    // A budget of 1% of a million: 10,000 failures, seconds of a 500 server's answers.
    let n = "1000000";
    let started = Instant::now();
    let out = run(&[
        "load",
        "-n",
        n,
        "-c",
        "2",
        "-t",
        "1",
        "--interval",
        "100ms",
        "--json",
        "-",
        "--slo",
        "rps>=1,errors<1%",
        "--slo-abort",
        &s.url(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&out.stdout);
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(v["requests"]["sent"].as_u64().unwrap() < 1_000_000);
    let aborted = v["slo"]["aborted"].as_str().unwrap();
    assert!(aborted.starts_with("errors<1%: "), "{aborted}");
    assert!(
        aborted.contains(" failed of 1000000 by the end of interval "),
        "{aborted}"
    );
    // Only the clause that stopped the run fails because of the stop.
    assert_eq!(verdicts(&v)[0], ("rps>=1".to_string(), true));
}

#[test]
fn abort_on_a_latency_clause_broken_in_one_interval() {
    // Every answer takes 30 ms: the first interval with a response breaks p99<10ms.
    let s = Server::spawn(|mut c| {
        while c.next_request().is_some() {
            std::thread::sleep(Duration::from_millis(30));
            if !c.send(super::support::REDIRECT) {
                return;
            }
        }
    });
    let out = run(&[
        "load",
        "-d",
        "60s",
        "-c",
        "2",
        "-t",
        "1",
        "--interval",
        "200ms",
        "--json",
        "-",
        "--slo",
        "p99<10ms",
        "--slo-abort",
        &s.url(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&out.stdout);
    assert!(
        v["elapsed_s"].as_f64().unwrap() < 30.0,
        "stopped early: {}",
        v["elapsed_s"]
    );
    let aborted = v["slo"]["aborted"].as_str().unwrap();
    assert!(aborted.starts_with("p99<10ms: interval "), "{aborted}");
    assert!(aborted.contains(" had p99 "), "{aborted}");
    assert_eq!(v["slo"]["clauses"][0]["passed"], false);
}

/// In the open model a clause may name the service-time histogram: its observed value is
/// that histogram's percentile, never above the corrected latency's.
#[test]
fn service_clause_in_the_open_model() {
    let s = redirect_server();
    let (code, v) = load_with("p99[service]<60s,p99<60s", &s.url(), &["-R", "1000"]);
    assert_eq!(code, Some(0), "{}", v["slo"]);
    let c = &v["slo"]["clauses"];
    let service = c[0]["observed"].as_f64().unwrap();
    let corrected = c[1]["observed"].as_f64().unwrap();
    assert!(service > 0.0 && service <= corrected, "{c}");
    assert!(v["open"]["service"]["hdr_base64"].is_string());
}

/// A bad objective is worded by whoever gave it: the library names no flag, the CLI puts
/// `--slo` or `--find-max` in front, and a suite names its capacity level.
#[test]
fn an_objective_error_names_the_flag_or_the_suite_key_that_gave_it() {
    let lib = "p99=10ms"
        .parse::<report::slo::Slo>()
        .unwrap_err()
        .to_string();
    assert!(lib.starts_with("\"p99=10ms\": give a metric"), "{lib}");
    assert!(!lib.contains("--"), "the library names no flag: {lib}");
    let url = "http://127.0.0.1:9/";
    for (args, line) in [
        (
            vec!["load", "-n", "1", "--slo", "p99=10ms", url],
            format!("foxbench: --slo {lib}"),
        ),
        (
            vec!["load", "--find-max", "p99=10ms", url],
            format!("foxbench: --find-max {lib}"),
        ),
        (
            vec!["load", "-n", "1", "--slo", " , ", url],
            "foxbench: --slo is empty: give clauses such as 'p99<5ms,errors<0.1%,rps>=9500'"
                .to_string(),
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim_end(),
            line,
            "{args:?}"
        );
    }
    // The suite's capacity level, in the suite's terms.
    let suite = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites/avatar.toml"),
    )
    .unwrap()
    .replacen("capacity = \"p99<10ms\"", "capacity = \"p99=10ms\"", 1);
    let path = std::env::temp_dir().join(format!("foxbench-slo-suite-{}.toml", std::process::id()));
    std::fs::write(&path, suite).unwrap();
    let out = run(&["shootout", "--list", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("capacity: {lib}")), "{err}");
    assert!(!err.contains("--slo"), "{err}");
}
