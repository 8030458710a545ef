//! HTTP/3 frames (RFC 9114 7): the frame header (a type and a length, each a variable-length
//! integer), the frame types and which stream each belongs on, SETTINGS, GOAWAY and the
//! unidirectional stream types, and the frames either side writes, appended to a stream's
//! output buffer.

use thiserror::Error;

use crate::error;
use crate::varint;

/// Frame types (RFC 9114 7.2).
pub mod kind {
    /// DATA.
    pub const DATA: u64 = 0x0;
    /// HEADERS.
    pub const HEADERS: u64 = 0x1;
    /// CANCEL_PUSH.
    pub const CANCEL_PUSH: u64 = 0x3;
    /// SETTINGS.
    pub const SETTINGS: u64 = 0x4;
    /// PUSH_PROMISE.
    pub const PUSH_PROMISE: u64 = 0x5;
    /// GOAWAY.
    pub const GOAWAY: u64 = 0x7;
    /// MAX_PUSH_ID.
    pub const MAX_PUSH_ID: u64 = 0xd;
    /// HTTP/2's PRIORITY, PING, WINDOW_UPDATE and CONTINUATION, which HTTP/3 has not
    /// (RFC 9114 7.2.8): receiving one is H3_FRAME_UNEXPECTED.
    pub const HTTP2_ONLY: [u64; 4] = [0x2, 0x6, 0x8, 0x9];
}

/// SETTINGS identifiers (RFC 9114 7.2.4.1, RFC 9204 5).
pub mod setting {
    /// SETTINGS_QPACK_MAX_TABLE_CAPACITY.
    pub const QPACK_MAX_TABLE_CAPACITY: u64 = 0x1;
    /// SETTINGS_MAX_FIELD_SECTION_SIZE.
    pub const MAX_FIELD_SECTION_SIZE: u64 = 0x6;
    /// SETTINGS_QPACK_BLOCKED_STREAMS.
    pub const QPACK_BLOCKED_STREAMS: u64 = 0x7;
    /// HTTP/2's ENABLE_PUSH, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE and
    /// MAX_FRAME_SIZE, which HTTP/3 has not: receiving one is H3_SETTINGS_ERROR.
    pub const HTTP2_ONLY: std::ops::RangeInclusive<u64> = 0x2..=0x5;
}

/// Whether `v` is of the form 0x1f * N + 0x21, the values HTTP/3 reserves for frame types,
/// settings, stream types and error codes so that peers exercise the rule "ignore the
/// unknown" (RFC 9114 7.2.8, 7.2.4.1, 6.2.3, 8.1).
#[inline]
pub fn is_reserved(v: u64) -> bool {
    v >= 0x21 && (v - 0x21).is_multiple_of(0x1f)
}

/// What a frame type is to its reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// DATA: the body, streamed.
    Data,
    /// HEADERS: a field section, read whole.
    Headers,
    /// CANCEL_PUSH: a push id.
    CancelPush,
    /// SETTINGS: the control stream's first frame.
    Settings,
    /// PUSH_PROMISE: a push id and a field section.
    PushPromise,
    /// GOAWAY: a stream or push id.
    Goaway,
    /// MAX_PUSH_ID: a push id.
    MaxPushId,
    /// A reserved or unknown type: skipped (RFC 9114 9).
    Unknown(u64),
}

/// Where a frame arrived: which frames each stream carries (RFC 9114 7.2, its table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// A bidirectional request stream.
    Request,
    /// The control stream.
    Control,
    /// A push stream.
    Push,
}

impl Kind {
    /// The kind of frame type `t`; an HTTP/2-only type is an error.
    #[inline]
    pub fn of(t: u64) -> Result<Kind, FrameError> {
        Ok(match t {
            kind::DATA => Kind::Data,
            kind::HEADERS => Kind::Headers,
            kind::CANCEL_PUSH => Kind::CancelPush,
            kind::SETTINGS => Kind::Settings,
            kind::PUSH_PROMISE => Kind::PushPromise,
            kind::GOAWAY => Kind::Goaway,
            kind::MAX_PUSH_ID => Kind::MaxPushId,
            _ if kind::HTTP2_ONLY.contains(&t) => return Err(FrameError::Http2Only(t)),
            _ => Kind::Unknown(t),
        })
    }

    /// Whether the reader keeps the payload whole before acting on it, so that a caller's
    /// limit on a frame's length applies: not DATA (streamed) nor an unknown type (skipped).
    #[inline]
    pub fn buffered(self) -> bool {
        !matches!(self, Kind::Data | Kind::Unknown(_))
    }

    /// Whether a frame of this kind may arrive on `stream` (RFC 9114 7.2): one that may
    /// not is H3_FRAME_UNEXPECTED. Unknown types may arrive anywhere.
    pub fn allowed_on(self, stream: Stream) -> bool {
        match self {
            Kind::Data | Kind::Headers => stream != Stream::Control,
            Kind::PushPromise => stream == Stream::Request,
            Kind::CancelPush | Kind::Settings | Kind::Goaway | Kind::MaxPushId => {
                stream == Stream::Control
            }
            Kind::Unknown(_) => true,
        }
    }
}

