//! HTTP's byte stream, for the implementations that have one (HTTP/1.1 and HTTP/2): a
//! [`Transport`] (TCP, or TLS over TCP with its handshake inside "setting up") and the output
//! buffer requests are encoded into. It connects, writes, reads until the socket is
//! drained and hands each read to the protocol's framing; the end of the stream, which may
//! end, truncate or cleanly follow a response, is the protocol's to judge ([`eof`]).
//!
//! It also follows the connection's sampled request ([`Sample`]): writes are stamped until
//! the request's last byte has gone, and [`Stream::settle`] drains the stamps (on
//! EPOLLERR) and matches the request's.

use std::io;

use mio::Token;
use stats::reason::{At, Cause, Kind, Reason};

use super::http::{Cx, Next, Requests, Sent, Setup};
use super::send_sample::Sample;
use super::{now_ns, Config, Failure, Recorder};
use crate::cause;
use crate::tls::Handshake;
use crate::transport::{Read, Transport};

/// One connection's byte stream and its output.
pub(super) struct Stream {
    transport: Option<Transport>,
    /// Encoded requests; `out[out_pos..]` is issued but not yet written. Its capacity is
    /// reserved up front, so encoding a request does not allocate.
    pub(super) out: Vec<u8>,
    out_pos: usize,
    /// When its TCP connect completed, for a TLS connection still in its handshake.
    tcp_up_ns: Option<u64>,
    /// Established, and the worker told so.
    up: bool,
    /// The sampled request whose send stamp is awaited, if any.
    sample: Option<Sample>,
}

/// How many times [`Stream::settle`] drains the error queue before it takes an EPOLLERR
/// that will not go away for the socket's error.
const SETTLE_TRIES: usize = 3;

/// Where a connection goes after its framing took in one read's bytes.
pub(super) enum Flow {
    Continue,
    /// Close the connection; requests still in flight fail as `read`.
    Close,
}

/// How reading ended.
pub(super) enum Received {
    /// The socket is drained (or would block).
    Drained,
    /// The framing asked to close.
    Close,
    /// The peer closed the stream: with TLS's close_notify, or a bare TCP close.
    Eof { close_notify: bool },
    /// What was read broke the protocol.
    Broken(Failure),
    /// The read failed: [`read_failure`] says how it counts.
    Failed(io::Error),
}

