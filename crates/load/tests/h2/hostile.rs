//! Misbehaving HTTP/2 servers, written here over raw sockets: each run must end in the
//! right outcome, in bounded time, with the conservation law holding (`run` checks both).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use load::{Plan, RequestSpec, Stop};
use stats::reason::{Cause, Kind, Reason};

use super::{h2_counts, h2_plan};
use crate::run;

pub(super) const HEADERS: u8 = 1;
pub(super) const RST_STREAM: u8 = 3;
pub(super) const SETTINGS: u8 = 4;
const PUSH_PROMISE: u8 = 5;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const CONTINUATION: u8 = 9;
pub(super) const END_STREAM: u8 = 1;
pub(super) const END_HEADERS: u8 = 4;
const REFUSED_STREAM: u32 = 7;
const INTERNAL_ERROR: u32 = 2;

pub(super) fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let l = (payload.len() as u32).to_be_bytes();
    let mut f = vec![l[1], l[2], l[3], kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

pub(super) fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut p = Vec::new();
    for (id, v) in pairs {
        p.extend_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&v.to_be_bytes());
    }
    frame(SETTINGS, 0, 0, &p)
}

fn goaway(last: u32, code: u32) -> Vec<u8> {
    let mut p = last.to_be_bytes().to_vec();
    p.extend_from_slice(&code.to_be_bytes());
    frame(GOAWAY, 0, 0, &p)
}

/// A `:status 200` response that ends the stream.
fn ok(stream: u32) -> Vec<u8> {
    frame(HEADERS, END_HEADERS | END_STREAM, stream, &[0x88])
}

/// One accepted connection of a hostile server.
pub(super) struct Peer {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Peer {
    pub(super) fn new(s: TcpStream) -> Self {
        Peer { s, buf: Vec::new() }
    }

    pub(super) fn stream(&mut self) -> &mut TcpStream {
        &mut self.s
    }

    pub(super) fn send(&mut self, bytes: &[u8]) -> bool {
        self.s.write_all(bytes).is_ok()
    }

