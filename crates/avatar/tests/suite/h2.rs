//! HTTP/2 (h2c, prior knowledge): h2spec's whole suite, curl's view of the routes, and
//! hostile clients (rapid reset, CONTINUATION flood) while an honest h2load measures.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{require_tool, roundtrip, Avatar};

const H2SPEC_INSTALL: &str = "PATH=$PATH:/usr/local/go/bin GOTOOLCHAIN=local go install github.com/summerwind/h2spec/cmd/h2spec@v2.2.1+incompatible (lands in $(go env GOPATH)/bin)";

/// Where `go install` puts binaries: `$GOBIN`, `$GOPATH/bin`, or `~/go/bin`.
fn go_bin(name: &str) -> Vec<String> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("GOBIN") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(p) = std::env::var_os("GOPATH") {
        dirs.extend(std::env::split_paths(&p).map(|d| d.join("bin")));
    }
    if let Some(h) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(h).join("go/bin"));
    }
    dirs.iter()
        .map(|d| d.join(name).to_string_lossy().into_owned())
        .collect()
}

/// All 145 of h2spec's tests pass. The path is an SVG: the flow-control tests need a
/// response with a body (h2spec skips or fails them on `/`, a 302 without one).
#[test]
fn h2spec_passes_every_test() {
    let candidates = go_bin("h2spec");
    let candidates: Vec<&str> = candidates.iter().map(String::as_str).collect();
    let Some(h2spec) = testkit::require("h2spec", &candidates, H2SPEC_INSTALL) else {
        return;
    };
    let server = Avatar::start(&[]);
    let port = server.addr.port().to_string();
    let out = Command::new(h2spec)
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "-P",
            "/ff8800.svg",
            "-o",
            "5",
        ])
        .output()
        .expect("run h2spec");
    let text = String::from_utf8_lossy(&out.stdout);
    let failures: Vec<&str> = text
        .lines()
        .filter(|l| l.contains('×') || l.trim_start().starts_with("->"))
        .collect();
    assert!(
        text.contains("145 tests, 145 passed, 0 skipped, 0 failed"),
        "h2spec failures:\n{}\n{}\n{}",
        failures.join("\n"),
        text.lines().last().unwrap_or(""),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[track_caller]
fn curl_h2(args: &[&str]) -> String {
    let out = Command::new("curl")
        .args(["-sS", "--http2-prior-knowledge"])
        .args(args)
        .output()
        .expect("run curl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The routes answer over h2 as over HTTP/1.1, and the access log says HTTP/2.0.
#[test]
fn curl_sees_the_same_routes_over_h2() {
    require_tool("curl", "--version", "curl");
    let mut server = Avatar::spawn_with_stdout(
        &["--listen", "127.0.0.1:0", "--workers", "1", "--access-log"],
        Stdio::piped(),
    );
    let log = Arc::new(Mutex::new(String::new()));
    let stdout = server.child.stdout.take().unwrap();
    let log2 = Arc::clone(&log);
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            log2.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    let head = curl_h2(&["-D", "-", "-o", "/dev/null", &server.url("/")]);
    assert!(head.starts_with("HTTP/2 302"), "{head}");
    assert!(
        head.contains("\r\nlocation: https://avatar.example/Renard-"),
        "{head}"
    );
    let w = "\n%{http_code} %{http_version} %{content_type}";
    let svg = curl_h2(&["-w", w, &server.url("/ff8800.svg")]);
    assert!(svg.contains("#ff8800"), "{svg}");
    assert!(
        svg.ends_with("\n200 2 image/svg+xml; charset=utf-8"),
        "{svg}"
    );
    let code =
        |args: &[&str]| curl_h2(&[&["-o", "/dev/null", "-w", "%{http_code}"], args].concat());
    assert_eq!(code(&[&server.url("/healthz")]), "200");
    assert_eq!(code(&["-I", &server.url("/ff8800.svg")]), "200");
    assert_eq!(code(&["-X", "DELETE", &server.url("/")]), "405");
    assert_eq!(code(&[&server.url("/nope.svg")]), "404");
    let metrics = curl_h2(&[&server.url("/metrics")]);
    assert!(
        metrics.contains("avatar_h2_events_total{kind=\"connections\"} 7"),
        "{metrics}"
    );
    testkit::wait_until(Duration::from_secs(10), "the access log's h2 lines", || {
        log.lock()
            .unwrap()
            .contains("\"GET /healthz HTTP/2.0\" 200 3")
    });
    assert!(log.lock().unwrap().contains("\"DELETE / HTTP/2.0\" 405"));
}

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let l = (payload.len() as u32).to_be_bytes();
    let mut f = vec![l[1], l[2], l[3], kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// GET / as HPACK: :method GET, :scheme http, :path /, all from the static table.
const GET_ROOT: [u8; 3] = [0x82, 0x86, 0x84];

/// Sends `attack` (after the preface) on its own connection, reading all the while;
/// returns the error code of the GOAWAY the server sent, once it has closed.
fn attack(server: &Avatar, attack: Vec<u8>) -> Option<u32> {
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let mut all = PREFACE.to_vec();
        all.extend(frame(4, 0, 0, &[]));
        all.extend(attack);
        // The server closes in the middle: a failed write is the expected end.
        let _ = w.write_all(&all);
    });
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    writer.join().unwrap();
    let mut at = 0;
    let mut code = None;
    while at + 9 <= got.len() {
        let len = u32::from_be_bytes([0, got[at], got[at + 1], got[at + 2]]) as usize;
        if got[at + 3] == 7 && at + 9 + len <= got.len() {
            let p = &got[at + 9..];
            code = Some(u32::from_be_bytes([p[4], p[5], p[6], p[7]]));
        }
        at += 9 + len;
    }
    code
}

/// h2load's run with attacks repeated on their own connections until it ends: the first
/// starts while h2load runs, and h2load gets every answer. Returns the attacks made.
fn honest_h2load(server: &Avatar, mut attacks: impl FnMut()) -> u32 {
    let Some(h2load) = testkit::require("h2load", &[], "apt-get install -y nghttp2-client") else {
        return 0;
    };
    const N: &str = "20000";
    let mut child = Command::new(h2load)
        .args(["-n", N, "-c", "4", "-m", "10", &server.url("/")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut made = 0;
    while made == 0 || child.try_wait().unwrap().is_none() {
        assert!(
            made > 0 || child.try_wait().unwrap().is_none(),
            "h2load ended before the first attack: raise N"
        );
        attacks();
        made += 1;
    }
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "requests: {N} total, {N} started, {N} done, {N} succeeded, 0 failed, 0 errored"
        )),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    made
}

/// CVE-2023-44487: streams opened and reset at once, over and over. The attacker gets
/// GOAWAY ENHANCE_YOUR_CALM; the honest client keeps every answer.
#[test]
fn rapid_reset_flood_is_cut_off_while_h2load_keeps_its_answers() {
    let server = Avatar::start(&[]);
    let made = honest_h2load(&server, || {
        let mut flood = Vec::new();
        for i in 0..1500u32 {
            let id = 2 * i + 1;
            flood.extend(frame(1, 0x4 | 0x1, id, &GET_ROOT));
            flood.extend(frame(3, 0, id, &8u32.to_be_bytes()));
        }
        assert_eq!(attack(&server, flood), Some(11), "GOAWAY ENHANCE_YOUR_CALM");
    });
    eprintln!("{made} rapid-reset connections while h2load ran");
    let cut_off = server.metric("avatar_h2_events_total{kind=\"rapid_reset\"}");
    assert_eq!(
        cut_off,
        u64::from(made),
        "one GOAWAY per attacking connection"
    );
}

/// CVE-2024-27316: a header block that never ends, as empty CONTINUATION frames and as
/// full ones. Each attacker gets GOAWAY ENHANCE_YOUR_CALM; the honest client keeps its answers.
#[test]
fn continuation_flood_is_cut_off_while_h2load_keeps_its_answers() {
    let server = Avatar::start(&[]);
    let made = honest_h2load(&server, || {
        for chunk in [0usize, 16_384] {
            let mut flood = frame(1, 0, 1, &GET_ROOT);
            for _ in 0..200 {
                flood.extend(frame(9, 0, 1, &vec![0x82; chunk]));
            }
            assert_eq!(attack(&server, flood), Some(11), "chunk {chunk}");
        }
    });
    eprintln!("{made} pairs of CONTINUATION floods while h2load ran");
    let cut_off = server.metric("avatar_h2_events_total{kind=\"continuation_flood\"}");
    assert_eq!(
        cut_off,
        2 * u64::from(made),
        "one GOAWAY per attacking connection"
    );
}

/// A first read that is only the start of the preface waits for the rest (no HTTP/1 400,
/// no close); a first line that is no HTTP at all is closed without an answer.
#[test]
fn a_split_preface_waits_and_a_non_http_line_is_closed() {
    let server = Avatar::start(&[]);
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_nodelay(true).unwrap();
    s.write_all(&PREFACE[..10]).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut byte = [0u8; 1];
    match s.read(&mut byte) {
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) => {}
        other => panic!("the server answered a partial preface: {other:?}"),
    }
    let mut rest = PREFACE[10..].to_vec();
    rest.extend(frame(4, 0, 0, &[]));
    rest.extend(frame(
        1,
        0x5,
        1,
        &[
            0x82, 0x86, 0x04, 8, b'/', b'h', b'e', b'a', b'l', b't', b'h', b'z',
        ],
    ));
    s.write_all(&rest).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // SETTINGS, SETTINGS ACK, then the answer on stream 1.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let mut kinds = Vec::new();
    while !kinds.contains(&(0u8, 1u32)) {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed after {kinds:?}");
        got.extend_from_slice(&buf[..n]);
        kinds.clear();
        let mut at = 0;
        while at + 9 <= got.len() {
            let len = u32::from_be_bytes([0, got[at], got[at + 1], got[at + 2]]) as usize;
            let stream = u32::from_be_bytes([got[at + 5], got[at + 6], got[at + 7], got[at + 8]]);
            if at + 9 + len > got.len() {
                break;
            }
            kinds.push((got[at + 3], stream));
            at += 9 + len;
        }
    }
    assert_eq!(kinds[0], (4, 0), "SETTINGS first: {kinds:?}");
    assert!(kinds.contains(&(1, 1)), "HEADERS on stream 1: {kinds:?}");

    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"INVALID CONNECTION PREFACE\r\n\r\n").unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
}

