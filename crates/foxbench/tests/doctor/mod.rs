//! `foxbench doctor` end to end: its flags and JSON, and its findings against the real
//! failures they predict: `ulimit -n 1024` in a subshell, and a narrowed port range and a
//! small `somaxconn` in a network namespace made for the test, under `foxbench load`
//! against the C epoll server.

use super::*;
use std::io::BufRead as _;
use std::path::PathBuf;
use testkit::Netns;

fn doctor_schema() -> jsonschema::Validator {
    let text = include_str!("../../../../schemas/doctor.schema.json");
    let schema: Value = serde_json::from_str(text).expect("schema is JSON");
    jsonschema::validator_for(&schema).expect("schema compiles")
}

/// Parses `doctor --json` output and validates it against the committed schema.
#[track_caller]
fn doc(out: &Output) -> Value {
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let errors: Vec<String> = doctor_schema()
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
    let shorts = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "short")
        .count() as u64;
    assert_eq!(v["short"].as_u64(), Some(shorts));
    let want = if shorts == 0 { 0 } else { 1 };
    assert_eq!(out.status.code(), Some(want), "exit 1 exactly when short");
    v
}

#[track_caller]
fn finding<'a>(v: &'a Value, check: &str) -> &'a Value {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == check)
        .unwrap_or_else(|| panic!("no {check} in {v}"))
}

#[test]
fn bad_flags_are_one_line_and_exit_2() {
    usage_error(&["doctor", "--connections", "0"], "--connections");
    usage_error(&["doctor", "--connections", "0"], "at least 1");
    usage_error(&["doctor", "-c", "many"], "whole number");
    usage_error(&["doctor", "--rate", "0"], "--rate");
    usage_error(&["doctor", "--bogus"], "--bogus");
}

#[test]
fn json_follows_the_schema_and_one_connection_is_short_of_nothing() {
    let out = run(&["doctor", "--json", "--connections", "1"]);
    let v = doc(&out);
    assert_eq!(v["short"], 0, "{v}");
    assert_eq!(v["demand"]["connections"], 1);
    assert_eq!(v["findings"].as_array().unwrap().len(), 16);
    // The text form: one line per check, and the verdict.
    let out = run(&["doctor", "--connections", "1"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("ok      net.core.somaxconn ")),
        "{text}"
    );
    assert!(text.ends_with("nothing short\n"), "{text}");
    // The UDP buffer caps need something only for a run over HTTP/3, and are read from
    // the machine's own settings.
    let cap = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/core/{name}"))
            .unwrap()
            .trim()
            .to_string()
    };
    let find = |v: &serde_json::Value, check: &str| {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["check"] == check)
            .cloned()
            .unwrap_or_else(|| panic!("no {check} in {v}"))
    };
    let rmem = find(&v, "net.core.rmem_max");
    assert_eq!(
        (rmem["needed"].as_str(), rmem["severity"].as_str()),
        (Some("-"), Some("ok"))
    );
    let h3 = doc(&run(&["doctor", "--json", "--connections", "1", "--http3"]));
    for name in ["rmem_max", "wmem_max"] {
        let f = find(&h3, &format!("net.core.{name}"));
        assert_eq!(f["observed"], cap(name), "{f}");
        assert_eq!(f["needed"], ::load::UDP_BUFFER_BYTES.to_string(), "{f}");
        let enough = cap(name).parse::<usize>().unwrap() >= ::load::UDP_BUFFER_BYTES;
        assert_eq!(f["severity"] == "ok", enough, "{f}");
    }
}

/// `sh -c 'ulimit -n LIMIT; exec foxbench ARGS'`.
fn under_ulimit(limit: u64, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_foxbench"))
        .args(args)
        .output()
        .expect("sh runs")
}

