//! HTTP/1.1, the [`Http`] implementation for it: requests pipelined on a [`Stream`], their
//! responses framed by the [`Framer`] in order, each complete one recorded. A connection
//! times out as a whole: its oldest request waited too long.

use mio::Token;
use stats::reason::{At, Cause, Kind, Reason};

use super::http::{Cx, Http, Next, Requests, Sent, Setup};
use super::stream::{self, Flow, Received, Stream};
use super::{Config, Failure, Pending, Recorder};
use crate::cause;
use crate::protocol_counts::ProtocolCounts;
use crate::response::{Framer, ParseError, Step};
use crate::table::Shape;

/// HTTP/1.1 for a worker: `per_connection` requests pipelined on each connection.
pub(in crate::worker) struct Http1 {
    per_connection: usize,
}

/// One HTTP/1.1 connection.
pub(in crate::worker) struct Conn {
    stream: Stream,
    framer: Framer,
    /// Start of a response head split across reads.
    leftover: Vec<u8>,
}

impl Http1 {
    pub(super) fn new(cfg: &Config) -> Self {
        Self {
            per_connection: cfg.per_connection,
        }
    }
}

/// Where a connection's oldest request in flight stands in its response.
fn stage(framer: &Framer, leftover: &[u8]) -> At {
    if !framer.between_responses() {
        At::MidBody
    } else if leftover.is_empty() {
        At::BeforeResponse
    } else {
        At::MidHead
    }
}

impl Http for Http1 {
    type Conn = Conn;
    const RESENDS: bool = false;

    fn conn(&self, cfg: &Config) -> Conn {
        // Room for a full pipeline and a partly written request before it: no growth later.
        Conn {
            stream: Stream::new((self.per_connection + 1) * cfg.table.max_len),
            framer: Framer::new(),
            leftover: Vec::new(),
        }
    }

    fn connect(
        &mut self,
        c: &mut Conn,
        cx: &mut Cx,
        token: Token,
        _now: u64,
    ) -> Result<(), Failure> {
        c.framer = Framer::new();
        c.leftover.clear();
        c.stream.connect(cx, token)
    }

    fn setup(&mut self, c: &mut Conn, cx: &mut Cx, error: bool, _now: u64) -> Setup {
        let Conn {
            stream,
            framer,
            leftover,
        } = c;
        stream.setup(cx, error, || stage(framer, leftover))
    }

    fn up(&mut self, c: &mut Conn, cx: &mut Cx, now: u64) -> u64 {
        c.stream.up(cx.rec, now)
    }

    fn carries(&self, _c: &Conn) -> Result<(), Failure> {
        Ok(())
    }

    /// The pipeline: `Plan::per_connection`, whatever the server.
    #[inline]
    fn room(&self, _c: &mut Conn) -> usize {
        self.per_connection
    }

    #[inline]
    fn issue(&mut self, c: &mut Conn, cx: &mut Cx, shape: u32, _resend: bool, _n: usize) -> u32 {
        c.stream.compact();
        cx.picker
            .encode(&cx.cfg.table, shape as usize, &mut c.stream.out);
        0
    }

    fn sample(&mut self, c: &mut Conn, start_ns: u64, sent_ns: u64, on_time: bool) -> bool {
        c.stream.sample(start_ns, sent_ns, on_time)
    }

    fn settle(&mut self, c: &mut Conn, cx: &mut Cx) -> bool {
        c.stream.settle(cx)
    }

    #[inline]
    fn send(&mut self, c: &mut Conn, cx: &mut Cx, _now: u64) -> Result<Sent, Failure> {
        let Conn {
            stream,
            framer,
            leftover,
        } = c;
        stream.send(cx, || stage(framer, leftover))
    }

