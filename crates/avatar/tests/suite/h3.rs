//! HTTP/3 (`--h3-listen`) with real clients: quic-go's (tests/go/h3) and ngtcp2's example
//! client (`gtlsclient`, with nghttp3), the stream limit as QUIC credit, and SIGTERM.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::{Avatar, ChildGuard, TempDir, BIN, IO_TIMEOUT, MANIFEST_DIR};

/// An avatar serving HTTP/3 beside HTTP/1.1, with a fresh self-signed certificate.
pub struct H3Avatar {
    pub avatar: Avatar,
    pub h3: SocketAddr,
    pub cert: PathBuf,
    _dir: TempDir,
}

/// A certificate and key for 127.0.0.1 made by openssl, as the docs show.
#[track_caller]
fn make_cert(dir: &TempDir) -> Option<(PathBuf, PathBuf)> {
    let openssl = testkit::require("openssl", &[], "apt-get install -y openssl")?;
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    let out = Command::new(openssl)
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args([
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
        ])
        .args(["-addext", "subjectAltName=IP:127.0.0.1", "-days", "2"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((cert, key))
}

impl H3Avatar {
    #[track_caller]
    pub fn start(args: &[&str]) -> Option<H3Avatar> {
        let dir = TempDir::new("h3");
        let (cert, key) = make_cert(&dir)?;
        let (cert_s, key_s) = (cert.to_str().unwrap(), key.to_str().unwrap());
        let mut full = vec![
            "--h3-listen",
            "127.0.0.1:0",
            "--cert",
            cert_s,
            "--key",
            key_s,
        ];
        full.extend(args);
        let avatar = Avatar::start(&full);
        let mut h3 = None;
        testkit::wait_until(IO_TIMEOUT, "avatar's HTTP/3 listening line", || {
            let log = avatar.stderr.lock().unwrap();
            h3 = log.lines().find_map(|l| {
                l.strip_prefix("avatar: listening on https://")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            });
            h3.is_some()
        });
        Some(H3Avatar {
            avatar,
            h3: h3.unwrap(),
            cert,
            _dir: dir,
        })
    }

    fn base(&self) -> String {
        format!("https://{}", self.h3)
    }

    /// The quic-go client in `mode`, with its stdin and stdout piped.
    fn go_client(&self, go: &PathBuf, mode: &str, extra: &[&str]) -> Command {
        let mut cmd = Command::new(go);
        cmd.current_dir(format!("{MANIFEST_DIR}/tests/go/h3"))
            .args(["run", ".", mode, &self.base(), self.cert.to_str().unwrap()])
            .args(extra)
            .env("GOFLAGS", "-mod=mod")
            .env("GOTOOLCHAIN", "local");
        cmd
    }
}

#[track_caller]
fn require_go() -> Option<PathBuf> {
    testkit::require(
        "go",
        &["/usr/local/go/bin/go", "/usr/lib/go/bin/go"],
        "apt-get install -y golang-go",
    )
}

#[track_caller]
fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run the client");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The value of the sample line starting with `series` in a Prometheus text.
#[track_caller]
fn sample(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|v| v.trim().parse().ok()))
        .unwrap_or_else(|| panic!("no {series} in:\n{text}"))
}

#[test]
fn quic_go_client_gets_every_route_over_one_h3_connection() {
    let Some(go) = require_go() else { return };
    let Some(server) = H3Avatar::start(&["--images", "7"]) else {
        return;
    };
    let out = run_ok(&mut server.go_client(&go, "routes", &["7"]));
    assert!(out.starts_with("go h3 client ok"), "{out}");
    // 20 redirects, the SVG, its 304, health, HEAD, 404, 405, 50 at once, and /metrics.
    assert_eq!(
        sample(&out, "avatar_h3_events_total{kind=\"connections\"}"),
        1
    );
    assert_eq!(sample(&out, "avatar_h3_events_total{kind=\"streams\"}"), 77);
    assert_eq!(
        sample(
            &out,
            "avatar_requests_total{route=\"redirect\",status=\"302\"}"
        ),
        20
    );
    assert_eq!(sample(&out, "avatar_h3_connections_open"), 1);
    // The same answers over HTTP/1.1 on the TCP port, counted in the same place.
    assert!(
        server
            .avatar
            .metric("avatar_requests_total{route=\"random_svg\",status=\"302\"}")
            >= 50
    );
}

