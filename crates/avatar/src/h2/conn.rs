//! One HTTP/2 connection, sans I/O: frames in, frames out, streams, windows and the limits.
//!
//! The worker hands [`Conn::process`] what it read and its output buffer, as it hands HTTP/1
//! bytes to the [`Responder`]; a request is answered as soon as its header block is complete
//! (a body, if any, is read and thrown away, as HTTP/1 does), by the same responder, through
//! [`super::response`].

use std::net::SocketAddr;

use super::frame::{
    self, code, flag, kind, setting, Header, DEFAULT_MAX_FRAME, DEFAULT_WINDOW, HEADER_LEN, MAX_31,
    MAX_FRAME_LIMIT, PREFACE,
};
use super::hpack::{Decoder, Fields};
use super::request::{self, Checked};
use super::response;
use crate::config::Limits;
use crate::metrics::{H2Event, WorkerMetrics};
use crate::responder::{Next, Outcome, Responder};

use super::limits::Bucket;
pub use super::limits::{
    CONTROL_BURST, CONTROL_PER_REQUEST, CONTROL_PER_SEC, MAX_CONTINUATIONS, MAX_PENDING_BYTES,
    RESETS_PER_SEC, RESET_BURST,
};

/// Buffers the worker lends every connection it drives.
#[derive(Debug, Default)]
pub struct Scratch {
    fields: Fields,
    resp: Vec<u8>,
}

impl Scratch {
    /// Empty buffers.
    pub fn new() -> Self {
        Scratch {
            fields: Fields::new(),
            resp: Vec::with_capacity(4096),
        }
    }
}

/// What [`Conn::process`] needs from the worker.
pub struct Ctx<'a> {
    /// The worker's responder.
    pub responder: &'a mut Responder,
    /// The worker's scratch buffers.
    pub scratch: &'a mut Scratch,
    /// The worker's counters.
    pub metrics: &'a WorkerMetrics,
    /// The request limits.
    pub limits: &'a Limits,
    /// The client, for the access log.
    pub peer: Option<SocketAddr>,
    /// The worker clock, in seconds.
    pub now_s: u32,
}

#[derive(Debug)]
struct Stream {
    id: u32,
    /// The client has not ended the stream.
    remote_open: bool,
    send_window: i64,
    recv_window: i64,
    content_length: Option<u64>,
    received: u64,
    /// Response body bytes flow control has held back.
    pending: Vec<u8>,
    pending_at: usize,
}

impl Stream {
    fn done(&self) -> bool {
        !self.remote_open && self.pending_at >= self.pending.len()
    }
}

/// A header block arriving over CONTINUATION frames.
#[derive(Debug, Clone, Copy)]
struct Continued {
    stream: u32,
    end_stream: bool,
    self_dependent: bool,
    frames: u32,
}

/// A connection error: the GOAWAY code, and the counter it moves.
#[derive(Debug, Clone, Copy)]
struct ConnError(u32, H2Event);

fn protocol() -> ConnError {
    ConnError(code::PROTOCOL_ERROR, H2Event::ConnectionError)
}

fn frame_size() -> ConnError {
    ConnError(code::FRAME_SIZE_ERROR, H2Event::ConnectionError)
}

fn flow() -> ConnError {
    ConnError(code::FLOW_CONTROL_ERROR, H2Event::ConnectionError)
}

type Step = Result<(), ConnError>;

/// One HTTP/2 connection's state.
#[derive(Debug)]
pub struct Conn {
    preface_done: bool,
    /// The client's first frame, its SETTINGS (RFC 9113 3.4), has come.
    settings_seen: bool,
    decoder: Decoder,
    streams: Vec<Stream>,
    /// The highest stream ID the client opened.
    last_stream: u32,
    /// Streams closed lately, to tell "closed" (STREAM_CLOSED) from "skipped" (PROTOCOL_ERROR).
    closed: [u32; 8],
    closed_at: usize,
    peer_initial_window: i64,
    peer_max_frame: usize,
    send_window: i64,
    recv_window: i64,
    block: Vec<u8>,
    continued: Option<Continued>,
    resets: Bucket,
    control: Bucket,
    pending_bytes: usize,
    goaway_sent: bool,
}

impl Default for Conn {
    fn default() -> Self {
        Self::new()
    }
}