    /// The next frame from the client: (type, flags, stream).
    pub(super) fn next_frame(&mut self) -> Option<(u8, u8, u32)> {
        loop {
            if self.buf.len() >= 9 {
                let len = (usize::from(self.buf[0]) << 16)
                    | (usize::from(self.buf[1]) << 8)
                    | usize::from(self.buf[2]);
                if self.buf.len() >= 9 + len {
                    let h = (
                        self.buf[3],
                        self.buf[4],
                        u32::from_be_bytes([self.buf[5], self.buf[6], self.buf[7], self.buf[8]])
                            & 0x7fff_ffff,
                    );
                    self.buf.drain(..9 + len);
                    return Some(h);
                }
            }
            let mut chunk = [0u8; 16384];
            match self.s.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

/// A server that reads the client preface, sends `preface` (its SETTINGS, or whatever the
/// test wants instead), then calls `on_request(peer, stream, nth on this connection)` for
/// each request's HEADERS; false ends the connection. Returns its address and the
/// requests it saw.
pub(super) fn serve(
    preface: Vec<u8>,
    on_request: impl Fn(&mut Peer, u32, u64) -> bool + Send + Sync + 'static,
) -> (SocketAddr, Arc<AtomicU64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(AtomicU64::new(0));
    let on_request = Arc::new(on_request);
    let counter = seen.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (preface, on_request, counter) =
                (preface.clone(), on_request.clone(), counter.clone());
            std::thread::spawn(move || {
                let mut peer = Peer { s, buf: Vec::new() };
                let mut magic = [0u8; 24];
                if peer.s.read_exact(&mut magic).is_err() || !peer.send(&preface) {
                    return;
                }
                let mut nth = 0;
                while let Some((kind, _, stream)) = peer.next_frame() {
                    if kind == HEADERS {
                        nth += 1;
                        counter.fetch_add(1, Ordering::Relaxed);
                        if !on_request(&mut peer, stream, nth) {
                            return;
                        }
                    }
                }
            });
        }
    });
    (addr, seen)
}

pub(super) fn plan(addr: SocketAddr) -> Plan {
    let mut p = h2_plan(&format!("http://{addr}/"), 4);
    p.connections = 2;
    p.threads = 1;
    p.stop = Stop::Requests(20);
    p.timeout = Duration::from_millis(500);
    p
}

#[test]
fn goaway_after_n_streams_sends_the_rest_again() {
    let (addr, _) = serve(settings(&[]), |peer, stream, nth| {
        if nth <= 3 {
            peer.send(&ok(stream));
        }
        if nth == 3 {
            peer.send(&goaway(stream, 0));
        }
        true
    });
    let r = run(&plan(addr));
    assert_eq!(r.counts.ok, 20, "{:?}", r.counts);
    assert_eq!(r.counts.errors(), 0);
    let h = h2_counts(&r);
    // 20 requests at 3 a connection, with at most two connections ending short: at least
    // six connections served 3 and sent GOAWAY, but the run may end on the sixth's third
    // response before its GOAWAY (a write of its own) is read (seen once, 5, under a
    // loaded test run).
    assert!(h.goaway_received[0] >= 5, "{h:?}");
    assert!(
        h.retries > 0,
        "streams above last-stream-id went again: {h:?}"
    );
}

#[test]
fn goaway_with_an_error_is_protocol() {
    let (addr, _) = serve(settings(&[]), |peer, _, _| {
        peer.send(&goaway(0, INTERNAL_ERROR));
        true
    });
    let r = run(&plan(addr));
    assert_eq!(r.counts.protocol, 20, "{:?}", r.counts);
    assert!(h2_counts(&r).goaway_received[INTERNAL_ERROR as usize] >= 1);
    let want = Reason::new(Kind::Protocol, Cause::H2Received(INTERNAL_ERROR));
    assert_eq!(r.counts.reasons.count(want), Some(20), "{:?}", r.counts);
}

#[test]
fn refused_stream_is_sent_again_and_counted_once() {
    // The first two requests the server sees are refused, whichever connection they use.
    let refused = AtomicU64::new(0);
    let (addr, seen) = serve(settings(&[]), move |peer, stream, _| {
        if refused.fetch_add(1, Ordering::Relaxed) < 2 {
            let f = frame(RST_STREAM, 0, stream, &REFUSED_STREAM.to_be_bytes());
            peer.send(&f)
        } else {
            peer.send(&ok(stream))
        }
    });
    let r = run(&plan(addr));
    assert_eq!((r.counts.sent, r.counts.ok), (20, 20), "{:?}", r.counts);
    let h = h2_counts(&r);
    assert_eq!(
        (h.retries, h.rst_received[REFUSED_STREAM as usize]),
        (2, 2),
        "{h:?}"
    );
    assert_eq!(seen.load(Ordering::Relaxed), 20 + h.retries);
}

#[test]
fn refused_forever_ends_as_reset_after_bounded_retries() {
    let (addr, _) = serve(settings(&[]), |peer, stream, _| {
        peer.send(&frame(RST_STREAM, 0, stream, &REFUSED_STREAM.to_be_bytes()))
    });
    let r = run(&plan(addr));
    assert_eq!(r.counts.reset, 20, "{:?}", r.counts);
    assert_eq!(h2_counts(&r).retries, 60, "three retries each");
    let want = Reason::new(Kind::Reset, Cause::H2Received(REFUSED_STREAM));
    assert_eq!(r.counts.reasons.count(want), Some(20), "{:?}", r.counts);
}

/// A graceful GOAWAY before every stream: each is unprocessed, sent again on a new
/// connection, and after the bounded retries fails as `protocol` with the GOAWAY's code.
#[test]
fn graceful_goaway_forever_ends_as_protocol_no_error() {
    let (addr, _) = serve(settings(&[]), |peer, _, _| {
        peer.send(&goaway(0, 0));
        true
    });
    let r = run(&plan(addr));
    let want = Reason::new(Kind::Protocol, Cause::H2Received(0));
    assert_eq!(r.counts.protocol, 20, "{:?}", r.counts);
    assert_eq!(r.counts.reasons.count(want), Some(20), "{:?}", r.counts);
}

#[test]
fn rst_stream_internal_error_is_reset() {
    let (addr, _) = serve(settings(&[]), |peer, stream, _| {
        peer.send(&frame(RST_STREAM, 0, stream, &INTERNAL_ERROR.to_be_bytes()))
    });
    let r = run(&plan(addr));
    assert_eq!(r.counts.reset, 20, "{:?}", r.counts);
    assert_eq!(h2_counts(&r).rst_received[INTERNAL_ERROR as usize], 20);
    let want = Reason::new(Kind::Reset, Cause::H2Received(INTERNAL_ERROR));
    assert_eq!(r.counts.reasons.count(want), Some(20), "{:?}", r.counts);
}

/// The server never acknowledges our SETTINGS (none of these servers does): tolerated,
/// as the RFC allows, since nothing we send depends on them.
#[test]
fn settings_never_acked_still_serves() {
    let (addr, _) = serve(settings(&[]), |peer, stream, _| peer.send(&ok(stream)));
    let r = run(&plan(addr));
    assert_eq!(r.counts.ok, 20, "{:?}", r.counts);
}

#[test]
fn headers_split_over_continuation_frames() {
    let (addr, _) = serve(settings(&[]), |peer, stream, _| {
        let block = [0x48, 0x03, b'2', b'0', b'4'];
        let mut f = frame(HEADERS, END_STREAM, stream, &block[..1]);
        f.extend(frame(CONTINUATION, 0, stream, &block[1..3]));
        f.extend(frame(CONTINUATION, END_HEADERS, stream, &block[3..]));
        peer.send(&f)
    });
    let r = run(&plan(addr));
    assert_eq!(r.counts.ok, 20, "{:?}", r.counts);
    assert_eq!(r.status, vec![(204, 20)]);
}

/// Connection errors: every stream in flight on the connection fails as `protocol`, with
/// the error code foxbench ended the connection with as its reason.
#[test]
fn connection_errors_fail_their_streams_as_protocol() {
    type Case = (&'static str, Vec<u8>, fn(u32) -> Vec<u8>, Cause);
    let cases: [Case; 5] = [
        (
            "a PUSH_PROMISE",
            settings(&[]),
            |s| {
                frame(
                    PUSH_PROMISE,
                    END_HEADERS,
                    s,
                    &[0, 0, 0, 2, 0x82, 0x84, 0x86],
                )
            },
            Cause::H2Sent(1),
        ),
        (
            "a frame larger than our SETTINGS_MAX_FRAME_SIZE",
            settings(&[]),
            |s| frame(HEADERS, END_HEADERS | END_STREAM, s, &[0x88; 20_000]),
            Cause::H2Sent(6),
        ),
        (
            "an HPACK table-size bomb",
            settings(&[]),
            |s| {
                frame(
                    HEADERS,
                    END_HEADERS | END_STREAM,
                    s,
                    &[0x3f, 0xe1, 0xff, 0x7f, 0x88],
                )
            },
            Cause::H2Sent(9),
        ),
        (
            "garbage instead of the connection preface",
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".to_vec(),
            |_| Vec::new(),
            Cause::H2Sent(1),
        ),
        (
            "a PING flood",
            settings(&[]),
            |s| {
                let mut f = frame(PING, 0, 0, b"floodflo").repeat(10_001);
                f.extend(ok(s));
                f
            },
            Cause::H2Sent(11),
        ),
    ];
    for (what, preface, reply, cause) in cases {
        let (addr, _) = serve(preface, move |peer, stream, _| peer.send(&reply(stream)));
        let r = run(&plan(addr));
        assert_eq!(r.counts.protocol, 20, "{what}: {:?}", r.counts);
        assert_eq!(r.counts.ok, 0, "{what}");
        let want = Reason::new(Kind::Protocol, cause);
        assert_eq!(
            r.counts.reasons.count(want),
            Some(20),
            "{what}: {:?}",
            r.counts.reasons
        );
    }
}

/// A stream window of 0 that never grows: the body never goes, the request times out.
#[test]
fn zero_window_that_never_grows_times_out() {
    let (addr, _) = serve(settings(&[(4, 0)]), |_, _, _| true);
    let mut p = plan(addr);
    p.requests = vec![RequestSpec {
        method: "POST".into(),
        path: "/".into(),
        body: b"a body".to_vec(),
        ..RequestSpec::default()
    }];
    p.timeout = Duration::from_millis(300);
    let r = run(&p);
    assert_eq!(r.counts.timeout, 20, "{:?}", r.counts);
}

/// A graceful GOAWAY that covers every stream, then silence: the draining connection's
/// last stream times out, and the connection, with no room and nothing in flight, is
/// replaced (it was closed only when bytes arrived, so the run hung).
#[test]
fn draining_connection_whose_last_stream_times_out_is_closed() {
    let (addr, seen) = serve(settings(&[]), |peer, _, _| {
        peer.send(&goaway(0x7fff_ffff, 0));
        true
    });
    // One stream per connection, as `foxbench load --http2 -n 3 -c 1` opens.
    let mut p = h2_plan(&format!("http://{addr}/"), 1);
    p.connections = 1;
    p.threads = 1;
    p.stop = Stop::Requests(3);
    p.timeout = Duration::from_millis(300);
    let r = run(&p);
    assert_eq!((r.counts.sent, r.counts.timeout), (3, 3), "{:?}", r.counts);
    assert_eq!(r.counts.connections_opened, 3, "{:?}", r.counts);
    assert_eq!(seen.load(Ordering::Relaxed), 3);
    assert_eq!(h2_counts(&r).goaway_received[0], 3);
}

/// A server that accepts connections (counted), sends SETTINGS with
/// MAX_CONCURRENT_STREAMS 0, then, when `raise_after` is given, waits that long and raises
/// the limit to 10 and answers every request; else it answers nothing, ever.
fn zero_streams_server(raise_after: Option<Duration>) -> (SocketAddr, Arc<AtomicU64>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let accepted = Arc::new(AtomicU64::new(0));
    let counter = accepted.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            counter.fetch_add(1, Ordering::Relaxed);
            std::thread::spawn(move || {
                let mut peer = Peer { s, buf: Vec::new() };
                let mut magic = [0u8; 24];
                if peer.s.read_exact(&mut magic).is_err() || !peer.send(&settings(&[(3, 0)])) {
                    return;
                }
                if let Some(after) = raise_after {
                    std::thread::sleep(after);
                    if !peer.send(&settings(&[(3, 10)])) {
                        return;
                    }
                }
                while let Some((kind, _, stream)) = peer.next_frame() {
                    if kind == HEADERS && raise_after.is_some() && !peer.send(&ok(stream)) {
                        return;
                    }
                }
            });
        }
    });
    (addr, accepted)
}