#[test]
fn ulimit_1024_is_short_for_10000_connections_as_load_finds() {
    let v = doc(&under_ulimit(1024, &["doctor", "--json"]));
    let hard = finding(&v, "ulimit -Hn");
    assert_eq!(hard["severity"], "short", "{v}");
    assert_eq!(hard["observed"], "1024");
    assert_eq!(hard["fix"], "ulimit -n 10064");
    // The failure it predicts.
    let server = redirect_server();
    let out = under_ulimit(1024, &["load", "-c", "10000", "-d", "1s", &server.url()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("hard limit is 1024"), "{err}");
    // Its fix (as root) lets the run start: the same shell, the fix first.
    let v = doc(&under_ulimit(10064, &["doctor", "--json"]));
    assert_eq!(finding(&v, "ulimit -Hn")["severity"], "ok", "{v}");
    let out = under_ulimit(
        10064,
        &["load", "-c", "10000", "-n", "20000", &server.url()],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 1024 is enough for 900 connections: ok, and foxbench agrees.
    let v = doc(&under_ulimit(1024, &["doctor", "--json", "-c", "900"]));
    assert_eq!(finding(&v, "ulimit -Hn")["severity"], "ok", "{v}");
}

#[test]
fn ulimit_u_300_is_short_for_1000_threads_as_python_finds() {
    // RLIMIT_NPROC does not bind root: run as nobody (setpriv, util-linux).
    let as_nobody = |script: &str| {
        Command::new("bash")
            .arg("-c")
            .arg(format!(
                "ulimit -u 300 && exec setpriv --reuid=nobody --regid=nogroup --clear-groups {script}"
            ))
            .output()
            .expect("bash runs")
    };
    let probe = as_nobody("true");
    if !probe.status.success() {
        let why = format!(
            "cannot run as nobody with setpriv: {}",
            String::from_utf8_lossy(&probe.stderr).trim()
        );
        assert!(
            std::env::var("FOXBENCH_NETNS").as_deref() != Ok("require"),
            "FOXBENCH_NETNS=require: {why}"
        );
        eprintln!("skipped: {why}");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_foxbench");
    let v = doc(&as_nobody(&format!(
        "{bin} doctor --json -c 100 --threads 1000"
    )));
    let f = finding(&v, "ulimit -u");
    assert_eq!(f["severity"], "short", "{v}");
    assert_eq!(f["observed"], "300");
    assert_eq!(f["fix"], "ulimit -u 1064");
    // The failure it predicts: the 300th thread of the user cannot start.
    let py = "import threading\nev=threading.Event()\nn=0\ntry:\n  for _ in range(1000):\n    threading.Thread(target=ev.wait).start(); n+=1\nexcept RuntimeError as e:\n  print(n)\nev.set()";
    let out = as_nobody(&format!("/usr/bin/python3 -c '{py}'"));
    let started: u64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{out:?}"));
    assert!(
        started < 300,
        "{started} threads started under ulimit -u 300"
    );
    // As root it is not enforced, and the doctor says so.
    let v = doc(&under_ulimit(
        1024,
        &["doctor", "--json", "-c", "100", "--threads", "1000"],
    ));
    assert_eq!(finding(&v, "ulimit -u")["severity"], "ok", "{v}");
}

/// What these tests do inside their namespace (testkit's [`Netns`]).
trait InNetns {
    /// `foxbench ARGS` inside.
    fn foxbench(&self, args: &[&str]) -> Output;
    /// Starts the C epoll server on `port` inside.
    fn serve(&mut self, port: u16);
    /// TcpExt's ListenOverflows inside.
    fn listen_overflows(&self) -> u64;
}

impl InNetns for Netns {
    fn foxbench(&self, args: &[&str]) -> Output {
        self.run(env!("CARGO_BIN_EXE_foxbench"), args)
    }

    /// Starts the C epoll server (built with make) on `port` inside; waits for its
    /// "listening" line (on stderr).
    fn serve(&mut self, port: u16) {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../targets/c-epoll");
        let made = Command::new("make")
            .arg("-C")
            .arg(&dir)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(made.success(), "make -C targets/c-epoll");
        let mut child = self
            .exec()
            .arg(dir.join("server"))
            .args([&port.to_string(), "5"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // It says so on stderr, or exits (EOF) saying why.
        let mut line = String::new();
        std::io::BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("listening"), "{line:?}");
        self.adopt(child);
    }

    fn listen_overflows(&self) -> u64 {
        let text = String::from_utf8(self.sh("cat /proc/net/netstat").stdout).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("TcpExt:")).collect();
        let (names, values) = (lines[0], lines[1]);
        names
            .split_whitespace()
            .zip(values.split_whitespace())
            .find(|(n, _)| *n == "ListenOverflows")
            .map(|(_, v)| v.parse().unwrap())
            .unwrap()
    }
}

/// `foxbench load --json` inside the namespace: its parsed result.
#[track_caller]
fn load_in(ns: &Netns, args: &[&str]) -> Value {
    let mut all = vec!["load", "--json", "-"];
    all.extend_from_slice(args);
    let out = ns.foxbench(&all);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    result(&out.stdout)
}

#[test]
fn a_narrow_port_range_is_short_as_load_finds_and_its_fix_fixes_it() {
    let Some(mut ns) = Netns::new("ports") else {
        return;
    };
    let set = ns.sh("sysctl -qw net.ipv4.ip_local_port_range='61000 61999'");
    assert!(set.status.success());
    let v = doc(&ns.foxbench(&["doctor", "--json", "-c", "2000"]));
    let f = finding(&v, "net.ipv4.ip_local_port_range");
    assert_eq!(f["severity"], "short", "{v}");
    assert_eq!(f["observed"], "61000 61999");
    let fix = f["fix"].as_str().unwrap().to_string();
    ns.serve(18080);
    let url = "http://127.0.0.1:18080/";
    let r = load_in(&ns, &["-c", "2000", "-d", "1s", url]);
    assert!(
        r["errors"]["connect_ports_exhausted"].as_u64().unwrap() > 0,
        "the failure the doctor predicts: {}",
        r["errors"]
    );
    // The doctor's own command, run as printed.
    assert!(ns.sh(&fix).status.success(), "{fix}");
    let v = doc(&ns.foxbench(&["doctor", "--json", "-c", "2000"]));
    assert_eq!(
        finding(&v, "net.ipv4.ip_local_port_range")["severity"],
        "ok"
    );
    let r = load_in(&ns, &["-c", "2000", "-d", "1s", url]);
    assert_eq!(r["errors"]["connect"], 0, "{}", r["errors"]);
}

#[test]
fn a_small_somaxconn_is_short_as_the_listen_queue_finds_and_its_fix_fixes_it() {
    let Some(mut ns) = Netns::new("backlog") else {
        return;
    };
    let set = ns.sh("sysctl -qw net.core.somaxconn=128 net.ipv4.tcp_max_syn_backlog=2048");
    assert!(set.status.success());
    let v = doc(&ns.foxbench(&["doctor", "--json", "-c", "10000"]));
    let f = finding(&v, "net.core.somaxconn");
    assert_eq!(f["severity"], "short", "{v}");
    let fix = f["fix"].as_str().unwrap().to_string();
    // c-epoll listens with a backlog of 4096; the kernel cuts it to somaxconn.
    ns.serve(18080);
    let url = "http://127.0.0.1:18080/";
    let before = ns.listen_overflows();
    load_in(&ns, &["-c", "10000", "-d", "1s", url]);
    let overflowed = ns.listen_overflows() - before;
    assert!(overflowed > 0, "the failure the doctor predicts");
    assert!(ns.sh(&fix).status.success(), "{fix}");
    // A listener's queue is sized at listen(): the server starts again under the fix.
    ns.kill_adopted();
    ns.serve(18081);
    let v = doc(&ns.foxbench(&["doctor", "--json", "-c", "10000"]));
    assert_eq!(finding(&v, "net.core.somaxconn")["severity"], "ok");
    let before = ns.listen_overflows();
    load_in(&ns, &["-c", "10000", "-d", "1s", "http://127.0.0.1:18081/"]);
    let after = ns.listen_overflows() - before;
    assert!(
        after < overflowed,
        "{after} overflows with somaxconn 4096, {overflowed} with 128"
    );
}

#[test]
fn the_shootout_warns_before_a_level_that_ulimit_1024_cannot_hold() {
    let out = std::env::temp_dir().join(format!("foxbench-doctor-{}-shootout", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let faulty = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/faulty");
    let suite = out.join("suite.toml");
    std::fs::write(
        &suite,
        r#"name = "limits"
images = 3

[plan]
levels = [4, 2000]
duration = "300ms"
repeats = 1
warmup = "100ms"
warmup_slice = "100ms"
timeout = "2s"
stop_grace = "500ms"

[[scenario]]
name = "redirect"
[scenario.expect]
status = 302

[[target]]
name = "good"
language = "Python"
dir = "."
requires = ["python3"]
start = "python3 fox.py {port} {images} good"
"#,
    )
    .unwrap();
    let o = under_ulimit(
        1024,
        &[
            "shootout",
            suite.to_str().unwrap(),
            "--root",
            faulty.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--cache",
            out.join("cache").to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        text.contains("redirect c2000: warning: machine limits short for 2000 connections: ulimit -Hn 1024, needs 2064: ulimit -n 2064"),
        "{text}"
    );
    assert!(!text.contains("redirect c4: warning"), "{text}");
    let v = super::shootout::results_of(&out);
    let cells = super::shootout::target_of(&v, "good")["cells"]
        .as_array()
        .unwrap()
        .clone();
    let limits = |level: &str| {
        cells
            .iter()
            .find(|c| c["level"] == level)
            .unwrap_or_else(|| panic!("no {level}: {cells:?}"))
            .get("limits")
            .cloned()
    };
    assert_eq!(limits("c4"), None, "nothing short for 4 connections");
    let c2000 = limits("c2000").expect("limits recorded");
    assert_eq!(c2000[0]["check"], "ulimit -Hn");
    assert_eq!(c2000[0]["observed"], "1024");
    assert_eq!(c2000[0]["fix"], "ulimit -n 2064");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("ulimit -Hn 1024, needs 2064"),
        "the report shows it"
    );
    let _ = std::fs::remove_dir_all(&out);
}
