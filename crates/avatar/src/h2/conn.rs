//! One HTTP/2 connection, sans I/O: frames in, frames out, streams, windows and the limits.
//!
//! The worker hands [`Conn::process`] what it read and its output buffer, as it hands HTTP/1
//! bytes to the [`Responder`]; a request is answered as soon as its header block is complete
//! (a body, if any, is read and thrown away, as HTTP/1 does), by the same responder, through
//! [`super::response`].
//!
//! This file holds the state, [`Conn::process`] (the preface, then whole frames) and the
//! stream bookkeeping and budgets every frame draws on; `frames` handles each frame type,
//! `streams` what a complete header block starts (the request answered, its body sent
//! within the windows).

use std::net::SocketAddr;

use super::frame::{
    self, code, setting, Header, DEFAULT_MAX_FRAME, DEFAULT_WINDOW, HEADER_LEN, PREFACE,
};
use super::hpack::{Decoder, Fields};
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
}

mod frames;
mod streams;

#[cfg(test)]
mod tests;