impl Conn {
    /// A connection whose client preface is still to be read.
    pub fn new() -> Self {
        Conn {
            preface_done: false,
            settings_seen: false,
            decoder: Decoder::new(),
            streams: Vec::new(),
            last_stream: 0,
            closed: [0; 8],
            closed_at: 0,
            peer_initial_window: DEFAULT_WINDOW,
            peer_max_frame: DEFAULT_MAX_FRAME,
            send_window: DEFAULT_WINDOW,
            recv_window: DEFAULT_WINDOW,
            block: Vec::new(),
            continued: None,
            resets: Bucket::full(RESET_BURST),
            control: Bucket::full(CONTROL_BURST),
            pending_bytes: 0,
            goaway_sent: false,
        }
    }

    /// Whether a stream still waits for the client or for flow control.
    pub fn has_streams(&self) -> bool {
        !self.streams.is_empty()
    }

    /// Response bytes the client's flow-control windows hold back. While any are held, the
    /// client's frames do not keep the connection alive: only sending them does.
    pub fn held_bytes(&self) -> usize {
        self.pending_bytes
    }

    /// Says goodbye gracefully (server shutdown): a GOAWAY with NO_ERROR, once.
    pub fn goaway(&mut self, out: &mut Vec<u8>) {
        if !self.goaway_sent {
            self.goaway_sent = true;
            frame::put_goaway(out, self.last_stream, code::NO_ERROR);
        }
    }

    /// Handles the complete frames at the start of `input`, appending to `out`; stops once
    /// `out` holds `out_limit` bytes. The unconsumed rest is the start of a frame.
    pub fn process(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        out_limit: usize,
        cx: &mut Ctx<'_>,
    ) -> Outcome {
        let mut pos = 0;
        if !self.preface_done {
            let n = input.len().min(PREFACE.len());
            if input[..n] != PREFACE[..n] {
                cx.metrics.h2(H2Event::ConnectionError);
                return Outcome {
                    consumed: input.len(),
                    next: Next::Close,
                };
            }
            if n < PREFACE.len() {
                return Outcome {
                    consumed: 0,
                    next: Next::NeedInput,
                };
            }
            pos = PREFACE.len();
            self.preface_done = true;
            cx.metrics.h2(H2Event::Connection);
            frame::put_settings(
                out,
                &[
                    (
                        setting::MAX_CONCURRENT_STREAMS,
                        cx.limits.max_concurrent_streams,
                    ),
                    (setting::MAX_FRAME_SIZE, DEFAULT_MAX_FRAME as u32),
                    (
                        setting::MAX_HEADER_LIST_SIZE,
                        cx.limits.max_header_list_bytes as u32,
                    ),
                ],
            );
        }
        loop {
            if out.len() >= out_limit {
                return Outcome {
                    consumed: pos,
                    next: Next::OutputFull,
                };
            }
            let rest = &input[pos..];
            if rest.len() < HEADER_LEN {
                break;
            }
            let h = Header::parse(rest);
            let result = if h.len > DEFAULT_MAX_FRAME {
                Err(ConnError(code::FRAME_SIZE_ERROR, H2Event::FrameTooLarge))
            } else if rest.len() < HEADER_LEN + h.len {
                break;
            } else {
                pos += HEADER_LEN + h.len;
                self.frame(h, &rest[HEADER_LEN..HEADER_LEN + h.len], out, cx)
            };
            if let Err(ConnError(c, event)) = result {
                cx.metrics.h2(event);
                frame::put_goaway(out, self.last_stream, c);
                self.goaway_sent = true;
                return Outcome {
                    consumed: input.len(),
                    next: Next::Linger,
                };
            }
        }
        Outcome {
            consumed: pos,
            next: Next::NeedInput,
        }
    }

