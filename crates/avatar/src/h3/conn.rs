//! One HTTP/3 connection over a `quinn_proto::Connection`: our control stream (SETTINGS,
//! later GOAWAY), the client's control stream (SETTINGS first), QPACK's streams checked by
//! `h3wire`, unknown unidirectional streams refused, and one request per bidirectional
//! stream, answered through the same responder as HTTP/1.1 and HTTP/2.

use std::net::SocketAddr;
use std::time::Instant;

use bytes::Bytes;
use h3wire::error as h3err;
use h3wire::frame::{self, stream_type, Header, Kind, Settings, UniStream};
use h3wire::qpack;
use h3wire::qpack::stream::{check_decoder_stream, check_encoder_stream};
use h3wire::walk::{Frame as WalkFrame, Take, WalkError, Walker};
use quinn_proto::{
    Connection, Dir, Event, ReadError, SendStream, StreamEvent, StreamId, VarInt, WriteError,
};

use super::request::{self, End, Rx};
use crate::config::Limits;
use crate::h2::hpack::Fields;
use crate::h2::request as checked;
use crate::metrics::{H3Event, ParseError, WorkerMetrics};
use crate::responder::Responder;

/// The largest control frame held whole (SETTINGS, GOAWAY).
const MAX_CONTROL_FRAME: u64 = 16 * 1024;
/// Response bytes held for flow control over a connection's streams, as HTTP/2 caps them:
/// past it new requests are left unread, so QUIC's flow control pushes back on the client
/// (the response that crosses it is held whole).
pub const MAX_HELD_BYTES: usize = crate::h2::limits::MAX_PENDING_BYTES;
/// Bytes a client's QPACK decoder stream may hold as a partial instruction.
const MAX_DECODER_PENDING: usize = 16;

/// Buffers the worker lends every connection it drives, reused from one request to the next.
#[derive(Debug, Default)]
pub struct Scratch {
    fields: Fields,
    decoder: qpack::Decoder,
    resp: Vec<u8>,
    section: Vec<u8>,
    frames: Vec<u8>,
}

impl Scratch {
    /// The last request head's answer [`feed`] wrote: the responder's HTTP/1.1 response.
    pub fn answer(&self) -> &[u8] {
        &self.resp
    }

    /// Empty buffers, with room for a typical request.
    pub fn new() -> Self {
        Scratch {
            fields: Fields::new(),
            decoder: qpack::Decoder::default(),
            resp: Vec::with_capacity(4096),
            section: Vec::with_capacity(512),
            frames: Vec::with_capacity(512),
        }
    }
}

/// What [`Conn::drive`] needs from the worker.
pub struct Ctx<'a> {
    /// The worker's responder.
    pub responder: &'a mut Responder,
    /// The worker's scratch buffers.
    pub scratch: &'a mut Scratch,
    /// The worker's counters.
    pub metrics: &'a WorkerMetrics,
    /// The request limits.
    pub limits: &'a Limits,
    /// Now, for quinn's clock.
    pub now: Instant,
}

#[derive(Debug)]
struct Uni {
    id: StreamId,
    kind: Option<UniStream>,
    /// The bytes not yet taken: the stream type, or a QPACK instruction split across reads.
    pending: Vec<u8>,
    /// The control stream's frames.
    walker: Walker,
}

#[derive(Debug)]
struct Req {
    id: StreamId,
    rx: Rx,
    /// The client ended its side, or we stopped reading it.
    read_done: bool,
    /// Response bytes the stream's flow control held back.
    unsent: Vec<u8>,
    /// Left unread while the connection holds too many response bytes.
    parked: bool,
    /// The response was written whole and the stream finished: nothing more to write.
    fin_sent: bool,
    /// The client acknowledged the whole response (quinn's `Finished`), or the stream was
    /// reset: only then may a closing connection forget it.
    write_done: bool,
}

/// The client's critical unidirectional streams: each may come once (RFC 9114 6.2.1,
/// RFC 9204 4.2) and may not end.
#[derive(Debug, Default)]
struct Peer {
    control: Option<StreamId>,
    encoder: Option<StreamId>,
    decoder: Option<StreamId>,
    settings_seen: bool,
}

