//! One client HTTP/2 connection's state, sans I/O: the frames read are fed in, the frames
//! to write are appended to the caller's output buffer, and what happened to the streams
//! comes back as [`Event`]s. The worker owns the requests' clocks, and its HTTP/2
//! implementation the socket.

use super::encoder::{Encoder, Fields};
use super::frame::{self, code, flag, kind, setting, Header, HEADER_LEN, MAX_WINDOW};
use super::hpack::{self, Decoder, HpackError};
use super::request::RequestShape;
use super::H2Counts;
use crate::template::Rng;
use stats::reason::Malformed;

/// The flow-control and stream settings a run asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H2Options {
    /// Streams kept in flight on each connection (`--streams`), at most what the server
    /// allows.
    pub streams: u32,
    /// The initial window of each stream we advertise (`--window`).
    pub window: u32,
    /// The connection's receive window (`--connection-window`).
    pub connection_window: u32,
    /// The first stream ID of each connection: 1, except in tests that reach the end of the
    /// ID space without sending a billion requests.
    #[doc(hidden)]
    pub first_stream_id: u32,
}

/// The default windows: 2^30 - 1, as h2load and oha use.
pub const DEFAULT_WINDOW: u32 = (1 << 30) - 1;

impl Default for H2Options {
    fn default() -> Self {
        Self {
            streams: 1,
            window: DEFAULT_WINDOW,
            connection_window: DEFAULT_WINDOW,
            first_stream_id: 1,
        }
    }
}

/// The RFC's initial window (65,535) before SETTINGS change it.
const RFC_WINDOW: i64 = 65_535;

/// Frames the server may send between two streams ending (a response, or a reset of one
/// of ours) before the connection counts as flooding us: PING, SETTINGS, WINDOW_UPDATE,
/// PRIORITY, unknown types, empty DATA and CONTINUATION, HEADERS that end nothing (the
/// 2023 rapid-reset and 2024 CONTINUATION floods, seen from the client's side).
const MAX_CONTROL_WITHOUT_PROGRESS: u32 = 10_000;

/// The largest header block accepted, over HEADERS and CONTINUATION frames.
const MAX_BLOCK: usize = 256 * 1024;

/// What happened to a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The response is complete: its final status.
    Response { stream: u32, status: u16 },
    /// The server reset the stream (RST_STREAM other than REFUSED_STREAM).
    Reset { stream: u32, code: u32 },
    /// The server refused the stream unprocessed (REFUSED_STREAM): safe to send again.
    Refused { stream: u32 },
    /// The stream broke the protocol and ended with our error `code`: a WINDOW_UPDATE that
    /// overflowed the stream's window (FLOW_CONTROL_ERROR, the stream reset by us, RFC
    /// 9113 6.9.1).
    Broken { stream: u32, code: u32 },
    /// The response broke a rule of form (RFC 9113 8.1.1): the stream was reset with
    /// PROTOCOL_ERROR, and nothing of it counts as a response.
    Malformed { stream: u32, what: Malformed },
    /// A graceful GOAWAY: streams above `last_stream` were not processed; no new streams.
    GoAway { last_stream: u32 },
}

/// Why the connection failed: an HTTP/2 connection error, counted as `protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnError {
    /// The server sent GOAWAY with this error code.
    Remote(u32),
    /// We found a violation; the error code we send in our GOAWAY.
    Local(Violation),
}

/// A violation found in what the server sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Violation {
    /// The first frame was not SETTINGS: not an HTTP/2 server, or garbage.
    NoPreface,
    /// A frame larger than our SETTINGS_MAX_FRAME_SIZE, or of the wrong size for its type.
    FrameSize,
    /// A frame that breaks the protocol (a PUSH_PROMISE, a frame on stream 0 that needs one,
    /// a CONTINUATION out of place, a bad SETTINGS value).
    Protocol,
    /// A header block HPACK could not decode.
    Hpack(HpackError),
    /// The server sent more than a window allowed, or overflowed one of ours.
    FlowControl,
    /// Control frames without end while no response progresses.
    Flood,
}

impl ConnError {
    /// The error code of the connection error.
    pub fn code(&self) -> u32 {
        match self {
            ConnError::Remote(c) => *c,
            ConnError::Local(v) => match v {
                Violation::NoPreface | Violation::Protocol => code::PROTOCOL_ERROR,
                Violation::FrameSize => code::FRAME_SIZE_ERROR,
                Violation::Hpack(_) => code::COMPRESSION_ERROR,
                Violation::FlowControl => code::FLOW_CONTROL_ERROR,
                Violation::Flood => code::ENHANCE_YOUR_CALM,
            },
        }
    }
}

