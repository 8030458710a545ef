//! The per-interval series end to end: errors by kind per interval, `--hlog` setup errors,
//! and `foxbench report` on a load result.

use std::path::PathBuf;

use super::support::{redirect_server, Server};
use super::{result, run, usage_error};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("series-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn intervals_carry_errors_by_kind_summing_to_the_run() {
    // Every other connection is closed after its request is read: read errors.
    let s = Server::spawn(|mut c| {
        let mut n = 0;
        while c.next_request().is_some() {
            n += 1;
            if n % 2 == 0 || !c.send(super::support::REDIRECT) {
                return;
            }
        }
    });
    let out = run(&[
        "load",
        "-n",
        "400",
        "-c",
        "2",
        "-t",
        "1",
        "--interval",
        "100ms",
        "--json",
        "-",
        &s.url(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v = result(&out.stdout);
    let errors = &v["errors"];
    assert!(errors["read"].as_u64().unwrap() > 0, "{errors}");
    for kind in ["connect", "write", "read", "parse", "timeout", "tls"] {
        let per_interval: u64 = v["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["errors_by_kind"][kind].as_u64().unwrap())
            .sum();
        assert_eq!(per_interval, errors[kind].as_u64().unwrap(), "{kind}");
    }
    for i in v["intervals"].as_array().unwrap() {
        let k = &i["errors_by_kind"];
        let sum: u64 = ["connect", "write", "read", "parse", "timeout", "tls"]
            .iter()
            .map(|x| k[*x].as_u64().unwrap())
            .sum();
        assert_eq!(sum, i["errors"].as_u64().unwrap(), "{i}");
    }
}

#[test]
fn an_hlog_that_cannot_be_created_is_a_setup_error() {
    let s = redirect_server();
    usage_error(
        &[
            "load",
            "-n",
            "5",
            "--hlog",
            "/nonexistent-dir/x.hlog",
            &s.url(),
        ],
        "cannot create --hlog /nonexistent-dir/x.hlog",
    );
}

#[test]
fn report_renders_a_load_result_as_its_own_page() {
    let s = redirect_server();
    let dir = scratch("report");
    let json = dir.join("run.json");
    let out = run(&[
        "load",
        "-q",
        "-n",
        "200",
        "-c",
        "2",
        "-t",
        "1",
        "--json",
        json.to_str().unwrap(),
        "--slo",
        "p99<60s",
        &s.url(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let out = run(&["report", json.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.join("run.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    for id in ["chart-spectrum", "chart-rate", "chart-latency", "slo"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(!dir.join("summary.md").exists(), "not taken for a shootout");
    // --out puts it elsewhere, under the same name.
    let other = dir.join("out");
    let out = run(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        other.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(other.join("run.html").exists());
    // Neither kind: one line, exit 2.
    std::fs::write(dir.join("x.json"), r#"{"schema":"other/1"}"#).unwrap();
    usage_error(
        &["report", dir.join("x.json").to_str().unwrap()],
        "expected \"foxbench.shootout/1\" (foxbench shootout) or \"foxbench.load/1\"",
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A run of more intervals than the series keeps (3,500 of 4 ms against 2,000 + 500
/// rows): the JSON stays within the bound, says its resolutions, and its rows still add up
/// to the run, exactly.
#[test]
fn a_long_series_is_bounded_and_still_adds_up() {
    let s = redirect_server();
    let dir = scratch("bounded");
    let json = dir.join("run.json");
    let out = run(&[
        "load",
        "-q",
        "-t",
        "1",
        "-c",
        "2",
        "-R",
        "200",
        "--interval",
        "4ms",
        "-d",
        "14s",
        "--json",
        json.to_str().unwrap(),
        &s.url(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&std::fs::read(&json).unwrap());
    let rows = v["intervals"].as_array().unwrap();
    assert!(rows.len() <= 2_500, "{} rows", rows.len());
    assert!(rows.len() >= 2_000, "{} rows", rows.len());
    let sum = |k: &str| rows.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(
        sum("requests"),
        v["requests"]["completed"].as_u64().unwrap()
    );
    assert_eq!(sum("errors"), v["requests"]["errors"].as_u64().unwrap());
    let segments = v["interval_segments"].as_array().unwrap();
    assert!(segments.len() >= 2, "{segments:?}");
    let resolution = |s: &serde_json::Value| s["resolution_s"].as_f64().unwrap();
    assert!(resolution(&segments[0]) > resolution(segments.last().unwrap()));
    assert!((resolution(segments.last().unwrap()) - 0.004).abs() < 1e-9);
    // The newest 2,000 rows are single intervals, in order, without gaps.
    let newest = &rows[rows.len() - 2_000..];
    assert!(newest.iter().all(|r| r.get("span_intervals").is_none()));
    // Every row is a whole block of its span on the grid from the start.
    let mut next_s = 0.0;
    for r in rows {
        let span = r.get("span_intervals").map_or(1, |x| x.as_u64().unwrap());
        let start_s = r["start_s"].as_f64().unwrap();
        assert!((start_s - next_s).abs() < 1e-6, "a gap before {r}");
        let slot = (start_s / 0.004).round() as u64;
        assert_eq!(slot % span, 0, "{r}");
        next_s = start_s + r["duration_s"].as_f64().unwrap();
    }
}