#[test]
fn requests_past_the_stream_limit_wait_for_credit_and_all_complete() {
    let Some(go) = require_go() else { return };
    let Some(server) = H3Avatar::start(&["--h2-max-streams", "10", "--workers", "1"]) else {
        return;
    };
    let out = run_ok(&mut server.go_client(&go, "burst", &["100"]));
    assert!(out.starts_with("go h3 burst ok"), "{out}");
    // /healthz, the 100, and /metrics, on one connection, none refused or reset: the
    // requests past the limit waited for QUIC's MAX_STREAMS.
    assert_eq!(
        sample(&out, "avatar_h3_events_total{kind=\"connections\"}"),
        1
    );
    assert_eq!(
        sample(&out, "avatar_h3_events_total{kind=\"streams\"}"),
        102
    );
    assert_eq!(
        sample(&out, "avatar_h3_events_total{kind=\"stream_resets\"}"),
        0
    );
    let peak = sample(&out, "avatar_h3_streams_in_flight_max");
    assert!(
        peak <= 10,
        "{peak} streams in flight at once, with a limit of 10"
    );
}

#[test]
fn sigterm_lets_an_h3_request_in_flight_finish_then_exits() {
    let Some(go) = require_go() else { return };
    let Some(mut server) = H3Avatar::start(&["--shutdown-timeout", "60"]) else {
        return;
    };
    let child = server
        .go_client(&go, "slow", &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Go client");
    let mut client = ChildGuard(child);
    let mut stdin = client.0.stdin.take().unwrap();
    let stdout = client.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    // Module download and build on a loaded machine: generous.
    let first = rx.recv_timeout(Duration::from_secs(120));
    assert_eq!(
        first.as_deref(),
        Ok("answered 405"),
        "the slow POST's answer"
    );
    let signalled = Instant::now();
    server.avatar.signal("TERM");
    let tcp = server.avatar.addr;
    testkit::wait_until(IO_TIMEOUT, "avatar to stop accepting after SIGTERM", || {
        TcpStream::connect_timeout(&tcp, IO_TIMEOUT).is_err()
    });
    // The request's body is still open: avatar must wait for it, not its grace of 60 s.
    assert_eq!(
        server.avatar.wait_exit(Duration::from_millis(500)),
        None,
        "avatar exited with an HTTP/3 request in flight"
    );
    stdin.write_all(b"go\n").unwrap();
    drop(stdin);
    let last = rx.recv_timeout(IO_TIMEOUT);
    assert_eq!(last.as_deref(), Ok("slow done"), "the slow POST's end");
    let status = server
        .avatar
        .wait_exit(IO_TIMEOUT)
        .expect("avatar exits once the request finished");
    assert!(status.success(), "{status:?}");
    assert!(signalled.elapsed() < Duration::from_secs(30));
    assert!(server
        .avatar
        .stderr
        .lock()
        .unwrap()
        .contains("avatar: stopped"));
}

#[test]
fn ngtcp2_client_speaks_h3_to_avatar() {
    let Some(client) = testkit::require(
        "gtlsclient",
        &["/usr/bin/gtlsclient"],
        "apt-get install -y ngtcp2-client",
    ) else {
        return;
    };
    let Some(server) = H3Avatar::start(&[]) else {
        return;
    };
    let dl = TempDir::new("h3-dl");
    let base = server.base();
    let out = Command::new(client)
        .args(["--exit-on-all-streams-close", "--no-quic-dump"])
        .arg(format!("--download={}", dl.path().display()))
        .args(["127.0.0.1", &server.h3.port().to_string()])
        .args([
            format!("{base}/healthz"),
            format!("{base}/ff8800.svg"),
            format!("{base}/"),
            format!("{base}/zz.svg"),
        ])
        .output()
        .expect("run gtlsclient");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    // Its control stream and both QPACK streams were taken (three unidirectional streams).
    assert!(
        text.contains("http: QPACK streams encoder"),
        "no QPACK streams in:\n{text}"
    );
    for (stream, status) in [
        ("0x0", "200"),
        ("0x4", "200"),
        ("0x8", "302"),
        ("0xc", "404"),
    ] {
        let line = format!("http: stream {stream} [:status: {status}]");
        assert!(text.contains(&line), "no {line:?} in:\n{text}");
    }
    assert!(text.contains("[location: https://avatar.example/Renard-"));
    let svg = std::fs::read(dl.path().join("ff8800.svg")).expect("the SVG downloaded");
    assert!(svg.starts_with(b"<svg") || svg.windows(7).any(|w| w == b"#ff8800"));
    assert_eq!(
        server
            .avatar
            .metric("avatar_h3_events_total{kind=\"streams\"}"),
        4
    );
}

#[test]
fn bad_h3_settings_are_one_line_and_exit_2() {
    let dir = TempDir::new("h3-bad");
    let Some((cert, key)) = make_cert(&dir) else {
        return;
    };
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let missing = dir.path().join("missing.pem");
    let missing = missing.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--h3-listen", "127.0.0.1:0", "--cert", cert],
            "--h3-listen needs --cert FILE and --key FILE",
        ),
        (
            &[
                "--h3-listen",
                "127.0.0.1:0",
                "--cert",
                missing,
                "--key",
                key,
            ],
            "--cert",
        ),
        (
            &["--h3-listen", "127.0.0.1:0", "--cert", key, "--key", key],
            "no CERTIFICATE block",
        ),
        (
            &["--h3-listen", "127.0.0.1:0", "--cert", cert, "--key", cert],
            "give a PEM private key",
        ),
        (
            &["--h3-listen", "127.0.0.1", "--cert", cert, "--key", key],
            "--h3-listen",
        ),
    ];
    for (args, want) in cases {
        let out = Command::new(BIN)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// The size of the file [`with_big_file`] serves, past quinn's 1 MiB send window and any
/// client's first flow-control window.
const BIG_BYTES: usize = 3 << 20;

/// An avatar serving `/images/big.bin` ([`BIG_BYTES`] long) over HTTP/3, with `args`.
#[track_caller]
fn with_big_file(args: &[&str]) -> Option<(H3Avatar, TempDir)> {
    let dir = TempDir::new("h3-big");
    crate::common::write_png(&dir.path().join("Renard-1.png"), [1, 2, 3]);
    let data: Vec<u8> = (0..BIG_BYTES).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("big.bin"), data).unwrap();
    let mut full = vec![
        "--images",
        "1",
        "--images-dir",
        dir.path().to_str().unwrap(),
    ];
    full.extend(args);
    Some((H3Avatar::start(&full)?, dir))
}

