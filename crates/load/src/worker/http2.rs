//! HTTP/2, the [`Http`] implementation for it: a request is a stream of the sans-I/O
//! [`h2::Conn`] on a [`Stream`]. It turns the connection's [`Event`]s into outcomes of the
//! requests in flight, queues again what a GOAWAY or REFUSED_STREAM left unprocessed, and
//! times out streams one by one.

use std::collections::VecDeque;

use mio::Token;
use stats::reason::{At, Cause, Kind, Reason};

use super::http::{Cx, Http, Next, Requests, Sent, Setup};
use super::stream::{self, Flow, Received, Stream};
use super::{Config, Failure, Pending, Recorder};
use crate::h2::frame::code;
use crate::h2::request::RequestShape;
use crate::h2::{self, ConnError, Event, H2Counts, H2Options};
use crate::protocol_counts::ProtocolCounts;

/// Output room beyond the requests' own: the preface, SETTINGS, and the acknowledgements
/// and window updates one read can call for.
const CONTROL_ROOM: usize = 4096;

/// Unwritten output past which a server that keeps asking for answers (PINGs, SETTINGS)
/// while not reading them is cut off as flooding.
const MAX_UNWRITTEN: usize = 1 << 20;

/// Times a request is sent again after GOAWAYs or REFUSED_STREAMs before it fails.
const MAX_RETRIES: u8 = 3;

/// HTTP/2 for a worker: its settings, its counts, and the scratch space of its requests.
pub(in crate::worker) struct Http2 {
    /// The run's settings, with the streams per connection the plan decided.
    opts: H2Options,
    counts: H2Counts,
    /// Where a value with random parts is filled before its length is written.
    scratch: Vec<u8>,
}

/// One HTTP/2 connection: its byte stream and its streams and windows.
pub(in crate::worker) struct Conn {
    stream: Stream,
    h2: h2::Conn,
}

impl Http2 {
    pub(super) fn new(cfg: &Config, opts: H2Options) -> Self {
        Self {
            opts: H2Options {
                streams: cfg.per_connection as u32,
                ..opts
            },
            counts: H2Counts::default(),
            scratch: Vec::with_capacity(cfg.table.h2_max_value),
        }
    }
}

/// An HTTP/2 connection is never mid-response as a whole: its streams are timed apart.
fn stage() -> At {
    At::BeforeResponse
}

/// Removes the request carried by `stream` from `inflight`, keeping the others in order.
#[inline]
fn take(inflight: &mut VecDeque<Pending>, stream: u32) -> Option<Pending> {
    let i = inflight.iter().position(|p| p.stream == stream)?;
    inflight.remove(i)
}

/// A request left unprocessed: queued to go again, or failed for `failure` once it has
/// gone too often.
fn requeue(p: Pending, requeue: &mut Vec<Pending>, rec: &mut Recorder, failure: Failure) {
    if p.retries >= MAX_RETRIES {
        rec.failed(failure, 1);
        return;
    }
    requeue.push(Pending {
        retries: p.retries + 1,
        ..p
    });
}

/// A connection with no room (draining after a GOAWAY or a refused stream, or out of
/// stream IDs) and nothing in flight has nothing left to wait for: it is to be replaced.
/// Counts the ID rollover when that is why. Called wherever streams end: on bytes read
/// (`feed`) and on timeouts (`expire`), so that a draining connection whose last stream
/// times out is closed too.
fn spent(conn: &h2::Conn, inflight: &VecDeque<Pending>, counts: &mut H2Counts) -> bool {
    // A server that allows no streams may raise its limit: `expire` replaces the
    // connection once it has waited a timeout (it was replaced at once, in a loop).
    if conn.capacity() > 0 || !inflight.is_empty() || conn.allows_none() {
        return false;
    }
    if conn.ids_exhausted() {
        counts.id_rollovers += 1;
    }
    true
}

/// Nothing is in flight: the reason counts no request.
fn spent_reason() -> Failure {
    Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse))
}

impl Http for Http2 {
    type Conn = Conn;
    const RESENDS: bool = true;

    fn conn(&self, cfg: &Config) -> Conn {
        // Room for every stream's request and a partly written one before them, and the
        // connection's own frames: no growth later.
        let capacity = (cfg.per_connection + 1) * cfg.table.max_len + CONTROL_ROOM;
        Conn {
            stream: Stream::new(capacity),
            h2: h2::Conn::new(self.opts),
        }
    }