/// One connection's HTTP/3 state.
#[derive(Debug, Default)]
pub struct Conn {
    control: Option<StreamId>,
    peer: Peer,
    /// The client's unidirectional streams being read: its critical three, and those whose
    /// type has not come yet (bounded by QUIC's credit, which comes back as they end).
    uni: Vec<Uni>,
    reqs: Vec<Req>,
    /// The `unsent` bytes of all `reqs`: at [`MAX_HELD_BYTES`], no new request is read.
    held_bytes: usize,
    /// The smallest client request stream id not yet taken in (the GOAWAY id).
    next_request: u64,
    goaway_sent: bool,
    /// The connection was closed by us with this code.
    closed: Option<u64>,
}

impl Conn {
    /// A new connection's state.
    pub fn new() -> Self {
        Conn::default()
    }

    /// Whether we closed the connection.
    pub fn closed(&self) -> bool {
        self.closed.is_some()
    }

    /// Handles what quinn has for the application, after datagrams or timers.
    pub fn drive(&mut self, conn: &mut Connection, cx: &mut Ctx<'_>) {
        if self.control.is_none() && !conn.is_handshaking() && !conn.is_closed() {
            self.open_control(conn, cx);
        }
        while let Some(ev) = conn.poll() {
            if self.closed.is_some() {
                continue;
            }
            let step = match ev {
                Event::Stream(StreamEvent::Opened { dir }) => self.accept(conn, dir, cx),
                Event::Stream(StreamEvent::Readable { id }) => self.read(conn, id, cx),
                Event::Stream(StreamEvent::Writable { id }) => {
                    self.flush(conn, id);
                    Ok(())
                }
                Event::Stream(StreamEvent::Finished { id }) => {
                    // quinn's close does not wait for unacknowledged data: a request is
                    // kept, and GOAWAY's close held back, until its response is delivered.
                    if let Some(r) = self.reqs.iter_mut().find(|r| r.id == id) {
                        r.write_done = true;
                    }
                    Ok(())
                }
                Event::Stream(StreamEvent::Stopped { id, error_code }) => {
                    // The client wants no more of the response. quinn does not answer
                    // STOP_SENDING by itself: until we reset, the send half stays open
                    // and the stream's credit never comes back.
                    cx.metrics.h3(H3Event::StreamReset);
                    let _ = conn.send_stream(id).reset(error_code);
                    if Some(id) == self.control {
                        // Our control stream is critical (RFC 9114 6.2.1).
                        self.close(conn, h3err::H3_CLOSED_CRITICAL_STREAM, cx);
                        continue;
                    }
                    if let Some(r) = self.reqs.iter_mut().find(|r| r.id == id) {
                        r.write_done = true;
                        self.held_bytes -= r.unsent.len();
                        r.unsent = Vec::new();
                        let _ = conn.recv_stream(id).stop(code(h3err::H3_NO_ERROR));
                        r.read_done = true;
                    }
                    Ok(())
                }
                Event::Connected => {
                    self.open_control(conn, cx);
                    Ok(())
                }
                _ => Ok(()),
            };
            if let Err(c) = step {
                self.close(conn, c, cx);
                continue;
            }
            if let Err(c) = self.unpark(conn, cx) {
                self.close(conn, c, cx);
            }
        }
        self.reqs.retain(|r| !(r.read_done && r.write_done));
        if self.goaway_sent && self.reqs.is_empty() && self.closed.is_none() {
            self.close(conn, h3err::H3_NO_ERROR, cx);
        }
    }

    /// Sends GOAWAY with the first request stream not taken in: the client opens no more,
    /// the ones in flight finish, then the connection closes with H3_NO_ERROR.
    pub fn goaway(&mut self, conn: &mut Connection, cx: &mut Ctx<'_>) {
        if self.goaway_sent || self.closed.is_some() {
            return;
        }
        self.goaway_sent = true;
        if let Some(id) = self.control {
            let out = &mut cx.scratch.frames;
            out.clear();
            frame::put_goaway(out, self.next_request);
            let _ = conn.send_stream(id).write(out);
        }
        if self.reqs.is_empty() {
            self.close(conn, h3err::H3_NO_ERROR, cx);
        }
    }