    /// Nothing of its own: requests go out as they are issued.
    #[inline]
    fn owes(&self, _c: &mut Conn) -> bool {
        false
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
        let (shapes, keepalive) = (&cfg.table.shapes, cfg.keepalive);
        let Conn {
            stream,
            framer,
            leftover,
        } = c;
        let received = stream.receive(cx, peer_closed, now, |data, rec, _out| {
            feed(framer, leftover, reqs, rec, shapes, data, now, keepalive)
                .map_err(|e| Reason::new(Kind::Parse, cause::of_parse(e)))
        });
        match received {
            Received::Drained => Next::Refill,
            // Requests pipelined behind a response that closed.
            Received::Close => {
                Next::Close(Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse)))
            }
            Received::Broken(f) => Next::Fail(f),
            Received::Failed(e) => Next::Fail(stream::read_failure(&e, stage(framer, leftover))),
            Received::Eof { close_notify } => {
                let at = stage(framer, leftover);
                let framed = framer.eof();
                stream::eof(reqs, cx.rec, close_notify, at, framed)
            }
        }
    }

    fn expire(&mut self, c: &mut Conn, reqs: &mut Requests, cx: &mut Cx, now: u64) -> Next {
        if !reqs.inflight.is_empty()
            && now.saturating_sub(reqs.wait_since_ns) >= cx.cfg.timeout.as_nanos() as u64
        {
            let at = stage(&c.framer, &c.leftover);
            return Next::Fail(Reason::new(Kind::Timeout, Cause::Timeout(at)));
        }
        Next::Idle
    }

    fn setup_expired(&self, c: &Conn, since_ns: u64, now: u64, cfg: &Config) -> Option<Failure> {
        c.stream.setup_expired(since_ns, now, cfg)
    }

    fn close(&mut self, c: &mut Conn) {
        c.stream.close();
        c.framer = Framer::new();
        c.leftover.clear();
    }

    /// Nothing of its own.
    fn report(self, _counts: &mut ProtocolCounts) {}
}

/// Frames the responses in `data` for one connection, recording each complete one.
#[allow(clippy::too_many_arguments)]
#[inline]
fn feed(
    framer: &mut Framer,
    leftover: &mut Vec<u8>,
    reqs: &mut Requests,
    rec: &mut Recorder,
    shapes: &[Shape],
    data: &[u8],
    now: u64,
    keepalive: bool,
) -> Result<Flow, ParseError> {
    if leftover.is_empty() {
        return feed_slice(framer, leftover, reqs, rec, shapes, data, now, keepalive);
    }
    // Rare path: a head was split across reads; parse it from the joined bytes.
    let mut joined = std::mem::take(leftover);
    joined.extend_from_slice(data);
    let flow = feed_slice(framer, leftover, reqs, rec, shapes, &joined, now, keepalive);
    if leftover.is_empty() {
        joined.clear();
        *leftover = joined; // keep the capacity for next time
    }
    flow
}

#[allow(clippy::too_many_arguments)]
fn feed_slice(
    framer: &mut Framer,
    leftover: &mut Vec<u8>,
    reqs: &mut Requests,
    rec: &mut Recorder,
    shapes: &[Shape],
    data: &[u8],
    now: u64,
    keepalive: bool,
) -> Result<Flow, ParseError> {
    let mut i = 0;
    while i < data.len() {
        if reqs.inflight.is_empty() && framer.between_responses() {
            // Bytes nobody asked for (a body longer than its Content-Length, or a
            // response sent early). Like wrk, they are read as the start of the next
            // response, which then fails to parse: the error is charged to a request,
            // and the conservation law holds.
            if leftover.len() + data.len() - i > crate::MAX_HEAD {
                return Err(ParseError::HeadTooLarge);
            }
            leftover.extend_from_slice(&data[i..]);
            return Ok(Flow::Continue);
        }
        // The response framing follows the request it answers (HEAD has no body).
        let head = reqs
            .inflight
            .front()
            .is_some_and(|r| shapes[r.shape as usize].head);
        match framer.next(&data[i..], head)? {
            Step::Complete {
                status,
                close,
                used,
            } => {
                i += used;
                let req = reqs.inflight.pop_front().unwrap_or(Pending {
                    start_ns: now,
                    sent_ns: now,
                    shape: 0,
                    stream: 0,
                    retries: 0,
                });
                rec.response(status, req);
                reqs.wait_since_ns = now;
                if close || !keepalive {
                    return Ok(Flow::Close);
                }
            }
            Step::Body => return Ok(Flow::Continue),
            Step::PartialHead { used } => {
                leftover.extend_from_slice(&data[i + used..]);
                return Ok(Flow::Continue);
            }
        }
    }
    Ok(Flow::Continue)
}
