use super::*;
use load::{Framer, Step};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

fn scenario() -> Scenario {
    crate::suite::Suite::parse(crate::suite::DEFAULT_SUITE, "built-in")
        .unwrap()
        .scenarios[0]
        .clone()
}

/// A server thread that answers each connection with the given closure.
fn serve(f: impl Fn(&mut TcpStream, usize) + Send + 'static) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for (i, s) in l.incoming().enumerate() {
            let Ok(mut s) = s else { continue };
            f(&mut s, i);
        }
    });
    addr
}

fn read_head(s: &mut TcpStream) -> bool {
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => buf.push(b[0]),
            _ => return false,
        }
    }
    true
}

#[test]
fn a_correct_keepalive_server_passes() {
    let n = std::sync::atomic::AtomicU64::new(0);
    let addr = serve(move |s, _| {
        while read_head(s) {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 3 + 1;
            let r = format!("HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-{i}.png\r\nContent-Length: 0\r\n\r\n");
            if s.write_all(r.as_bytes()).is_err() {
                return;
            }
        }
    });
    let v = verify(
        &Endpoint::plain(addr),
        &scenario(),
        3,
        Duration::from_secs(5),
    );
    assert!(v.passed, "{v:?}");
    assert_eq!(v.keepalive, Some(true));
    assert_eq!(v.images_seen, Some(3));
}

