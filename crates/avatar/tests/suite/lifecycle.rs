//! Timeouts, the connection limit, graceful shutdown, and the image directory.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::common::{
    connect_with_rcvbuf, roundtrip, write_png, Avatar, Reader, TempDir, IO_TIMEOUT,
};

/// Polls `done` until it holds; panics naming `what` if it does not within [`IO_TIMEOUT`].
#[track_caller]
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + IO_TIMEOUT;
    while !done() {
        assert!(Instant::now() < end, "{what}: not within {IO_TIMEOUT:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The TCP socket from `local` to `remote` in /proc/net/tcp: its state, send queue
/// (bytes not yet acknowledged) and receive queue (bytes not yet read by its process).
fn tcp_socket(local: SocketAddr, remote: SocketAddr) -> Option<(u8, u64, u64)> {
    let key = |a: SocketAddr| match a {
        // The kernel prints the address as the native-endian view of its network bytes.
        SocketAddr::V4(a) => format!(
            "{:08X}:{:04X}",
            u32::from_ne_bytes(a.ip().octets()),
            a.port()
        ),
        SocketAddr::V6(_) => panic!("/proc/net/tcp lists IPv4 sockets; {a} is IPv6"),
    };
    let (local, remote) = (key(local), key(remote));
    let table = std::fs::read_to_string("/proc/net/tcp").expect("read /proc/net/tcp");
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(1) != Some(&local.as_str()) || f.get(2) != Some(&remote.as_str()) {
            return None;
        }
        let state = u8::from_str_radix(f[3], 16).ok()?;
        let (tx, rx) = f[4].split_once(':')?;
        Some((
            state,
            u64::from_str_radix(tx, 16).ok()?,
            u64::from_str_radix(rx, 16).ok()?,
        ))
    })
}

/// Whether avatar has read all that `client` sent: the kernel acknowledged every byte, and
/// none is left queued on avatar's side of the connection (so it was accepted and read).
fn avatar_has_read(client: &TcpStream) -> bool {
    let (local, peer) = (client.local_addr().unwrap(), client.peer_addr().unwrap());
    matches!(tcp_socket(local, peer), Some((_, 0, _)))
        && matches!(tcp_socket(peer, local), Some((_, _, 0)))
}

/// Whether avatar has closed its side of the connection from `client` at `server`.
fn avatar_has_closed(client: SocketAddr, server: SocketAddr) -> bool {
    const ESTABLISHED: u8 = 0x01;
    const CLOSE_WAIT: u8 = 0x08;
    !matches!(
        tcp_socket(server, client),
        Some((ESTABLISHED | CLOSE_WAIT, _, _))
    )
}