    fn connect(
        &mut self,
        c: &mut Conn,
        cx: &mut Cx,
        token: Token,
        _now: u64,
    ) -> Result<(), Failure> {
        c.stream.connect(cx, token)?;
        // The preface goes out at once, so that the server's SETTINGS (how many streams it
        // allows) arrive before the slot is offered more than one request.
        c.h2.start(&mut c.stream.out);
        Ok(())
    }

    fn setup(&mut self, c: &mut Conn, cx: &mut Cx, error: bool, _now: u64) -> Setup {
        c.stream.setup(cx, error, stage)
    }

    fn up(&mut self, c: &mut Conn, cx: &mut Cx, now: u64) -> u64 {
        c.stream.up(cx.rec, now)
    }

    /// A TLS server that did not select h2: the preflight says so in one line; this is a
    /// server that changed its mind during the run.
    fn carries(&self, c: &Conn) -> Result<(), Failure> {
        match c.stream.alpn() {
            Some(alpn) if alpn != Some(&b"h2"[..]) => Err(Reason::new(Kind::Protocol, Cause::NoH2)),
            _ => Ok(()),
        }
    }

    #[inline]
    fn room(&self, c: &mut Conn) -> usize {
        c.h2.capacity()
    }

    /// Opens a stream for the request. Without keep-alive the connection then drains: it
    /// closes once this one request is answered.
    #[inline]
    fn issue(
        &mut self,
        c: &mut Conn,
        cx: &mut Cx,
        shape: u32,
        resend: bool,
        in_flight: usize,
    ) -> u32 {
        c.stream.compact();
        let cfg = cx.cfg;
        let id = c.h2.open(
            shape,
            &cfg.table.h2[shape as usize],
            &cfg.table.h2_fields,
            cx.picker.rng(),
            &mut self.scratch,
            &mut c.stream.out,
            &mut self.counts,
        );
        if !cfg.keepalive {
            c.h2.drain();
        }
        if resend {
            self.counts.retries += 1;
        } else {
            // Fresh requests only, as before the seam: a request sent again was counted
            // when it was first assigned.
            self.counts.streams_used_max = self.counts.streams_used_max.max(in_flight as u64);
        }
        id
    }

    fn sample(&mut self, c: &mut Conn, start_ns: u64, sent_ns: u64, on_time: bool) -> bool {
        c.stream.sample(start_ns, sent_ns, on_time)
    }

    fn settle(&mut self, c: &mut Conn, cx: &mut Cx) -> bool {
        c.stream.settle(cx)
    }

    #[inline]
    fn send(&mut self, c: &mut Conn, cx: &mut Cx, _now: u64) -> Result<Sent, Failure> {
        c.stream.send(cx, stage)
    }

    /// SETTINGS and PING acknowledgements, window updates.
    #[inline]
    fn owes(&self, c: &mut Conn) -> bool {
        c.stream.unwritten()
    }

    #[inline]
    fn receive(
        &mut self,
        c: &mut Conn,
        reqs: &mut Requests,
        cx: &mut Cx,
        peer_closed: bool,
        now: u64,
    ) -> Next {
        let cfg = cx.cfg;
        let shapes = &cfg.table.h2;
        let Conn { stream, h2 } = c;
        let counts = &mut self.counts;
        let received = stream.receive(cx, peer_closed, now, |data, rec, out| {
            feed(h2, reqs, rec, counts, shapes, out, data, now)
        });
        match received {
            Received::Drained => Next::Refill,
            Received::Close => Next::Close(spent_reason()),
            Received::Broken(f) => {
                // Our GOAWAY, if the connection error is ours.
                stream.goodbye();
                Next::Fail(f)
            }
            Received::Failed(e) => Next::Fail(stream::read_failure(&e, stage())),
            Received::Eof { close_notify } => {
                stream::eof(reqs, cx.rec, close_notify, stage(), None)
            }
        }
    }