#[test]
fn missing_images_wrong_location_and_closing_servers_fail() {
    // Always image 1: the other two are never seen.
    let addr = serve(|s, _| {
        while read_head(s) {
            let _ = s.write_all(b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-1.png\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let v = verify(
        &Endpoint::plain(addr),
        &scenario(),
        3,
        Duration::from_secs(5),
    );
    assert!(!v.passed);
    let c = v.checks.iter().find(|c| c.name == "all images").unwrap();
    assert!(
        c.detail.as_ref().unwrap().contains("never saw [2, 3]"),
        "{c:?}"
    );

    let addr = serve(|s, _| {
        if read_head(s) {
            let _ = s.write_all(
                b"HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\nContent-Length: 0\r\n\r\n",
            );
        }
    });
    let v = verify(
        &Endpoint::plain(addr),
        &scenario(),
        3,
        Duration::from_secs(5),
    );
    assert!(
        !v.passed
            && v.checks[0]
                .detail
                .as_ref()
                .unwrap()
                .contains("does not match"),
        "{v:?}"
    );

    // One response per connection, then close: keep-alive fails, images still checked.
    let n = std::sync::atomic::AtomicU64::new(0);
    let addr = serve(move |s, _| {
        if read_head(s) {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 + 1;
            let r = format!("HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-{i}.png\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
            let _ = s.write_all(r.as_bytes());
        }
    });
    let v = verify(
        &Endpoint::plain(addr),
        &scenario(),
        2,
        Duration::from_secs(5),
    );
    assert_eq!(v.keepalive, Some(false));
    assert!(
        v.passed,
        "answers are right; keep-alive is reported apart: {v:?}"
    );
    assert!(
        v.checks.iter().any(|c| c.name == "keep-alive" && !c.passed),
        "{v:?}"
    );
    assert!(
        v.checks.iter().any(|c| c.name == "all images" && c.passed),
        "{v:?}"
    );
}

/// A server that answers `GET /<hex>.svg` with avatar's fox in `colour(path colour, n)`
/// for its nth request.
fn svg_server(colour: fn(&str, u64) -> String) -> SocketAddr {
    let n = std::sync::atomic::AtomicU64::new(0);
    serve(move |s, _| loop {
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match s.read(&mut b) {
                Ok(1) => head.push(b[0]),
                _ => return,
            }
        }
        let line = String::from_utf8_lossy(&head).into_owned();
        let path = line.split(' ').nth(1).unwrap_or("");
        let asked = path.trim_start_matches('/').trim_end_matches(".svg");
        let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = include_str!("../../../avatar/assets/fox.svg")
            .replace("{{color}}", &format!("#{}", colour(asked, i)));
        let r = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: image/svg+xml; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        if s.write_all(r.as_bytes()).is_err() {
            return;
        }
    })
}

fn svg_scenario() -> Scenario {
    crate::suite::Suite::parse(crate::suite::DEFAULT_SUITE, "built-in")
        .unwrap()
        .scenarios
        .into_iter()
        .find(|s| s.name == "svg")
        .unwrap()
}

#[test]
fn svg_in_the_asked_colour_passes_and_a_wrong_one_fails() {
    let addr = svg_server(|asked, _| asked.to_string());
    let v = verify(
        &Endpoint::plain(addr),
        &svg_scenario(),
        21,
        Duration::from_secs(5),
    );
    assert!(v.passed, "{v:?}");
    assert_eq!(v.keepalive, Some(true));
    assert_eq!(v.images_seen, None);

    // Right on the first request, then always orange: a wrong answer, not merely a
    // keep-alive failure.
    let addr = svg_server(|asked, i| {
        if i == 0 {
            asked.to_string()
        } else {
            "ff8800".to_string()
        }
    });
    let v = verify(
        &Endpoint::plain(addr),
        &svg_scenario(),
        21,
        Duration::from_secs(5),
    );
    assert!(!v.passed, "{v:?}");
    let c = v
        .checks
        .iter()
        .find(|c| c.name == "response" && !c.passed)
        .unwrap_or_else(|| panic!("{v:?}"));
    let d = c.detail.as_deref().unwrap();
    assert!(
        d.starts_with("request 1 on a kept-alive connection: GET /")
            && d.contains("body does not contain \"fill=\\\"#"),
        "{d}"
    );
}

#[test]
fn garbage_and_silence_fail_with_a_reason() {
    let addr = serve(|s, _| {
        let _ = s.write_all(b"SSH-2.0-OpenSSH\r\n\r\n");
    });
    let v = verify(
        &Endpoint::plain(addr),
        &scenario(),
        3,
        Duration::from_secs(2),
    );
    assert!(
        !v.passed && v.checks[0].detail.as_ref().unwrap().contains("malformed"),
        "{v:?}"
    );
    let addr = serve(|s, _| {
        std::thread::sleep(Duration::from_secs(3));
        let _ = s.flush();
    });
    let v = verify(
        &Endpoint::plain(addr),
        &scenario(),
        3,
        Duration::from_millis(300),
    );
    assert!(
        !v.passed
            && v.checks[0]
                .detail
                .as_ref()
                .unwrap()
                .contains("no complete response"),
        "{v:?}"
    );
}

/// What a reader makes of one response on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Complete, with this status and body length; the connection carries the next request.
    Reuse(u16, usize),
    /// Complete, with this status and body length; the connection must close.
    Close(u16, usize),
    /// Not a response the engine accepts.
    Invalid,
}
use Verdict::*;

/// Responses the engine and verification must read alike: raw bytes as the server sends
    /// them (then it closes), the request method, and the verdict (RFC 9112 section 6).
    #[rustfmt::skip]
    const ROWS: &[(&[u8], &str, Verdict)] = &[
        // Plain framing.
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "GET", Reuse(200, 5)),
        (b"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n", "GET", Reuse(302, 0)),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n", "GET", Reuse(200, 29)),
        (b"HTTP/1.1 204 No Content\r\n\r\n", "GET", Reuse(204, 0)),
        (b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", "GET", Reuse(304, 0)),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HEAD", Reuse(200, 0)),
        (b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "GET", Reuse(200, 2)),
        (b"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nok", "GET", Close(200, 2)),
        (b"HTTP/1.1 200 OK\r\n\r\nto the close", "GET", Close(200, 12)),
        // Chunked not last: read to the close (6.3 rule 4), even beside Content-Length.
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "GET", Close(200, 13)),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabcdef", "GET", Close(200, 6)),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\nabc", "GET", Close(200, 3)),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked,\r\n\r\n0\r\n\r\n", "GET", Reuse(200, 5)),
        // Duplicate Content-Length: one value repeated is that value; two values are invalid.
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", "GET", Reuse(200, 3)),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", "GET", Invalid),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd", "GET", Invalid),
        // Content-Length with Transfer-Encoding: chunked wins, then no reuse (6.3 rule 3).
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "GET", Close(200, 13)),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "GET", Close(200, 13)),
        // HTTP/1.0: reused only with Connection: keep-alive, and never with Transfer-Encoding.
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", "GET", Reuse(200, 2)),
        (b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", "GET", Reuse(200, 2)),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", "GET", Close(200, 2)),
        (b"HTTP/1.0 200 OK\r\n\r\nto the close", "GET", Close(200, 12)),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "GET", Close(200, 5)),
        // Not HTTP, or not followable.
        (b"SSH-2.0-OpenSSH\r\n\r\n", "GET", Invalid),
        (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "GET", Invalid),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "GET", Invalid),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "GET", Invalid),
    ];

