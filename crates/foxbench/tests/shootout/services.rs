//! Suites with services: a backend `[[service]]` and front ends that call it, written to
//! misbehave (`tests/data/tiers`): a service that fails to start, one that dies mid-level,
//! a front end that never calls the backend, and a well-behaved pair whose request counts
//! must agree.

use super::*;

fn tiers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiers")
}

fn service<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no service {name}"))
}

#[test]
fn services_start_fail_and_die_and_the_run_goes_on() {
    let out = tmp("tiers");
    let o = run_shootout(&tiers_dir(), "suite.toml", &out, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a failed service is exit 1: {err}"
    );

    let v = results(&out);
    let outcome = |n: &str| target(&v, n)["outcome"].as_str().unwrap().to_string();
    let message = |n: &str| target(&v, n)["message"].as_str().unwrap_or("").to_string();

    // A service that fails to start: the target that uses it is skipped, with the reason,
    // in one line.
    assert_eq!(service(&v, "broken")["outcome"], "start-failed");
    assert_eq!(outcome("front-broken"), "skipped");
    assert!(
        message("front-broken").starts_with("service broken is down: exited (exit status: 1)")
            && message("front-broken").contains("cannot open its database"),
        "{}",
        message("front-broken")
    );
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("skipped: service broken is down"))
            .count(),
        1,
        "{err}"
    );

    // A service that dies mid-level: reported on the service, the cell and the target; the
    // run goes on to the next target, which uses the healthy service again.
    assert_eq!(service(&v, "dying")["outcome"], "crashed");
    assert!(
        message("front-dying").contains("service dying exited (exit status: 3) during level c4"),
        "{}",
        message("front-dying")
    );
    let cell = &target(&v, "front-dying")["cells"][0];
    assert!(
        cell["message"]
            .as_str()
            .unwrap_or("")
            .contains("service dying exited"),
        "{cell}"
    );
    assert_eq!(outcome("after"), "measured", "{err}");

    // A front end that never calls the backend fails verification: the id is not echoed.
    assert_eq!(outcome("lazy"), "verify-failed");
    assert!(
        message("lazy").contains("no X-Request-Id header"),
        "{}",
        message("lazy")
    );
    assert!(target(&v, "lazy")["cells"].as_array().unwrap().is_empty());

    // Parameter rows with a service placeholder: each row got the service's URL.
    for row in ["front[threads=1]", "front[threads=2]"] {
        let t = target(&v, row);
        assert_eq!(t["outcome"], "measured", "{row}: {err}");
        assert_eq!(t["services"], serde_json::json!(["hello"]));
        let cmd = t["start_command"].as_str().unwrap();
        let port = service(&v, "hello")["start_command"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .nth(2)
            .unwrap()
            .to_string();
        assert!(
            cmd.contains(&format!("http://127.0.0.1:{port} good ")),
            "{cmd}"
        );
    }

    // The well-behaved pair: the backend's count over each level equals foxbench's
    // completed requests, up to those in flight when a timed repeat stopped.
    for row in ["front[threads=1]", "front[threads=2]", "after"] {
        let cell = &target(&v, row)["cells"][0];
        let check = &cell["counters"][0];
        assert_eq!(check["service"], "hello", "{row}: {cell}");
        assert_eq!(check["matches"], true, "{row}: {check}");
        let (n, completed, sent) = (
            check["service_requests"].as_u64().unwrap(),
            check["completed"].as_u64().unwrap(),
            check["sent"].as_u64().unwrap(),
        );
        assert!(
            completed > 0 && completed <= n && n <= sent,
            "{row}: {check}"
        );
        // Each load (warm-up slice or repeat) stops with at most one request per connection
        // (4) in flight. Plus one: a thread-dump slice runs after the repeats when they
        // show the target's threads waiting on a futex (timing decides), and the cell lists
        // no slice for a target without a JVM to dump; its requests are in the counts (a CI
        // run saw 16 in flight over 3 listed loads).
        let loads = cell["warmup_rps"].as_array().unwrap().len()
            + cell["repeats"].as_array().unwrap().len()
            + 1;
        assert!(
            n - completed <= 4 * loads as u64,
            "at most one request per connection in flight at each stop: {check}"
        );
        // Per-tier figures: the target, then the service.
        let tiers = cell["tiers"].as_array().unwrap();
        assert_eq!(tiers.len(), 2, "{row}");
        assert_eq!(
            (tiers[0]["name"].as_str(), tiers[0]["role"].as_str()),
            (Some(row), Some("target"))
        );
        assert_eq!(
            (tiers[1]["name"].as_str(), tiers[1]["role"].as_str()),
            (Some("hello"), Some("service"))
        );
        assert!(
            tiers[1]["rss_peak_bytes"].as_u64().unwrap() > 1 << 20,
            "{row}"
        );
        assert!(tiers[1]["threads_peak"].as_u64().unwrap() >= 1, "{row}");
        assert!(cell["repeats"][0]["services"][0]["name"] == "hello");
        assert!(cell["limiting_tier"].is_string(), "{cell}");
        assert!(
            cell["diagnosis"]["detail"]
                .as_str()
                .unwrap()
                .contains("tiers: "),
            "{}",
            cell["diagnosis"]["detail"]
        );
    }

    // The protocol says where the services ran, and what shares a CPU with what.
    let p = &v["protocol"];
    assert!(!p["service_cpus"].as_array().unwrap().is_empty());
    if p["nproc"].as_u64() == Some(2) && p["server_cpus"] == p["service_cpus"] {
        assert!(
            p["cpu_sharing"][0]
                .as_str()
                .unwrap()
                .starts_with("the services and the targets share CPU"),
            "{p}"
        );
    }
    for k in [
        "net.core.somaxconn",
        "net.ipv4.ip_local_port_range",
        "fs.nr_open",
    ] {
        assert!(p["sysctl"][k].is_string(), "{k}");
    }

    // The reports carry the tiers.
    for heading in [
        "### Services",
        "### Against the post's goal of 50000 req/s",
        "### Per tier",
        "### Backend calls against requests",
    ] {
        assert!(stdout.contains(heading), "{heading}: {stdout}");
    }
    assert!(stdout.contains("equal in every cell"), "{stdout}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h3>Per tier</h3>") && html.contains("<td>service</td>"));
    let _ = std::fs::remove_dir_all(&out);
}

/// Ctrl-C during a level stops the target and the service it uses: nothing is left behind,
/// and what was measured is written.
#[test]
fn ctrl_c_stops_the_services_too() {
    let out = tmp("tiers-int");
    let mut run = Shootout::new("suite.toml", &out)
        .dir(&tiers_dir())
        .root(".")
        .args(["--only", "after"])
        .quiet()
        .spawn();
    // Wait until a load worker runs: the service and the target are up by then.
    run.wait_for_load(Duration::from_secs(60));
    run.interrupt();
    let o = run.wait_with_output();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    let v = results(&out);
    assert_eq!(v["interrupted"], true);
    assert_eq!(
        service(&v, "hello")["used_by"],
        serde_json::json!(["after"])
    );
    assert!(stderr.contains("service hello: ready in"), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}