fn violation<T>(v: Violation) -> Result<T, ConnError> {
    Err(ConnError::Local(v))
}

#[derive(Debug, Clone, Copy)]
struct Stream {
    id: u32,
    /// What the server lets us send on this stream.
    send_window: i64,
    /// The request shape whose body is being sent.
    shape: u32,
    /// Body bytes sent; the body is done when it reaches the body's length.
    body_sent: usize,
    /// Bytes received since our last WINDOW_UPDATE for the stream.
    consumed: u32,
    /// The final (non-1xx) status, once its HEADERS came.
    status: Option<u16>,
    /// The request is HEAD: its response has no content, whatever its content-length says.
    head_request: bool,
    /// The content the response's head promised: its content-length, or none for a
    /// response to HEAD, a 204 or a 304; `None` when it said nothing.
    promised: Option<u64>,
    /// DATA received, padding left out.
    received: u64,
}

/// A header block being assembled from HEADERS and CONTINUATION frames.
#[derive(Debug, Clone, Copy)]
struct OpenBlock {
    stream: u32,
    end_stream: bool,
}

/// One connection's HTTP/2 state.
#[derive(Debug)]
pub(crate) struct Conn {
    opts: H2Options,
    started: bool,
    /// The server's first SETTINGS came.
    settings_seen: bool,
    next_id: u32,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (u32::MAX until it says).
    peer_max_streams: u32,
    peer_initial_window: i64,
    peer_max_frame: usize,
    send_window: i64,
    /// Bytes received since our last connection WINDOW_UPDATE.
    consumed: u32,
    /// What the server may still send on the connection before our next update.
    recv_window: i64,
    /// No new streams: a GOAWAY came, or a stream was refused.
    draining: bool,
    streams: Vec<Stream>,
    /// A frame split across reads (never DATA, which is skipped as it comes).
    partial: Vec<u8>,
    /// The rest of a DATA frame still to come: (bytes, stream, end_stream).
    data_left: usize,
    /// A PADDED DATA frame's length, until its pad length (the first byte) is checked.
    data_pad_check: usize,
    data_stream: u32,
    data_end: bool,
    block: Vec<u8>,
    open_block: Option<OpenBlock>,
    decoder: Decoder,
    /// What the server's decoder table holds of our request fields.
    encoder: Encoder,
    control_without_progress: u32,
    /// Responses kept whole, for a client that checks them (verification); `None` on the
    /// engine's path.
    kept: Option<Box<Kept>>,
}

/// What a keeping connection ([`Conn::keeping`]) holds: each stream's final response head
/// and body, and the DATA frame being read.
#[derive(Debug, Default)]
struct Kept {
    /// By stream: the final head's fields, and the body so far.
    responses: Vec<(u32, Vec<hpack::Field>, Vec<u8>)>,
    /// The payload of the DATA frame being read, padding included.
    frame: Vec<u8>,
    padded: bool,
}

impl Conn {
    pub fn new(opts: H2Options) -> Self {
        let mut c = Self::blank(opts);
        c.streams.reserve(opts.streams.max(1) as usize);
        c.partial
            .reserve(HEADER_LEN + frame::DEFAULT_MAX_FRAME as usize);
        c.decoder = Decoder::new();
        c
    }

    /// A fresh connection's state with no buffer allocated.
    fn blank(opts: H2Options) -> Self {
        Self {
            opts,
            started: false,
            settings_seen: false,
            next_id: opts.first_stream_id | 1,
            peer_max_streams: u32::MAX,
            peer_initial_window: RFC_WINDOW,
            peer_max_frame: frame::DEFAULT_MAX_FRAME as usize,
            send_window: RFC_WINDOW,
            consumed: 0,
            recv_window: RFC_WINDOW,
            draining: false,
            streams: Vec::new(),
            partial: Vec::new(),
            data_left: 0,
            data_pad_check: 0,
            data_stream: 0,
            data_end: false,
            block: Vec::new(),
            open_block: None,
            decoder: Decoder::empty(),
            encoder: Encoder::default(),
            control_without_progress: 0,
            kept: None,
        }
    }

    /// A connection that keeps each response whole (its head's fields and its body) for
    /// [`Conn::take_response`]: a blocking client's, never the load path's.
    pub fn keeping(opts: H2Options) -> Self {
        Self {
            decoder: Decoder::capturing(),
            kept: Some(Box::default()),
            ..Conn::new(opts)
        }
    }

