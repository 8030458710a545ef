//! Every failure carries its reason: each is caused by an in-test server and checked for
//! its kind, its cause and the conservation law (`run` checks both laws).

use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::time::Duration;

use load::{Stop, Verify};
use stats::reason::{At, Cause, Kind, Reason, Rule};

use super::support::tls::Certs;
use super::support::{Conn, Server};
use super::{plan, run};

/// What the server does after reading a request.
type Then = fn(Conn);

/// Runs `n` requests against a server that does `then` with each connection, and checks
/// that every one of them failed with `want`.
#[track_caller]
fn every_request_fails_with(then: Then, n: u64, want: Reason) {
    let s = Server::spawn(then);
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(n);
    p.timeout = Duration::from_millis(300);
    let r = run(&p);
    assert_eq!(r.counts.of_kind(want.kind), n, "{want:?}: {:?}", r.counts);
    assert_eq!(
        r.counts.reasons.count(want),
        Some(n),
        "{want:?}: {:?}",
        r.counts.reasons
    );
}

fn answer(mut c: Conn, bytes: &'static [u8]) {
    while c.next_request().is_some() {
        if !c.send(bytes) {
            return;
        }
    }
}

fn answer_then_close(mut c: Conn, bytes: &'static [u8]) {
    if c.next_request().is_some() {
        c.send(bytes);
        let _ = c.stream.flush();
        // Long enough for the client to read the bytes before the close.
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn each_framing_rule_broken_is_its_own_parse_reason() {
    let parse = |r| Reason::new(Kind::Parse, Cause::Parse(r));
    every_request_fails_with(
        |c| answer(c, b"HTTP/1.1 OK 200 whatever\r\n\r\n"),
        10,
        parse(Rule::Head),
    );
    every_request_fails_with(
        |c| {
            answer(
                c,
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
            )
        },
        10,
        parse(Rule::ContentLength),
    );
    every_request_fails_with(
        |c| {
            answer(
                c,
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n",
            )
        },
        10,
        parse(Rule::ChunkSize),
    );
    every_request_fails_with(
        |c| {
            answer(
                c,
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
            )
        },
        10,
        parse(Rule::Upgrade),
    );
}

#[test]
fn each_way_a_server_closes_early_is_its_own_read_reason() {
    let read = |c| Reason::new(Kind::Read, c);
    every_request_fails_with(
        |mut c| {
            let _ = c.next_request();
        },
        10,
        read(Cause::Closed(At::BeforeResponse)),
    );
    every_request_fails_with(
        |c| answer_then_close(c, b"HTTP/1.1 200 OK\r\nContent-Le"),
        10,
        read(Cause::Closed(At::MidHead)),
    );
    every_request_fails_with(
        |c| answer_then_close(c, b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial"),
        10,
        read(Cause::Closed(At::MidBody)),
    );
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
                std::thread::sleep(Duration::from_millis(20));
                c.reset();
            }
        },
        10,
        read(Cause::Reset(At::MidBody)),
    );
}

#[test]
fn a_timeout_says_where_the_response_stood() {
    let timeout = |at| Reason::new(Kind::Timeout, Cause::Timeout(at));
    every_request_fails_with(|c| c.hold(), 4, timeout(At::BeforeResponse));
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\n");
                c.hold();
            }
        },
        4,
        timeout(At::MidHead),
    );
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort");
                c.hold();
            }
        },
        4,
        timeout(At::MidBody),
    );
}

#[test]
fn a_refused_connect_is_econnrefused() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut p = plan(&format!("http://{addr}/"));
    p.stop = Stop::Requests(20);
    let r = run(&p);
    let want = Reason::new(Kind::Connect, Cause::Errno(111));
    assert_eq!(r.counts.reasons.count(want), Some(20), "{:?}", r.counts);
    assert_eq!(r.counts.connect_refused, 20);
}

/// A rustls server that answers each request with `respond`'s bytes, then, after
/// `answers` responses, sends close_notify and holds the connection open: no TCP close.
fn close_notify_server(certs: &Certs, respond: &'static [u8], answers: usize) -> Server {
    let config = certs.server_config();
    Server::spawn(move |conn: Conn| {
        let Ok(session) = rustls::ServerConnection::new(Arc::clone(&config)) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(session, conn.stream);
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut answered = 0;
        while answered < answers {
            match tls.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                buf.drain(..end + 4);
                answered += 1;
                if answered == answers {
                    // Queued, to leave in one write with the close_notify: the close
                    // comes between responses, not racing the client's next request.
                    let _ = tls.conn.writer().write_all(respond);
                    break;
                }
                if tls.write_all(respond).is_err() {
                    return;
                }
            }
        }
        tls.conn.send_close_notify();
        let _ = tls.flush();
        // Waits for the client to go; a bounded wait, so a test that fails ends.
        let _ = tls.sock.set_read_timeout(Some(Duration::from_secs(10)));
        let mut sink = [0u8; 4096];
        while let Ok(n) = tls.sock.read(&mut sink) {
            if n == 0 {
                break;
            }
        }
    })
}

#[test]
fn issue_23_close_notify_mid_body_is_a_truncation_at_once() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let s = close_notify_server(
        &certs,
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789",
        1,
    );
    let mut p = plan(&format!("https://127.0.0.1:{}/", s.addr.port()));
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    p.stop = Stop::Requests(30);
    // Far longer than the run may take: a truncation seen only at the timeout fails it.
    p.timeout = Duration::from_secs(30);
    let started = std::time::Instant::now();
    let r = run(&p);
    let want = Reason::new(Kind::Read, Cause::CloseNotify(At::MidBody));
    assert_eq!(r.counts.read, 30, "{:?}", r.counts);
    assert_eq!(r.counts.reasons.count(want), Some(30), "{:?}", r.counts);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited for the timeout"
    );
}

#[test]
fn close_notify_between_responses_is_a_clean_close_and_a_reconnect() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let s = close_notify_server(&certs, super::support::REDIRECT, 3);
    let mut p = plan(&format!("https://127.0.0.1:{}/", s.addr.port()));
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    p.connections = 2;
    p.stop = Stop::Requests(60);
    p.timeout = Duration::from_secs(30);
    let r = run(&p);
    assert_eq!(r.counts.ok, 60, "{:?}", r.counts);
    assert!(r.counts.closed_by_server >= 1, "{:?}", r.counts);
    assert!(r.counts.reconnects >= 1, "{:?}", r.counts);
}