/// A frame header read from a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The frame's type.
    pub kind: Kind,
    /// The payload's length.
    pub len: u64,
    /// The header's own length: the payload starts this many bytes in.
    pub header_len: usize,
}

/// Why a frame or a stream's bytes could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum FrameError {
    /// An HTTP/2 frame type (PRIORITY, PING, WINDOW_UPDATE, CONTINUATION).
    #[error("frame type {0:#x} is HTTP/2's, not HTTP/3's")]
    Http2Only(u64),
    /// A frame the reader would hold whole is longer than the caller allows.
    #[error("a {kind:?} frame of {len} bytes is past the limit of {limit} bytes")]
    TooLarge {
        /// The frame's kind.
        kind: Kind,
        /// Its payload's length.
        len: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// A payload that ends inside a field, or has bytes after its last.
    #[error("a frame's payload is shorter or longer than its fields")]
    Malformed,
    /// An HTTP/2 setting (ENABLE_PUSH, MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE,
    /// MAX_FRAME_SIZE) in SETTINGS.
    #[error("setting {0:#x} is HTTP/2's, not HTTP/3's")]
    Http2Setting(u64),
    /// A setting twice in one SETTINGS frame.
    #[error("setting {0:#x} appears twice in one SETTINGS frame")]
    DuplicateSetting(u64),
}

impl FrameError {
    /// The HTTP/3 error code to close the connection with.
    pub fn code(self) -> u64 {
        match self {
            FrameError::Http2Only(_) => error::H3_FRAME_UNEXPECTED,
            FrameError::TooLarge { .. } => error::H3_EXCESSIVE_LOAD,
            FrameError::Malformed => error::H3_FRAME_ERROR,
            FrameError::Http2Setting(_) | FrameError::DuplicateSetting(_) => {
                error::H3_SETTINGS_ERROR
            }
        }
    }
}

/// Reads the frame header at the start of `b`, the bytes a stream has so far past the last
/// frame: `Ok(None)` when they end inside it (need more). A frame the reader holds whole
/// ([`Kind::buffered`]) longer than `limit` bytes is refused.
#[inline]
pub fn parse_header(b: &[u8], limit: u64) -> Result<Option<Header>, FrameError> {
    let Some((t, tlen)) = varint::decode(b) else {
        return Ok(None);
    };
    let Some((len, llen)) = varint::decode(&b[tlen..]) else {
        return Ok(None);
    };
    let kind = Kind::of(t)?;
    if kind.buffered() && len > limit {
        return Err(FrameError::TooLarge { kind, len, limit });
    }
    Ok(Some(Header {
        kind,
        len,
        header_len: tlen + llen,
    }))
}

/// Appends a frame header.
#[inline]
pub fn put_header(out: &mut Vec<u8>, kind: u64, len: u64) {
    varint::put(out, kind);
    varint::put(out, len);
}

/// Appends a HEADERS frame carrying `section`, an encoded field section
/// ([`crate::qpack::encode`]).
pub fn put_headers(out: &mut Vec<u8>, section: &[u8]) {
    put_header(out, kind::HEADERS, section.len() as u64);
    out.extend_from_slice(section);
}

/// Appends the header of a DATA frame of `len` bytes; the body follows.
#[inline]
pub fn put_data_header(out: &mut Vec<u8>, len: u64) {
    put_header(out, kind::DATA, len);
}

/// Appends a GOAWAY frame: the client's carries a push id, the server's the first request
/// stream id it will not process.
pub fn put_goaway(out: &mut Vec<u8>, id: u64) {
    put_header(out, kind::GOAWAY, varint::size(id) as u64);
    varint::put(out, id);
}

/// Reads the payload of a GOAWAY, CANCEL_PUSH or MAX_PUSH_ID frame: one id, exactly.
pub fn parse_id(payload: &[u8]) -> Result<u64, FrameError> {
    match varint::decode(payload) {
        Some((id, len)) if len == payload.len() => Ok(id),
        _ => Err(FrameError::Malformed),
    }
}

/// The settings HTTP/3 and QPACK define, as a SETTINGS frame carries them; any other is
/// ignored on read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// SETTINGS_QPACK_MAX_TABLE_CAPACITY: 0 unless sent.
    pub qpack_max_table_capacity: u64,
    /// SETTINGS_MAX_FIELD_SECTION_SIZE: unlimited (`None`) unless sent.
    pub max_field_section_size: Option<u64>,
    /// SETTINGS_QPACK_BLOCKED_STREAMS: 0 unless sent.
    pub qpack_blocked_streams: u64,
}