#[test]
fn sigterm_stops_gracefully_and_finishes_in_flight_requests() {
    for signal in ["TERM", "INT"] {
        let mut server = Avatar::start(&[]);
        let mut idle = server.connect();
        roundtrip(&mut idle, b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        let mut busy = server.connect();
        busy.write_all(b"GET /ff8800.svg HTTP/1.1\r\nHo").unwrap();
        // Until avatar holds the half-sent request, the connection is idle to it.
        wait_until("avatar reading the half-sent request", || {
            avatar_has_read(&busy)
        });
        server.signal(signal);
        // The idle connection is closed (the read waits up to IO_TIMEOUT for it); the
        // half-sent request still gets its answer, with a close.
        assert!(
            Reader::new().closed(&mut idle),
            "idle connection left open after SIG{signal}"
        );
        // During the drain (the half-sent request keeps the server up), no new
        // connection is accepted. Each worker closes its own listener as it sees the signal.
        let addr = server.addr;
        wait_until(
            &format!("avatar refusing connections during the drain after SIG{signal}"),
            || {
                assert!(
                    server.child.try_wait().unwrap().is_none(),
                    "exited before the in-flight request finished"
                );
                TcpStream::connect(addr).is_err()
            },
        );
        busy.write_all(b"st: t\r\n\r\n").unwrap();
        let mut reader = Reader::new();
        let resp = reader.read(&mut busy, false);
        assert_eq!(resp.status, 200);
        assert_eq!(resp.header("connection"), Some("close"));
        let status = server
            .wait_exit(Duration::from_secs(15))
            .expect("exit after SIGTERM");
        assert!(status.success(), "{status:?}");
        // The thread copying stderr may still be reading the last lines.
        wait_until("avatar's stderr saying \"avatar: stopped\"", || {
            server.stderr.lock().unwrap().contains("avatar: stopped")
        });
        // No longer accepting.
        assert!(std::net::TcpStream::connect(server.addr).is_err());
    }
}

#[test]
fn shutdown_is_bounded_by_the_shutdown_timeout() {
    let mut server = Avatar::start(&["--shutdown-timeout", "1", "--head-timeout", "60"]);
    let mut slow = server.connect();
    slow.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    // Only a request avatar holds keeps it up past the signal, until the shutdown timeout.
    wait_until("avatar reading the half-sent request", || {
        avatar_has_read(&slow)
    });
    let start = Instant::now();
    server.signal("TERM");
    server
        .wait_exit(Duration::from_secs(15))
        .expect("exit within the shutdown timeout");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn slowloris_head_times_out() {
    let server = Avatar::start(&["--head-timeout", "1"]);
    let mut s = server.connect();
    let start = Instant::now();
    // Trickle a head, one byte every 300 ms: the total, not each gap, is bounded.
    let mut closed = false;
    for &b in b"GET / HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
        if s.write_all(&[b]).is_err() {
            closed = true;
            break;
        }
        // The gap is the test: each byte comes well inside the 1 s head timeout, so only
        // a deadline on the whole head can end it.
        std::thread::sleep(Duration::from_millis(300));
        if start.elapsed() > Duration::from_secs(8) {
            break;
        }
    }
    assert!(
        closed || Reader::new().closed(&mut s),
        "slow head not cut off"
    );
    assert!(start.elapsed() < Duration::from_secs(9));
    assert!(server.metric("avatar_timeouts_total{kind=\"head\"}") >= 1);
}

#[test]
fn idle_keep_alive_times_out() {
    let server = Avatar::start(&["--idle-timeout", "1"]);
    let mut s = server.connect();
    assert_eq!(
        roundtrip(&mut s, b"GET / HTTP/1.1\r\nHost: t\r\n\r\n").status,
        302
    );
    let start = Instant::now();
    assert!(Reader::new().closed(&mut s), "idle connection not closed");
    assert!(start.elapsed() < Duration::from_secs(9));
    assert!(server.metric("avatar_timeouts_total{kind=\"idle\"}") >= 1);
}

#[test]
fn connections_past_the_limit_are_closed_and_counted() {
    let server = Avatar::start(&["--max-connections", "2", "--workers", "1"]);
    let mut held: Vec<_> = (0..2).map(|_| server.connect()).collect();
    for s in &mut held {
        assert_eq!(
            roundtrip(s, b"GET / HTTP/1.1\r\nHost: t\r\n\r\n").status,
            302
        );
    }
    let mut extra = server.connect();
    let _ = extra.write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut reader = Reader::new();
    assert!(
        reader.closed(&mut extra),
        "connection past the limit was served"
    );
    assert!(reader.buf.is_empty());
    // Free a slot for the metrics request: once avatar has closed its side, the slot is
    // free (one worker, so it accepts the next connection only after that).
    let freed = held.pop().unwrap();
    let (client, addr) = (freed.local_addr().unwrap(), freed.peer_addr().unwrap());
    drop(freed);
    wait_until("avatar closing the dropped connection", || {
        avatar_has_closed(client, addr)
    });
    assert_eq!(server.metric("avatar_connections_rejected_total"), 1);
    // The held connection still works.
    assert_eq!(
        roundtrip(&mut held[0], b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status,
        200
    );
}

#[test]
fn metrics_count_routes_and_parse_errors() {
    let server = Avatar::start(&["--workers", "1"]);
    let mut s = server.connect();
    for _ in 0..3 {
        roundtrip(&mut s, b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    }
    roundtrip(
        &mut server.connect(),
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
    );
    assert_eq!(
        server.metric("avatar_requests_total{route=\"redirect\",status=\"302\"}"),
        3
    );
    assert_eq!(
        server.metric("avatar_parse_errors_total{kind=\"smuggling\"}"),
        1
    );
    assert!(server.metric("avatar_connections_open") >= 2);
}

#[test]
fn images_dir_serves_files_and_nothing_outside() {
    let root = TempDir::new("images");
    let dir = root.path().join("images");
    std::fs::create_dir(&dir).unwrap();
    for n in 1..=3 {
        write_png(&dir.join(format!("Renard-{n}.png")), [n * 60, 0, 0]);
    }
    std::fs::write(root.path().join("secret.txt"), b"secret").unwrap();
    let server = Avatar::start(&["--images", "3", "--images-dir", dir.to_str().unwrap()]);
    let mut s = server.connect();
    let resp = roundtrip(&mut s, b"GET / HTTP/1.1\r\nHost: t\r\n\r\n");
    let loc = resp.header("location").unwrap().to_owned();
    assert!(loc.starts_with("/images/Renard-"), "{loc}");
    let resp = roundtrip(
        &mut s,
        format!("GET {loc} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes(),
    );
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("image/png"));
    assert_eq!(
        resp.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert!(resp.body.starts_with(b"\x89PNG"));
    let etag = resp.header("etag").unwrap().to_owned();
    let resp = roundtrip(
        &mut s,
        format!("GET {loc} HTTP/1.1\r\nHost: t\r\nIf-None-Match: {etag}\r\n\r\n").as_bytes(),
    );
    assert_eq!(resp.status, 304);
    for path in [
        "/images/../secret.txt",
        "/images/%2e%2e/secret.txt",
        "/images/..%2fsecret.txt",
        "/images/",
        "/images/Renard-9.png",
        "/images//etc/passwd",
    ] {
        let resp = roundtrip(
            &mut s,
            format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes(),
        );
        assert_eq!(resp.status, 404, "{path}");
        assert!(!resp.body.windows(6).any(|w| w == b"secret"), "{path}");
    }
}

#[test]
fn images_dir_missing_a_located_file_is_a_setup_error() {
    let dir = TempDir::new("images-missing");
    write_png(&dir.path().join("Renard-1.png"), [1, 2, 3]);
    let out = std::process::Command::new(crate::common::BIN)
        .args([
            "--images",
            "2",
            "--images-dir",
            dir.path().to_str().unwrap(),
            "--check",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no Renard-2.png"));
}

#[test]
fn non_reader_sending_bytes_still_times_out() {
    // A 16 MiB file is far more than the loopback socket buffers hold, so output stays pending.
    let dir = TempDir::new("nonreader");
    std::fs::write(dir.path().join("big.bin"), vec![7u8; 16 << 20]).unwrap();
    let location = "https://avatar.example/{n}.png";
    let server = Avatar::start(&[
        "--idle-timeout",
        "3",
        "--images-dir",
        dir.path().to_str().unwrap(),
        "--images",
        "1",
        "--location",
        location,
    ]);
    let mut s = connect_with_rcvbuf(server.addr, 4096);
    s.write_all(b"GET /images/big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let start = Instant::now();
    // Never read; send a byte a second, each one a wake-up with nothing written.
    let mut closed = false;
    while start.elapsed() < Duration::from_secs(25) {
        // The gap is the test: a byte a second, inside the 3 s idle timeout, must not
        // keep a connection whose output never drains.
        std::thread::sleep(Duration::from_secs(1));
        if s.write_all(b"\n").is_err() {
            closed = true;
            break;
        }
    }
    assert!(closed, "a peer that never reads kept its connection");
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "closed only after {:?}",
        start.elapsed()
    );
    assert!(server.metric("avatar_timeouts_total{kind=\"idle\"}") >= 1);
}

#[test]
fn trickled_body_is_cut_off() {
    let server = Avatar::start(&["--head-timeout", "3", "--idle-timeout", "3"]);
    let mut s = server.connect();
    s.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 65536\r\n\r\n")
        .unwrap();
    let mut reader = Reader::new();
    assert_eq!(reader.read(&mut s, false).status, 302);
    // One body byte every 0.8 s: each one used to reset the idle deadline.
    s.set_read_timeout(Some(Duration::from_millis(800)))
        .unwrap();
    let start = Instant::now();
    let mut closed = false;
    while start.elapsed() < Duration::from_secs(25) {
        if s.write_all(b"x").is_err() || reader.closed(&mut s) {
            closed = true;
            break;
        }
    }
    assert!(closed, "a trickled body kept its connection");
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "closed only after {:?}",
        start.elapsed()
    );
    assert!(server.metric("avatar_timeouts_total{kind=\"body\"}") >= 1);
}

#[test]
fn pipelined_bodies_each_get_their_own_deadline() {
    // A fast client sending many requests with bodies is not cut off by the first body's deadline.
    let server = Avatar::start(&["--head-timeout", "2", "--idle-timeout", "2"]);
    let mut s = server.connect();
    let mut reader = Reader::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nab")
            .unwrap();
        assert_eq!(reader.read(&mut s, false).status, 200);
        // The gap is the test: each body ends 300 ms after its head, well inside its own
        // deadline, while over 5 s the connection outlives the first body's.
        std::thread::sleep(Duration::from_millis(300));
        s.write_all(b"cd").unwrap();
    }
}

#[test]
fn half_closed_client_is_answered_and_closed_promptly() {
    let server = Avatar::start(&["--idle-timeout", "30"]);
    for round in 0..20 {
        let mut s = server.connect();
        // The request and the FIN together: the FIN raises no edge of its own.
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let start = Instant::now();
        let mut reader = Reader::new();
        assert_eq!(reader.read(&mut s, false).status, 200, "round {round}");
        assert!(reader.closed(&mut s), "round {round}: not closed");
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "round {round}: closed only after {:?} (idle timeout 30 s)",
            start.elapsed()
        );
    }
}

#[test]
fn access_log_to_a_stuck_stdout_does_not_block_the_loop() {
    // Stdout is a pipe nobody reads: it fills after ~64 KiB of lines.
    let mut server = Avatar::spawn_with_stdout(
        &["--listen", "127.0.0.1:0", "--workers", "1", "--access-log"],
        std::process::Stdio::piped(),
    );
    assert!(server.child.stdout.is_some());
    const REQUESTS: usize = 30_000;
    let mut s = server.connect();
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let batch = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n".repeat(1000);
        for _ in 0..REQUESTS / 1000 {
            if w.write_all(&batch).is_err() {
                return;
            }
        }
    });
    let mut reader = Reader::new();
    for i in 0..REQUESTS {
        assert_eq!(reader.read(&mut s, false).status, 302, "response {i}");
    }
    writer.join().unwrap();
    let mut fresh = server.connect();
    fresh
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(
        roundtrip(&mut fresh, b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").status,
        200
    );
    assert!(server.metric("avatar_access_log_dropped_total") > 0);
    server.signal("TERM");
    server
        .wait_exit(Duration::from_secs(15))
        .expect("exit after SIGTERM with stdout stuck");
}

#[test]
fn images_dir_serves_svg_files() {
    let dir = TempDir::new("images-svg");
    std::fs::write(dir.path().join("x.svg"), b"<svg/>").unwrap();
    std::fs::write(dir.path().join("ff8800.svg"), b"<svg id='file'/>").unwrap();
    let server = Avatar::start(&[
        "--images-dir",
        dir.path().to_str().unwrap(),
        "--location",
        "https://avatar.example/{n}.png",
    ]);
    let mut s = server.connect();
    for (path, body) in [
        ("/images/x.svg", &b"<svg/>"[..]),
        ("/images/ff8800.svg", b"<svg id='file'/>"),
    ] {
        let resp = roundtrip(
            &mut s,
            format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes(),
        );
        assert_eq!(resp.status, 200, "{path}");
        assert_eq!(
            resp.header("content-type"),
            Some("image/svg+xml; charset=utf-8")
        );
        assert_eq!(resp.body, body, "{path}");
    }
}