    /// The final head's fields and the body of a stream whose response completed (after
    /// [`Event::Response`]); `None` unless keeping.
    pub fn take_response(&mut self, stream: u32) -> Option<(Vec<hpack::Field>, Vec<u8>)> {
        let k = self.kept.as_mut()?;
        let i = k.responses.iter().position(|r| r.0 == stream)?;
        let (_, fields, body) = k.responses.swap_remove(i);
        Some((fields, body))
    }

    /// Back to a fresh connection's state, keeping the buffers: a reconnect allocates
    /// nothing.
    pub fn reset(&mut self) {
        let mut fresh = Conn::blank(self.opts);
        std::mem::swap(&mut fresh.partial, &mut self.partial);
        std::mem::swap(&mut fresh.streams, &mut self.streams);
        std::mem::swap(&mut fresh.block, &mut self.block);
        std::mem::swap(&mut fresh.decoder, &mut self.decoder);
        fresh.partial.clear();
        fresh.streams.clear();
        fresh.block.clear();
        fresh.decoder.clear();
        *self = fresh;
    }

    /// Appends the connection preface and our SETTINGS, once per connection.
    pub fn start(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        out.extend_from_slice(frame::PREFACE);
        frame::put_settings(
            out,
            &[
                (setting::ENABLE_PUSH, 0),
                (setting::INITIAL_WINDOW_SIZE, self.opts.window),
                (setting::HEADER_TABLE_SIZE, hpack::TABLE_SIZE as u32),
                (setting::MAX_FRAME_SIZE, frame::DEFAULT_MAX_FRAME),
            ],
        );
        let more = i64::from(self.opts.connection_window) - RFC_WINDOW;
        if more > 0 {
            frame::put_window_update(out, 0, more as u32);
            self.recv_window += more;
        }
    }

    /// How many streams may be open now: one until the server's SETTINGS says how many it
    /// allows, then `--streams` within its limit; none once draining or out of IDs.
    #[inline]
    pub fn capacity(&self) -> usize {
        if self.draining || self.ids_exhausted() {
            0
        } else if !self.settings_seen {
            1
        } else {
            let allowed = self.opts.streams.min(self.peer_max_streams) as usize;
            // Never more new streams than IDs are left: one past 2^31 - 1 would go out with
            // the reserved bit set, as stream 1 (found against nginx).
            allowed.min(self.streams.len() + self.ids_left())
        }
    }

    /// The server allows no stream now (SETTINGS_MAX_CONCURRENT_STREAMS 0): the connection
    /// waits, up to the timeout, for it to raise the limit.
    pub fn allows_none(&self) -> bool {
        self.settings_seen && self.peer_max_streams == 0 && !self.draining
    }

    /// `stream` is one we opened (odd, below the next ID): a server's frame on any other
    /// (idle, or even: a push we disabled) is a connection error (RFC 9113 5.1).
    fn opened(&self, stream: u32) -> bool {
        stream % 2 == 1 && stream < self.next_id
    }

    /// Stream IDs left for new streams on this connection.
    fn ids_left(&self) -> usize {
        if self.ids_exhausted() {
            0
        } else {
            ((frame::MAX_STREAM_ID - self.next_id) / 2 + 1) as usize
        }
    }

    /// No stream ID is left for a new stream: the connection must be replaced.
    pub fn ids_exhausted(&self) -> bool {
        self.next_id > frame::MAX_STREAM_ID
    }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS, once it said one.
    #[cfg(test)]
    pub fn server_max_streams(&self) -> Option<u32> {
        (self.settings_seen && self.peer_max_streams != u32::MAX).then_some(self.peer_max_streams)
    }

    /// Streams open now.
    #[cfg(test)]
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Opens a stream for a request of `shape` (row `shape_idx`, its fixed fields in
    /// `fields`): its HEADERS, then as much of its body as the windows allow. Returns the
    /// stream ID.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn open(
        &mut self,
        shape_idx: u32,
        shape: &RequestShape,
        fields: &Fields,
        rng: &mut Rng,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
        counts: &mut H2Counts,
    ) -> u32 {
        self.start(out);
        debug_assert!(!self.ids_exhausted(), "a stream opened past the last ID");
        let id = self.next_id;
        self.next_id = self.next_id.saturating_add(2);
        let (sent, raw) = shape.put_headers(
            id,
            shape.body.is_empty(),
            rng,
            scratch,
            &mut self.encoder,
            fields,
            out,
        );
        counts.header_bytes_sent += sent;
        counts.header_bytes_sent_raw += raw;
        self.streams.push(Stream {
            id,
            send_window: self.peer_initial_window,
            shape: shape_idx,
            body_sent: 0,
            consumed: 0,
            status: None,
            head_request: shape.head,
            promised: None,
            received: 0,
        });
        if !shape.body.is_empty() {
            let i = self.streams.len() - 1;
            self.send_body(i, &shape.body, out);
        }
        id
    }