/// The engine's verdict: the Framer over the whole row, then the close.
fn framer_verdict(raw: &[u8], head_request: bool) -> Verdict {
    // The body starts after the final head; interim heads come before it.
    let mut at = 0;
    let body_start = loop {
        match load::parse_head(&raw[at..], head_request) {
            Ok(Some(h)) if h.interim => at += h.len,
            Ok(Some(h)) => break at + h.len,
            Ok(None) => panic!("{:?}: the row is not a whole head", raw.escape_ascii()),
            Err(_) => return Invalid,
        }
    };
    let mut f = Framer::new();
    match f.next(raw, head_request) {
        Ok(Step::Complete {
            status,
            close,
            used,
        }) => {
            let body = used - body_start;
            if close {
                Close(status, body)
            } else {
                Reuse(status, body)
            }
        }
        Ok(Step::Body) => match f.eof() {
            Some(status) => Close(status, raw.len() - body_start),
            None => Invalid,
        },
        Ok(Step::PartialHead { .. }) => {
            panic!("{:?}: the row is not a whole head", raw.escape_ascii())
        }
        Err(_) => Invalid,
    }
}

#[test]
fn verification_frames_every_response_as_the_engine_does() {
    let addr = serve(|s, i| {
        if read_head(s) {
            let _ = s.write_all(ROWS[i].0);
        }
    });
    for (i, &(raw, method, want)) in ROWS.iter().enumerate() {
        let shown = raw.escape_ascii();
        assert_eq!(
            framer_verdict(raw, method == "HEAD"),
            want,
            "row {i}, the engine: {shown}"
        );
        let got = match Client::connect(addr, Duration::from_secs(10))
            .map_err(|e| e.to_string())
            .and_then(|mut c| c.request(method, "/", false))
        {
            Ok(r) if r.close => Close(r.status, r.body.len()),
            Ok(r) => Reuse(r.status, r.body.len()),
            // A timeout would mean a reader waiting for bytes the row does not have.
            Err(e) if e.contains("no complete response") => panic!("row {i}: {e}: {shown}"),
            Err(_) => Invalid,
        };
        assert_eq!(got, want, "row {i}, verification: {shown}");
    }
}