    fn frame(&mut self, h: Header, p: &[u8], out: &mut Vec<u8>, cx: &mut Ctx<'_>) -> Step {
        if !self.settings_seen {
            // The preface ends with a SETTINGS frame (RFC 9113 3.4): anything else first is a
            // connection error.
            if h.kind != kind::SETTINGS || h.has(flag::ACK) {
                return Err(protocol());
            }
            self.settings_seen = true;
        }
        if let Some(c) = self.continued {
            if h.kind != kind::CONTINUATION || h.stream != c.stream {
                return Err(protocol());
            }
        }
        match h.kind {
            kind::DATA => self.data(h, p, out, cx),
            kind::HEADERS => self.headers(h, p, out, cx),
            kind::PRIORITY => {
                self.spend(cx)?;
                if h.stream == 0 {
                    return Err(protocol());
                }
                if p.len() != 5 {
                    self.stream_error(h.stream, code::FRAME_SIZE_ERROR, out, cx.metrics, cx.now_s)?;
                } else if u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & MAX_31 == h.stream {
                    self.stream_error(h.stream, code::PROTOCOL_ERROR, out, cx.metrics, cx.now_s)?;
                }
                Ok(())
            }
            kind::RST_STREAM => {
                if h.stream == 0 {
                    return Err(protocol());
                }
                if p.len() != 4 {
                    return Err(frame_size());
                }
                if h.stream > self.last_stream {
                    return Err(protocol());
                }
                if !self.resets.take(cx.now_s, RESET_BURST, RESETS_PER_SEC) {
                    return Err(ConnError(code::ENHANCE_YOUR_CALM, H2Event::RapidReset));
                }
                self.close_stream(h.stream);
                Ok(())
            }
            kind::SETTINGS => self.settings(h, p, out, cx),
            kind::PUSH_PROMISE => Err(protocol()),
            kind::PING => {
                if h.stream != 0 {
                    return Err(protocol());
                }
                if p.len() != 8 {
                    return Err(frame_size());
                }
                self.spend(cx)?;
                if !h.has(flag::ACK) {
                    frame::put_header(out, 8, kind::PING, flag::ACK, 0);
                    out.extend_from_slice(p);
                }
                Ok(())
            }
            kind::GOAWAY => {
                if h.stream != 0 {
                    return Err(protocol());
                }
                if p.len() < 8 {
                    return Err(frame_size());
                }
                Ok(())
            }
            kind::WINDOW_UPDATE => self.window_update(h, p, out, cx),
            kind::CONTINUATION => {
                let Some(mut c) = self.continued else {
                    return Err(protocol());
                };
                c.frames += 1;
                if c.frames > MAX_CONTINUATIONS
                    || self.block.len() + p.len() > 2 * cx.limits.max_header_list_bytes
                {
                    return Err(ConnError(
                        code::ENHANCE_YOUR_CALM,
                        H2Event::ContinuationFlood,
                    ));
                }
                self.block.extend_from_slice(p);
                if !h.has(flag::END_HEADERS) {
                    self.continued = Some(c);
                    return Ok(());
                }
                self.continued = None;
                // Taken, not kept: honest clients rarely continue a block, so an idle
                // connection holds no block buffer.
                let block = std::mem::take(&mut self.block);
                self.header_block(c.stream, c.end_stream, c.self_dependent, &block, out, cx)
            }
            // Unknown frame types are ignored (RFC 9113 5.5), within the control budget.
            _ => self.spend(cx),
        }
    }

    /// Takes one control frame from the budget.
    fn spend(&mut self, cx: &Ctx<'_>) -> Step {
        if self.control.take(cx.now_s, CONTROL_BURST, CONTROL_PER_SEC) {
            Ok(())
        } else {
            Err(ConnError(code::ENHANCE_YOUR_CALM, H2Event::ControlFlood))
        }
    }