/// SETTINGS_MAX_CONCURRENT_STREAMS 0 is the server saying "not now": the connection waits
/// for it to raise the limit, and then serves every request, on that one connection.
#[test]
fn zero_max_streams_waits_for_the_server_to_raise_it() {
    let (addr, accepted) = zero_streams_server(Some(Duration::from_millis(300)));
    let mut p = plan(addr);
    p.connections = 1;
    p.timeout = Duration::from_secs(5);
    let r = run(&p);
    assert_eq!((r.counts.sent, r.counts.ok), (20, 20), "{:?}", r.counts);
    assert_eq!(accepted.load(Ordering::Relaxed), 1, "one connection");
}

/// A server that allows no streams, ever, under the open model (idle connections get its
/// SETTINGS before any request): each connection is replaced once it has waited a
/// timeout, not at once in a loop (it reconnected thousands of times a second), and the
/// preflight says so in one line.
#[test]
fn zero_max_streams_forever_is_replaced_once_per_timeout_not_in_a_loop() {
    let (addr, accepted) = zero_streams_server(None);
    let mut p = plan(addr);
    p.connections = 2;
    p.timeout = Duration::from_millis(200);
    p.arrival = load::Arrival::Open {
        rate: load::Rate::constant(5.0),
    };
    p.stop = Stop::Duration(Duration::from_secs(1));
    let e = load::preflight(&p).unwrap_err().to_string();
    assert!(e.contains("allows no streams"), "{e}");
    let r = run(&p);
    assert_eq!(r.counts.ok, 0, "{:?}", r.counts);
    // 2 connections, each replaced about every 200 ms over about 1 s, with slack for a
    // loaded machine's late ticks: far from a loop's thousands.
    let n = accepted.load(Ordering::Relaxed);
    assert!((2..=30).contains(&n), "{n} connections in about 1 s");
}

#[test]
fn every_h2_read_is_stamped() {
    let (addr, _) = serve(settings(&[]), |peer, stream, _| peer.send(&ok(stream)));
    let mut p = plan(addr);
    p.stop = Stop::Requests(100);
    let r = super::super::run(&p);
    assert_eq!(r.counts.ok, 100, "{:?}", r.counts);
    super::super::stamps::assert_stamped(&r);
}
