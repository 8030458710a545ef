//! Real clients over loopback: curl, Python's http.client, Go's net/http.

use std::process::Command;

use crate::common::{require_tool, Avatar, MANIFEST_DIR};

#[track_caller]
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run client");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn curl() {
    require_tool("curl", "--version", "curl");
    let server = Avatar::start(&[]);
    let head =
        run(Command::new("curl").args(["-sS", "-D", "-", "-o", "/dev/null", &server.url("/")]));
    assert!(head.starts_with("HTTP/1.1 302 Found\r\n"), "{head}");
    assert!(
        head.contains("\r\nLocation: https://avatar.example/Renard-"),
        "{head}"
    );
    assert!(head.contains("\r\nContent-Length: 0\r\n"));
    let out = run(Command::new("curl").args([
        "-sS",
        "-w",
        "\n%{http_code} %{content_type}",
        &server.url("/ff8800.svg"),
    ]));
    assert!(out.ends_with("\n200 image/svg+xml; charset=utf-8"), "{out}");
    assert!(out.contains("#ff8800"));
    // HTTP/1.0, and two URLs on one keep-alive connection.
    let out = run(Command::new("curl").args([
        "-sS",
        "--http1.0",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &server.url("/healthz"),
    ]));
    assert_eq!(out, "200");
    let out = Command::new("curl")
        .args([
            "-sS",
            "-v",
            "-o",
            "/dev/null",
            "-o",
            "/dev/null",
            &server.url("/a"),
            &server.url("/b"),
        ])
        .output()
        .unwrap();
    let verbose = String::from_utf8_lossy(&out.stderr);
    assert!(
        verbose.contains("Re-using existing connection") || verbose.contains("Reusing existing"),
        "{verbose}"
    );
    let out = run(Command::new("curl").args([
        "-sS",
        "-X",
        "DELETE",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &server.url("/"),
    ]));
    assert_eq!(out, "405");
}

#[test]
fn python_http_client() {
    require_tool("python3", "--version", "python3");
    let server = Avatar::start(&[]);
    let script = r##"
import http.client, sys
host, port = sys.argv[1].rsplit(":", 1)
c = http.client.HTTPConnection(host, int(port), timeout=10)
for _ in range(10):
    c.request("GET", "/")
    r = c.getresponse(); r.read()
    assert r.status == 302, r.status
    assert r.getheader("Location").startswith("https://avatar.example/Renard-"), r.getheader("Location")
    assert r.getheader("Cache-Control") == "no-store"
c.request("GET", "/00ff88.svg")
r = c.getresponse(); body = r.read()
assert r.status == 200 and b"#00ff88" in body, r.status
etag = r.getheader("ETag")
c.request("GET", "/00ff88.svg", headers={"If-None-Match": etag})
r = c.getresponse(); assert r.read() == b"" and r.status == 304, r.status
c.request("HEAD", "/healthz")
r = c.getresponse(); assert r.read() == b"" and r.status == 200
c.request("GET", "/metrics")
r = c.getresponse(); m = r.read().decode()
assert 'avatar_requests_total{route="redirect",status="302"}' in m, m
print("python ok")
"##;
    let out = run(Command::new("python3").args(["-c", script, &server.addr.to_string()]));
    assert_eq!(out.trim(), "python ok");
}

#[test]
fn go_net_http_client() {
    require_tool("go", "version", "golang-go");
    let server = Avatar::start(&[]);
    let client = format!("{MANIFEST_DIR}/tests/go/client.go");
    let out = run(Command::new("go")
        .args(["run", &client, &server.url("")])
        .env("GO111MODULE", "off")
        .env("GOFLAGS", "")
        .env("GOTOOLCHAIN", "local"));
    assert!(out.starts_with("go client ok"), "{out}");
}