/// `count` downloads at once of the big file by the quic-go client, from an avatar with one
/// worker, each checked whole: the avatar, its files, and the client's output (its
/// `/metrics` last).
#[track_caller]
fn big_downloads(go: &PathBuf, count: &str) -> Option<(H3Avatar, TempDir, String)> {
    let (server, dir) = with_big_file(&["--workers", "1"])?;
    let size = BIG_BYTES.to_string();
    let out = run_ok(&mut server.go_client(go, "big", &["/images/big.bin", count, &size]));
    assert!(out.starts_with("go h3 big ok"), "{out}");
    Some((server, dir, out))
}

#[test]
fn a_write_cut_short_by_flow_control_is_retried_until_the_stream_is_blocked() {
    let Some(go) = require_go() else { return };
    let Some((_server, _dir, out)) = big_downloads(&go, "4") else {
        return;
    };
    assert_eq!(
        sample(&out, "avatar_h3_events_total{kind=\"stream_resets\"}"),
        0
    );
}

#[test]
fn a_stopped_response_is_reset_so_its_stream_credit_comes_back() {
    let Some(go) = require_go() else { return };
    let Some((server, _dir)) = with_big_file(&["--workers", "1", "--h2-max-streams", "4"]) else {
        return;
    };
    // Three times the stream limit, each response cut off by STOP_SENDING while the server
    // still has most of it to send, then one more request on the same connection.
    let out = run_ok(&mut server.go_client(&go, "cancel", &["/images/big.bin", "12"]));
    assert!(out.starts_with("go h3 cancel ok"), "{out}");
    assert_eq!(
        sample(&out, "avatar_h3_events_total{kind=\"connections\"}"),
        1
    );
}

#[test]
fn a_finished_response_is_kept_until_acknowledged_before_the_shutdown_close() {
    let Some(go) = require_go() else { return };
    let Some((mut server, _dir)) = with_big_file(&["--workers", "1", "--shutdown-timeout", "60"])
    else {
        return;
    };
    let size = BIG_BYTES.to_string();
    let child = server
        .go_client(&go, "slowbig", &["/images/big.bin", &size])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Go client");
    let mut client = ChildGuard(child);
    let mut stdin = client.0.stdin.take().unwrap();
    let stdout = client.0.stdout.take().unwrap();
    let mut stderr = client.0.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(120));
    assert_eq!(first.as_deref(), Ok("answered 200"), "the big GET's head");
    // The client reads nothing yet: most of the body is still to be sent when SIGTERM comes,
    // and its last bytes are still in flight when the server finishes the stream.
    server.avatar.signal("TERM");
    stdin.write_all(b"go\n").unwrap();
    drop(stdin);
    let last = rx.recv_timeout(IO_TIMEOUT);
    let mut err = String::new();
    if last.is_err() {
        let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
    }
    assert_eq!(last.as_deref(), Ok("slowbig done"), "the big body: {err}");
    let status = server
        .avatar
        .wait_exit(IO_TIMEOUT)
        .expect("avatar exits once the response was delivered");
    assert!(status.success(), "{status:?}");
}