    /// Reads the requests left unread, while the held bytes are under the cap.
    fn unpark(&mut self, conn: &mut Connection, cx: &mut Ctx<'_>) -> Result<(), u64> {
        let mut i = 0;
        while i < self.reqs.len() && self.held_bytes < MAX_HELD_BYTES {
            if self.reqs[i].parked {
                self.reqs[i].parked = false;
                self.read(conn, self.reqs[i].id, cx)?;
            }
            i += 1;
        }
        Ok(())
    }

    fn close(&mut self, conn: &mut Connection, c: u64, cx: &mut Ctx<'_>) {
        if self.closed.is_some() {
            return;
        }
        if c != h3err::H3_NO_ERROR {
            cx.metrics.h3_error(c);
        }
        self.closed = Some(c);
        conn.close(cx.now, code(c), Bytes::new());
    }

    fn open_control(&mut self, conn: &mut Connection, cx: &mut Ctx<'_>) {
        if self.control.is_some() {
            return;
        }
        let Some(id) = conn.streams().open(Dir::Uni) else {
            return;
        };
        let out = &mut cx.scratch.frames;
        out.clear();
        frame::put_stream_type(out, stream_type::CONTROL);
        Settings::static_qpack(cx.limits.max_header_list_bytes as u64).put(out);
        // A few bytes on a new stream: within any flow-control window.
        let _ = conn.send_stream(id).write(out);
        self.control = Some(id);
    }

    fn accept(&mut self, conn: &mut Connection, dir: Dir, cx: &mut Ctx<'_>) -> Result<(), u64> {
        while let Some(id) = conn.streams().accept(dir) {
            if dir == Dir::Uni {
                // quinn's credit bounds these at MAX_UNI_STREAMS.
                self.uni.push(Uni {
                    id,
                    kind: None,
                    pending: Vec::new(),
                    walker: Walker::new(MAX_CONTROL_FRAME),
                });
                cx.metrics.h3_uni_streams(self.uni.len());
                self.read(conn, id, cx)?;
                continue;
            }
            self.next_request = self.next_request.max(id.index() * 4 + 4);
            if self.goaway_sent {
                // Past our GOAWAY: the client may retry it elsewhere (RFC 9114 5.2).
                let c = code(h3err::H3_REQUEST_REJECTED);
                let _ = conn.send_stream(id).reset(c);
                let _ = conn.recv_stream(id).stop(c);
                continue;
            }
            cx.metrics.h3(H3Event::Stream);
            // quinn's credit bounds these at --h2-max-streams.
            self.reqs.push(Req {
                id,
                rx: Rx::new(section_limit(cx.limits)),
                read_done: false,
                unsent: Vec::new(),
                parked: false,
                fin_sent: false,
                write_done: false,
            });
            cx.metrics.h3_streams_in_flight(self.reqs.len());
            self.read(conn, id, cx)?;
        }
        Ok(())
    }

