//! The command line: the post's positional form, flags, and one-line errors with exit code 2.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{roundtrip, Avatar, ChildGuard, BIN};

#[track_caller]
fn fails_with(args: &[&str], message: &str) {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(stderr.starts_with("avatar: "), "{stderr}");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
}

#[test]
fn bad_arguments_get_one_line_and_exit_2() {
    fails_with(
        &["--images", "0"],
        "--images must be between 1 and 65535 (got 0)",
    );
    fails_with(
        &["6666", "70000"],
        "--images must be between 1 and 65535 (got 70000)",
    );
    fails_with(
        &["--workers", "0"],
        "--workers must be between 1 and 256 (got 0)",
    );
    fails_with(&["--images", "x"], "invalid value 'x'");
    fails_with(&["--bogus"], "--bogus");
    fails_with(&["--listen", "nowhere"], "invalid value 'nowhere'");
    fails_with(
        &["--location", "https://x/y.png"],
        "--location must contain {n}",
    );
    fails_with(
        &["--h2-max-streams", "0"],
        "--h2-max-streams must be between 1 and 10000 (got 0)",
    );
    fails_with(
        &["--head-timeout", "0"],
        "--head-timeout must be between 1 and 86400 seconds (got 0)",
    );
    fails_with(
        &["--svg-template", "/nonexistent/t.svg", "--check"],
        "cannot read --svg-template /nonexistent/t.svg",
    );
    fails_with(
        &["--images-dir", "/nonexistent", "--check"],
        "cannot read /nonexistent",
    );
    fails_with(&["1", "2", "3"], "unexpected argument '3'");
}

#[test]
fn help_and_version_exit_0() {
    for flag in ["--help", "--version"] {
        let out = Command::new(BIN).arg(flag).output().unwrap();
        assert!(out.status.success(), "{flag}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("avatar"));
    }
}

#[test]
fn the_posts_positional_form_works() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let port = port.to_string();
    let server = Avatar::spawn(&[&port, "3", "--workers", "1"]);
    assert_eq!(server.addr.to_string(), format!("127.0.0.1:{port}"));
    let mut s = server.connect();
    for _ in 0..30 {
        let resp = roundtrip(&mut s, b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        let loc = resp.header("location").unwrap();
        assert!(
            ["1", "2", "3"]
                .iter()
                .any(|n| loc == format!("https://avatar.example/Renard-{n}.png")),
            "{loc}"
        );
    }
}

#[test]
fn listens_on_ipv6_loopback_when_available() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("no IPv6 loopback on this machine; IPv4 is tested everywhere else");
        return;
    }
    let server = Avatar::spawn(&["--listen", "[::1]:0", "--workers", "1"]);
    assert!(server.addr.is_ipv6());
    assert_eq!(
        roundtrip(&mut server.connect(), b"GET / HTTP/1.1\r\nHost: t\r\n\r\n").status,
        302
    );
}

#[test]
fn location_template_and_access_log() {
    let server = Avatar::start(&["--images", "1", "--location", "/img/{n}.webp"]);
    let resp = roundtrip(&mut server.connect(), b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(resp.header("location"), Some("/img/1.webp"));

    let mut child = crate::common::ChildGuard(
        Command::new(BIN)
            .args(["--listen", "127.0.0.1:0", "--workers", "1", "--access-log"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stderr = std::io::BufReader::new(child.0.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
    let addr: std::net::SocketAddr = line
        .split("http://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let mut s = crate::common::connect(addr);
    roundtrip(&mut s, b"GET /some/path HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut stdout = std::io::BufReader::new(child.0.stdout.take().unwrap());
    let mut log = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut log).unwrap();
    assert!(log.contains("\"GET /some/path HTTP/1.1\" 302 0"), "{log}");
}

#[test]
fn check_flag_validates_without_listening() {
    let out = Command::new(BIN)
        .args(["6666", "21", "--check"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("configuration ok: 21 images"));
}

#[test]
fn second_instance_on_the_same_port_fails() {
    let first = Avatar::start(&[]);
    let addr = first.addr.to_string();
    // Before the fix the second one ran: it must not outlive the test.
    let mut second = ChildGuard(
        Command::new(BIN)
            .args(["--listen", &addr, "--workers", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(status) = second.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "a second instance started on {addr}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(2));
    let mut stderr = String::new();
    second
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(
        stderr.contains(&format!("cannot listen on {addr}"))
            && stderr.contains("is another server using the port?"),
        "{stderr}"
    );
    // The first one still serves.
    assert_eq!(
        roundtrip(
            &mut first.connect(),
            b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"
        )
        .status,
        200
    );
}
