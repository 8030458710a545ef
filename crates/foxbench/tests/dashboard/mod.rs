//! `foxbench load --dashboard` end to end: the token, a port in use, and the page in a real
//! headless Chromium (driven through the DevTools protocol by `cdp.py`, with
//! `websocket-client` from PyPI in a venv) against a ramp with a stall in the middle.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod kinds;

use super::support::{redirect_server, Server, REDIRECT};
use super::{foxbench, result};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("dashboard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `foxbench load --dashboard` run in the background and the URL it printed.
struct Run {
    child: Child,
    url: String,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[track_caller]
fn start(args: &[&str]) -> Run {
    let mut child = foxbench()
        .arg("load")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("foxbench runs");
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let url = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .expect("foxbench printed the dashboard's URL");
        if let Some(u) = line.strip_prefix("foxbench: dashboard at ") {
            break u.to_string();
        }
    };
    Run {
        child,
        url,
        stderr: rx,
    }
}

/// The status code of a GET of `url` (http://host:port/path).
fn status_of(url: &str) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    std::str::from_utf8(&head[9..12]).unwrap().parse().unwrap()
}

#[test]
fn a_wrong_token_is_404_and_a_port_in_use_is_one_line_and_exit_2() {
    let s = redirect_server();
    let run = start(&[
        "--dashboard",
        "-c",
        "1",
        "-t",
        "1",
        "-R",
        "50",
        "-d",
        "20s",
        &s.url(),
    ]);
    assert!(run.url.starts_with("http://127.0.0.1:"), "{}", run.url);
    let token = run.url.trim_end_matches('/').rsplit('/').next().unwrap();
    assert_eq!(token.len(), 32, "128 bits of token: {}", run.url);
    assert_eq!(status_of(&run.url), 200);
    let root = run.url.trim_end_matches('/').trim_end_matches(token);
    assert_eq!(status_of(root), 404);
    let mut wrong: Vec<char> = token.chars().collect();
    wrong[0] = if wrong[0] == '0' { '1' } else { '0' };
    assert_eq!(
        status_of(&format!("{root}{}/", String::from_iter(wrong))),
        404
    );
    assert_eq!(status_of(&format!("{}events/../", run.url)), 404);
    // A second run on the same port: one line, exit 2, before any load (of its own server).
    let addr = root.trim_start_matches("http://").trim_end_matches('/');
    let second = redirect_server();
    let out = foxbench()
        .args([
            "load",
            &format!("--dashboard={addr}"),
            "-n",
            "5",
            &second.url(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&format!("{addr} is already in use")), "{err}");
    assert_eq!(second.requests(), 0, "the second run loaded anyway");
    drop(run);
}

/// `foxbench load --dashboard` counted the dashboard's CPU as the client's, and recorded it
/// nowhere: it is left out of the client's figures (`measure::window`), and the result
/// says it (`client.dashboard_cpu_s`, in the schema) and the text with foxbench's CPU; a
/// run without a dashboard has neither.
#[test]
fn load_counted_the_dashboards_cpu_as_the_clients() {
    let s = redirect_server();
    let with = |dashboard: bool| {
        let mut args = vec!["load", "-c", "1", "-t", "1", "-n", "300", "--json", "-"];
        if dashboard {
            args.push("--dashboard");
        }
        let url = s.url();
        args.push(&url);
        let out = foxbench().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{err}");
        (result(&out.stdout), err)
    };
    let (v, err) = with(true);
    let cpu = v["client"]["dashboard_cpu_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("{}", v["client"]));
    assert!((0.0..1.0).contains(&cpu), "{cpu}");
    assert!(err.contains("the dashboard's threads used"), "{err}");
    let (v, _) = with(false);
    assert!(
        v["client"].get("dashboard_cpu_s").is_none(),
        "{}",
        v["client"]
    );
    // The text report says it beside foxbench's CPU.
    let out = foxbench()
        .args([
            "load",
            "-c",
            "1",
            "-t",
            "1",
            "-n",
            "100",
            "--dashboard",
            &s.url(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("foxbench CPU:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("the dashboard's "), "{line}");
    assert!(line.contains("s left out"), "{line}");
}

/// The `gauges` events carry the engine's count of open connections (it was read from
/// /proc/net/tcp every second, at a cost that grew with every socket on the machine): a
/// kept-alive run of 5 connections shows 5.
#[test]
fn the_connections_gauge_is_the_engines_count() {
    let s = redirect_server();
    let run = start(&[
        "--dashboard",
        "-c",
        "5",
        "-t",
        "1",
        "-R",
        "200",
        "-d",
        "60s",
        &s.url(),
    ]);
    let rest = run.url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut events = TcpStream::connect(host).unwrap();
    events
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(events, "GET {path}events HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    // Gauges come once a second; the first ones may precede the last connect.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    for line in BufReader::new(events).lines().map_while(Result::ok) {
        if let Some(data) = line.strip_prefix("data: [{\"t_s\"") {
            let gauges: serde_json::Value =
                serde_json::from_str(&format!("[{{\"t_s\"{data}")).unwrap();
            seen.extend(
                gauges
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|g| g["connections_open"].as_u64().unwrap()),
            );
        }
        if seen.contains(&5) || Instant::now() > deadline {
            break;
        }
    }
    assert!(seen.contains(&5), "connections open: {seen:?}");
    assert!(seen.iter().all(|&n| n <= 5), "{seen:?}");
    // The preflight's connection, and the run's five kept alive.
    assert_eq!(s.accepts(), 6);
}

/// Answers redirects, except that every request arriving between 9 s and 10 s after the
/// server started waits until 10 s: a one-second stall in the middle of the run.
fn stalling_server() -> Server {
    let t0 = Instant::now();
    Server::spawn(move |mut c| {
        while c.next_request().is_some() {
            let at = t0.elapsed();
            if at >= Duration::from_secs(9) && at < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_secs(10) - at);
            }
            if !c.send(REDIRECT) {
                return;
            }
        }
    })
}

/// A venv with `websocket-client`, made once.
fn python_with_websocket() -> Option<PathBuf> {
    // The browser tests run at once: one makes the venv while the others wait for it. Two
    // `python3 -m venv` and `pip install` into one directory at once broke it in CI
    // ("FOXBENCH_REQUIRE requires websocket-client").
    static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cdp-venv");
    let python = venv.join("bin/python");
    let ok = |c: &mut Command| c.output().is_ok_and(|o| o.status.success());
    if ok(Command::new(&python).args(["-c", "import websocket"])) {
        return Some(python);
    }
    let made = ok(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        && ok(Command::new(venv.join("bin/pip")).args([
            "install",
            "-q",
            "--disable-pip-version-check",
            "websocket-client==1.9.0",
        ]));
    testkit::skip_unless(
        made,
        "websocket-client",
        "python3 -m venv and pip install websocket-client from PyPI",
    )
    .then_some(python)
}

fn png_size(path: &Path) -> (u32, u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[1..4], b"PNG", "{}", path.display());
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn the_page_in_chromium_draws_the_run_live_and_becomes_the_report() {
    let Some(chromium) = testkit::require(
        "chromium",
        &["/usr/bin/chromium"],
        "apt-get install chromium",
    ) else {
        return;
    };
    let Some(python) = python_with_websocket() else {
        return;
    };
    let dir = scratch("chromium");
    let json = dir.join("run.json");
    let s = stalling_server();
    let run = start(&[
        "--dashboard",
        "-c",
        "32",
        "-t",
        "1",
        // Far longer than the checks need: the test ends the run with Ctrl-C once the page
        // has been checked live, however slowly the browser started.
        "-R",
        "100..400/20s",
        "-d",
        "120s",
        "--interval",
        "250ms",
        "--slo",
        "p99<100ms",
        "--json",
        json.to_str().unwrap(),
        "-q",
        &s.url(),
    ]);
    let report_html = dir.join("report").join("run.html");
    let cdp = Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/dashboard/cdp.py"
        ))
        .arg(&chromium)
        .arg(&run.url)
        .arg(&dir)
        .arg(&report_html)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the page has been checked live (or cdp.py gave up), Ctrl-C ends the run: the
    // interrupted run still writes its JSON, and the page becomes its report.
    let mut run = run;
    let mut cdp = cdp;
    let live_checked = dir.join("live-checked");
    let deadline = Instant::now() + Duration::from_secs(300);
    while !live_checked.exists() && Instant::now() < deadline {
        if cdp.try_wait().unwrap().is_some() || run.child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if !live_checked.exists() {
        let _ = cdp.kill();
        let cdp = cdp.wait_with_output().unwrap();
        panic!(
            "the page was not checked live: {}",
            String::from_utf8_lossy(&cdp.stderr)
        );
    }
    assert!(
        run.child.try_wait().unwrap().is_none(),
        "the run ended before the page was checked live"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(run.child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = run.child.wait().unwrap();
    let lines: Vec<String> = run.stderr.try_iter().collect();
    assert_eq!(
        status.code(),
        Some(1),
        "the stall breaks p99<100ms: exit 1: {lines:?}"
    );
    assert!(
        json.exists(),
        "the interrupted run wrote no JSON: {lines:?}"
    );
    let v = result(&std::fs::read(&json).unwrap());
    assert_eq!(v["interrupted"], true, "{}", v["elapsed_s"]);
    let out = foxbench()
        .args(["report", json.to_str().unwrap(), "--out"])
        .arg(dir.join("report-tmp"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // cdp.py opens the page as soon as it exists: it must appear whole.
    std::fs::rename(dir.join("report-tmp"), dir.join("report")).unwrap();
    assert!(report_html.exists(), "{lines:?}");
    let cdp = cdp.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&cdp.stderr);
    assert!(cdp.status.success(), "cdp.py failed: {stderr}");
    let seen: serde_json::Value = serde_json::from_slice(&cdp.stdout).unwrap();
    let n = |k: &str| seen[k].as_f64().unwrap_or(0.0);
    assert!(n("first_points") >= 1.0, "{seen}");
    assert!(
        n("second_points") > n("first_points"),
        "the charts gained no point in a second: {seen}"
    );
    assert!(
        n("max_p99_us_drawn") >= 500_000.0,
        "the stall is not in the p99 chart: {seen}"
    );
    assert_eq!(
        seen["slo_line_stroke"], "#d62728",
        "the broken --slo line is not red: {seen}"
    );
    assert!(
        n("late_points") >= n("first_points_when_late_joined") - 2.0
            && n("late_points") > n("first_points"),
        "a late page did not get the history: {seen}"
    );
    assert_eq!(seen["became_report"], true, "{seen}");
    assert!(seen["download_href"].as_str().unwrap().starts_with("blob:"));
    let final_page = std::fs::read_to_string(dir.join("final-page.html")).unwrap();
    let report_page = std::fs::read_to_string(dir.join("report-page.html")).unwrap();
    assert!(final_page.contains("chart-latency"), "{final_page:.300}");
    assert!(
        final_page == report_page,
        "the final page differs from foxbench report's"
    );
    // The JSON's stall: one interval's p99 of the better part of a second.
    let worst = v["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["p99_us"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(worst >= 500_000.0, "{worst}");
    for shot in ["dashboard-mid-run.png", "dashboard-final.png"] {
        let (w, h) = png_size(&dir.join(shot));
        assert!(w >= 800 && h >= 600, "{shot}: {w}x{h}");
    }
}
