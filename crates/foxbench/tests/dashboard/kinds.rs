//! The dashboard's other kinds of run, in headless Chromium (`steps.py`): service time
//! beside the corrected latency in the open model, and the `--find-max` search's windows.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{python_with_websocket, scratch, start};
use crate::support::{Server, REDIRECT};

/// Chromium and a Python with `websocket-client`, or None (skipped loudly, failed in CI).
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = testkit::require(
        "chromium",
        &["/usr/bin/chromium"],
        "apt-get install chromium",
    )?;
    Some((chromium, python_with_websocket()?))
}

/// Starts `steps.py` on `steps` (written into `dir`).
fn browse(browser: &(PathBuf, PathBuf), dir: &Path, steps: &Value) -> Child {
    let file = dir.join("steps.json");
    std::fs::write(&file, steps.to_string()).unwrap();
    Command::new(&browser.1)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/dashboard/steps.py"
        ))
        .arg(&browser.0)
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// What `steps.py` saw.
#[track_caller]
fn seen(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "steps.py failed: {err}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"))
}

/// Answers redirects after 5 ms each: a closed-model run of one connection that does not
/// spin a core of a loaded machine.
fn slow_server() -> Server {
    Server::spawn(|mut c| {
        while c.next_request().is_some() {
            std::thread::sleep(Duration::from_millis(5));
            if !c.send(REDIRECT) {
                return;
            }
        }
    })
}

/// The latency chart's series labels and, per label, its points drawn (not null).
const LAT_SERIES: &str = "(() => { const u = window.foxbench.charts.lat;
  return u.series.slice(1).map((s, i) => [s.label, u.data[i + 1].filter(v => v != null).length]); })()";

/// The latency chart's series labels and, per label, the colour it is drawn in.
const LAT_STROKES: &str = "(() => { const u = window.foxbench.charts.lat;
  return u.series.slice(1).map((s, i) => [s.label, s.stroke(u, i + 1)]); })()";

/// Per interval drawn with both: corrected p99 minus service p99, µs (never below zero:
/// the corrected latency runs from when the request was due, the service time from when it
/// was sent).
const P99_GAPS: &str = "(() => { const u = window.foxbench.charts.lat;
  const at = l => u.series.findIndex(s => s.label === l);
  const c = u.data[at('p99')], s = u.data[at('service p99')];
  return c.map((v, i) => s[i] == null ? null : v - s[i]).filter(v => v != null); })()";

#[test]
fn the_open_model_draws_service_time_beside_the_corrected_latency_the_closed_model_one() {
    let Some(browser) = browser() else {
        return;
    };
    let dir = scratch("service");
    let s = slow_server();
    let common = [
        "--dashboard",
        "-t",
        "1",
        "-d",
        "120s",
        "--interval",
        "250ms",
    ];
    let open = start(&[&common[..], &["-c", "4", "-R", "100", "-q", &s.url()]].concat());
    let closed = start(&[&common[..], &["-c", "1", "-q", &s.url()]].concat());
    let points = |n: u32| format!("Number(document.body.getAttribute('data-points')) >= {n}");
    let steps = json!([
        {"open": open.url, "page": "open"},
        {"wait": format!("{} && Number(document.body.getAttribute('data-service-points')) >= 3", points(3)),
         "page": "open", "key": "open_ready", "s": 90},
        {"eval": LAT_SERIES, "page": "open", "key": "open_series"},
        {"eval": P99_GAPS, "page": "open", "key": "open_gaps"},
        {"eval": LAT_STROKES, "page": "open", "key": "open_strokes"},
        // The once-a-second gauges: the open model's spin is drawn under the CPU, apart.
        {"wait": "window.foxbench.gauges().length >= 2", "page": "open", "key": "open_gauges_ready", "s": 60},
        {"eval": "window.foxbench.gauges()", "page": "open", "key": "open_gauges"},
        {"eval": "window.foxbench.charts.cpu.series.slice(1).map(s => s.label)", "page": "open", "key": "cpu_series"},
        {"shot": dir.join("service-open.png"), "page": "open"},
        {"open": closed.url, "page": "closed"},
        {"wait": points(3), "page": "closed", "key": "closed_ready", "s": 90},
        {"eval": LAT_SERIES, "page": "closed", "key": "closed_series"},
        // Service events the page received (the attribute is written "0" in the closed
        // model whatever came).
        {"eval": "window.foxbench.service().length", "page": "closed", "key": "closed_service_points"},
    ]);
    let v = seen(browse(&browser, &dir, &steps));
    drop((open, closed));
    assert_eq!(v["open_ready"], true, "{v}");
    assert_eq!(v["closed_ready"], true, "{v}");
    let drawn = |key: &str| -> Vec<(String, u64)> {
        v[key]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_u64().unwrap()))
            .collect()
    };
    let open_series = drawn("open_series");
    let labels: Vec<&str> = open_series.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["p50", "p99", "max", "service p50", "service p99"],
        "{v}"
    );
    assert!(open_series.iter().all(|(_, n)| *n >= 3), "{v}");
    // Each in its own colour, the load report's (report::palette).
    use report::palette::Line;
    assert_eq!(
        v["open_strokes"],
        json!([
            ["p50", Line::P50.colour()],
            ["p99", Line::P99.colour()],
            ["max", Line::Max.colour()],
            ["service p50", Line::ServiceP50.colour()],
            ["service p99", Line::ServiceP99.colour()],
        ]),
        "{v}"
    );
    let gaps = v["open_gaps"].as_array().unwrap();
    assert!(gaps.len() >= 3, "{v}");
    assert!(
        gaps.iter().all(|g| g.as_f64().unwrap() >= 0.0),
        "a service p99 above its corrected p99: {v}"
    );
    assert_eq!(v["open_gauges_ready"], true, "{v}");
    let gauges = v["open_gauges"].as_array().unwrap();
    for g in gauges {
        let (cpu, spin) = (
            g["cpu_percent"].as_f64().unwrap(),
            g["spin_percent"].as_f64().unwrap(),
        );
        assert!((0.0..=cpu + 0.5).contains(&spin), "{g}");
    }
    // 100 sends a second, each after up to 50 µs of spin: some spin every second.
    assert!(
        gauges
            .iter()
            .any(|g| g["spin_percent"].as_f64().unwrap() > 0.0),
        "{v}"
    );
    assert_eq!(
        v["cpu_series"],
        json!([
            "client CPU %",
            "of it, spin (empty polls) %",
            "client-bound above (CPU less spin)"
        ]),
        "{v}"
    );
    let closed_series = drawn("closed_series");
    let labels: Vec<&str> = closed_series.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(labels, ["p50", "p99", "max"], "{v}");
    assert_eq!(v["closed_service_points"], 0, "{v}");
}

