//! A shootout capacity level end to end: the cheap Python target of the lifecycle tests,
//! a search within a few seconds' budget, every window probed, the result in results.json,
//! ranked in the Markdown and drawn in the HTML.

use super::*;

const SUITE: &str = r#"
name = "capacity"
images = 3

[plan]
levels = [4, { name = "cap", connections = 4, capacity = "p99<1s", max_duration = "6s", window = "500ms", start_rate = 50 }]
duration = "400ms"
repeats = 1
warmup = "200ms"
warmup_slice = "200ms"
timeout = "2s"
stop_grace = "500ms"

[[scenario]]
name = "redirect"
[scenario.expect]
status = 302
headers = { Location = '^https://avatar\.example/Renard-([0-9]+)\.png$' }
all_images = true

[[target]]
name = "good"
language = "Python"
dir = "."
requires = ["python3"]
start = "python3 fox.py {port} {images} good"
levels = ["cap"]
"#;

#[test]
fn a_capacity_level_searches_within_its_budget_and_is_ranked() {
    let out = tmp("capacity");
    std::fs::write(out.join("suite.toml"), SUITE).unwrap();
    let o = Shootout::new(out.join("suite.toml"), &out.join("run"))
        .root(faulty_dir())
        .cache(Cache::At(out.join("cache")))
        .run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.lines()
            .any(|l| l.trim_start().starts_with("capacity ") && l.contains("req/s under p99<1s")),
        "the progress names the capacity: {err}"
    );
    let v = results(&out.join("run"));
    let level = v["protocol"]["plan"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "cap")
        .unwrap()
        .clone();
    assert_eq!(level["capacity"]["objective"], "p99<1s");
    assert_eq!(level["capacity"]["budget_s"], 6.0);
    let t = target(&v, "good");
    let cells = t["cells"].as_array().unwrap();
    let names: Vec<&str> = cells.iter().map(|c| c["level"].as_str().unwrap()).collect();
    assert_eq!(names, ["c4", "cap"], "the ordinary level runs too");
    assert!(
        cells[0].get("capacity").is_none(),
        "only the capacity level has one"
    );
    let cell = &cells[1];
    assert_eq!(cell["status"], "measured", "{err}");
    let c = &cell["capacity"];
    assert_eq!(c["objective"], "p99<1s");
    let windows = c["windows"].as_array().unwrap();
    assert!(!windows.is_empty(), "{c}");
    // Within its budget: the search starts no window that cannot end in it (a window may
    // overrun its length by its setup).
    let (elapsed, budget) = (
        c["elapsed_s"].as_f64().unwrap(),
        c["budget_s"].as_f64().unwrap(),
    );
    assert!(elapsed <= budget + 1.0, "{elapsed} s of {budget} s");
    assert!(
        elapsed >= 0.5 * windows.len() as f64,
        "{elapsed} s, {} windows",
        windows.len()
    );
    assert_eq!(windows[0]["rate_per_sec"], 50.0);
    // 50 req/s from 4 connections holds p99<1s against fox.py unless the machine starves
    // it; then the search halves to its floor and says so.
    let rate = match c["rate_per_sec"].as_f64() {
        Some(rate) => {
            assert!(rate >= 10.0, "{c}");
            assert_eq!(c["bracket"]["held_per_sec"].as_f64(), Some(rate));
            assert!(["converged", "budget", "ceiling"].contains(&c["stopped"].as_str().unwrap()));
            rate
        }
        None => {
            assert!(
                ["floor", "budget"].contains(&c["stopped"].as_str().unwrap()),
                "{c}"
            );
            assert!(windows.iter().all(|w| w["passed"] == false), "{c}");
            f64::INFINITY
        }
    };
    for w in windows {
        // Every window probed on both sides and judged whole; one without a response (a
        // stall of the target on a loaded machine) has no percentile and cannot hold.
        assert!(w["client_cpu_percent"].as_f64().unwrap() > 0.0, "{w}");
        assert_eq!(w["clauses"][0]["clause"], "p99<1s");
        let held = w["passed"].as_bool().unwrap();
        match w["p99_us"].as_f64() {
            Some(p99) => {
                assert!(w["server_cpu_us_per_request"].as_f64().is_some(), "{w}");
                assert!(w["p50_us"].as_f64().unwrap() <= p99, "{w}");
                assert_eq!(held, p99 < 1_000_000.0, "{w}");
            }
            None => assert!(!held && w["achieved_per_sec"] == 0.0, "{w}"),
        }
        if held {
            assert!(w["rate_per_sec"].as_f64().unwrap() <= rate, "{w}");
        }
    }
    let server_cpu: f64 = windows
        .iter()
        .filter_map(|w| w["server_cpu_us_per_request"].as_f64())
        .sum();
    assert!(
        server_cpu > 0.0,
        "the server tree was probed around the windows"
    );
    // The cell's repeat is the window at the rate found.
    let repeats = cell["repeats"].as_array().unwrap();
    assert_eq!(repeats.len(), 1);
    assert!(cell["summary"]["rps_median"].as_f64().unwrap() > 0.0);

    let md = std::fs::read_to_string(out.join("run/summary.md")).unwrap();
    assert!(md.contains("## Capacity under `p99<1s`"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| 1 | good | redirect | cap (c4) |"))
        .unwrap_or_else(|| panic!("no ranking row: {md}"));
    let shown = match c["rate_per_sec"].as_f64() {
        Some(r) => format!("| {} |", r.round() as u64),
        None => "| none |".to_string(),
    };
    assert!(row.replace(',', "").contains(&shown), "{row} lacks {shown}");
    let html = std::fs::read_to_string(out.join("run/report.html")).unwrap();
    assert!(html.contains("Capacity under"), "the HTML ranks too");
    assert!(html.contains("over the ramp"), "the HTML draws the windows");
    std::fs::remove_dir_all(&out).unwrap();
}