    fn find(&self, id: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == id)
    }

    fn close_stream(&mut self, id: u32) {
        if let Some(i) = self.find(id) {
            let s = self.streams.swap_remove(i);
            self.pending_bytes -= s.pending.len() - s.pending_at.min(s.pending.len());
            self.remember_closed(id);
        }
    }

    fn remember_closed(&mut self, id: u32) {
        self.closed[self.closed_at % self.closed.len()] = id;
        self.closed_at += 1;
    }

    /// Resets a stream. Every RST_STREAM the server sends is charged to the resets budget, so
    /// frames that each draw one (DATA on closed streams) cannot be sent without limit.
    fn stream_error(
        &mut self,
        id: u32,
        c: u32,
        out: &mut Vec<u8>,
        metrics: &WorkerMetrics,
        now_s: u32,
    ) -> Step {
        self.charge_reset(now_s)?;
        metrics.h2(H2Event::StreamError);
        frame::put_rst(out, id, c);
        self.close_stream(id);
        Ok(())
    }

    /// Takes one RST_STREAM the server sends from the resets budget.
    fn charge_reset(&mut self, now_s: u32) -> Step {
        if self.resets.take(now_s, RESET_BURST, RESETS_PER_SEC) {
            Ok(())
        } else {
            Err(ConnError(code::ENHANCE_YOUR_CALM, H2Event::RapidReset))
        }
    }

    fn data(&mut self, h: Header, p: &[u8], out: &mut Vec<u8>, cx: &mut Ctx<'_>) -> Step {
        if h.stream == 0 {
            return Err(protocol());
        }
        let body = unpad(h, p)?;
        if h.stream > self.last_stream {
            return Err(protocol());
        }
        // Flow control counts the whole payload, padding too.
        self.recv_window -= p.len() as i64;
        if self.recv_window < 0 {
            return Err(flow());
        }
        if self.recv_window < DEFAULT_WINDOW / 2 {
            frame::put_window_update(out, 0, (DEFAULT_WINDOW - self.recv_window) as u32);
            self.recv_window = DEFAULT_WINDOW;
        }
        if p.is_empty() && !h.has(flag::END_STREAM) {
            self.spend(cx)?;
        }
        let Some(i) = self.find(h.stream).filter(|&i| self.streams[i].remote_open) else {
            self.stream_error(h.stream, code::STREAM_CLOSED, out, cx.metrics, cx.now_s)?;
            return Ok(());
        };
        let s = &mut self.streams[i];
        s.recv_window -= p.len() as i64;
        if s.recv_window < 0 {
            self.stream_error(
                h.stream,
                code::FLOW_CONTROL_ERROR,
                out,
                cx.metrics,
                cx.now_s,
            )?;
            return Ok(());
        }
        s.received += body.len() as u64;
        let end = h.has(flag::END_STREAM);
        let bad_length = s
            .content_length
            .is_some_and(|cl| s.received > cl || (end && s.received != cl));
        if bad_length {
            self.stream_error(h.stream, code::PROTOCOL_ERROR, out, cx.metrics, cx.now_s)?;
            return Ok(());
        }
        if end {
            s.remote_open = false;
            if s.done() {
                self.close_stream(h.stream);
            }
        } else if s.recv_window < DEFAULT_WINDOW / 2 {
            frame::put_window_update(out, s.id, (DEFAULT_WINDOW - s.recv_window) as u32);
            s.recv_window = DEFAULT_WINDOW;
        }
        Ok(())
    }

    fn headers(&mut self, h: Header, p: &[u8], out: &mut Vec<u8>, cx: &mut Ctx<'_>) -> Step {
        if h.stream == 0 || h.stream.is_multiple_of(2) {
            return Err(protocol());
        }
        let mut block = unpad(h, p)?;
        let mut self_dependent = false;
        if h.has(flag::PRIORITY) {
            if block.len() < 5 {
                return Err(frame_size());
            }
            self_dependent =
                u32::from_be_bytes([block[0], block[1], block[2], block[3]]) & MAX_31 == h.stream;
            block = &block[5..];
        }
        if h.stream <= self.last_stream && self.find(h.stream).is_none() {
            // A closed stream (or one the client skipped, which is closed too).
            let c = if self.closed.contains(&h.stream) {
                code::STREAM_CLOSED
            } else {
                code::PROTOCOL_ERROR
            };
            return Err(ConnError(c, H2Event::ConnectionError));
        }
        let end_stream = h.has(flag::END_STREAM);
        if h.has(flag::END_HEADERS) {
            return self.header_block(h.stream, end_stream, self_dependent, block, out, cx);
        }
        self.block.clear();
        self.block.extend_from_slice(block);
        self.continued = Some(Continued {
            stream: h.stream,
            end_stream,
            self_dependent,
            frames: 0,
        });
        Ok(())
    }

    /// A complete header block: a new request, or trailers.
    fn header_block(
        &mut self,
        id: u32,
        end_stream: bool,
        self_dependent: bool,
        block: &[u8],
        out: &mut Vec<u8>,
        cx: &mut Ctx<'_>,
    ) -> Step {
        let fields = &mut cx.scratch.fields;
        if self
            .decoder
            .decode(block, fields, cx.limits.max_header_list_bytes)
            .is_err()
        {
            return Err(ConnError(code::COMPRESSION_ERROR, H2Event::ConnectionError));
        }
        if let Some(i) = self.find(id) {
            // A second block on a stream: trailers, which must end it and hold no pseudo-field.
            let trailers_ok = self.streams[i].remote_open
                && end_stream
                && !fields.iter().any(|(n, _)| n.first() == Some(&b':'));
            let c = if !self.streams[i].remote_open {
                code::STREAM_CLOSED
            } else {
                code::PROTOCOL_ERROR
            };
            if !trailers_ok {
                self.stream_error(id, c, out, cx.metrics, cx.now_s)?;
                return Ok(());
            }
            let s = &mut self.streams[i];
            s.remote_open = false;
            if s.content_length.is_some_and(|cl| cl != s.received) {
                self.stream_error(id, code::PROTOCOL_ERROR, out, cx.metrics, cx.now_s)?;
            } else if s.done() {
                self.close_stream(id);
            }
            return Ok(());
        }
        // A new stream (headers() refused closed ones).
        self.last_stream = id;
        if self_dependent {
            self.remember_closed(id);
            self.stream_error(id, code::PROTOCOL_ERROR, out, cx.metrics, cx.now_s)?;
            return Ok(());
        }
        if self.goaway_sent {
            return Ok(());
        }
        if self.streams.len() >= cx.limits.max_concurrent_streams as usize
            || self.pending_bytes > MAX_PENDING_BYTES
        {
            self.charge_reset(cx.now_s)?;
            cx.metrics.h2(H2Event::StreamRefused);
            frame::put_rst(out, id, code::REFUSED_STREAM);
            self.remember_closed(id);
            return Ok(());
        }
        let checked = request::check(fields, cx.limits);
        let content_length = match &checked {
            Checked::Malformed => {
                cx.metrics
                    .parse_error(crate::metrics::ParseError::Malformed);
                self.remember_closed(id);
                self.stream_error(id, code::PROTOCOL_ERROR, out, cx.metrics, cx.now_s)?;
                return Ok(());
            }
            Checked::Request(req) => Some(req.req.content_length).filter(|_| req.has_length),
            Checked::Refused(_) => None,
        };
        if content_length.is_some_and(|cl| end_stream && cl != 0) {
            self.remember_closed(id);
            self.stream_error(id, code::PROTOCOL_ERROR, out, cx.metrics, cx.now_s)?;
            return Ok(());
        }
        if let Checked::Refused(crate::metrics::ParseError::HeadTooLarge) = checked {
            cx.metrics.h2(H2Event::HeaderListTooLarge);
            // An oversized block is charged to the control budget, not paid back: its 431
            // must not let a client send such blocks without limit.
            if !self.control.take(cx.now_s, CONTROL_BURST, CONTROL_PER_SEC) {
                return Err(ConnError(code::ENHANCE_YOUR_CALM, H2Event::ControlFlood));
            }
        } else {
            self.control = Bucket {
                tokens: self
                    .control
                    .tokens
                    .saturating_add(CONTROL_PER_REQUEST)
                    .min(CONTROL_BURST),
                ..self.control
            };
        }
        let resp = &mut cx.scratch.resp;
        resp.clear();
        request::answer(&checked, cx.responder, resp, cx.peer);
        let body = response::put_head(resp, id, out);
        let mut s = Stream {
            id,
            remote_open: !end_stream,
            send_window: self.peer_initial_window,
            recv_window: DEFAULT_WINDOW,
            content_length,
            received: 0,
            pending: Vec::new(),
            pending_at: 0,
        };
        let sent = self.send_data(&mut s, body, out);
        if sent < body.len() {
            // Held for flow control: the one copy a response may need.
            s.pending = body[sent..].to_vec();
            self.pending_bytes += s.pending.len();
        }
        if !s.done() {
            self.streams.push(s);
        } else {
            self.remember_closed(id);
        }
        Ok(())
    }

    /// Sends as much of `body` on `s` as the windows allow; returns the bytes sent.
    fn send_data(&mut self, s: &mut Stream, body: &[u8], out: &mut Vec<u8>) -> usize {
        let mut sent = 0;
        while sent < body.len() {
            let room = self
                .send_window
                .min(s.send_window)
                .min(self.peer_max_frame as i64);
            if room <= 0 {
                break;
            }
            let n = (room as usize).min(body.len() - sent);
            let last = sent + n == body.len();
            let flags = if last { flag::END_STREAM } else { 0 };
            frame::put_header(out, n, kind::DATA, flags, s.id);
            out.extend_from_slice(&body[sent..sent + n]);
            sent += n;
            self.send_window -= n as i64;
            s.send_window -= n as i64;
        }
        sent
    }

    /// Sends what flow control now allows of the held responses.
    fn flush_pending(&mut self, out: &mut Vec<u8>) {
        let mut i = 0;
        while i < self.streams.len() && self.send_window > 0 {
            let mut s = std::mem::replace(
                &mut self.streams[i],
                Stream {
                    id: 0,
                    remote_open: false,
                    send_window: 0,
                    recv_window: 0,
                    content_length: None,
                    received: 0,
                    pending: Vec::new(),
                    pending_at: 0,
                },
            );
            if s.pending_at < s.pending.len() {
                let pending = std::mem::take(&mut s.pending);
                let at = s.pending_at;
                let sent = self.send_data(&mut s, &pending[at..], out);
                s.pending_at += sent;
                self.pending_bytes -= sent;
                s.pending = pending;
                if s.pending_at >= s.pending.len() {
                    s.pending = Vec::new();
                    s.pending_at = 0;
                }
            }
            if s.done() {
                let id = s.id;
                self.streams.swap_remove(i);
                self.remember_closed(id);
            } else {
                self.streams[i] = s;
                i += 1;
            }
        }
    }

    fn settings(&mut self, h: Header, p: &[u8], out: &mut Vec<u8>, cx: &mut Ctx<'_>) -> Step {
        if h.stream != 0 {
            return Err(protocol());
        }
        if h.has(flag::ACK) {
            return if p.is_empty() {
                self.spend(cx)
            } else {
                Err(frame_size())
            };
        }
        if !p.len().is_multiple_of(6) {
            return Err(frame_size());
        }
        self.spend(cx)?;
        for pair in p.chunks_exact(6) {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            let v = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
            match id {
                setting::ENABLE_PUSH if v > 1 => return Err(protocol()),
                setting::INITIAL_WINDOW_SIZE => {
                    if v > MAX_31 {
                        return Err(flow());
                    }
                    let delta = i64::from(v) - self.peer_initial_window;
                    self.peer_initial_window = i64::from(v);
                    for s in &mut self.streams {
                        s.send_window += delta;
                        if s.send_window > i64::from(MAX_31) {
                            return Err(flow());
                        }
                    }
                }
                setting::MAX_FRAME_SIZE => {
                    if !(DEFAULT_MAX_FRAME as u32..=MAX_FRAME_LIMIT).contains(&v) {
                        return Err(protocol());
                    }
                    self.peer_max_frame = v as usize;
                }
                // The encoder uses no dynamic table, so HEADER_TABLE_SIZE needs nothing;
                // unknown settings are ignored (RFC 9113 6.5.2).
                _ => {}
            }
        }
        frame::put_header(out, 0, kind::SETTINGS, flag::ACK, 0);
        self.flush_pending(out);
        Ok(())
    }

    fn window_update(&mut self, h: Header, p: &[u8], out: &mut Vec<u8>, cx: &mut Ctx<'_>) -> Step {
        if p.len() != 4 {
            return Err(frame_size());
        }
        self.spend(cx)?;
        let inc = i64::from(u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & MAX_31);
        if h.stream == 0 {
            if inc == 0 {
                return Err(protocol());
            }
            self.send_window += inc;
            if self.send_window > i64::from(MAX_31) {
                return Err(flow());
            }
            self.flush_pending(out);
            return Ok(());
        }
        if h.stream > self.last_stream {
            return Err(protocol());
        }
        let Some(i) = self.find(h.stream) else {
            // A closed stream: the update may have crossed our last frame.
            return Ok(());
        };
        if inc == 0 {
            self.stream_error(h.stream, code::PROTOCOL_ERROR, out, cx.metrics, cx.now_s)?;
            return Ok(());
        }
        self.streams[i].send_window += inc;
        if self.streams[i].send_window > i64::from(MAX_31) {
            self.stream_error(
                h.stream,
                code::FLOW_CONTROL_ERROR,
                out,
                cx.metrics,
                cx.now_s,
            )?;
            return Ok(());
        }
        self.flush_pending(out);
        Ok(())
    }
}

/// The payload without its padding (DATA and HEADERS with PADDED).
fn unpad(h: Header, p: &[u8]) -> Result<&[u8], ConnError> {
    if !h.has(flag::PADDED) {
        return Ok(p);
    }
    let Some((&pad, rest)) = p.split_first() else {
        return Err(frame_size());
    };
    if usize::from(pad) > rest.len() {
        return Err(protocol());
    }
    Ok(&rest[..rest.len() - usize::from(pad)])
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