    fn read(&mut self, conn: &mut Connection, id: StreamId, cx: &mut Ctx<'_>) -> Result<(), u64> {
        if id.dir() == Dir::Uni {
            return self.read_uni(conn, id);
        }
        let Some(i) = self.reqs.iter().position(|r| r.id == id) else {
            return Ok(());
        };
        let peer = conn.remote_address();
        let req = &mut self.reqs[i];
        if req.read_done {
            return Ok(());
        }
        if !req.rx.headers_done && self.held_bytes >= MAX_HELD_BYTES {
            // Taken up again as held bytes drain (`unpark`); meanwhile the unread stream
            // holds back the client's credit.
            req.parked = true;
            return Ok(());
        }
        let mut answer = false;
        let mut malformed = false;
        let mut incomplete = false;
        let mut reset = false;
        let mut fin = false;
        let mut stream = conn.recv_stream(id);
        let Ok(mut chunks) = stream.read(true) else {
            req.read_done = true;
            return Ok(());
        };
        let mut result = Ok(());
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    match feed(&mut req.rx, &chunk.bytes, Some(peer), cx) {
                        Ok(Some(m)) => {
                            answer = true;
                            malformed = m;
                        }
                        Ok(None) => {}
                        Err(c) => {
                            result = Err(c);
                            break;
                        }
                    }
                    if req.rx.body_bytes > cx.limits.max_body_bytes {
                        // The response went out at the head: the rest is not read
                        // (RFC 9114 4.1.2 lets a server stop a request it has answered).
                        req.read_done = true;
                        break;
                    }
                }
                Ok(None) => {
                    req.read_done = true;
                    fin = true;
                    match req.rx.at_fin() {
                        End::Complete => {}
                        End::Incomplete => incomplete = true,
                        End::Truncated => result = Err(h3err::H3_FRAME_ERROR),
                    }
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(_)) => {
                    cx.metrics.h3(H3Event::StreamReset);
                    req.read_done = true;
                    reset = true;
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        result?;
        if req.read_done && !reset && req.rx.body_bytes > cx.limits.max_body_bytes {
            let _ = conn.recv_stream(id).stop(code(h3err::H3_NO_ERROR));
        }
        // DATA that does not add up to the content-length is malformed (RFC 9114 4.1.2),
        // even after the answer went out.
        let broken = !reset && req.rx.length_broken(fin);
        if malformed
            || broken
            || incomplete
            || (reset && !req.fin_sent && !req.write_done && !answer)
        {
            // A malformed or incomplete request (RFC 9114 4.1.2), or one the client gave up.
            let c = if malformed || broken {
                h3err::H3_MESSAGE_ERROR
            } else if incomplete {
                h3err::H3_REQUEST_INCOMPLETE
            } else {
                h3err::H3_REQUEST_CANCELLED
            };
            let _ = conn.send_stream(id).reset(code(c));
            if !req.read_done {
                let _ = conn.recv_stream(id).stop(code(c));
            }
            req.read_done = true;
            req.write_done = true;
            self.held_bytes -= req.unsent.len();
            req.unsent = Vec::new();
            return Ok(());
        }
        if answer {
            let scratch = &mut *cx.scratch;
            scratch.frames.clear();
            let body =
                request::put_response(&scratch.resp, &mut scratch.frames, &mut scratch.section);
            let mut send = conn.send_stream(id);
            let mut done = false;
            for part in [&scratch.frames[..], body] {
                let n = if req.unsent.is_empty() && !done {
                    match write_some(&mut send, part) {
                        Ok(n) => n,
                        Err(()) => {
                            done = true;
                            part.len()
                        }
                    }
                } else {
                    0
                };
                if n < part.len() {
                    // Held for flow control: the one copy a response may need.
                    req.unsent.extend_from_slice(&part[n..]);
                }
            }
            if done {
                // Stopped by the client: nothing more goes out on this stream.
                req.unsent = Vec::new();
                req.write_done = true;
            } else if req.unsent.is_empty() {
                req.fin_sent = true;
                // A stream stopped meanwhile sends no `Finished`.
                req.write_done = send.finish().is_err();
            }
            self.held_bytes += req.unsent.len();
            cx.metrics.h3_held_bytes(self.held_bytes);
        }
        Ok(())
    }

    fn flush(&mut self, conn: &mut Connection, id: StreamId) {
        let Some(req) = self.reqs.iter_mut().find(|r| r.id == id) else {
            return;
        };
        if req.fin_sent || req.write_done || req.unsent.is_empty() {
            return;
        }
        let mut send = conn.send_stream(id);
        let Ok(n) = write_some(&mut send, &req.unsent) else {
            self.held_bytes -= req.unsent.len();
            req.unsent = Vec::new();
            req.write_done = true;
            return;
        };
        self.held_bytes -= n;
        req.unsent.drain(..n);
        if req.unsent.is_empty() {
            req.fin_sent = true;
            req.write_done = send.finish().is_err();
            req.unsent = Vec::new();
        }
    }

