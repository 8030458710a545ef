//! Servers that answer with malformed HTTP/2 responses (RFC 9113 8.1.1: "Clients MUST NOT
//! accept a malformed response"), written here over raw sockets: every request fails as
//! `protocol` with the rule broken as its reason, none counts ok, our RST_STREAM reaches
//! the server for each, and the conservation law holds (`run` checks it).

use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use stats::reason::{Cause, Kind, Malformed, Reason};

use super::hostile::{frame, plan, settings, Peer, END_HEADERS, END_STREAM, HEADERS, RST_STREAM};
use crate::run;

const DATA: u8 = 0;

/// A literal field without indexing, its name a literal too.
fn lit(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut b = vec![0x00, name.len() as u8];
    b.extend_from_slice(name);
    b.push(value.len() as u8);
    b.extend_from_slice(value);
    b
}

/// `:status 200` and a content-length of `n`.
fn head_with_length(n: &[u8]) -> Vec<u8> {
    let mut b = vec![0x88];
    b.extend(lit(b"content-length", n));
    b
}

/// A server that answers each request's HEADERS with `reply(stream)`; returns its address
/// and the RST_STREAM frames it received.
fn serve(reply: fn(u32) -> Vec<u8>) -> (SocketAddr, Arc<AtomicU64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let resets = Arc::new(AtomicU64::new(0));
    let counter = resets.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let counter = counter.clone();
            std::thread::spawn(move || {
                let mut peer = Peer::new(s);
                let mut magic = [0u8; 24];
                if peer.stream().read_exact(&mut magic).is_err() || !peer.send(&settings(&[])) {
                    return;
                }
                while let Some((kind, _, stream)) = peer.next_frame() {
                    match kind {
                        HEADERS if !peer.send(&reply(stream)) => return,
                        RST_STREAM => {
                            counter.fetch_add(1, Ordering::Relaxed);
                        }
                        _ => {}
                    }
                }
            });
        }
    });
    (addr, resets)
}

#[test]
fn malformed_responses_are_protocol_errors_never_ok() {
    type Case = (&'static str, fn(u32) -> Vec<u8>, Malformed);
    let cases: [Case; 7] = [
        (
            "content-length 10, 5 bytes of DATA",
            |s| {
                let mut f = frame(HEADERS, END_HEADERS, s, &head_with_length(b"10"));
                f.extend(frame(DATA, END_STREAM, s, b"12345"));
                f
            },
            Malformed::ContentLength,
        ),
        (
            "content-length 2, 11 bytes of DATA",
            |s| {
                let mut f = frame(HEADERS, END_HEADERS, s, &head_with_length(b"2"));
                f.extend(frame(DATA, END_STREAM, s, b"12345678901"));
                f
            },
            Malformed::ContentLength,
        ),
        (
            "DATA before the response's HEADERS",
            |s| {
                let mut f = frame(DATA, 0, s, b"early");
                f.extend(frame(HEADERS, END_HEADERS | END_STREAM, s, &[0x88]));
                f
            },
            Malformed::FrameOrder,
        ),
        (
            "a 103 that ends the stream",
            |s| {
                frame(
                    HEADERS,
                    END_HEADERS | END_STREAM,
                    s,
                    &[0x08, 3, b'1', b'0', b'3'],
                )
            },
            Malformed::InterimEnd,
        ),
        (
            "an uppercase field name",
            |s| {
                let mut b = vec![0x88];
                b.extend(lit(b"Server", b"x"));
                frame(HEADERS, END_HEADERS | END_STREAM, s, &b)
            },
            Malformed::FieldName,
        ),
        (
            "a connection-specific field",
            |s| {
                let mut b = vec![0x88];
                b.extend(lit(b"transfer-encoding", b"chunked"));
                frame(HEADERS, END_HEADERS | END_STREAM, s, &b)
            },
            Malformed::ConnectionField,
        ),
        (
            "a request pseudo-header",
            |s| frame(HEADERS, END_HEADERS | END_STREAM, s, &[0x88, 0x84]),
            Malformed::Pseudo,
        ),
    ];
    for (what, reply, rule) in cases {
        let (addr, resets) = serve(reply);
        let r = run(&plan(addr));
        assert_eq!(
            (r.counts.ok, r.counts.protocol),
            (0, 20),
            "{what}: {:?}",
            r.counts
        );
        assert!(
            r.status.is_empty(),
            "{what}: no status counted: {:?}",
            r.status
        );
        let want = Reason::new(Kind::Protocol, Cause::Malformed(rule));
        assert_eq!(
            r.counts.reasons.count(want),
            Some(20),
            "{what}: {:?}",
            r.counts.reasons
        );
        testkit::wait_until(
            std::time::Duration::from_secs(10),
            "the server received a RST_STREAM per malformed response",
            || resets.load(Ordering::Relaxed) >= 20,
        );
    }
}