impl Default for Settings {
    /// Each setting's value when it is not sent (RFC 9114 7.2.4.1, RFC 9204 5).
    fn default() -> Self {
        Settings {
            qpack_max_table_capacity: 0,
            max_field_section_size: None,
            qpack_blocked_streams: 0,
        }
    }
}

impl Settings {
    /// What we send with a static-table-only QPACK: no dynamic table, no blocked streams,
    /// and a bound on the field sections the peer may send us.
    pub fn static_qpack(max_field_section_size: u64) -> Self {
        Settings {
            max_field_section_size: Some(max_field_section_size),
            ..Settings::default()
        }
    }

    /// Reads a SETTINGS frame's payload. Unknown and reserved ids are ignored; HTTP/2's,
    /// and any id twice, are errors.
    pub fn parse(mut payload: &[u8]) -> Result<Settings, FrameError> {
        let mut out = Settings::default();
        // Every id, to find one sent twice: unknown ones count too (RFC 9114 7.2.4). The
        // frame is read once per connection, and the caller's limit bounds it.
        let mut ids = Vec::new();
        while !payload.is_empty() {
            let (id, ilen) = varint::decode(payload).ok_or(FrameError::Malformed)?;
            let (v, vlen) = varint::decode(&payload[ilen..]).ok_or(FrameError::Malformed)?;
            payload = &payload[ilen + vlen..];
            match id {
                setting::QPACK_MAX_TABLE_CAPACITY => out.qpack_max_table_capacity = v,
                setting::MAX_FIELD_SECTION_SIZE => out.max_field_section_size = Some(v),
                setting::QPACK_BLOCKED_STREAMS => out.qpack_blocked_streams = v,
                _ if setting::HTTP2_ONLY.contains(&id) => {
                    return Err(FrameError::Http2Setting(id));
                }
                _ => {}
            }
            ids.push(id);
        }
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(FrameError::DuplicateSetting(w[0]));
        }
        Ok(out)
    }

    /// The (id, value) pairs to send: each setting not at its default.
    pub fn pairs(&self) -> impl Iterator<Item = (u64, u64)> + Clone {
        [
            (
                setting::QPACK_MAX_TABLE_CAPACITY,
                self.qpack_max_table_capacity,
            ),
            (setting::QPACK_BLOCKED_STREAMS, self.qpack_blocked_streams),
        ]
        .into_iter()
        .filter(|&(_, v)| v != 0)
        .chain(
            self.max_field_section_size
                .map(|v| (setting::MAX_FIELD_SECTION_SIZE, v)),
        )
    }

    /// Appends a SETTINGS frame with these settings.
    pub fn put(&self, out: &mut Vec<u8>) {
        put_settings(out, self.pairs());
    }
}

/// Appends a SETTINGS frame with `(id, value)` pairs (a reserved one included, to exercise
/// the peer's rule to ignore it).
pub fn put_settings(out: &mut Vec<u8>, pairs: impl Iterator<Item = (u64, u64)> + Clone) {
    let len: usize = pairs
        .clone()
        .map(|(id, v)| varint::size(id) + varint::size(v))
        .sum();
    put_header(out, kind::SETTINGS, len as u64);
    for (id, v) in pairs {
        varint::put(out, id);
        varint::put(out, v);
    }
}

/// Unidirectional stream types (RFC 9114 6.2, RFC 9204 4.2).
pub mod stream_type {
    /// The control stream.
    pub const CONTROL: u64 = 0x00;
    /// A push stream.
    pub const PUSH: u64 = 0x01;
    /// QPACK's encoder stream.
    pub const QPACK_ENCODER: u64 = 0x02;
    /// QPACK's decoder stream.
    pub const QPACK_DECODER: u64 = 0x03;
}

/// What a unidirectional stream is, from its first integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniStream {
    /// The control stream.
    Control,
    /// A push stream.
    Push,
    /// QPACK's encoder stream.
    QpackEncoder,
    /// QPACK's decoder stream.
    QpackDecoder,
    /// A reserved or unknown type: the reader ignores the stream (RFC 9114 6.2: it may stop
    /// reading it with H3_STREAM_CREATION_ERROR).
    Unknown(u64),
}

impl UniStream {
    /// Reads the stream type at the start of a unidirectional stream: the type and its
    /// length, or `None` when the bytes end inside it.
    pub fn parse(b: &[u8]) -> Option<(UniStream, usize)> {
        let (t, len) = varint::decode(b)?;
        let s = match t {
            stream_type::CONTROL => UniStream::Control,
            stream_type::PUSH => UniStream::Push,
            stream_type::QPACK_ENCODER => UniStream::QpackEncoder,
            stream_type::QPACK_DECODER => UniStream::QpackDecoder,
            _ => UniStream::Unknown(t),
        };
        Some((s, len))
    }
}

/// Appends a unidirectional stream's type, its first bytes.
pub fn put_stream_type(out: &mut Vec<u8>, t: u64) {
    varint::put(out, t);
}

#[cfg(test)]
mod tests;