#[test]
fn held_response_bytes_are_capped_per_connection_by_leaving_new_requests_unread() {
    let Some(go) = require_go() else { return };
    let Some((server, _dir)) = with_big_file(&["--workers", "1"]) else {
        return;
    };
    let size = BIG_BYTES.to_string();
    let out = run_ok(
        server
            .go_client(&go, "big", &["/images/big.bin", "8", &size])
            .env("H3_SMALL_WINDOW", "1"),
    );
    assert!(out.starts_with("go h3 big ok"), "{out}");
    // The cap is HTTP/2's 1 MiB; the one response that crosses it is held whole, its
    // HEADERS frame (a few hundred bytes) with it.
    let held = sample(&out, "avatar_h3_held_bytes_max");
    assert!(
        held > 0 && held <= (1 << 20) + BIG_BYTES as u64 + 4096,
        "{held} response bytes held on one connection"
    );
}

#[test]
fn a_large_response_goes_out_several_datagrams_a_send_call() {
    let Some(go) = require_go() else { return };
    let Some((server, _dir, _)) = big_downloads(&go, "2") else {
        return;
    };
    let metric = |series: &str| server.avatar.metric(series);
    let sent = metric("avatar_h3_datagrams_total{direction=\"sent\"}");
    let calls = metric("avatar_h3_udp_calls_total{direction=\"sent\"}");
    assert!(
        sent >= 2 * BIG_BYTES as u64 / 1500,
        "{sent} datagrams sent for two bodies of {BIG_BYTES} bytes"
    );
    // With GSO a transmit is up to 10 datagrams in one sendmsg; one a call without it.
    assert!(
        sent >= 2 * calls,
        "{sent} datagrams in {calls} send calls: GSO did not batch them"
    );
    // The client's datagrams (its ACKs) were read, and counted by call as well.
    let received = metric("avatar_h3_datagrams_total{direction=\"received\"}");
    let reads = metric("avatar_h3_udp_calls_total{direction=\"received\"}");
    assert!(
        received > 0 && reads > 0,
        "{received} datagrams in {reads} reads"
    );
}

#[test]
fn three_datagrams_sent_in_one_gso_send_are_read_in_one_gro_read() {
    let Some(server) = H3Avatar::start(&["--workers", "1"]) else {
        return;
    };
    let metric = |series: &str| server.avatar.metric(series);
    let received = "avatar_h3_datagrams_total{direction=\"received\"}";
    let reads = "avatar_h3_udp_calls_total{direction=\"received\"}";
    let (before, reads_before) = (metric(received), metric(reads));
    // Junk to QUIC (it drops it, or answers with a stateless reset): only the reading counts.
    let client = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let sent = udp::send_segments(&client, &[0x5a; 3600], 1200, Some(server.h3)).unwrap();
    assert_eq!(sent, 3600);
    testkit::wait_until(IO_TIMEOUT, "avatar to read the three datagrams", || {
        metric(received) >= before + 3
    });
    assert_eq!(metric(received), before + 3);
    // One read that holds all three, and the one that finds the socket empty; three reads
    // (and more) without GRO.
    let calls = metric(reads) - reads_before;
    assert!(
        calls <= 2,
        "{calls} receive calls for one GSO send of 3 datagrams"
    );
}

#[test]
fn an_empty_datagram_is_counted_as_one_received() {
    let Some(server) = H3Avatar::start(&["--workers", "1"]) else {
        return;
    };
    let received = "avatar_h3_datagrams_total{direction=\"received\"}";
    let before = server.avatar.metric(received);
    let client = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    assert_eq!(client.send_to(&[], server.h3).unwrap(), 0);
    testkit::wait_until(IO_TIMEOUT, "avatar to count the empty datagram", || {
        server.avatar.metric(received) > before
    });
    assert_eq!(server.avatar.metric(received), before + 1);
}
