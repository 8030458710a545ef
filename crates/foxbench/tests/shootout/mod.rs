//! `foxbench shootout`, `report` and `compare` end to end: real targets built and started
//! by the binary, targets written to misbehave, and the process table checked afterwards.

use super::*;
use std::path::{Path, PathBuf};

mod capacity;
mod http2;
mod http3;
mod pool;
mod postgres;
mod production;
mod runner;
mod services;
mod waiting;

pub(crate) use runner::{leftovers, Cache, Running, Shootout};

fn faulty_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/faulty")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("foxbench-shootout-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn shootout_schema() -> jsonschema::Validator {
    let text = include_str!("../../../../schemas/shootout.schema.json");
    let schema: Value = serde_json::from_str(text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

/// Reads results.json, validates it against the committed schema, and checks that every
/// repeat accounts for each request exactly once.
#[track_caller]
fn results(dir: &Path) -> Value {
    let text = std::fs::read(dir.join("results.json")).expect("results.json written");
    let v: Value = serde_json::from_slice(&text).unwrap();
    let errors: Vec<String> = shootout_schema()
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .take(5)
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    for t in v["targets"].as_array().unwrap() {
        for c in t["cells"].as_array().unwrap() {
            for r in c["repeats"].as_array().unwrap() {
                let q = &r["requests"];
                let n = |k: &str| q[k].as_u64().unwrap();
                assert_eq!(
                    n("sent"),
                    n("ok") + n("failed_status") + n("errors") + n("in_flight"),
                    "{q}"
                );
            }
        }
    }
    v
}

pub(super) fn results_of(dir: &Path) -> Value {
    results(dir)
}

pub(super) fn target_of<'a>(v: &'a Value, name: &str) -> &'a Value {
    target(v, name)
}

fn target<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name}"))
}

/// `foxbench shootout SUITE --root . --out OUT --cache OUT/cache EXTRA` run in `dir` to its
/// end, its output captured; no target may outlive it.
#[track_caller]
pub(super) fn run_shootout(dir: &Path, suite: &str, out: &Path, extra: &[&str]) -> Output {
    Shootout::new(suite, out)
        .dir(dir)
        .root(".")
        .args(extra)
        .run()
}

/// As [`run_shootout`], in a network namespace of its own ([`Shootout::alone`]).
#[track_caller]
pub(super) fn run_shootout_alone(dir: &Path, suite: &str, out: &Path, extra: &[&str]) -> Output {
    Shootout::new(suite, out)
        .dir(dir)
        .root(".")
        .args(extra)
        .alone()
        .run()
}