impl Stream {
    /// A stream with room for `capacity` bytes of output.
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            transport: None,
            out: Vec::with_capacity(capacity),
            out_pos: 0,
            tcp_up_ns: None,
            up: false,
            sample: None,
        }
    }

    /// Issued requests not yet written, or TLS records not yet on the wire.
    #[inline]
    pub(super) fn unwritten(&self) -> bool {
        self.out_pos < self.out.len() || self.transport.as_ref().is_some_and(Transport::pending)
    }

    /// Makes room for new requests: the unwritten tail moves to the front, within the
    /// reserved capacity.
    #[inline]
    pub(super) fn compact(&mut self) {
        if self.out_pos > 0 {
            if let Some(sample) = self.sample.as_mut() {
                sample.compacted(self.out_pos);
            }
            self.out.drain(..self.out_pos);
            self.out_pos = 0;
        }
    }

    /// Samples the request just issued (it ends where the output does now), unless a
    /// sample is still awaited on this connection. True when it is taken.
    pub(super) fn sample(&mut self, start_ns: u64, sent_ns: u64, on_time: bool) -> bool {
        if self.sample.is_some() || self.transport.as_ref().is_some_and(|t| !t.stampable()) {
            return false;
        }
        self.sample = Some(Sample::new(self.out.len(), start_ns, sent_ns, on_time));
        true
    }

    /// After EPOLLERR: reads the send stamps the socket's error queue holds (they raise
    /// it), matching the sampled request's, then asks the socket whether it still says
    /// EPOLLERR, which with an empty queue means an error of its own. True only then: a
    /// queue of stamps is no error. The error is left in the socket (`poll` does not take
    /// it, as `SO_ERROR` would), for the read or write that follows to return it as ever.
    pub(super) fn settle(&mut self, cx: &mut Cx) -> bool {
        let Some(t) = self.transport.as_ref() else {
            return false;
        };
        let sample = &mut self.sample;
        let rec = &mut *cx.rec;
        // A stamp may land between the drain and the look: drain again, a few times at
        // most; an EPOLLERR that an empty queue leaves standing is the socket's error.
        for _ in 0..SETTLE_TRIES {
            let drained = t.drain_sends(cx.cmsg, |stamp| rec.send_stamp(sample, stamp));
            match t.error_raised() {
                Ok(false) => return false,
                Ok(true) if matches!(drained, Ok(0) | Err(_)) => return true,
                Ok(true) => {}
                Err(_) => return true,
            }
        }
        true
    }

    /// Starts a non-blocking connect (and, for https, the TLS session).
    pub(super) fn connect(&mut self, cx: &mut Cx, token: Token) -> Result<(), Failure> {
        self.tcp_up_ns = None;
        self.up = false;
        let cfg = cx.cfg;
        match Transport::connect(
            cfg.addr,
            cx.registry,
            token,
            cfg.keepalive,
            cfg.tls.as_ref(),
            cfg.kernel_stamps,
        ) {
            Ok(t) => {
                self.transport = Some(t);
                Ok(())
            }
            Err(e) => Err(self.connecting_failure(&e)),
        }
    }

    /// Makes progress on a connect: writes what waits (the TLS handshake goes on inside the
    /// write), or asks the socket when there is nothing to write.
    pub(super) fn setup(&mut self, cx: &mut Cx, error: bool, stage: impl Fn() -> At) -> Setup {
        if self.unwritten() {
            match self.send(cx, stage) {
                Ok(Sent::Up) => return Setup::Up,
                Ok(Sent::Wait) => {}
                Err(f) => return Setup::Failed(f),
            }
        } else if let Some(t) = self.transport.as_mut() {
            let result = t.poll_connect();
            self.note_tcp_up(cx.cfg);
            match result {
                Ok(true) => {
                    self.up = true;
                    return Setup::Up;
                }
                Ok(false) => {}
                Err(e) => return Setup::Failed(self.connecting_failure(&e)),
            }
        }
        if error {
            let e = self
                .transport
                .as_ref()
                .and_then(Transport::connect_error)
                .unwrap_or_else(|| io::Error::from(io::ErrorKind::ConnectionRefused));
            return Setup::Failed(self.connecting_failure(&e));
        }
        Setup::Waiting
    }

    /// Writes whatever is not written yet. `stage` places a write error in the response.
    ///
    /// While the sampled request's last byte has not gone, the writes are stamped: the
    /// stamping is turned on before them and off after, two `setsockopt` per sampled write.
    #[inline]
    pub(super) fn send(&mut self, cx: &mut Cx, stage: impl Fn() -> At) -> Result<Sent, Failure> {
        let stamping = self.sample.is_some_and(|s| s.unsent())
            && self.unwritten()
            && self
                .transport
                .as_ref()
                .is_some_and(|t| t.stampable() && t.stamp_sends(true).is_ok());
        let sent = self.write_out(cx, stage);
        if stamping {
            if let Some(t) = self.transport.as_ref() {
                let _ = t.stamp_sends(false);
            }
        }
        sent
    }

    #[inline]
    fn write_out(&mut self, cx: &mut Cx, stage: impl Fn() -> At) -> Result<Sent, Failure> {
        loop {
            if !self.unwritten() {
                return Ok(Sent::Wait);
            }
            let Some(t) = self.transport.as_mut() else {
                return Ok(Sent::Wait);
            };
            let connecting = !self.up;
            let written = t.write(&self.out[self.out_pos..]);
            if connecting {
                self.note_tcp_up(cx.cfg);
            }
            match written {
                Ok(n) => {
                    self.out_pos += n;
                    let done = !self.unwritten();
                    if let (Some(sample), Some(t)) = (self.sample.as_mut(), self.transport.as_ref())
                    {
                        sample.written(self.out_pos, t.sent_bytes(), t.pending());
                        if done {
                            sample.compacted(self.out_pos);
                        }
                    }
                    if done {
                        self.out.clear();
                        self.out_pos = 0;
                    }
                    cx.rec.counts.bytes_written += n as u64;
                    if connecting
                        && self
                            .transport
                            .as_ref()
                            .is_some_and(Transport::is_established)
                    {
                        // Back to the worker, which records the connection (`Worker::up`)
                        // before anything else, so that writing the rest of `out` does not
                        // count as handshake time; it sends the rest at once after.
                        self.up = true;
                        return Ok(Sent::Up);
                    }
                    if !done && self.transport.as_ref().is_none_or(Transport::socket_full) {
                        // The socket buffer is full: wait for the edge. A TLS write cut
                        // short by rustls's queue limit, the socket having taken it all,
                        // writes on instead: no edge would come for it.
                        return Ok(Sent::Wait);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Sent::Wait),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if connecting => return Err(self.connecting_failure(&e)),
                Err(e) => {
                    let kind = match cause::tls_error(&e) {
                        Some(_) => Kind::Tls,
                        None => Kind::Write,
                    };
                    return Err(Reason::new(kind, cause::of_io(&e, stage())));
                }
            }
        }
    }

    /// Writes what is queued (an HTTP/2 GOAWAY) once, before a failed connection is
    /// closed; a socket that does not take it loses nothing of ours.
    pub(super) fn goodbye(&mut self) {
        if let Some(t) = self.transport.as_mut() {
            let _ = t.write(&self.out[self.out_pos..]);
        }
    }

    /// Reads what the connection holds, handing each read to `feed`, with the output for
    /// what the read calls for (acknowledgements, window updates). `peer_closed`
    /// (EPOLLRDHUP/HUP) means a FIN or reset is queued behind the data: then read on to
    /// the EOF, since no new edge will come.
    ///
    /// Each read's kernel receive stamp goes to the recorder ([`Recorder::arrived`]) before
    /// its bytes go to `feed`, so that a response the framing completes in this read is
    /// dated by it, and read at the instant the recorder takes then (never before `now`,
    /// when the poll returned).
    #[inline]
    pub(super) fn receive(
        &mut self,
        cx: &mut Cx,
        peer_closed: bool,
        now: u64,
        mut feed: impl FnMut(&[u8], &mut Recorder, &mut Vec<u8>) -> Result<Flow, Failure>,
    ) -> Received {
        loop {
            let Some(t) = self.transport.as_mut() else {
                return Received::Drained;
            };
            let cmsg = cx.cfg.kernel_stamps.receive().then_some(&mut *cx.cmsg);
            match t.read(cx.rbuf, cmsg) {
                Ok(Read::Eof { close_notify }) => {
                    // The close carries no stamp: a response it frames is dated by this
                    // read, not by another connection's stamp the recorder may hold.
                    cx.rec.arrived_again(None, now);
                    return Received::Eof { close_notify };
                }
                Ok(Read::Data {
                    n,
                    drained,
                    stamp_ns,
                }) => {
                    cx.rec.counts.bytes_read += n as u64;
                    cx.rec.arrived(stamp_ns, now);
                    match feed(&cx.rbuf[..n], cx.rec, &mut self.out) {
                        Ok(Flow::Continue) => {}
                        Ok(Flow::Close) => return Received::Close,
                        Err(f) => return Received::Broken(f),
                    }
                    if drained && !peer_closed {
                        // No read is spent on EAGAIN: the transport says nothing is left.
                        return Received::Drained;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Received::Drained,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Received::Failed(e),
            }
        }
    }

    /// Records the TLS handshake of a connection just established; returns when its TCP
    /// connect completed.
    pub(super) fn up(&mut self, rec: &mut Recorder, now: u64) -> u64 {
        let tcp_up = self.tcp_up_ns.unwrap_or(now);
        let Some(conn) = self.transport.as_ref() else {
            return tcp_up;
        };
        if let Some(kind) = conn.handshake() {
            let took = now.saturating_sub(tcp_up);
            match kind {
                Handshake::Full => {
                    rec.counts.handshakes_full += 1;
                    rec.handshake_full.record_ns(took);
                }
                Handshake::Resumed => {
                    rec.counts.handshakes_resumed += 1;
                    rec.handshake_resumed.record_ns(took);
                }
            }
            if rec.tls.is_none() {
                rec.tls = conn.tls_info();
            }
        }
        tcp_up
    }

    /// The protocol TLS's ALPN selected; `None` over plain TCP (no handshake).
    pub(super) fn alpn(&self) -> Option<Option<&[u8]>> {
        let t = self.transport.as_ref()?;
        t.handshake()?;
        Some(t.alpn())
    }

    /// A TLS handshake gets the response timeout once TCP is up; the TCP connect gets the
    /// connect timeout.
    pub(super) fn setup_expired(&self, since_ns: u64, now: u64, cfg: &Config) -> Option<Failure> {
        match self.tcp_up_ns {
            Some(up) if now.saturating_sub(up) >= cfg.timeout.as_nanos() as u64 => {
                Some(Reason::new(Kind::Tls, Cause::Timeout(At::Handshake)))
            }
            None if now.saturating_sub(since_ns) >= cfg.connect_timeout.as_nanos() as u64 => {
                // With nothing in flight this only counts the failure and retries.
                Some(Reason::new(Kind::Connect, Cause::Timeout(At::Connect)))
            }
            _ => None,
        }
    }

    /// Closes the socket (close(2) also removes it from the epoll set) and drops what was
    /// not written.
    pub(super) fn close(&mut self) {
        self.transport = None;
        self.out.clear();
        self.out_pos = 0;
        self.tcp_up_ns = None;
        self.up = false;
        // Its stamp, if it comes, is lost with the socket: sampled, never matched.
        self.sample = None;
    }

    /// Notes when a TLS connection's TCP connect completed, which splits its setup into
    /// connect and handshake time.
    fn note_tcp_up(&mut self, cfg: &Config) {
        if self.tcp_up_ns.is_none()
            && self
                .transport
                .as_ref()
                .is_some_and(|c| matches!(c, Transport::Tls(_)) && c.tcp_established())
        {
            self.tcp_up_ns = Some(now_ns(cfg.epoch));
        }
    }

    /// How a failure while connecting counts: a TLS error, or any failure once TCP is up
    /// (the handshake failed), is `tls`; the rest are `connect`.
    fn connecting_failure(&self, e: &io::Error) -> Failure {
        if cause::tls_error(e).is_some() || self.tcp_up_ns.is_some() {
            Reason::new(Kind::Tls, cause::of_io(e, At::Handshake))
        } else {
            Reason::new(Kind::Connect, cause::of_io(e, At::Connect))
        }
    }
}

/// How a failed read counts, `at` where the oldest request in flight stood.
pub(super) fn read_failure(e: &io::Error, at: At) -> Failure {
    let kind = match cause::tls_error(e) {
        Some(_) => Kind::Tls,
        None => Kind::Read,
    };
    Reason::new(kind, cause::of_io(e, at))
}

/// The server closed the stream: with a TCP FIN, or with TLS's close_notify. Either ends a
/// response framed by the close (`framed`: its status), truncates one that is not complete
/// (`at` says where the oldest request stood), and between responses is a clean close.
pub(super) fn eof(
    reqs: &mut Requests,
    rec: &mut Recorder,
    close_notify: bool,
    at: At,
    framed: Option<u16>,
) -> Next {
    let f = Reason::new(
        Kind::Read,
        match close_notify {
            true => Cause::CloseNotify(at),
            false => Cause::Closed(at),
        },
    );
    if let Some(status) = framed {
        if let Some(req) = reqs.inflight.pop_front() {
            rec.response(status, req);
        }
        Next::Close(Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse)))
    } else if reqs.inflight.is_empty() {
        rec.counts.closed_by_server += 1;
        Next::Close(f)
    } else {
        Next::Fail(f)
    }
}
