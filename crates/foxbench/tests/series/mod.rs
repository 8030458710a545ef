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
