//! The frames other than DATA, one arm per type (RFC 9113 6), and the server's SETTINGS.

use super::*;

impl Conn {
    /// Handles one whole frame other than DATA.
    pub(super) fn frame(
        &mut self,
        h: Header,
        p: &[u8],
        shapes: &[RequestShape],
        out: &mut Vec<u8>,
        counts: &mut H2Counts,
        ev: &mut impl FnMut(Event),
    ) -> Result<(), ConnError> {
        // Every frame counts; a stream that ends sets the count back to zero.
        self.control(counts)?;
        match h.kind {
            kind::HEADERS => {
                if h.stream == 0 || !self.opened(h.stream) {
                    return violation(Violation::Protocol);
                }
                let mut p = p;
                if h.flags & flag::PADDED != 0 {
                    let pad = usize::from(*p.first().ok_or(ConnError::Local(Violation::Protocol))?);
                    if pad + 1 > p.len() {
                        return violation(Violation::Protocol);
                    }
                    p = &p[1..p.len() - pad];
                }
                if h.flags & flag::PRIORITY != 0 {
                    if p.len() < 5 {
                        return violation(Violation::FrameSize);
                    }
                    p = &p[5..];
                }
                let end_stream = h.flags & flag::END_STREAM != 0;
                if h.flags & flag::END_HEADERS != 0 {
                    self.headers(h.stream, end_stream, p, out, counts, ev)?;
                } else {
                    self.block.clear();
                    self.block.extend_from_slice(p);
                    self.open_block = Some(OpenBlock {
                        stream: h.stream,
                        end_stream,
                    });
                }
            }
            kind::CONTINUATION => {
                let Some(open) = self.open_block else {
                    return violation(Violation::Protocol);
                };
                if h.stream != open.stream {
                    return violation(Violation::Protocol);
                }
                if self.block.len() + p.len() > MAX_BLOCK {
                    return violation(Violation::FrameSize);
                }
                self.block.extend_from_slice(p);
                if h.flags & flag::END_HEADERS != 0 {
                    self.open_block = None;
                    let block = std::mem::take(&mut self.block);
                    let r = self.headers(open.stream, open.end_stream, &block, out, counts, ev);
                    self.block = block;
                    r?;
                }
            }
            kind::PRIORITY if p.len() != 5 => return violation(Violation::FrameSize),
            kind::RST_STREAM => {
                if h.stream == 0 {
                    return violation(Violation::Protocol);
                }
                if p.len() != 4 {
                    return violation(Violation::FrameSize);
                }
                let c = u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
                counts.rst_received[frame::code_slot(c)] += 1;
                if let Some(i) = self.find(h.stream) {
                    self.streams.swap_remove(i);
                    self.control_without_progress = 0;
                    ev(if c == code::REFUSED_STREAM {
                        Event::Refused { stream: h.stream }
                    } else {
                        Event::Reset {
                            stream: h.stream,
                            code: c,
                        }
                    });
                }
            }
            kind::SETTINGS => {
                if h.stream != 0 {
                    return violation(Violation::Protocol);
                }
                if h.flags & flag::ACK != 0 {
                    if !p.is_empty() {
                        return violation(Violation::FrameSize);
                    }
                    return Ok(());
                }
                if !p.len().is_multiple_of(6) {
                    return violation(Violation::FrameSize);
                }
                for pair in p.chunks_exact(6) {
                    let id = u16::from_be_bytes([pair[0], pair[1]]);
                    let v = u32::from_be_bytes([pair[2], pair[3], pair[4], pair[5]]);
                    self.setting(id, v)?;
                    if id == setting::MAX_CONCURRENT_STREAMS {
                        // Every limit stated counts, not only the first SETTINGS': a server
                        // that lowers it mid-run is reported at its lowest.
                        counts.server_max_streams_stated(v);
                    }
                }
                if !self.settings_seen {
                    self.settings_seen = true;
                    counts.connections += 1;
                }
                frame::put_header(out, 0, kind::SETTINGS, flag::ACK, 0);
                // A larger initial window may free a waiting body.
                self.send_bodies(shapes, out);
            }
            kind::PUSH_PROMISE => {
                // Push is disabled in our SETTINGS: a PUSH_PROMISE is a connection error.
                return violation(Violation::Protocol);
            }
            kind::PING => {
                if h.stream != 0 {
                    return violation(Violation::Protocol);
                }
                if p.len() != 8 {
                    return violation(Violation::FrameSize);
                }
                if h.flags & flag::ACK == 0 {
                    counts.pings_answered += 1;
                    frame::put_header(out, 8, kind::PING, flag::ACK, 0);
                    out.extend_from_slice(p);
                }
            }
            kind::GOAWAY => {
                if h.stream != 0 {
                    return violation(Violation::Protocol);
                }
                if p.len() < 8 {
                    return violation(Violation::FrameSize);
                }
                let last = u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & frame::MAX_STREAM_ID;
                let c = u32::from_be_bytes([p[4], p[5], p[6], p[7]]);
                counts.goaway_received[frame::code_slot(c)] += 1;
                if c != code::NO_ERROR {
                    return Err(ConnError::Remote(c));
                }
                self.draining = true;
                self.streams.retain(|s| s.id <= last);
                ev(Event::GoAway { last_stream: last });
            }
            kind::WINDOW_UPDATE => {
                if p.len() != 4 {
                    return violation(Violation::FrameSize);
                }
                let inc = i64::from(u32::from_be_bytes([p[0], p[1], p[2], p[3]]) & MAX_WINDOW);
                if inc == 0 {
                    return violation(Violation::Protocol);
                }
                if h.stream == 0 {
                    self.send_window += inc;
                    if self.send_window > i64::from(MAX_WINDOW) {
                        return violation(Violation::FlowControl);
                    }
                } else if let Some(i) = self.find(h.stream) {
                    self.streams[i].send_window += inc;
                    if self.streams[i].send_window > i64::from(MAX_WINDOW) {
                        // A stream error: that stream alone ends (RFC 9113 6.9.1).
                        let s = self.streams.swap_remove(i);
                        frame::put_rst(out, s.id, code::FLOW_CONTROL_ERROR);
                        ev(Event::Broken {
                            stream: s.id,
                            code: code::FLOW_CONTROL_ERROR,
                        });
                    }
                }
                self.send_bodies(shapes, out);
            }
            // Unknown frame types are ignored (RFC 9113 4.1).
            _ => {}
        }
        Ok(())
    }