/// A client that opens streams with a zero window and never reads, but PINGs: flow control
/// holds the responses, and the PINGs must not keep the connection alive past the idle
/// timeout (HTTP/1 times out a peer that never reads, too).
#[test]
fn held_responses_are_not_kept_alive_by_pings() {
    use std::sync::atomic::{AtomicBool, Ordering};
    // Two seconds: the deadline is kept in whole seconds, so one would close on the next tick.
    let server = Avatar::start(&["--idle-timeout", "2"]);
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut hello = PREFACE.to_vec();
    // SETTINGS_INITIAL_WINDOW_SIZE = 0.
    hello.extend(frame(4, 0, 0, &[0, 4, 0, 0, 0, 0]));
    let mut get_svg = vec![0x82, 0x86, 0x04, 11];
    get_svg.extend_from_slice(b"/ff8800.svg");
    for i in 0..10u32 {
        hello.extend(frame(1, 0x5, 2 * i + 1, &get_svg));
    }
    s.write_all(&hello).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let pinger = {
        let mut w = s.try_clone().unwrap();
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if w.write_all(&frame(6, 0, 0, &[1; 8])).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
    };
    // The PING ACKs keep coming while the connection is open: read until the close, or
    // give up after 15 seconds (the timeout is 2).
    let start = std::time::Instant::now();
    let mut buf = [0u8; 4096];
    let closed = loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break true,
            Ok(_) if start.elapsed() > Duration::from_secs(15) => break false,
            Ok(_) => {}
        }
    };
    stop.store(true, Ordering::Relaxed);
    pinger.join().unwrap();
    assert!(closed, "still open after {:?} of PINGs", start.elapsed());
    // Seen once (a local CI run on a fresh clone, 2026-11-26, 53 tests at once on 2 cores):
    // the connection closed with no idle timeout counted; the cause is not known yet, so a
    // failure shows the server's counters, its log and how long the close took.
    if server.metric("avatar_timeouts_total{kind=\"idle\"}") < 1 {
        let mut s = server.connect();
        let resp = roundtrip(&mut s, b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
        panic!(
            "closed after {:?} but no idle timeout counted; metrics:\n{}\nstderr:\n{}",
            start.elapsed(),
            String::from_utf8_lossy(&resp.body),
            server.stderr.lock().unwrap()
        );
    }
}