    /// Fails each stream that has waited longer than the timeout, alone: it is reset
    /// (CANCEL) and the connection goes on.
    fn expire(&mut self, c: &mut Conn, reqs: &mut Requests, cx: &mut Cx, now: u64) -> Next {
        let timeout = cx.cfg.timeout.as_nanos() as u64;
        if c.h2.allows_none()
            && reqs.inflight.is_empty()
            && now.saturating_sub(reqs.wait_since_ns) >= timeout
        {
            return Next::Close(spent_reason());
        }
        let mut expired = false;
        while let Some(p) = reqs.inflight.front() {
            if now.saturating_sub(p.sent_ns) < timeout {
                break;
            }
            let stream = p.stream;
            reqs.inflight.pop_front();
            let at = match c.h2.has_head(stream) {
                true => At::MidBody,
                false => At::BeforeResponse,
            };
            c.h2.cancel(stream, &mut c.stream.out);
            cx.rec
                .failed(Reason::new(Kind::Timeout, Cause::Timeout(at)), 1);
            expired = true;
        }
        if !expired {
            return Next::Idle;
        }
        if let Err(f) = c.stream.send(cx, stage) {
            return Next::Fail(f);
        }
        if spent(&c.h2, &reqs.inflight, &mut self.counts) {
            return Next::Close(spent_reason());
        }
        // The streams freed are room for the requests still to come.
        Next::Refill
    }

    fn setup_expired(&self, c: &Conn, since_ns: u64, now: u64, cfg: &Config) -> Option<Failure> {
        c.stream.setup_expired(since_ns, now, cfg)
    }

    fn close(&mut self, c: &mut Conn) {
        c.stream.close();
        c.h2.reset();
    }

    fn report(self, counts: &mut ProtocolCounts) {
        counts.h2 = Some(self.counts);
    }
}

/// Feeds bytes read on an HTTP/2 connection and records the streams that ended.
#[allow(clippy::too_many_arguments)]
#[inline]
fn feed(
    conn: &mut h2::Conn,
    reqs: &mut Requests,
    rec: &mut Recorder,
    counts: &mut H2Counts,
    shapes: &[RequestShape],
    out: &mut Vec<u8>,
    data: &[u8],
    now: u64,
) -> Result<Flow, Failure> {
    let Requests {
        inflight,
        requeue: queue,
        wait_since_ns,
    } = reqs;
    let mut refused = false;
    let fed = conn.feed(data, shapes, out, counts, &mut |ev| match ev {
        Event::Response { stream, status } => {
            if let Some(req) = take(inflight, stream) {
                rec.response(status, req);
                *wait_since_ns = now;
            }
        }
        Event::Reset { stream, code } => {
            if take(inflight, stream).is_some() {
                rec.failed(Reason::new(Kind::Reset, Cause::H2Received(code)), 1);
            }
        }
        Event::Broken { stream, code } => {
            if take(inflight, stream).is_some() {
                rec.failed(Reason::new(Kind::Protocol, Cause::H2Sent(code)), 1);
            }
        }
        Event::Malformed { stream, what } => {
            if take(inflight, stream).is_some() {
                rec.failed(Reason::new(Kind::Protocol, Cause::Malformed(what)), 1);
            }
        }
        Event::Refused { stream } => {
            if let Some(req) = take(inflight, stream) {
                let f = Reason::new(Kind::Reset, Cause::H2Received(code::REFUSED_STREAM));
                requeue(req, queue, rec, f);
                refused = true;
            }
        }
        Event::GoAway { last_stream } => {
            while let Some(i) = inflight.iter().position(|p| p.stream > last_stream) {
                if let Some(req) = inflight.remove(i) {
                    let f = Reason::new(Kind::Protocol, Cause::H2Received(code::NO_ERROR));
                    requeue(req, queue, rec, f);
                }
            }
        }
    });
    if let Err(e) = fed {
        // Our GOAWAY, written as the connection closes (`Stream::goodbye`).
        let cause = match e {
            ConnError::Local(_) => {
                conn.goaway(out, e.code());
                Cause::H2Sent(e.code())
            }
            ConnError::Remote(c) => Cause::H2Received(c),
        };
        return Err(Reason::new(Kind::Protocol, cause));
    }
    if refused {
        // Sent again on a new connection: this one drains first.
        conn.drain();
    }
    if out.len() > MAX_UNWRITTEN {
        conn.goaway(out, code::ENHANCE_YOUR_CALM);
        return Err(Reason::new(
            Kind::Protocol,
            Cause::H2Sent(code::ENHANCE_YOUR_CALM),
        ));
    }
    if spent(conn, inflight, counts) {
        return Ok(Flow::Close);
    }
    Ok(Flow::Continue)
}
