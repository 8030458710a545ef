//! Distributed load on one machine: network namespaces stand in for hosts. A counting
//! server in one namespace, N agents each in its own, joined by veth pairs to a bridge in
//! a namespace of its own (nothing is added to the host's network); the agents are
//! started as a Job starts pods, each after its own delay, all with one `--start-at`,
//! then merged. Needs root (`ip netns`, through testkit's [`Netns`]); without it each test
//! says so in one line and passes, and fails instead under `FOXBENCH_NETNS=require` (CI).

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use testkit::Netns;

use super::{foxbench, result};

const SERVER_IP: &str = "10.77.0.1";
const PORT: u16 = 8080;

#[track_caller]
fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip runs");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bridge namespace, a server namespace and agent namespaces (testkit's [`Netns`]);
/// removed, with every process started in them, on drop (also when a test fails).
struct Net {
    prefix: String,
    namespaces: Vec<(String, Netns)>,
    children: Vec<Child>,
}

impl Net {
    /// The namespaces joined by veth pairs to a bridge, or `None` after testkit's loud skip
    /// when this machine cannot make them.
    fn new(agents: usize) -> Option<Net> {
        static RUN: AtomicU32 = AtomicU32::new(0);
        // Unique per test within this process (testkit adds the process id).
        let prefix = format!("ag{}", RUN.fetch_add(1, Ordering::Relaxed));
        let mut net = Net {
            prefix,
            namespaces: Vec::new(),
            children: Vec::new(),
        };
        let br = net.add("br")?;
        ip(&["-n", &br, "link", "add", "br0", "type", "bridge"]);
        ip(&["-n", &br, "link", "set", "br0", "up"]);
        let hosts: Vec<(String, String)> =
            std::iter::once(("srv".to_string(), SERVER_IP.to_string()))
                .chain((0..agents).map(|i| (format!("a{i}"), format!("10.77.0.{}", 11 + i))))
                .collect();
        for (k, (role, addr)) in hosts.iter().enumerate() {
            let ns = net.add(role)?;
            let port = format!("v{k}");
            ip(&[
                "-n", &br, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns",
                &ns,
            ]);
            ip(&["-n", &br, "link", "set", &port, "master", "br0", "up"]);
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                "eth0",
            ]);
            ip(&["-n", &ns, "link", "set", "eth0", "up"]);
        }
        Some(net)
    }

    /// A namespace for `role` (loopback up); its name.
    fn add(&mut self, role: &str) -> Option<String> {
        let ns = Netns::new(&format!("{}{role}", self.prefix))?;
        let name = ns.name().to_string();
        self.namespaces.push((role.to_string(), ns));
        Some(name)
    }

    /// `program` run inside namespace `role`.
    fn command(&self, role: &str, program: &str) -> Command {
        let (_, ns) = self
            .namespaces
            .iter()
            .find(|(r, _)| r == role)
            .unwrap_or_else(|| panic!("no namespace {role}"));
        let mut c = ns.exec();
        c.arg(program);
        c
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // The processes first; the namespaces are deleted as they drop, after this.
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The counting server, started in the server namespace; returns its index in children.
fn start_server(net: &mut Net) -> usize {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agents/counting_server.py");
    let mut child = net
        .command("srv", "python3")
        .arg(script)
        .args([SERVER_IP, &PORT.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "listening");
    net.children.push(child);
    net.children.len() - 1
}

/// Stops the server and reads its own counts.
fn server_counts(net: &mut Net, i: usize) -> (u64, u64) {
    let child = &mut net.children[i];
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    let _ = child.wait();
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    (v["ok"].as_u64().unwrap(), v["accepts"].as_u64().unwrap())
}

fn rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap();
    let out = Command::new("date")
        .args([
            "-u",
            "-d",
            &format!("@{}.{:09}", d.as_secs(), d.subsec_nanos()),
        ])
        .arg("+%Y-%m-%dT%H:%M:%S.%NZ")
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Starts `n` agents as a Job starts pods: agent `i` after `delays[i]`, each with
/// `--shard i/n` and the same `--start-at`; returns their children's indices.
fn start_agents(
    net: &mut Net,
    n: usize,
    load: &[&str],
    start_at: &str,
    delays: &[u64],
) -> Vec<usize> {
    let began = Instant::now();
    let mut idx = Vec::new();
    for i in 0..n {
        let due = Duration::from_millis(delays[i % delays.len()]);
        if let Some(rest) = due.checked_sub(began.elapsed()) {
            std::thread::sleep(rest);
        }
        let child = net
            .command(&format!("a{i}"), env!("CARGO_BIN_EXE_foxbench"))
            .arg("load")
            .args([
                "--shard",
                &format!("{i}/{n}"),
                "--start-at",
                start_at,
                "--json",
                "-",
                "-q",
            ])
            .args(load)
            .arg(format!("http://{SERVER_IP}:{PORT}/"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("foxbench runs");
        net.children.push(child);
        idx.push(net.children.len() - 1);
    }
    idx
}

/// Waits for an agent: its exit code, stdout and stderr.
fn finish(net: &mut Net, i: usize) -> (Option<i32>, Vec<u8>, String) {
    let child = &mut net.children[i];
    let mut out = Vec::new();
    let mut err = String::new();
    std::io::Read::read_to_end(child.stdout.as_mut().unwrap(), &mut out).unwrap();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    let status = child.wait().unwrap();
    (status.code(), out, err)
}

/// Runs `foxbench merge` on `input` (a stream on stdin).
fn merge(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut c = foxbench()
        .arg("merge")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(c.stdin.as_mut().unwrap(), input).unwrap();
    drop(c.stdin.take());
    c.wait_with_output().unwrap()
}

/// N agents, a plan of `-c connections -n requests`, merged; checks everything against
/// the server's own counts; returns the measured start skew, ms.
/// Nothing when the namespaces cannot be made (testkit's skip).
fn agents_against_counting_server(n: usize, connections: u64, requests: u64) -> Option<f64> {
    let mut net = Net::new(n)?;
    let server = start_server(&mut net);
    // Pods become ready at different times; the instant leaves room for the slowest on a
    // loaded machine.
    let start_at = rfc3339(SystemTime::now() + Duration::from_millis(2500 + 150 * n as u64));
    let c = connections.to_string();
    let r = requests.to_string();
    let agents = start_agents(
        &mut net,
        n,
        &["-c", &c, "-n", &r, "-t", "1"],
        &start_at,
        &[0, 400, 900],
    );
    let mut stream = Vec::new();
    let mut starts = Vec::new();
    for (i, &a) in agents.iter().enumerate() {
        let (code, out, err) = finish(&mut net, a);
        assert_eq!(code, Some(0), "agent {i}: {err}");
        let v = result(&out);
        let share = |t: u64| t / n as u64 + u64::from((i as u64) < t % n as u64);
        // Each agent's share is exact.
        assert_eq!(v["shard"]["index"], i as u64);
        assert_eq!(v["config"]["connections"], share(connections));
        assert_eq!(v["requests"]["sent"], share(requests));
        assert_eq!(v["requests"]["ok"], share(requests));
        starts.push(v["start"]["started_unix_ns"].as_u64().unwrap());
        // As kubectl logs prints pods: stdout and stderr together, with noise between.
        stream.extend_from_slice(format!("pod a{i} log line\n").as_bytes());
        stream.extend_from_slice(&out);
        stream.extend_from_slice(err.as_bytes());
    }
    let (ok, accepts) = server_counts(&mut net, server);
    let out = merge(&["-", "-q"], &stream);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = result(&out.stdout);
    assert_eq!(
        m["requests"]["ok"], ok,
        "merged ok against the server's count"
    );
    assert_eq!(m["requests"]["sent"], requests);
    assert_eq!(m["config"]["connections"], connections);
    // Every agent's connections plus its pre-flight connect.
    assert_eq!(
        m["connections"]["opened"].as_u64().unwrap() + n as u64,
        accepts,
        "connections opened against the server's accepts"
    );
    let a = &m["agents"];
    assert_eq!(a["agents"].as_array().unwrap().len(), n);
    assert_eq!(a["incomplete"], false);
    let skew_ms = a["start_skew_ms"].as_f64().unwrap();
    let spread = (starts.iter().max().unwrap() - starts.iter().min().unwrap()) as f64 / 1e6;
    assert!((skew_ms - spread).abs() < 1e-3, "{skew_ms} vs {spread}");
    eprintln!("{n} agents: start skew {skew_ms:.2} ms; merged ok {ok} = server ok {ok}, accepts {accepts}");
    assert!(
        skew_ms < 50.0,
        "start skew {skew_ms} ms with every agent ready before the instant"
    );
    Some(skew_ms)
}

#[test]
fn three_agents_merge_to_the_servers_counts() {
    agents_against_counting_server(3, 31, 6001);
}

#[test]
fn eight_agents_start_together() {
    agents_against_counting_server(8, 40, 8000);
}

#[test]
fn a_killed_agent_is_a_missing_shard() {
    let Some(mut net) = Net::new(3) else {
        return;
    };
    let server = start_server(&mut net);
    let at = SystemTime::now() + Duration::from_millis(2500);
    let start_at = rfc3339(at);
    let agents = start_agents(
        &mut net,
        3,
        &["-c", "6", "-R", "300", "-d", "4s", "-t", "1"],
        &start_at,
        &[0, 200, 400],
    );
    // Kill agent 1 once the run is under way.
    let deadline = Instant::now() + Duration::from_secs(30);
    while SystemTime::now() < at + Duration::from_millis(800) {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    // `ip netns exec` execs foxbench, so the child is foxbench itself. Agent 1 is killed
    // (no result at all); agent 2 is stopped with SIGTERM (an interrupted, partial result).
    net.children[agents[1]].kill().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(net.children[agents[2]].id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let mut docs = Vec::new();
    for (i, &a) in agents.iter().enumerate() {
        let (code, out, err) = finish(&mut net, a);
        if i == 1 {
            assert_eq!(code, None, "killed by a signal");
            assert!(out.is_empty(), "a killed agent writes nothing");
            continue;
        }
        assert_eq!(code, Some(0), "agent {i}: {err}");
        let v = result(&out);
        assert_eq!(v["interrupted"], i == 2, "agent {i}");
        docs.push(out);
    }
    let _ = server_counts(&mut net, server);
    let both = [docs[0].clone(), docs[1].clone()].concat();
    for (stream, needle) in [
        (&both, "shard 2 was interrupted, its result is partial"),
        (&docs[0], "missing shards 1, 2 of 3"),
    ] {
        let out = merge(&["-", "-q"], stream);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
        assert!(out.stdout.is_empty());
    }
    let out = merge(&["-", "-q", "--partial-ok"], &both);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("incomplete merge (--partial-ok)"), "{err}");
    let m = result(&out.stdout);
    assert_eq!(m["agents"]["missing"], serde_json::json!([1]));
    assert_eq!(m["agents"]["partial"], serde_json::json!([2]));
    assert_eq!(m["agents"]["incomplete"], true);
    assert_eq!(m["interrupted"], true);
}

#[test]
fn an_agent_ready_after_the_instant_fails_unless_late_is_fine() {
    let Some(mut net) = Net::new(1) else {
        return;
    };
    let _server = start_server(&mut net);
    let past = rfc3339(SystemTime::now() - Duration::from_secs(1));
    let a = start_agents(&mut net, 1, &["-n", "10"], &past, &[0]);
    let (code, out, err) = finish(&mut net, a[0]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("--late-ok"), "{err}");
    assert!(out.is_empty());
    let a = start_agents(&mut net, 1, &["-n", "10", "--late-ok"], &past, &[0]);
    let (code, out, err) = finish(&mut net, a[0]);
    assert_eq!(code, Some(0), "{err}");
    let v = result(&out);
    assert!(v["start"]["late_ms"].as_f64().unwrap() > 900.0);
}

/// The Job's rendered command, run as each pod would run it (the index substituted), on
/// loopback: it parses with `load`'s own parser, and its agents merge to the server's count.
#[test]
fn the_rendered_job_runs_as_its_pods_would() {
    let s = super::redirect_server();
    let out = foxbench()
        .args([
            "k8s-job",
            "--agents",
            "2",
            "--image",
            "foxbench:test",
            "--start-at",
            "+3s",
            "--",
        ])
        .args(["-c", "5", "-n", "999", &s.url()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8(out.stdout).unwrap();
    for want in [
        "completionMode: Indexed",
        "completions: 2",
        "parallelism: 2",
        "topologyKey: kubernetes.io/hostname",
    ] {
        assert!(yaml.contains(want), "{want}: {yaml}");
    }
    let line = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("args: "))
        .expect("an args line");
    let argv: Vec<String> = serde_json::from_str(line).expect("args is a flow sequence of strings");
    assert!(argv.iter().any(|a| a == "$(JOB_COMPLETION_INDEX)/2"));
    let pods: Vec<_> = (0..2)
        .map(|i| {
            let argv: Vec<String> = argv
                .iter()
                .map(|a| a.replace("$(JOB_COMPLETION_INDEX)", &i.to_string()))
                .collect();
            foxbench()
                .args(&argv)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut stream = Vec::new();
    for p in pods {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stream.extend_from_slice(&out.stdout);
    }
    let out = merge(&["-", "-q"], &stream);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = result(&out.stdout);
    assert_eq!(m["requests"]["ok"], 999);
    assert_eq!(m["agents"]["agents"].as_array().unwrap().len(), 2);
    // The text report and `foxbench report`'s page render the merged result's agents.
    let text = String::from_utf8_lossy(&merge(&["-"], &stream).stderr).to_string();
    assert!(
        text.contains("Agents:                 2 of 2 merged, start skew"),
        "{text}"
    );
    let dir = std::env::temp_dir().join(format!("fb-job-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("merged.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let rep = foxbench().arg("report").arg(&file).output().unwrap();
    assert!(
        rep.status.success(),
        "{}",
        String::from_utf8_lossy(&rep.stderr)
    );
    let html = std::fs::read_to_string(dir.join("merged.html")).unwrap();
    assert!(
        html.contains("<section id=\"agents\">") && html.contains("2 of 2"),
        "{html}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.requests() < 999 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(s.requests(), 999);
}

#[test]
fn bad_shard_and_start_values_are_one_line_each() {
    let url = "http://127.0.0.1:9/";
    for (shard, needle) in [
        ("0/0", "N must be 1 to"),
        ("3/3", "I must be below N"),
        ("1/0", "N must be 1 to"),
        ("garbage", "expected I/N"),
    ] {
        super::usage_error(&["load", "--shard", shard, url], needle);
    }
    super::usage_error(
        &["load", "--shard", "2/3", "-c", "2", url],
        "--shard 2/3: connections 2 cannot be shared by 3 agents",
    );
    super::usage_error(
        &["load", "--shard", "0/3", "-n", "2", url],
        "requests 2 cannot be shared by 3 agents",
    );
    super::usage_error(
        &["load", "--start-at", "tomorrow", url],
        "invalid start instant \"tomorrow\"",
    );
    super::usage_error(&["load", "--late-ok", url], "--start-at");
}

#[test]
fn merge_names_a_file_that_is_not_a_result() {
    let dir = std::env::temp_dir().join(format!("fb-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"something else\"}").unwrap();
    let bad = bad.to_str().unwrap().to_string();
    super::usage_error(
        &["merge", &bad],
        &format!("{bad}: not a foxbench load --json result"),
    );
    super::usage_error(
        &["merge", "/nonexistent/x.json"],
        "cannot read /nonexistent/x.json",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