    fn read_uni(&mut self, conn: &mut Connection, id: StreamId) -> Result<(), u64> {
        let Some(i) = self.uni.iter().position(|u| u.id == id) else {
            return Ok(());
        };
        let mut stream = conn.recv_stream(id);
        let Ok(mut chunks) = stream.read(true) else {
            self.uni.swap_remove(i);
            return Ok(());
        };
        let mut result = Ok(());
        let mut refuse = false;
        let mut ended = false;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    let u = &mut self.uni[i];
                    u.pending.extend_from_slice(&chunk.bytes);
                    match take_uni(u, &mut self.peer) {
                        Ok(keep) => refuse = !keep,
                        Err(c) => result = Err(c),
                    }
                    if refuse || result.is_err() {
                        break;
                    }
                }
                Ok(None) | Err(ReadError::Reset(_)) => {
                    // The control and QPACK streams are critical: they may not end
                    // (RFC 9114 6.2.1, RFC 9204 4.2). Any other is forgotten as it ends,
                    // even before its type came.
                    if matches!(
                        self.uni[i].kind,
                        Some(
                            UniStream::Control | UniStream::QpackEncoder | UniStream::QpackDecoder
                        )
                    ) {
                        result = Err(h3err::H3_CLOSED_CRITICAL_STREAM);
                    }
                    ended = true;
                    break;
                }
                Err(ReadError::Blocked) => break,
            }
        }
        let _ = chunks.finalize();
        if refuse {
            // An unknown type is not read: its credit comes back once the client resets
            // it (RFC 9114 6.2).
            let _ = conn
                .recv_stream(id)
                .stop(code(h3err::H3_STREAM_CREATION_ERROR));
            self.uni.swap_remove(i);
        } else if ended && result.is_ok() {
            self.uni.swap_remove(i);
        }
        result
    }
}

/// Takes a request stream's new bytes: `Some(malformed)` once the head was answered
/// (into the scratch's [`Scratch::answer`]), `None` while it is not whole. `Err`: the
/// HTTP/3 error code to close the connection with. The fuzz harness's entry too.
pub fn feed(
    rx: &mut Rx,
    data: &[u8],
    peer: Option<SocketAddr>,
    cx: &mut Ctx<'_>,
) -> Result<Option<bool>, u64> {
    let mut out = None;
    let mut b = data;
    while let Some(frame) = rx.walk(&mut b)? {
        if let WalkFrame::Whole(_, section) = frame {
            let (malformed, length) = answer(section, peer, cx)?;
            rx.content_length = length;
            out = Some(malformed);
        }
    }
    Ok(out)
}

/// Decodes, checks and answers a request head into `cx.scratch.resp`; returns whether it
/// was malformed (then nothing is answered) and its `content-length`.
fn answer(
    section: &[u8],
    peer: Option<SocketAddr>,
    cx: &mut Ctx<'_>,
) -> Result<(bool, Option<u64>), u64> {
    let s = &mut *cx.scratch;
    request::decode(&mut s.decoder, section, &mut s.fields, cx.limits)?;
    let c = checked::check(&s.fields, cx.limits);
    if let checked::Checked::Malformed = c {
        cx.metrics.parse_error(ParseError::Malformed);
        return Ok((true, None));
    }
    let mut length = None;
    let c = match c {
        checked::Checked::Request(mut r) => {
            r.req.major_version = 3;
            length = r.has_length.then_some(r.req.content_length);
            checked::Checked::Request(r)
        }
        other => other,
    };
    s.resp.clear();
    checked::answer(&c, cx.responder, &mut s.resp, peer);
    Ok((false, length))
}

/// The longest HEADERS frame a request stream may send, as HTTP/2's header block: twice
/// the field section limit. A head past the limit but under this is answered 431; past
/// it, the connection is closed with H3_EXCESSIVE_LOAD.
pub fn section_limit(limits: &Limits) -> u64 {
    2 * limits.max_header_list_bytes as u64
}

