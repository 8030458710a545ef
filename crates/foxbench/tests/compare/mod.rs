//! `foxbench compare` end to end: the committed runs, runs edited to a known shift, real
//! `foxbench load --json` repeats, and the exit codes a CI gate relies on.

use super::*;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn committed() -> String {
    root()
        .join("bench/runs/2026-11-22-shootout/results.json")
        .to_str()
        .unwrap()
        .into()
}

fn fixture() -> String {
    root()
        .join("crates/report/tests/data/results.json")
        .to_str()
        .unwrap()
        .into()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("foxbench-compare-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The committed run cut to one cell (avatar c10) with five repeats, req/s scaled by
/// `scale` and spread ±2%, written to `dir/name`.
fn edited(dir: &Path, name: &str, scale: f64, noise: [f64; 5]) -> String {
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(committed()).unwrap()).unwrap();
    let targets = v["targets"].as_array_mut().unwrap();
    targets.truncate(1);
    let cells = targets[0]["cells"].as_array_mut().unwrap();
    cells.truncate(1);
    let template = cells[0]["repeats"][0].clone();
    cells[0]["repeats"] = noise
        .iter()
        .map(|k| {
            let mut r = template.clone();
            r["rps"] = serde_json::json!(100_000.0 * scale * k);
            r
        })
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    path.to_str().unwrap().into()
}

const NOISE: [f64; 5] = [0.98, 1.01, 1.0, 1.02, 0.99];
const SHUFFLED: [f64; 5] = [1.0, 0.99, 1.02, 0.98, 1.01];

fn compare_schema() -> jsonschema::Validator {
    let text = include_str!("../../../../schemas/compare.schema.json");
    jsonschema::validator_for(&serde_json::from_str::<Value>(text).unwrap()).unwrap()
}

#[test]
fn the_committed_runs_compare_and_a_hardware_change_leads() {
    let (bench, old) = (committed(), fixture());
    let o = run(&["compare", &bench, &old]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.starts_with("warning: different hardware (nproc: 2 → 1)"),
        "{text}"
    );
    assert!(text.contains("\n  suite.quick: false → true\n"), "{text}");
    assert!(text.contains(" without a verdict (α = 0.05"), "{text}");
    // --same-machine refuses it: exit 2, one line, nothing on stdout.
    usage_error(
        &["compare", "--same-machine", &bench, &old],
        "--same-machine: the runs were measured on different hardware: nproc: 2 → 1",
    );
    // With itself: the same machine, nothing changed.
    let o = run(&[
        "compare",
        "--same-machine",
        "--alpha",
        "0.1",
        &bench,
        &bench,
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(text.starts_with("protocol: identical\n"), "{text}");
    assert!(text.contains("\n0 regressions, 0 improvements, "), "{text}");
}

#[test]
fn fail_on_exits_1_for_a_significant_regression_and_names_the_cell() {
    let dir = tmp("gate");
    let a = edited(&dir, "a.json", 1.0, NOISE);
    let b = edited(&dir, "b.json", 0.8, SHUFFLED);
    let o = run(&["compare", "--fail-on", "req/s<-10%,p99>+20%", &a, &b]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert_eq!(
        err.trim_end(),
        "foxbench: fail-on: avatar c10 req/s: -20.0% (p=0.008) breaks req/s<-10%"
    );
    assert!(
        out.contains("\n1 regression, 0 improvements, 3 unchanged"),
        "{out}"
    );
    // Within the limit, or an unwatched figure: exit 0.
    for gate in ["req/s<-25%", "cpu/req>+10%"] {
        let o = run(&["compare", "--fail-on", gate, &a, &b]);
        assert_eq!(o.status.code(), Some(0), "{gate}");
    }
    // Identical runs pass any gate.
    let o = run(&["compare", "--fail-on", "req/s<-0%", &a, &a]);
    assert_eq!(o.status.code(), Some(0));
    // Two repeats a side: the gate cannot judge, which is a setup error, not a pass.
    let (a3, b3) = (edited(&dir, "a3.json", 1.0, NOISE), &b);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&a3).unwrap()).unwrap();
    v["targets"][0]["cells"][0]["repeats"]
        .as_array_mut()
        .unwrap()
        .truncate(2);
    std::fs::write(&a3, serde_json::to_vec(&v).unwrap()).unwrap();
    usage_error(
        &["compare", "--fail-on", "req/s<-10%", &a3, b3],
        "has enough repeats for a verdict",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_flags_are_one_line_and_exit_2() {
    let (a, b) = (committed(), fixture());
    for (gate, needle) in [
        // The CLI puts the flag in front of the library's message, on both paths: the
        // limits' parse, and the check against the kind of results.
        (
            "latency>+5%",
            "foxbench: --fail-on \"latency>+5%\": unknown figure \"latency\"",
        ),
        ("p99>20%", "needs a sign"),
        ("p99>+20", "needs the unit %"),
        ("req/s", "give a figure, < or >, and a signed percentage"),
        (
            "p50>+5%",
            "foxbench: --fail-on \"p50>+5%\": p50 is not compared in shootout results",
        ),
    ] {
        usage_error(&["compare", "--fail-on", gate, &a, &b], needle);
    }
    usage_error(&["compare", "--alpha", "1.5", &a, &b], "--alpha 1.5");
    usage_error(&["compare", &a, &b, &a], "give BASE NEW, or several files");
    usage_error(&["compare", &a], "give BASE NEW");
    usage_error(
        &["compare", "--json", "--markdown", &a, &b],
        "cannot be used with",
    );
    usage_error(
        &["compare", &a, "/nonexistent.json"],
        "cannot read /nonexistent.json",
    );
}

#[test]
fn json_and_markdown_outputs() {
    let dir = tmp("formats");
    let a = edited(&dir, "a.json", 1.0, NOISE);
    let b = edited(&dir, "b.json", 0.8, SHUFFLED);
    let o = run(&["compare", "--json", &a, "--", &b, &b]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let errors: Vec<String> = compare_schema()
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(v["schema"], "foxbench.compare/1");
    assert_eq!(
        (v["base_files"].as_u64(), v["new_files"].as_u64()),
        (Some(1), Some(2))
    );
    let rps = &v["rows"][0];
    assert_eq!(
        (rps["figure"].as_str(), rps["verdict"].as_str()),
        (Some("req/s"), Some("regression"))
    );
    assert_eq!(rps["new"]["n"], 10);
    let o = run(&["compare", "--markdown", &a, &b]);
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains("| req/s | base | new | change | p | n |"),
        "{md}"
    );
    assert!(
        md.contains("**1 regression, 0 improvements, 3 unchanged**"),
        "{md}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn load_repeats_compare() {
    let s = redirect_server();
    let dir = tmp("load");
    let mut files = Vec::new();
    for i in 0..3 {
        let f = dir.join(format!("l{i}.json"));
        let o = run(&[
            "load",
            "-q",
            "-n",
            "300",
            "-c",
            "2",
            "-t",
            "1",
            "--json",
            f.to_str().unwrap(),
            &s.url(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        files.push(f.to_str().unwrap().to_string());
    }
    let mut args: Vec<&str> = vec!["compare", "--alpha", "0.1"];
    args.extend(files.iter().map(String::as_str));
    args.push("--");
    args.extend(files.iter().map(String::as_str));
    let o = run(&args);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        text.starts_with("note: load results do not record the machine"),
        "{text}"
    );
    for figure in ["req/s", "p50", "p90", "p99", "p99.9"] {
        assert!(text.contains(&format!("\n{figure} ")), "{figure}: {text}");
    }
    // The same files on both sides: nothing changed.
    assert!(
        text.contains("\n0 regressions, 0 improvements, 5 unchanged"),
        "{text}"
    );
    // Load results cannot show they ran on one machine; mixing kinds is refused.
    args.insert(1, "--same-machine");
    usage_error(&args, "load results do not record the machine");
    usage_error(&["compare", &files[0], &committed()], "are mixed");
    std::fs::remove_dir_all(&dir).unwrap();
}