    /// True once the final response head of `stream` has come: a timeout then is mid-body.
    pub fn has_head(&self, stream: u32) -> bool {
        self.find(stream)
            .is_some_and(|i| self.streams[i].status.is_some())
    }

    /// Forgets a stream we give up on (a timeout), telling the server.
    pub fn cancel(&mut self, stream: u32, out: &mut Vec<u8>) {
        if let Some(i) = self.find(stream) {
            self.streams.swap_remove(i);
            frame::put_rst(out, stream, code::CANCEL);
        }
    }

    /// Stops opening streams on this connection.
    pub fn drain(&mut self) {
        self.draining = true;
    }

    /// Appends our GOAWAY for a connection error.
    pub fn goaway(&self, out: &mut Vec<u8>, code: u32) {
        frame::put_goaway(out, 0, code);
    }

    fn find(&self, stream: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == stream)
    }

    /// Sends what the windows allow of stream `i`'s body.
    fn send_body(&mut self, i: usize, body: &[u8], out: &mut Vec<u8>) {
        let s = &mut self.streams[i];
        while s.body_sent < body.len() {
            let room = s
                .send_window
                .min(self.send_window)
                .min(self.peer_max_frame as i64);
            if room <= 0 {
                return;
            }
            let n = (body.len() - s.body_sent).min(room as usize);
            let end = s.body_sent + n == body.len();
            frame::put_header(
                out,
                n,
                kind::DATA,
                if end { flag::END_STREAM } else { 0 },
                s.id,
            );
            out.extend_from_slice(&body[s.body_sent..s.body_sent + n]);
            s.body_sent += n;
            s.send_window -= n as i64;
            self.send_window -= n as i64;
        }
    }

    /// Sends what the windows now allow of every body still waiting. Body bytes sent are
    /// progress: the WINDOW_UPDATEs of a long upload are not a flood.
    fn send_bodies(&mut self, shapes: &[RequestShape], out: &mut Vec<u8>) {
        for i in 0..self.streams.len() {
            let body = &shapes[self.streams[i].shape as usize].body;
            let before = self.streams[i].body_sent;
            if before < body.len() {
                self.send_body(i, body, out);
                if self.streams[i].body_sent > before {
                    self.control_without_progress = 0;
                }
            }
        }
    }

    /// Feeds bytes read from the server. Frames to send back (SETTINGS and PING
    /// acknowledgements, WINDOW_UPDATEs, body DATA) are appended to `out`.
    pub fn feed(
        &mut self,
        mut data: &[u8],
        shapes: &[RequestShape],
        out: &mut Vec<u8>,
        counts: &mut H2Counts,
        ev: &mut impl FnMut(Event),
    ) -> Result<(), ConnError> {
        loop {
            if self.data_left > 0 {
                let n = self.data_left.min(data.len());
                if self.data_pad_check > 0 && n > 0 {
                    // A pad as long as the payload or longer (RFC 9113 6.1).
                    if usize::from(data[0]) >= self.data_pad_check {
                        return violation(Violation::Protocol);
                    }
                    let content = self.data_pad_check - 1 - usize::from(data[0]);
                    self.data_pad_check = 0;
                    self.content(self.data_stream, content, out, ev);
                }
                if let Some(k) = &mut self.kept {
                    k.frame.extend_from_slice(&data[..n]);
                }
                self.data_left -= n;
                data = &data[n..];
                if self.data_left > 0 {
                    return Ok(());
                }
                self.data_done(out, ev);
            }
            if data.is_empty() {
                return Ok(());
            }
            if !self.partial.is_empty() {
                // Complete the header, then the frame, from the front of `data`.
                if self.partial.len() < HEADER_LEN {
                    let n = (HEADER_LEN - self.partial.len()).min(data.len());
                    self.partial.extend_from_slice(&data[..n]);
                    data = &data[n..];
                    if self.partial.len() < HEADER_LEN {
                        return Ok(());
                    }
                }
                let h = Header::parse(&self.partial);
                self.check(&h)?;
                if h.kind == kind::DATA {
                    self.partial.clear();
                    self.start_data(h, counts, out, ev)?;
                    continue;
                }
                let n = (HEADER_LEN + h.len - self.partial.len()).min(data.len());
                self.partial.extend_from_slice(&data[..n]);
                data = &data[n..];
                if self.partial.len() < HEADER_LEN + h.len {
                    return Ok(());
                }
                let whole = std::mem::take(&mut self.partial);
                let r = self.frame(h, &whole[HEADER_LEN..], shapes, out, counts, ev);
                self.partial = whole;
                self.partial.clear();
                r?;
                continue;
            }
            if data.len() < HEADER_LEN {
                self.partial.extend_from_slice(data);
                return Ok(());
            }
            let h = Header::parse(data);
            self.check(&h)?;
            if h.kind == kind::DATA {
                data = &data[HEADER_LEN..];
                self.start_data(h, counts, out, ev)?;
                continue;
            }
            if data.len() < HEADER_LEN + h.len {
                self.partial.extend_from_slice(data);
                return Ok(());
            }
            self.frame(
                h,
                &data[HEADER_LEN..HEADER_LEN + h.len],
                shapes,
                out,
                counts,
                ev,
            )?;
            data = &data[HEADER_LEN + h.len..];
        }
    }

    /// Checks a frame header before its payload is read.
    fn check(&self, h: &Header) -> Result<(), ConnError> {
        if !self.settings_seen && (h.kind != kind::SETTINGS || h.flags & flag::ACK != 0) {
            return violation(Violation::NoPreface);
        }
        if h.len > frame::DEFAULT_MAX_FRAME as usize {
            return violation(Violation::FrameSize);
        }
        if self.open_block.is_some() && h.kind != kind::CONTINUATION {
            return violation(Violation::Protocol);
        }
        Ok(())
    }

    fn start_data(
        &mut self,
        h: Header,
        counts: &mut H2Counts,
        out: &mut Vec<u8>,
        ev: &mut impl FnMut(Event),
    ) -> Result<(), ConnError> {
        if h.stream == 0 || (h.flags & flag::PADDED != 0 && h.len == 0) || !self.opened(h.stream) {
            return violation(Violation::Protocol);
        }
        if h.len == 0 && h.flags & flag::END_STREAM == 0 {
            self.control(counts)?;
        }
        // The whole payload, padding included, counts against the windows.
        self.recv_window -= h.len as i64;
        if self.recv_window < 0 {
            return violation(Violation::FlowControl);
        }
        self.consumed += h.len as u32;
        if self.consumed >= self.opts.connection_window / 2 {
            frame::put_window_update(out, 0, self.consumed);
            self.recv_window += i64::from(self.consumed);
            self.consumed = 0;
        }
        let end = h.flags & flag::END_STREAM != 0;
        if let Some(i) = self.find(h.stream) {
            let s = &mut self.streams[i];
            s.consumed += h.len as u32;
            if s.consumed > self.opts.window {
                return violation(Violation::FlowControl);
            }
            if !end && s.consumed >= self.opts.window / 2 {
                frame::put_window_update(out, s.id, s.consumed);
                s.consumed = 0;
            }
            if s.status.is_none() {
                self.malformed(i, Malformed::FrameOrder, out, ev);
            } else if h.flags & flag::PADDED == 0 {
                self.content(h.stream, h.len, out, ev);
            }
        }
        self.data_left = h.len;
        self.data_pad_check = if h.flags & flag::PADDED != 0 {
            h.len
        } else {
            0
        };
        self.data_stream = h.stream;
        self.data_end = end;
        if let Some(k) = &mut self.kept {
            k.frame.clear();
            k.padded = h.flags & flag::PADDED != 0;
        }
        if h.len == 0 {
            self.data_done(out, ev);
        }
        Ok(())
    }

    /// `n` bytes of content (padding left out) arrived on `stream`: more than its head
    /// promised is malformed at once.
    fn content(&mut self, stream: u32, n: usize, out: &mut Vec<u8>, ev: &mut impl FnMut(Event)) {
        if let Some(i) = self.find(stream) {
            let s = &mut self.streams[i];
            s.received += n as u64;
            if s.promised.is_some_and(|p| s.received > p) {
                self.malformed(i, Malformed::ContentLength, out, ev);
            }
        }
    }

    /// Ends stream `i` as malformed: reset with PROTOCOL_ERROR, as nghttp2 does (RFC 9113
    /// 8.1.1), even where the server already ended it (a reset shortly after END_STREAM
    /// is one a server must accept, 5.1).
    fn malformed(
        &mut self,
        i: usize,
        what: Malformed,
        out: &mut Vec<u8>,
        ev: &mut impl FnMut(Event),
    ) {
        let s = self.streams.swap_remove(i);
        self.control_without_progress = 0;
        if let Some(k) = &mut self.kept {
            k.responses.retain(|r| r.0 != s.id);
        }
        frame::put_rst(out, s.id, code::PROTOCOL_ERROR);
        ev(Event::Malformed { stream: s.id, what });
    }

    /// A DATA frame was read whole.
    fn data_done(&mut self, out: &mut Vec<u8>, ev: &mut impl FnMut(Event)) {
        if let Some(k) = &mut self.kept {
            let frame = std::mem::take(&mut k.frame);
            // A padded frame: its pad length first, then data, then that much padding.
            let data = match (k.padded, frame.split_first()) {
                (true, Some((&pad, rest))) => &rest[..rest.len().saturating_sub(usize::from(pad))],
                (true, None) => &[][..],
                (false, _) => &frame[..],
            };
            if let Some(r) = k.responses.iter_mut().find(|r| r.0 == self.data_stream) {
                r.2.extend_from_slice(data);
            }
            k.frame = frame;
        }
        if self.data_end {
            self.data_end = false;
            self.end_stream(self.data_stream, out, ev);
        }
    }

    /// The server ended its side of `stream`: the response is complete, if it was well
    /// formed.
    fn end_stream(&mut self, stream: u32, out: &mut Vec<u8>, ev: &mut impl FnMut(Event)) {
        let Some(i) = self.find(stream) else {
            return; // cancelled by us, or never ours
        };
        let s = self.streams[i];
        match s.status {
            None => self.malformed(i, Malformed::Status, out, ev),
            Some(_) if s.promised.is_some_and(|p| p != s.received) => {
                self.malformed(i, Malformed::ContentLength, out, ev);
            }
            Some(status) => {
                self.streams.swap_remove(i);
                self.control_without_progress = 0;
                ev(Event::Response { stream, status });
            }
        }
    }

    /// Counts a control frame; too many without a response in between is a flood.
    fn control(&mut self, _counts: &mut H2Counts) -> Result<(), ConnError> {
        self.control_without_progress += 1;
        if self.control_without_progress > MAX_CONTROL_WITHOUT_PROGRESS {
            return violation(Violation::Flood);
        }
        Ok(())
    }

    /// A complete header block for `stream`: an interim head, the final one, or the
    /// trailers, each checked for its form.
    fn headers(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
        out: &mut Vec<u8>,
        counts: &mut H2Counts,
        ev: &mut impl FnMut(Event),
    ) -> Result<(), ConnError> {
        // Decoded whatever the stream, so that the table stays in step with the server's.
        let b = self
            .decoder
            .decode(block)
            .map_err(|e| ConnError::Local(Violation::Hpack(e)))?;
        counts.header_bytes_received += block.len() as u64;
        counts.header_bytes_received_raw += b.raw_bytes;
        if let Some(i) = self.find(stream) {
            let s = &mut self.streams[i];
            let broke = b.malformed.or(match (s.status, b.status) {
                // Trailers: no pseudo-header, and they end the stream (RFC 9113 8.1).
                (Some(_), _) if b.pseudo => Some(Malformed::Pseudo),
                (Some(_), _) if !end_stream => Some(Malformed::FrameOrder),
                (Some(_), _) => None,
                (None, None) => Some(Malformed::Status),
                // An interim response (100 Continue, 103 Early Hints): the final one
                // follows, so it must not end the stream.
                (None, Some(st)) if st < 200 && end_stream => Some(Malformed::InterimEnd),
                (None, Some(st)) if st < 200 => None,
                (None, Some(st)) => {
                    s.status = Some(st);
                    s.promised = if s.head_request || st == 204 || st == 304 {
                        Some(0)
                    } else {
                        b.content_length
                    };
                    if let Some(k) = &mut self.kept {
                        k.responses
                            .push((stream, self.decoder.fields().to_vec(), Vec::new()));
                    }
                    None
                }
            });
            if let Some(what) = broke {
                self.malformed(i, what, out, ev);
                return Ok(());
            }
        }
        if end_stream {
            self.end_stream(stream, out, ev);
        }
        Ok(())
    }
}

mod frames;

#[cfg(test)]
mod tests;
