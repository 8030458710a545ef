//! The frames in, one arm per type (RFC 9113 6): DATA and HEADERS opening and feeding
//! streams, SETTINGS and WINDOW_UPDATE moving the windows, and the control frames (PING,
//! PRIORITY, RST_STREAM, GOAWAY, CONTINUATION) within their budgets. What a complete header
//! block starts is in `streams`.

use super::{
    flow, frame_size, protocol, Conn, ConnError, Continued, Ctx, Step, MAX_CONTINUATIONS,
    RESETS_PER_SEC, RESET_BURST,
};
use crate::h2::frame::{
    self, code, flag, kind, setting, Header, DEFAULT_MAX_FRAME, DEFAULT_WINDOW, MAX_31,
    MAX_FRAME_LIMIT,
};
use crate::metrics::H2Event;

impl Conn {
    pub(super) fn frame(
        &mut self,
        h: Header,
        p: &[u8],
        out: &mut Vec<u8>,
        cx: &mut Ctx<'_>,
    ) -> Step {
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