/// Reads frames until one matches `want` (or the connection ends); returns (type, flags,
/// stream, payload) of all read.
fn read_frames_until(
    s: &mut TcpStream,
    got: &mut Vec<u8>,
    want: impl Fn(&(u8, u8, u32, Vec<u8>)) -> bool,
) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut buf = [0u8; 16384];
    loop {
        let mut frames = Vec::new();
        let mut at = 0;
        while at + 9 <= got.len() {
            let len = u32::from_be_bytes([0, got[at], got[at + 1], got[at + 2]]) as usize;
            if at + 9 + len > got.len() {
                break;
            }
            let stream = u32::from_be_bytes([got[at + 5], got[at + 6], got[at + 7], got[at + 8]]);
            frames.push((
                got[at + 3],
                got[at + 4],
                stream,
                got[at + 9..at + 9 + len].to_vec(),
            ));
            at += 9 + len;
        }
        if frames.iter().any(&want) {
            return frames;
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return frames,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// SIGTERM with a response held by flow control: the client gets GOAWAY NO_ERROR naming its
/// stream at once, the held body once it opens its window, and the server then exits.
#[test]
fn sigterm_sends_goaway_and_keeps_held_responses() {
    let mut server = Avatar::start(&[]);
    let mut s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut hello = PREFACE.to_vec();
    hello.extend(frame(4, 0, 0, &[0, 4, 0, 0, 0, 0]));
    let mut get_svg = vec![0x82, 0x86, 0x04, 11];
    get_svg.extend_from_slice(b"/ff8800.svg");
    hello.extend(frame(1, 0x5, 1, &get_svg));
    s.write_all(&hello).unwrap();
    let mut got = Vec::new();
    // The response's HEADERS: the body is held.
    read_frames_until(&mut s, &mut got, |f| f.0 == 1 && f.2 == 1);
    server.signal("TERM");
    let frames = read_frames_until(&mut s, &mut got, |f| f.0 == 7);
    let goaway = frames
        .iter()
        .find(|f| f.0 == 7)
        .expect("a GOAWAY after SIGTERM");
    assert_eq!(
        goaway.3[..8],
        [0, 0, 0, 1, 0, 0, 0, 0],
        "last stream 1, NO_ERROR"
    );
    let mut open = frame(8, 0, 0, &(1u32 << 20).to_be_bytes());
    open.extend(frame(8, 0, 1, &(1u32 << 20).to_be_bytes()));
    s.write_all(&open).unwrap();
    let frames = read_frames_until(&mut s, &mut got, |f| f.0 == 0 && f.1 & 1 == 1);
    assert!(
        frames.iter().any(|f| f.0 == 0 && f.1 & 1 == 1 && f.2 == 1),
        "the held body was not sent: {:?}",
        frames.iter().map(|f| (f.0, f.1, f.2)).collect::<Vec<_>>()
    );
    let status = server
        .wait_exit(Duration::from_secs(15))
        .expect("exit after SIGTERM");
    assert!(status.success(), "{status:?}");
}
