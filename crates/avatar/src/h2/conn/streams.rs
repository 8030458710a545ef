//! A stream's life once its header block is complete: a new request checked and answered by
//! the responder (or refused, past the limits), trailers taken, and the response body sent as
//! far as the flow-control windows allow, the rest held and flushed as they open.

use super::{
    Bucket, Conn, ConnError, Ctx, Step, Stream, CONTROL_BURST, CONTROL_PER_REQUEST,
    CONTROL_PER_SEC, MAX_PENDING_BYTES,
};
use crate::h2::frame::{self, code, flag, kind, DEFAULT_WINDOW};
use crate::h2::request::{self, Checked};
use crate::h2::response;
use crate::metrics::H2Event;

impl Conn {
    /// A complete header block: a new request, or trailers.
    pub(super) fn header_block(
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
    pub(super) fn flush_pending(&mut self, out: &mut Vec<u8>) {
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
}