/// Reads a unidirectional stream's pending bytes. `Ok(false)`: refuse the stream.
fn take_uni(u: &mut Uni, peer: &mut Peer) -> Result<bool, u64> {
    let kind = match u.kind {
        Some(k) => k,
        None => {
            let Some((k, n)) = UniStream::parse(&u.pending) else {
                return Ok(true);
            };
            u.pending.drain(..n);
            u.kind = Some(k);
            let slot = match k {
                UniStream::Control => Some(&mut peer.control),
                UniStream::QpackEncoder => Some(&mut peer.encoder),
                UniStream::QpackDecoder => Some(&mut peer.decoder),
                UniStream::Push | UniStream::Unknown(_) => None,
            };
            if let Some(slot) = slot {
                if slot.is_some() {
                    return Err(h3err::H3_STREAM_CREATION_ERROR);
                }
                *slot = Some(u.id);
            }
            k
        }
    };
    match kind {
        UniStream::Control => control_frames(u, &mut peer.settings_seen).map(|()| true),
        UniStream::QpackEncoder => {
            // A reference into the table we refused, or an insert into it, is an error.
            check_encoder_stream(&u.pending).map_err(|e| e.code())?;
            u.pending.clear();
            Ok(true)
        }
        UniStream::QpackDecoder => {
            let n = check_decoder_stream(&u.pending).map_err(|e| e.code())?;
            u.pending.drain(..n);
            if u.pending.len() > MAX_DECODER_PENDING {
                return Err(h3err::QPACK_DECODER_STREAM_ERROR);
            }
            Ok(true)
        }
        // Only a server opens push streams (RFC 9114 6.2.2).
        UniStream::Push => Err(h3err::H3_STREAM_CREATION_ERROR),
        UniStream::Unknown(_) => Ok(false),
    }
}

/// The client's control stream: SETTINGS first, then GOAWAY, MAX_PUSH_ID, CANCEL_PUSH and
/// unknown frames; anything else is H3_FRAME_UNEXPECTED. Takes all of `u.pending`: a frame
/// split across reads is held by the walker.
fn control_frames(u: &mut Uni, settings_seen: &mut bool) -> Result<(), u64> {
    let mut b = &u.pending[..];
    let take = |head: &Header, seen: bool| {
        if !seen && head.kind != Kind::Settings {
            return Err(h3err::H3_MISSING_SETTINGS);
        }
        if !head.kind.allowed_on(frame::Stream::Control) || (seen && head.kind == Kind::Settings) {
            return Err(h3err::H3_FRAME_UNEXPECTED);
        }
        Ok(match head.kind {
            Kind::Unknown(_) => Take::Skip,
            _ => Take::Whole,
        })
    };
    while let Some(frame) = u
        .walker
        .next(&mut b, |head| take(head, *settings_seen))
        .map_err(WalkError::code)?
    {
        // Nothing is streamed.
        let WalkFrame::Whole(head, payload) = frame else {
            continue;
        };
        match head.kind {
            Kind::Settings => {
                // Checked, not kept: our responses need no dynamic table, whatever the
                // client offers, and are far below any field section limit it may set.
                Settings::parse(payload).map_err(|e| e.code())?;
                *settings_seen = true;
            }
            _ => {
                frame::parse_id(payload).map_err(|e| e.code())?;
            }
        }
    }
    u.pending.clear();
    Ok(())
}

/// Writes as much of `data` as quinn takes: a short write is retried until it fails with
/// `Blocked`, the one failure that queues the stream for `StreamEvent::Writable`.
/// `Err(())`: the stream was stopped or is gone, and takes nothing more.
fn write_some(send: &mut SendStream<'_>, data: &[u8]) -> Result<usize, ()> {
    let mut n = 0;
    while n < data.len() {
        match send.write(&data[n..]) {
            Ok(0) | Err(WriteError::Blocked) => break,
            Ok(k) => n += k,
            Err(WriteError::Stopped(_) | WriteError::ClosedStream) => return Err(()),
        }
    }
    Ok(n)
}

fn code(c: u64) -> VarInt {
    VarInt::from_u64(c).unwrap_or(VarInt::from_u32(0x102))
}

#[cfg(test)]
mod tests;