#[test]
fn a_server_the_engine_cannot_reuse_fails_keepalive() {
    // Chunked beside Content-Length: each answer is read, but the connection must close.
    let n = std::sync::atomic::AtomicU64::new(0);
    let addr = serve(move |s, _| {
        while read_head(s) {
            let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 3 + 1;
            let r = format!("HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-{i}.png\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
            if s.write_all(r.as_bytes()).is_err() {
                return;
            }
        }
    });
    let v = verify(
        &Endpoint::plain(addr),
        &scenario(),
        3,
        Duration::from_secs(5),
    );
    assert_eq!(v.keepalive, Some(false), "{v:?}");
    let c = v.checks.iter().find(|c| c.name == "keep-alive").unwrap();
    assert!(
        c.detail
            .as_ref()
            .unwrap()
            .contains("Transfer-Encoding: chunked"),
        "{c:?}"
    );
}

/// nghttpd (nghttp2's server) over h2c, which speaks no HTTP/1.1: a scenario is
/// verified over HTTP/2 through the engine's own client, its headers and its body read
/// whole (XML root, text in the body), many streams on one connection; spoken to over
/// HTTP/1.1, the same server fails.
#[test]
fn h2c_verification_reads_whole_answers_through_the_engine() {
    let Some(nghttpd) = testkit::require("nghttpd", &["/usr/sbin", "/usr/bin"], "nghttp2-server")
    else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("foxbench-verify-h2c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\">{}<path fill=\"#a8db7d\"/></svg>",
        " ".repeat(40_000)
    );
    std::fs::write(dir.join("fox.svg"), &svg).unwrap();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = std::process::Command::new(nghttpd)
        .args(["--no-tls", "-a", "127.0.0.1", "-d"])
        .arg(&dir)
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    testkit::wait_until(Duration::from_secs(10), "nghttpd listening", || {
        TcpStream::connect(addr).is_ok()
    });
    let text = r##"
name = "h2c"
[[scenario]]
name = "svg"
path = "/fox.svg"
http2 = true
[scenario.expect]
status = 200
body_xml_root = "svg"
body_contains = 'fill="#a8db7d"'
[[target]]
name = "nghttpd"
language = "C"
dir = "x"
start = "nghttpd {port}"
"##;
    let s = crate::suite::Suite::parse(text, "t.toml")
        .unwrap()
        .scenarios[0]
        .clone();
    let h2 = Endpoint {
        version: Some(crate::suite::Multiplexed::Http2),
        name: "nghttpd".into(),
        ..Endpoint::plain(addr)
    };
    let v = verify(&h2, &s, 1, Duration::from_secs(5));
    let h1 = verify(&Endpoint::plain(addr), &s, 1, Duration::from_secs(2));
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(v.passed, "{v:?}");
    assert_eq!(
        v.keepalive,
        Some(true),
        "20 streams on one connection: {v:?}"
    );
    assert!(!h1.passed, "nghttpd speaks no HTTP/1.1: {h1:?}");
}

/// A target whose scenarios all set `http3 = true` and that has no HTTP/3 (its UDP port
/// closed) is not failed as a whole: the scenario passes, and its HTTP/3 cells are
/// excluded with the reason.
#[test]
fn an_http3_only_scenario_of_a_target_without_http3_is_excluded_not_failed() {
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = udp.local_addr().unwrap();
    drop(udp);
    let text = r#"
name = "h3"
[[scenario]]
name = "plain"
path = "/"
http3 = true
scheme = "https"
insecure = true
[scenario.expect]
status = 200
[[target]]
name = "caddy"
language = "Go"
dir = "x"
start = "caddy {port}"
"#;
    let s = crate::suite::Suite::parse(text, "t.toml")
        .unwrap()
        .scenarios[0]
        .clone();
    let at = Endpoint {
        tls: Some(load::TlsOptions::default()),
        version: Some(Multiplexed::Http3),
        name: "caddy".into(),
        ..Endpoint::plain(addr)
    };
    let v = over_only(
        Multiplexed::Http3,
        verify(&at, &s, 1, Duration::from_millis(300)),
    );
    assert!(v.passed, "{v:?}");
    assert_eq!(v.http3, Some(false), "{v:?}");
    let c = v.checks.iter().find(|c| !c.passed).expect("a failed check");
    assert_eq!(c.name, "http/3", "{v:?}");
    assert!(
        c.detail
            .as_deref()
            .is_some_and(|d| d.starts_with("target caddy does not speak HTTP/3")),
        "{v:?}"
    );
}