/// avatar on a free port, one worker; killed when dropped.
struct Avatar(Child, String);

impl Avatar {
    fn start() -> Avatar {
        let mut child = Command::new(crate::table::avatar_binary())
            .args(["--listen", "127.0.0.1:0", "--workers", "1"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start avatar");
        let mut first = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no listening line: {first:?}"))
            .to_string();
        Avatar(child, url)
    }
}

impl Drop for Avatar {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn find_max_draws_each_window_as_the_search_proceeds_with_the_objective() {
    let Some(browser) = browser() else {
        return;
    };
    let dir = scratch("find-max");
    let avatar = Avatar::start();
    let url_file = dir.join("url");
    let ready = dir.join("browser-ready");
    let windows = "Number(document.body.getAttribute('data-windows'))";
    // The browser first: the page must join while the search is young.
    let steps = json!([
        {"touch": ready},
        {"open_file": url_file, "page": "p", "s": 60},
        {"wait": format!("{windows} >= 1 && {windows}"), "page": "p", "key": "mid_windows", "s": 60},
        {"eval": "window.foxbench.charts.win.series.slice(1).map(s => s.label)", "page": "p", "key": "labels"},
        {"eval": "window.foxbench.charts.win.data", "page": "p", "key": "mid_data"},
        {"eval": "document.getElementById('c-win').querySelector('h2').textContent", "page": "p", "key": "title"},
        // The current window's own charts fill in too.
        {"wait": "Number(document.body.getAttribute('data-points')) >= 3", "page": "p", "key": "window_points", "s": 30},
        // And its gauges: connections open, client CPU (sampled once a second).
        {"wait": "document.getElementById('c-cpu').style.display == 'block' && document.getElementById('c-conn').style.display == 'block'",
         "page": "p", "key": "gauges", "s": 30},
        {"shot": dir.join("find-max-mid-run.png"), "page": "p"},
        {"wait": "!!document.getElementById('foxbench-download') && !document.getElementById('c-win')",
         "page": "p", "key": "became_report", "s": 90},
        // The report it became shows the search: its windows, charted, and the rate found.
        {"eval": "document.querySelectorAll('#capacity #windows tbody tr').length", "page": "p", "key": "final_rows"},
        {"eval": "document.querySelectorAll('#chart-windows g.series circle').length", "page": "p", "key": "final_points"},
        {"eval": "document.querySelector('#capacity h2').textContent", "page": "p", "key": "final_heading"},
        {"shot": dir.join("find-max-final.png"), "page": "p"},
    ]);
    let steps = browse(&browser, &dir, &steps);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let json = dir.join("find-max.json");
    let mut run = start(&[
        "--find-max",
        "p99<50ms",
        // Longer than the gauges' second, so that each window gets one.
        "--window",
        "1500ms",
        "--interval",
        "100ms",
        "--max-time",
        "12s",
        "--start-rate",
        "50",
        "-c",
        "10",
        "-t",
        "1",
        "--dashboard",
        "--json",
        json.to_str().unwrap(),
        "-q",
        &avatar.1,
    ]);
    std::fs::write(&url_file, &run.url).unwrap();
    let v = seen(steps);
    let status = run.child.wait().unwrap();
    assert!(status.code().is_some_and(|c| c <= 1), "{status:?}");
    let result: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let total = result["capacity"]["windows"].as_array().unwrap().len() as u64;
    let mid = v["mid_windows"].as_u64().unwrap_or(0);
    assert!(
        mid >= 1 && mid < total,
        "the page saw {mid} of {total} windows mid-run: {v}"
    );
    assert_eq!(v["labels"], json!(["held", "failed", "p99<50ms"]), "{v}");
    // The objective's line at 50 ms under every window drawn; each window in one series.
    let data = v["mid_data"].as_array().unwrap();
    assert!(
        data[3].as_array().unwrap().iter().all(|y| y == 50_000.0),
        "{v}"
    );
    let drawn = |i: usize| {
        data[i]
            .as_array()
            .unwrap()
            .iter()
            .filter(|y| !y.is_null())
            .count()
    };
    // Read after `mid_windows`: more may have come in between.
    assert!((drawn(1) + drawn(2)) as u64 >= mid, "{v}");
    assert!(v["title"].as_str().unwrap().contains("offered"), "{v}");
    assert_eq!(
        v["window_points"], true,
        "a window's own charts drew nothing: {v}"
    );
    assert_eq!(
        v["gauges"], true,
        "a window's connections and client CPU drew nothing: {v}"
    );
    assert_eq!(v["became_report"], true, "{v}");
    // The final page lacked the search the text report gives: it is there now.
    assert_eq!(v["final_rows"], total, "{v}");
    let timed = result["capacity"]["windows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| !w["corrected"].is_null())
        .count() as u64;
    assert_eq!(v["final_points"], timed, "{v}");
    let found = result["capacity"]["rate_per_sec"]
        .as_f64()
        .map_or("none".to_string(), |r| format!("{r:.0} req/s"));
    assert_eq!(
        v["final_heading"],
        format!("Capacity search {found}"),
        "{v}"
    );
    for shot in ["find-max-mid-run.png", "find-max-final.png"] {
        assert!(dir.join(shot).exists(), "{shot}");
    }
}

/// Two quick targets, two levels each: avatar (the debug binary this workspace built, no
/// build step) and the C target (built by `cc` in a second).
fn tiny_suite(avatar: &Path) -> String {
    format!(
        r#"
name = "dashboard"
images = 21

[plan]
levels = [4, 16]
duration = "3s"
repeats = 1
warmup = "1s"
warmup_slice = "500ms"
timeout = "2s"
sample_interval = "100ms"
stop_grace = "500ms"

[[scenario]]
name = "redirect"
[scenario.expect]
status = 302
headers = {{ Location = '^https://avatar\.example/Renard-([0-9]+)\.png$' }}
all_images = true

[[target]]
name = "avatar"
language = "Rust"
dir = "."
start = "{} {{port}} {{images}}"

[[target]]
name = "c-epoll"
language = "C"
dir = "targets/c-epoll"
requires = ["cc"]
build = "cc -std=c11 -O2 -Wall -o {{out}}/server server.c -pthread"
start = "{{out}}/server {{port}} {{images}}"
artifact = "{{out}}/server"
"#,
        avatar.display()
    )
}

#[test]
fn shootout_fills_its_matrix_live_and_each_running_cell_links_to_its_charts() {
    let Some(browser) = browser() else {
        return;
    };
    if testkit::require("cc", &["/usr/bin/cc"], "apt-get install gcc").is_none() {
        return;
    }
    let dir = scratch("shootout");
    let suite = dir.join("suite.toml");
    std::fs::write(&suite, tiny_suite(&crate::table::avatar_binary())).unwrap();
    let url_file = dir.join("url");
    let ready = dir.join("browser-ready");
    let done = "Number(document.body.getAttribute('data-cells-done'))";
    let steps = json!([
        {"open": "about:blank", "page": "c"},
        {"touch": ready},
        {"open_file": url_file, "page": "m", "s": 60},
        // First read: a cell running, its link in the matrix.
        {"wait": "!!document.querySelector('#matrix a.live')", "page": "m", "key": "running", "s": 60},
        {"eval": format!("window.firstDone = {done}"), "page": "m", "key": "first_done"},
        {"eval": "document.body.getAttribute('data-cells')", "page": "m", "key": "cells"},
        {"open_eval": "document.querySelector('#matrix a.live').href", "from": "m", "page": "c"},
        {"wait": "Number(document.body.getAttribute('data-points')) >= 3 && document.body.getAttribute('data-points')",
         "page": "c", "key": "cell_points", "s": 30},
        {"eval": "document.getElementById('title').textContent", "page": "c", "key": "cell_title"},
        {"shot": dir.join("shootout-cell.png"), "page": "c"},
        // Second read: more cells done.
        {"wait": format!("{done} > window.firstDone && {done}"), "page": "m", "key": "second_done", "s": 60},
        {"shot": dir.join("shootout-mid-run.png"), "page": "m"},
        {"wait": "!!document.getElementById('foxbench-download') && !document.getElementById('runcharts') && document.body.innerText",
         "page": "m", "key": "final_text", "s": 90},
        {"shot": dir.join("shootout-final.png"), "page": "m", "whole": false},
    ]);
    let steps = browse(&browser, &dir, &steps);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = dir.join("run");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut child = crate::foxbench()
        .arg("shootout")
        .arg(&suite)
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .arg("--cache")
        .arg(dir.join("cache"))
        .arg("--dashboard")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut lines = Vec::new();
    let url = loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            panic!("foxbench printed no dashboard URL: {lines:?}");
        }
        if let Some(u) = line.trim().strip_prefix("foxbench: dashboard at ") {
            break u.to_string();
        }
        lines.push(line);
    };
    std::fs::write(&url_file, &url).unwrap();
    let pinned = std::thread::spawn({
        let pid = child.id() as i32;
        move || dashboard_threads_pinned_as_foxbench(pid)
    });
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let v = seen(steps);
    let status = child.wait().unwrap();
    let stderr = rest.join().unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    let (ok, threads) = pinned.join().unwrap();
    assert!(
        ok,
        "the dashboard's threads not on the client CPUs: {threads:?}"
    );
    assert_eq!(v["running"], true, "{v}");
    assert_eq!(
        v["cells"], "4",
        "every cell is in the matrix from the start: {v}"
    );
    let (first, second) = (
        v["first_done"].as_u64().unwrap(),
        v["second_done"].as_u64().unwrap_or(0),
    );
    assert!(second > first, "the matrix gained no cell: {v}");
    assert!(
        v["cell_points"].is_string(),
        "the running cell's charts: {v}"
    );
    assert!(v["c_url"].as_str().unwrap().contains("?cell="), "{v}");
    let title = v["cell_title"].as_str().unwrap();
    assert!(title.contains(" · c"), "{title}");
    let text = v["final_text"].as_str().unwrap_or_else(|| panic!("{v}"));
    let results: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    for t in results["targets"].as_array().unwrap() {
        let cells = t["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 2, "{t}");
        for c in cells {
            assert_eq!(c["status"], "measured", "{c}");
            // The dashboard's CPU, left out of the client's, is recorded per repeat.
            for r in c["repeats"].as_array().unwrap() {
                let cpu = r["client"]["dashboard_cpu_s"].as_f64();
                assert!(cpu.is_some_and(|s| s >= 0.0), "{}", r["client"]);
            }
        }
        let name = t["name"].as_str().unwrap();
        assert!(text.contains(name), "the final page lacks {name}");
    }
    for level in ["c4", "c16"] {
        assert!(text.contains(level), "the final page lacks {level}");
    }
}

/// A thread's name and the CPUs it may run on.
type ThreadCpus = (String, Vec<(u32, u32)>);

/// Waits (up to 90 s) until foxbench `pid` is pinned (its main thread narrower than this
/// test's CPUs) with the dashboard's accept thread and a page open, every one of them on
/// foxbench's CPUs: true then, with what was seen last (thread name, CPUs allowed).
fn dashboard_threads_pinned_as_foxbench(pid: i32) -> (bool, Vec<ThreadCpus>) {
    let mine = probe::processes::cpus_allowed(std::process::id() as i32).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            break;
        };
        let main = probe::processes::cpus_allowed(pid).unwrap_or_default();
        let now: Vec<ThreadCpus> = tasks
            .flatten()
            .filter_map(|t| {
                let tid: i32 = t.file_name().to_str()?.parse().ok()?;
                let name = std::fs::read_to_string(t.path().join("comm")).ok()?;
                let name = name.trim().to_string();
                // Names are cut to 15 bytes: "foxbench-dashboard-page" is "foxbench-dashbo".
                name.starts_with("foxbench-dashbo")
                    .then(|| Some((name, probe::processes::cpus_allowed(tid)?)))?
            })
            .collect();
        if main != mine && now.len() >= 2 && now.iter().all(|(_, cpus)| *cpus == main) {
            return (true, now);
        }
        // The last threads seen, for the message: none once foxbench is exiting.
        if !now.is_empty() {
            seen = now;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (false, seen)
}
