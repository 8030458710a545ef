//! `--idle spin|sleep|auto` end to end: a spinning client counts its spin, never sleeps
//! per response, and `auto` spins only on CPUs no server uses.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::support::{Server, REDIRECT};
use super::{foxbench, result, run, usage_error};

/// Two CPUs this process may run on, for foxbench and a server apart; `None` on a
/// machine (or an affinity) with one.
fn two_cpus() -> Option<(usize, usize)> {
    let cpus: Vec<usize> = probe::placement::own_cpus().iter().collect();
    match cpus.as_slice() {
        [a, b, ..] => Some((*a, *b)),
        _ => {
            eprintln!("skipped: one CPU, nothing to pin apart");
            None
        }
    }
}

/// Runs `foxbench load ARGS --json -` pinned to `cpu` with taskset; returns the checked
/// JSON (schema and request accounting) and the stderr.
#[track_caller]
fn pinned_load(cpu: usize, args: &[&str]) -> (serde_json::Value, String) {
    let out = Command::new("taskset")
        .arg("-c")
        .arg(cpu.to_string())
        .arg(env!("CARGO_BIN_EXE_foxbench"))
        .arg("load")
        .args(args)
        .args(["--json", "-"])
        .output()
        .expect("taskset runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {err}");
    (result(&out.stdout), err)
}

/// Answers each request after `delay`, keeping the connection.
fn delaying_server(delay: Duration) -> Server {
    Server::spawn(move |mut c| {
        while let Some(_req) = c.next_request() {
            std::thread::sleep(delay);
            if !c.send(REDIRECT) {
                return;
            }
        }
    })
}

/// A keep-alive HTTP/1.1 server in a python process of its own, pinned to `cpu`: a server
/// whose CPUs are not the test process's.
struct PinnedServer {
    child: Child,
    port: u16,
}

const PY_SERVER: &str = r#"
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;

impl PinnedServer {
    fn start(cpu: usize) -> PinnedServer {
        let mut child = Command::new("taskset")
            .arg("-c")
            .arg(cpu.to_string())
            .args(["python3", "-c", PY_SERVER])
            .stdout(Stdio::piped())
            .spawn()
            .expect("taskset python3 runs");
        // The port is printed once the socket listens.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the server prints its port");
        let port = line.trim().parse().expect("a port number");
        PinnedServer { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

impl Drop for PinnedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn spin_counts_its_spin_and_work_below_cpu() {
    let Some((a, _)) = two_cpus() else { return };
    let s = super::support::redirect_server();
    let url = s.url();
    let (v, _) = pinned_load(
        a,
        &["--idle", "spin", "-c", "10", "-t", "1", "-n", "20000", &url],
    );
    assert_eq!(v["requests"]["ok"], 20000);
    assert_eq!(v["config"]["idle"], "spin");
    assert_eq!(v["config"]["coalesce"], "off", "spin leaves coalescing out");
    let c = &v["client"];
    let spin = c["spin_s"].as_f64().unwrap();
    assert!(spin > 0.0, "{c}");
    let cpu = c["cpu_us_per_request"].as_f64().unwrap();
    let work = c["work_us_per_request"].as_f64().unwrap();
    assert!(work < cpu, "work {work} not below CPU {cpu}: {c}");
    // The text names the mode and the work.
    let out = foxbench()
        .args(["load", "--idle", "spin", "-c", "2", "-n", "500", &url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Idle:          spin ("), "{text}");
    assert!(text.contains("coalescing not in effect"), "{text}");
}

#[test]
fn spin_does_not_sleep_per_response() {
    let Some((a, _)) = two_cpus() else { return };
    let s = delaying_server(Duration::from_micros(200));
    let url = s.url();
    let per_request = |mode: &str| {
        let (v, _) = pinned_load(
            a,
            &["--idle", mode, "-c", "1", "-t", "1", "-n", "1000", &url],
        );
        assert_eq!(v["config"]["idle"], mode);
        v["client"]["voluntary_ctxt_per_request"]
            .as_f64()
            .unwrap_or_else(|| panic!("{mode}: {}", v["client"]))
    };
    let sleep = per_request("sleep");
    let spin = per_request("spin");
    // Each response wakes a sleeping worker: about one switch per request.
    assert!(sleep > 0.5, "sleep: {sleep} switches per request");
    assert!(
        spin < 0.01,
        "spin: {spin} switches per request, sleep {sleep}"
    );
}

#[test]
fn auto_spins_only_on_cpus_the_server_does_not_use() {
    let Some((a, b)) = two_cpus() else { return };
    let apart = PinnedServer::start(b);
    let (v, err) = pinned_load(a, &["-c", "2", "-t", "1", "-n", "300", &apart.url()]);
    assert_eq!(v["config"]["idle"], "spin", "{}", v["config"]);
    assert_eq!(
        v["config"]["idle_reason"],
        format!("foxbench on CPU {a}, the server on CPU {b}")
    );
    assert!(!err.contains("spinning takes"), "{err}");
    drop(apart);
    let shared = PinnedServer::start(a);
    let (v, _) = pinned_load(a, &["-c", "2", "-t", "1", "-n", "300", &shared.url()]);
    assert_eq!(v["config"]["idle"], "sleep", "{}", v["config"]);
    assert_eq!(
        v["config"]["idle_reason"],
        format!("the server shares CPU {a}")
    );
    // An explicit spin there runs, with a warning of one line.
    let (v, err) = pinned_load(
        a,
        &[
            "--idle",
            "spin",
            "-c",
            "2",
            "-t",
            "1",
            "-n",
            "300",
            &shared.url(),
        ],
    );
    assert_eq!(v["config"]["idle"], "spin");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("spinning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains(&format!(
            "spinning takes the server's CPU: it may run on CPU {a} too"
        )),
        "{err}"
    );
}

#[test]
fn coalescing_with_spin_is_refused() {
    let url = "http://127.0.0.1:1/";
    for coalesce in ["off", "50us"] {
        usage_error(
            &["load", "--idle", "spin", "--coalesce", coalesce, url],
            "--coalesce has no meaning when workers spin, which never sleep: drop it, or use --idle auto",
        );
    }
    usage_error(
        &["load", "--idle", "busy", url],
        "expected spin, sleep or auto",
    );
    // sleep and auto keep --coalesce.
    let s = super::support::redirect_server();
    for idle in ["sleep", "auto"] {
        let out = run(&[
            "load",
            "--idle",
            idle,
            "--coalesce",
            "off",
            "-n",
            "5",
            &s.url(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{idle}: {err}");
    }
}