#[test]
fn misbehaving_targets_are_reported_and_none_survives() {
    let out = tmp("faulty");
    let o = run_shootout(&faulty_dir(), "suite.toml", &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "failures are exit 1: {err}");

    let v = results(&out);
    let outcome = |n: &str| target(&v, n)["outcome"].as_str().unwrap().to_string();
    let message = |n: &str| target(&v, n)["message"].as_str().unwrap_or("").to_string();
    assert_eq!(outcome("good"), "measured", "{err}");
    assert_eq!(outcome("fails-to-build"), "build-failed");
    assert!(
        message("fails-to-build").contains("expected declaration"),
        "{}",
        message("fails-to-build")
    );
    assert_eq!(outcome("never-ready"), "start-failed");
    assert!(
        message("never-ready").contains("not ready after"),
        "{}",
        message("never-ready")
    );
    assert_eq!(outcome("answers-wrongly"), "verify-failed");
    assert!(
        message("answers-wrongly").contains("http://wrong.example/"),
        "{}",
        message("answers-wrongly")
    );
    assert!(
        target(&v, "answers-wrongly")["cells"]
            .as_array()
            .unwrap()
            .is_empty(),
        "a wrong target takes no load"
    );
    assert_eq!(outcome("crashes"), "crashed");
    assert!(
        message("crashes").contains("exit status: 3"),
        "{}",
        message("crashes")
    );
    assert_eq!(outcome("ignores-sigterm"), "measured");
    assert!(
        message("ignores-sigterm").contains("SIGKILL"),
        "{}",
        message("ignores-sigterm")
    );
    assert_eq!(outcome("forks-a-daemon"), "measured");
    assert!(
        message("forks-a-daemon").contains("1 process of its own"),
        "{}",
        message("forks-a-daemon")
    );
    assert_eq!(outcome("missing-toolchain"), "skipped");
    assert!(
        message("missing-toolchain").contains("install gfortran-foxbench"),
        "{}",
        message("missing-toolchain")
    );
    // The skip is one line of progress, and never fatal: later targets ran.
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("gfortran-foxbench"))
            .count(),
        1,
        "{err}"
    );

    // The good target's cell is complete: repeats, probe series, diagnosis.
    let cell = &target(&v, "good")["cells"][0];
    assert_eq!(cell["status"], "measured");
    assert_eq!(cell["repeats"].as_array().unwrap().len(), 2);
    assert!(cell["summary"]["rps_median"].as_f64().unwrap() > 0.0);
    assert!(
        cell["summary"]["server_cpu_us_per_request"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(cell["summary"]["rss_peak_bytes"].as_u64().unwrap() > 1 << 20);
    assert!(cell["diagnosis"]["bottleneck"].is_string());
    assert!(!cell["repeats"][0]["series"].as_array().unwrap().is_empty());
    assert!(target(&v, "good")["startup_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(target(&v, "good")["verify"][0]["images_seen"], 3);

    // Builds run on every CPU; the target runs on the server CPUs only (the second half,
    // or the same CPU on a one-CPU machine).
    let ours = std::fs::read_to_string("/proc/self/status").unwrap();
    let ours = ours
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list"))
        .unwrap()
        .to_string();
    let build_log = std::fs::read_to_string(out.join("logs/good.build.log")).unwrap();
    assert_eq!(build_log.trim(), ours.trim(), "a build may use every CPU");
    let server = &v["protocol"]["server_cpus"];
    let start_log = std::fs::read_to_string(out.join("logs/good.log")).unwrap();
    let listed: Vec<String> = server
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert!(
        start_log.contains(&format!("CPUs [{}]", listed.join(", "))),
        "{start_log} vs {server}"
    );

    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("| good |") && md.contains("build-failed"),
        "{md}"
    );
    assert!(std::fs::read_to_string(out.join("report.html"))
        .unwrap()
        .contains("forks-a-daemon"));
    std::fs::remove_dir_all(&out).unwrap();
}

/// The svg scenario (issue 14) against rows of one parameterized target that answer it
/// wrongly, each named in its verification, and a target that does not implement it.
#[test]
fn svg_verification_names_the_wrong_answer() {
    let out = tmp("svg");
    let o = run_shootout(&faulty_dir(), "svg.toml", &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    // Each target answers the redirect right, so each is measured: a wrong svg answer
    // excludes only the svg cells.
    assert!(o.status.success(), "{err}");
    let v = results(&out);
    let svg = |name: &str| -> (Value, Vec<Value>) {
        let t = target(&v, name);
        assert_eq!(t["outcome"], "measured", "{name}: {err}");
        let verify = t["verify"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["scenario"] == "svg")
            .cloned()
            .unwrap_or(Value::Null);
        let cells = t["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["scenario"] == "svg")
            .cloned()
            .collect();
        (verify, cells)
    };
    let (good, cells) = svg("fox[mode=good]");
    assert_eq!(good["passed"], true, "{good}");
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0]["status"], "measured");
    // Requests answered (CPU per request may round to 0 on a loaded machine in 300 ms).
    assert!(
        cells[0]["summary"]["rps_median"].as_f64().unwrap() > 0.0,
        "{}",
        cells[0]["summary"]
    );
    let t = target(&v, "fox[mode=good]");
    assert_eq!(t["base"], "fox");
    assert_eq!(
        t["params"],
        serde_json::json!([{"name": "mode", "value": "good"}])
    );
    for (row, want) in [
        (
            "fox[mode=svg-wrong-colour]",
            "body does not contain \"fill=\\\"#",
        ),
        (
            "fox[mode=svg-wrong-type]",
            "Content-Type: \"text/html\" does not match",
        ),
        ("fox[mode=svg-malformed]", "body is not well-formed XML"),
    ] {
        let (verify, cells) = svg(row);
        assert_eq!(verify["passed"], false, "{row}: {verify}");
        let detail = verify["checks"][0]["detail"].as_str().unwrap_or("");
        assert!(
            detail.starts_with("GET /") && detail.contains(".svg: ") && detail.contains(want),
            "{row}: {detail}"
        );
        assert!(
            err.lines()
                .any(|l| l.contains("verify svg: response: GET /") && l.contains(want)),
            "{row}: one line names it: {err}"
        );
        assert_eq!(cells.len(), 1, "{row}");
        assert_eq!(cells[0]["status"], "excluded", "{row}");
    }
    // Not implemented: one line, recorded, no svg verification or cell.
    let (verify, cells) = svg("redirect-only");
    assert!(verify.is_null() && cells.is_empty());
    assert_eq!(
        target(&v, "redirect-only")["skipped_scenarios"],
        serde_json::json!(["svg"])
    );
    assert_eq!(
        err.lines().filter(|l| l.contains("svg: skipped")).count(),
        1,
        "{err}"
    );
    // Logs per row, under a file name without brackets or spaces.
    assert!(out.join("logs/fox_mode=svg-malformed_.log").exists());
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("### svg against redirect: server CPU per request"),
        "{md}"
    );
    assert!(md.contains("| fox[mode=good] | c4 |"), "{md}");
    assert!(
        md.contains("### fox: rows by parameter at redirect c4"),
        "{md}"
    );
    assert!(md.contains("**failed** (response: GET /"), "{md}");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn ctrl_c_keeps_what_was_measured_and_leaves_nothing() {
    let out = tmp("ctrlc");
    let suite = out.join("suite.toml");
    let text = std::fs::read_to_string(faulty_dir().join("suite.toml")).unwrap();
    // Only the good target, with long levels.
    let head = text
        .split("[[target]]")
        .next()
        .unwrap()
        .replace("duration = \"400ms\"", "duration = \"30s\"");
    std::fs::write(&suite, format!("{head}[[target]]\nname = \"good\"\nlanguage = \"Python\"\ndir = \".\"\nstart = \"python3 fox.py {{port}} {{images}} ignore-term\"\n")).unwrap();
    let mut run = Shootout::new(&suite, &out)
        .root(faulty_dir())
        .cache(Cache::Default)
        .spawn();
    // Wait until the first repeat is under way. foxbench writes nothing while a level runs,
    // so its threads tell: every load run (the warm-up's, each repeat's) starts fresh
    // `foxbench-w<n>` workers. A warm-up here is one 200 ms slice, ended by its own clock,
    // and a repeat lasts 30 s, so a worker alive for 2 s belongs to the first repeat, which
    // by then has answered requests against this keep-alive target.
    let end = Instant::now() + Duration::from_secs(60);
    let mut first_seen: std::collections::HashMap<u32, Instant> = Default::default();
    loop {
        let now = Instant::now();
        let workers = runner::load_workers(run.pid());
        first_seen.retain(|tid, _| workers.contains(tid));
        for tid in workers {
            first_seen.entry(tid).or_insert(now);
        }
        if first_seen
            .values()
            .any(|&seen| now - seen >= Duration::from_secs(2))
        {
            break;
        }
        let log = || std::fs::read_to_string(out.join("logs/good.log")).unwrap_or_default();
        assert!(
            run.is_running(),
            "foxbench exited before its first repeat; target log:\n{}",
            log()
        );
        assert!(
            now < end,
            "no load worker ran for 2 s within 60 s: the first repeat never got under way; \
             target log:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    run.interrupt();
    let stopped = Instant::now();
    let o = run.wait_with_output();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stopped.elapsed() < Duration::from_secs(15),
        "stopped promptly"
    );
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    let v = results(&out);
    assert_eq!(v["interrupted"], true);
    let t = target(&v, "good");
    assert_eq!(t["outcome"], "interrupted", "{stderr}");
    let cell = &t["cells"][0];
    assert_eq!(cell["status"], "interrupted");
    let reps = cell["repeats"].as_array().unwrap();
    assert_eq!(reps.len(), 1, "the interrupted repeat is kept");
    assert!(reps[0]["requests"]["ok"].as_u64().unwrap() > 0);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_bad_suite_file_names_the_line_and_key() {
    let out = tmp("badsuite");
    let suite = out.join("bad.toml");
    let text = std::fs::read_to_string(faulty_dir().join("suite.toml")).unwrap();
    std::fs::write(
        &suite,
        text.replacen("duration = \"400ms\"", "duration = \"four\"", 1),
    )
    .unwrap();
    let s = suite.to_str().unwrap().to_string();
    usage_error(
        &["shootout", &s],
        "bad.toml:7: key `plan.duration`: invalid duration",
    );
    std::fs::write(
        &suite,
        text.replacen("start = \"python3", "strat = \"python3", 1),
    )
    .unwrap();
    usage_error(
        &["shootout", &s],
        "key `target[0].strat`: unknown field `strat`",
    );
    std::fs::write(
        &suite,
        text.replacen("{images} good\"", "{images} {param.mode}\"", 1),
    )
    .unwrap();
    usage_error(
        &["shootout", &s],
        "bad.toml:28: key `target[0].start`: unknown {param.mode} in \"python3 fox.py {port} {images} {param.mode}\": this target has no params",
    );
    std::fs::write(&suite, "name = \"x\"\n[[target]\n").unwrap();
    usage_error(&["shootout", &s], "bad.toml:2:");
    usage_error(
        &["shootout", "/nonexistent/suite.toml"],
        "cannot read suite file /nonexistent/suite.toml",
    );
    usage_error(&["shootout", "--only", "nope"], "no target named \"nope\"");
    usage_error(&["shootout", "--client-cpus", "x"], "--client-cpus");
    usage_error(
        &["report", "/nonexistent.json"],
        "cannot read /nonexistent.json",
    );
    // A load result is rendered as its own page (tests/series); a broken one is one line.
    std::fs::write(out.join("load.json"), "{\"schema\": \"foxbench.load/1\"}").unwrap();
    usage_error(
        &["report", out.join("load.json").to_str().unwrap()],
        "does not match foxbench.load/1: missing field",
    );
    std::fs::remove_dir_all(&out).unwrap();
}

/// The CI's end-to-end run: avatar, the C floor and a JIT runtime (Node), in quick mode,
/// with the built-in suite; then `report` and `compare` on what it wrote.
#[test]
fn quick_default_suite_avatar_c_and_node() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = tmp("quick");
    let o = Shootout::builtin(&out)
        .dir(&root)
        .cache(Cache::Default)
        .args(["--quick", "--only", "avatar,c-epoll,node-http"])
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let v = results(&out);
    assert_eq!(v["suite"]["source"], "built-in");
    assert_eq!(v["suite"]["quick"], true);
    let p = &v["protocol"];
    assert!(p["sysctl"]["net.core.somaxconn"].is_string() && p["cpu_model"].is_string());
    assert!(
        p["toolchains"]["node"].as_str().unwrap().starts_with('v'),
        "{}",
        p["toolchains"]
    );
    for name in ["avatar", "c-epoll", "node-http"] {
        let t = target(&v, name);
        assert_eq!(t["outcome"], "measured", "{name}: {err}");
        assert_eq!(t["verify"][0]["passed"], true, "{name}");
        assert_eq!(t["verify"][0]["images_seen"], 21, "{name}");
        assert_eq!(t["verify"][0]["keepalive"], true, "{name}");
        for c in t["cells"].as_array().unwrap() {
            assert_eq!(c["status"], "measured", "{name} {}", c["level"]);
            assert!(c["diagnosis"]["bottleneck"].is_string());
        }
    }
    assert!(
        target(&v, "avatar")["build"]["artifact_bytes"]
            .as_u64()
            .unwrap()
            > 100_000
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("Requests per second") && stdout.contains("| node-http |"),
        "{stdout}"
    );

    // `report` regenerates the same Markdown from results.json.
    let again = tmp("quick-report");
    let r = run(&[
        "report",
        out.join("results.json").to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        std::fs::read_to_string(again.join("summary.md")).unwrap(),
        std::fs::read_to_string(out.join("summary.md")).unwrap()
    );
    // `compare` of a fresh run with itself: one repeat a side gives no verdict, but it
    // compares without error, and with the committed run too.
    let j = out.join("results.json");
    let c = run(&["compare", j.to_str().unwrap(), j.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&c.stdout);
    assert!(c.status.success(), "{text}");
    assert!(
        text.starts_with("protocol: identical\n")
            && text.contains("\n0 regressions, 0 improvements, "),
        "{text}"
    );
    let committed = root.join("bench/runs/2026-11-22-shootout/results.json");
    let c = run(&["compare", committed.to_str().unwrap(), j.to_str().unwrap()]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_dir_all(&again).unwrap();
}

/// The svg scenario against real avatar, and the JVM rows of java-httpserver, in quick
/// mode with the built-in suite: every row and scenario measured.
#[test]
fn quick_svg_and_jvm_rows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = tmp("quick-svg");
    let o = Shootout::builtin(&out)
        .dir(&root)
        .cache(Cache::Default)
        .args(["--quick", "--only", "avatar,java-httpserver"])
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let v = results(&out);
    let avatar = target(&v, "avatar");
    let svg = avatar["verify"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["scenario"] == "svg")
        .expect("avatar verifies svg");
    assert_eq!(svg["passed"], true, "{svg}");
    assert_eq!(svg["keepalive"], true, "{svg}");
    let cell = avatar["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["scenario"] == "svg" && c["level"] == "c10")
        .expect("an svg cell at c10");
    assert_eq!(cell["status"], "measured");
    assert_eq!(
        cell["repeats"][0]["status"]["200"].as_u64().map(|n| n > 0),
        Some(true)
    );
    assert!(err.contains("  svg/redirect at c10: "), "{err}");
    // The plain row at every quick level, and each of the post's settings at c10.
    let names: Vec<&str> = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let rows: Vec<&&str> = names
        .iter()
        .filter(|n| n.starts_with("java-httpserver["))
        .collect();
    assert_eq!(rows.len(), 4, "{names:?}");
    for name in names.iter().filter(|n| n.starts_with("java-httpserver")) {
        let t = target(&v, name);
        assert_eq!(t["outcome"], "measured", "{name}: {err}");
        assert_eq!(t["skipped_scenarios"], serde_json::json!(["svg"]), "{name}");
        let levels: Vec<&str> = t["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["level"].as_str().unwrap())
            .collect();
        if *name == "java-httpserver" {
            assert_eq!(levels, ["c10", "c100", "ab"], "{name}");
        } else {
            assert_eq!(levels, ["c10"], "{name}");
            assert!(t["cells"][0]["summary"]["pss_peak_bytes"].as_u64().unwrap() > 0);
        }
    }
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("### java-httpserver: rows by parameter at redirect c10"),
        "{md}"
    );
    assert!(
        md.contains("| java-httpserver[jvm=-Xmx8m -XX:+UseG1GC] | -Xmx8m -XX:+UseG1GC |"),
        "{md}"
    );
    assert!(
        md.contains("| avatar | c10 |"),
        "svg against redirect: {md}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn compare_catches_a_regression_in_a_fresh_run() {
    // A real run of the good fixture target with 5 repeats; a copy with every repeat's
    // req/s scaled below half the lowest one stands for a regression (the only edited
    // figure), and the gate must catch it while the run compared with itself passes.
    let out = tmp("compare");
    let suite = std::fs::read_to_string(faulty_dir().join("suite.toml"))
        .unwrap()
        .replace("repeats = 2", "repeats = 5");
    assert!(suite.contains("repeats = 5"));
    std::fs::write(out.join("suite.toml"), suite).unwrap();
    let o = Shootout::new(out.join("suite.toml"), &out)
        .dir(&faulty_dir())
        .root(".")
        .cache(Cache::Default)
        .args(["--only", "good"])
        .run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut v = results(&out);
    let repeats = v["targets"][0]["cells"][0]["repeats"]
        .as_array_mut()
        .unwrap();
    let rps: Vec<f64> = repeats.iter().map(|r| r["rps"].as_f64().unwrap()).collect();
    // Halving each repeat is not enough on a loaded machine: a repeat slowed to half of
    // another makes the sides overlap (this test then failed with p=0.016, or passed the
    // gate). Scaled by min/max/2, every new repeat is below every old one: p is 2/252.
    let (min, max) = rps
        .iter()
        .fold((f64::MAX, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    for (r, x) in repeats.iter_mut().zip(&rps) {
        r["rps"] = serde_json::json!(x * min / max / 2.0);
    }
    let b = out.join("b.json");
    std::fs::write(&b, serde_json::to_vec(&v).unwrap()).unwrap();
    let a = out.join("results.json");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let c = run(&["compare", "--same-machine", "--fail-on", "req/s<-10%", a, b]);
    let err = String::from_utf8_lossy(&c.stderr);
    assert_eq!(c.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("foxbench: fail-on: good c4 req/s: -")
            && err.contains("% (p=0.008) breaks req/s<-10%"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&c.stdout).contains("\n1 regression, 0 improvements, "));
    let c = run(&["compare", "--same-machine", "--fail-on", "req/s<-10%", a, a]);
    assert_eq!(
        c.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&c.stderr)
    );
    std::fs::remove_dir_all(&out).unwrap();
}
