//! The diagnosis that finds the pool, end to end: a front end that calls a slow backend
//! through a pool of 2 connections (`tests/data/pool`) is diagnosed pool-bound, or waiting
//! on the backend, with the connections to the backend as evidence; the suite says nothing
//! about the pool.

use super::*;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pool")
}

/// The suite's run, once for the tests of this file: its results, its summary.md, and the
/// stderr of the run.
fn pool_run() -> &'static (serde_json::Value, String, String) {
    static RUN: std::sync::OnceLock<(serde_json::Value, String, String)> =
        std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let out = tmp("pool-bound");
        let o = run_shootout_alone(&data(), "suite.toml", &out, &[]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        let v = results(&out);
        let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
        std::fs::remove_dir_all(&out).unwrap();
        (v, md, err)
    })
}

#[test]
fn a_front_end_behind_a_pool_of_2_is_diagnosed_by_its_connections() {
    let (v, md, err) = pool_run();
    let t = target(v, "pool-of-2");
    assert_eq!(t["outcome"], "measured", "{err}");
    let cells = t["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "{err}");
    for c in cells {
        // The evidence: the target's connections to the backend, sampled through the
        // level, sat at the pool's 2.
        let conns = &c["repeats"][0]["service_connections"][0];
        assert_eq!(conns["service"], "backend", "{c}");
        assert_eq!(conns["max"].as_u64(), Some(2), "{conns}");
        assert!(conns["samples"].as_u64().unwrap() >= 1, "{conns}");
        let d = &c["diagnosis"];
        let verdict = d["bottleneck"].as_str().unwrap();
        let detail = d["detail"].as_str().unwrap();
        assert!(
            ["pool-bound", "waiting-on-the-backend"].contains(&verdict),
            "{}: {d}",
            c["level"]
        );
        assert!(detail.contains("connections to backend"), "{detail}");
        if verdict == "pool-bound" {
            assert!(detail.contains("2 of 2 connections to backend"), "{detail}");
        }
    }
    assert!(md.contains("### Connections to services"), "{md}");
    assert!(md.contains("| pool-of-2 | plain | c60 | backend |"), "{md}");
}

/// Regression (CI, 2026-11-25): each warm-up slice gave up on the requests still queued
/// for the pool when it ended, and the server went on answering them for nobody; on a
/// machine busy with other tests the c60 window queued behind three slices' worth of them
/// and completed nothing ("errors"). Every load now starts once the server has finished
/// them: the window of each level waited, and none began unsettled.
#[test]
fn requests_a_warm_up_slice_gave_up_are_finished_before_the_window() {
    let (v, md, _) = pool_run();
    let t = target(v, "pool-of-2");
    for c in t["cells"].as_array().unwrap() {
        let s = &c["settle"];
        // 20 and 60 connections all wait on a pool that answers 200 a second: every slice
        // ends with requests queued.
        assert!(s["waits"].as_u64().unwrap() >= 1, "{}: {s}", c["level"]);
        assert!(s["held_max"].as_u64().unwrap() >= 1, "{s}");
        assert_eq!(s["unsettled"], 0, "{s}");
        assert!(c["summary"]["rps_median"].as_f64().unwrap() > 0.0, "{c}");
        // The probe's threads (which sampled this server's threads and connections) are
        // measured apart from the load generator, never charged to it.
        for r in c["repeats"].as_array().unwrap() {
            let probe = r["client"]["probe_cpu_s"].as_f64().unwrap();
            assert!(probe > 0.0, "{}", r["client"]);
            // The record a `foxbench load` result holds: its context switches too.
            let switches = r["client"]["voluntary_ctxt_per_request"].as_f64();
            assert!(switches.is_some_and(|n| n > 0.0), "{}", r["client"]);
        }
    }
    assert!(
        md.contains("for the server to finish requests an earlier load had given up"),
        "{md}"
    );
}