    fn setting(&mut self, id: u16, v: u32) -> Result<(), ConnError> {
        match id {
            setting::ENABLE_PUSH if v > 0 => violation(Violation::Protocol),
            setting::MAX_CONCURRENT_STREAMS => {
                self.peer_max_streams = v;
                Ok(())
            }
            setting::INITIAL_WINDOW_SIZE => {
                if v > MAX_WINDOW {
                    return violation(Violation::FlowControl);
                }
                let delta = i64::from(v) - self.peer_initial_window;
                self.peer_initial_window = i64::from(v);
                for s in &mut self.streams {
                    s.send_window += delta;
                    if s.send_window > i64::from(MAX_WINDOW) {
                        return violation(Violation::FlowControl);
                    }
                }
                Ok(())
            }
            setting::MAX_FRAME_SIZE => {
                if !(frame::DEFAULT_MAX_FRAME..=0xff_ffff).contains(&v) {
                    return violation(Violation::Protocol);
                }
                self.peer_max_frame = v as usize;
                Ok(())
            }
            // The table our request fields are indexed into: announced in the next block
            // when it changes (this frame's ACK goes out before that block).
            setting::HEADER_TABLE_SIZE => {
                self.encoder.set_peer_max(v);
                Ok(())
            }
            // The others do not concern a client.
            _ => Ok(()),
        }
    }
}
