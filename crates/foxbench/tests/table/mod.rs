//! `foxbench load` with a request table: --urls files, URL templates, and the real avatar
//! service answering `/{hex:6}.svg` in the colour each request asked for.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::support::Server;
use super::{result, run, usage_error};

/// Each request a server saw: its request line and its body.
type Seen = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// Answers every request (reading a Content-Length body) and records its line and body.
fn recording_server() -> (Server, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let s = Server::spawn(move |mut c| {
        while let Some(req) = c.next_request() {
            let line = req.head.lines().next().unwrap_or_default().to_string();
            let len = req
                .head
                .lines()
                .find_map(|l| l.strip_prefix("Content-Length: "))
                .map_or(0, |v| v.trim().parse().unwrap_or(0));
            let body = c.take_body(len);
            log.lock().unwrap().push((line, body));
            // A HEAD answer declares the body it does not carry.
            let resp: &[u8] = if req.is_head() {
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n"
            } else {
                b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            };
            if !c.send(resp) {
                return;
            }
        }
    });
    (s, seen)
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("foxbench-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn urls_file_sends_each_line_in_turn_with_its_method_and_body() {
    let (s, seen) = recording_server();
    let dir = temp_dir("urls");
    std::fs::write(dir.join("body.json"), "{\"fox\":1}").unwrap();
    let list = dir.join("urls.txt");
    std::fs::write(
        &list,
        format!(
            "# three shapes\n\nGET /a\nHEAD http://{}/h?x=1\nPOST /p @body.json\n",
            s.addr
        ),
    )
    .unwrap();
    let out = run(&[
        "load",
        "-n",
        "300",
        "-c",
        "3",
        "-t",
        "1",
        "--urls",
        list.to_str().unwrap(),
        "--json",
        "-",
        &s.url(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&out.stdout);
    let mut by_line: BTreeMap<String, u64> = BTreeMap::new();
    for (line, body) in seen.lock().unwrap().iter() {
        *by_line.entry(line.clone()).or_default() += 1;
        if line.starts_with("POST") {
            assert_eq!(
                body, b"{\"fox\":1}",
                "the @file body, read relative to the list"
            );
        }
    }
    let want: BTreeMap<String, u64> = [
        ("GET /a HTTP/1.1", 100),
        ("HEAD /h?x=1 HTTP/1.1", 100),
        ("POST /p HTTP/1.1", 100),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(by_line, want, "one worker cycles the table exactly");
    let table = v["request_table"].as_array().unwrap();
    let rows: Vec<(String, String, u64, u64)> = table
        .iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap().to_string(),
                r["path"].as_str().unwrap().to_string(),
                r["sent"].as_u64().unwrap(),
                r["completed"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("GET".into(), "/a".into(), 100, 100),
            ("HEAD".into(), "/h?x=1".into(), 100, 100),
            ("POST".into(), "/p".into(), 100, 100)
        ]
    );
    assert_eq!(v["config"]["selection"], "round-robin");
    assert!(!v["intervals"].as_array().unwrap().is_empty());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("Request table: 3 shapes, round-robin selection"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_urls_files_and_templates_are_one_line_naming_the_place() {
    let dir = temp_dir("badurls");
    let url = "http://127.0.0.1:1/";
    let cases: [(&str, &str, &str); 7] = [
        (
            "empty.txt",
            "# nothing\n\n",
            "empty.txt: no request in the file",
        ),
        ("nourl.txt", "/a\nGET\n", "nourl.txt:2: \"GET\" has no URL"),
        (
            "word.txt",
            "GET /a body.json\n",
            "word.txt:1: \"body.json\" after the URL",
        ),
        (
            "host.txt",
            "/a\nhttp://127.0.0.2:1/b\n",
            "host.txt:2: 127.0.0.2:1 is not 127.0.0.1:1",
        ),
        (
            "tmpl.txt",
            "GET /{hex:0}\n",
            "tmpl.txt:1: invalid URL template",
        ),
        (
            "body.txt",
            "POST /a @missing.json\n",
            "body.txt:1: cannot read the body file",
        ),
        ("method.txt", "G@T /a\n", "method.txt:1: invalid method"),
    ];
    for (name, text, needle) in cases {
        let f = dir.join(name);
        std::fs::write(&f, text).unwrap();
        usage_error(&["load", "--urls", f.to_str().unwrap(), url], needle);
    }
    let rel = dir.join("rel.txt");
    std::fs::write(&rel, "/a\n").unwrap();
    usage_error(
        &["load", "--urls", rel.to_str().unwrap()],
        "rel.txt:1: /a is a path",
    );
    usage_error(
        &[
            "load",
            "--urls",
            dir.join("none.txt").to_str().unwrap(),
            url,
        ],
        "cannot read --urls",
    );
    // Templates in the URL argument, before any network I/O (port 1 is closed).
    usage_error(&["load", "http://127.0.0.1:1/{hex:99}.svg"], "column 20");
    usage_error(
        &["load", "http://127.0.0.1:1/{uuid:4}"],
        "unknown random part",
    );
    usage_error(&["load", "http://127.0.0.1:1/{hex:6"], "a '{' with no '}'");
    usage_error(&["load", "http://{hex:4}.example/"], "path and query");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The avatar binary: beside foxbench when the workspace was built, else built now.
pub(crate) fn avatar_binary() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_foxbench")).with_file_name("avatar");
    if !bin.exists() {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-q", "-p", "avatar"]);
        if bin.parent().is_some_and(|d| d.ends_with("release")) {
            cmd.arg("--release");
        }
        assert!(cmd.status().unwrap().success(), "cargo build -p avatar");
    }
    bin
}

/// avatar on a free port with its access log on a pipe; the log's lines are collected.
struct Avatar {
    child: std::process::Child,
    addr: std::net::SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Avatar {
    fn start() -> Avatar {
        let mut child = Command::new(avatar_binary())
            .args(["--listen", "127.0.0.1:0", "--workers", "1", "--access-log"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start avatar");
        let mut first = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no listening line: {first:?}"))
            .parse()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = log.clone();
        let stdout = child.stdout.take().unwrap();
        // Read as it is written: a full pipe would make avatar drop log lines.
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        Avatar {
            child,
            addr,
            log,
            reader: Some(reader),
        }
    }

    /// Stops avatar (its access log is flushed on SIGTERM) and returns every log line.
    fn stop(mut self) -> Vec<String> {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "avatar ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.reader.take().unwrap().join().unwrap();
        std::mem::take(&mut *self.log.lock().unwrap())
    }

    /// One GET on a fresh connection: the whole response, read to the close.
    fn get(&self, path: &str) -> String {
        let mut s = std::net::TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }
}

impl Drop for Avatar {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn svg_template_against_avatar_gets_the_colour_each_request_asked_for() {
    let avatar = Avatar::start();
    let url = format!("http://{}/{{hex:6}}.svg", avatar.addr);
    let load = |seed: &str| {
        let out = run(&[
            "load",
            "-n",
            "600",
            "-c",
            "2",
            "-t",
            "1",
            "--seed",
            seed,
            // Anything but 200 is a failure here.
            "--fail-status",
            "100-199,201-999",
            "--json",
            "-",
            &url,
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        result(&out.stdout)
    };
    let a = load("99");
    let b = load("99");
    assert_eq!(a["requests"]["ok"], 600, "{}", a["requests"]);
    assert_eq!(a["status"]["200"], 600, "{}", a["status"]);
    assert_eq!(a["config"]["seed"], 99);
    assert_eq!(b["status"]["200"], 600, "{}", b["status"]);
    // Every response is one SVG of the same size: the bytes read are exactly 600 of them.
    let one = avatar.get("/0a0b0c.svg");
    assert!(
        one.contains("image/svg+xml") && one.contains("#0a0b0c"),
        "{one}"
    );
    let head_and_body = one.len() as u64 - "Connection: close\r\n".len() as u64;
    assert_eq!(a["throughput"]["bytes_read"], 600 * head_and_body, "{one}");
    let log = avatar.stop();
    let paths: Vec<&str> = log
        .iter()
        .filter_map(|l| l.split('"').nth(1))
        .filter_map(|req| req.strip_prefix("GET ")?.strip_suffix(" HTTP/1.1"))
        .filter(|p| *p != "/0a0b0c.svg")
        .collect();
    assert_eq!(paths.len(), 1200, "{} log lines", log.len());
    assert!(
        log.iter().all(|l| l.contains("\" 200 ")),
        "every answer was a 200"
    );
    for p in &paths {
        let hex = p
            .strip_prefix('/')
            .and_then(|p| p.strip_suffix(".svg"))
            .unwrap();
        assert!(
            hex.len() == 6 && hex.bytes().all(|c| c.is_ascii_hexdigit()),
            "{p}"
        );
    }
    // The same seed asked for the same colours (two connections may interleave them).
    let (mut first, mut second) = (paths[..600].to_vec(), paths[600..].to_vec());
    first.sort_unstable();
    second.sort_unstable();
    assert_eq!(first, second, "--seed reproduces the colours");
    first.dedup();
    assert!(
        first.len() > 590,
        "random colours, not one: {} distinct",
        first.len()
    );
}

#[test]
fn svg_bodies_carry_the_colour_of_their_path() {
    // What the load run cannot see (it keeps no bodies): a sample of templated paths,
    // fetched one by one, each answered with an SVG in that colour.
    let avatar = Avatar::start();
    for hex in ["a8db7d", "000000", "ffffff", "12ab9f", "c0ffee"] {
        let resp = avatar.get(&format!("/{hex}.svg"));
        assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
        assert!(resp.contains("Content-Type: image/svg+xml"), "{resp}");
        assert!(resp.contains(&format!("#{hex}")), "{hex}: {resp}");
    }
    avatar.stop();
}
