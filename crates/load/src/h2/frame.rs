//! HTTP/2 frames (RFC 9113 section 4 and 6): the 9-byte header, and the frames the client
//! writes, appended to a connection's output buffer.
//!
//! Hand-written, as the HTTP/1 framer is: a frame header is three fields at fixed offsets,
//! and the engine writes its frames straight into the buffer it hands the socket.

/// The client connection preface (RFC 9113 3.4).
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame header length.
pub(crate) const HEADER_LEN: usize = 9;

/// The largest stream ID (2^31 - 1).
pub(crate) const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// The largest flow-control window (2^31 - 1).
pub(crate) const MAX_WINDOW: u32 = (1 << 31) - 1;

/// The default frame size, and the largest frame we accept (SETTINGS_MAX_FRAME_SIZE).
pub(crate) const DEFAULT_MAX_FRAME: u32 = 16_384;

/// Frame types.
pub(crate) mod kind {
    pub const DATA: u8 = 0;
    pub const HEADERS: u8 = 1;
    pub const PRIORITY: u8 = 2;
    pub const RST_STREAM: u8 = 3;
    pub const SETTINGS: u8 = 4;
    pub const PUSH_PROMISE: u8 = 5;
    pub const PING: u8 = 6;
    pub const GOAWAY: u8 = 7;
    pub const WINDOW_UPDATE: u8 = 8;
    pub const CONTINUATION: u8 = 9;
}

/// Frame flags.
pub(crate) mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// SETTINGS identifiers.
pub(crate) mod setting {
    pub const HEADER_TABLE_SIZE: u16 = 1;
    pub const ENABLE_PUSH: u16 = 2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 3;
    pub const INITIAL_WINDOW_SIZE: u16 = 4;
    pub const MAX_FRAME_SIZE: u16 = 5;
}

/// HTTP/2 error codes (RFC 9113 7), 0..=13; others are reported as "other".
pub mod code {
    /// Graceful.
    pub const NO_ERROR: u32 = 0;
    /// A protocol violation.
    pub const PROTOCOL_ERROR: u32 = 1;
    /// Flow control violated.
    pub const FLOW_CONTROL_ERROR: u32 = 3;
    /// A frame of the wrong size.
    pub const FRAME_SIZE_ERROR: u32 = 6;
    /// The stream was not processed.
    pub const REFUSED_STREAM: u32 = 7;
    /// The stream is no longer needed.
    pub const CANCEL: u32 = 8;
    /// HPACK failed.
    pub const COMPRESSION_ERROR: u32 = 9;
    /// The peer is generating excessive load.
    pub const ENHANCE_YOUR_CALM: u32 = 11;
}

/// The names of the error codes, indexed by code; code 14 and above are "other". The
/// names themselves are `stats::reason::H2_ERRORS`, which words the failures they cause.
pub const CODE_NAMES: [&str; 15] = {
    let mut names = ["other"; 15];
    let mut i = 0;
    while i < stats::reason::H2_ERRORS.len() {
        names[i] = stats::reason::H2_ERRORS[i];
        i += 1;
    }
    names
};

/// Where `code` is counted in a table of [`CODE_NAMES`].
pub fn code_slot(code: u32) -> usize {
    (code as usize).min(CODE_NAMES.len() - 1)
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Header {
    /// Decodes the 9 bytes at the start of `b` (the caller checks there are 9).
    #[inline]
    pub fn parse(b: &[u8]) -> Header {
        Header {
            len: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & MAX_STREAM_ID,
        }
    }
}

/// Appends a frame header.
#[inline]
pub(crate) fn put_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Rewrites the length of the frame header at `at`.
#[inline]
pub(crate) fn patch_len(out: &mut [u8], at: usize, len: usize) {
    let l = (len as u32).to_be_bytes();
    out[at..at + 3].copy_from_slice(&l[1..]);
}

/// Appends a SETTINGS frame with `(id, value)` pairs.
pub(crate) fn put_settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    put_header(out, pairs.len() * 6, kind::SETTINGS, 0, 0);
    for (id, v) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends a WINDOW_UPDATE frame.
pub(crate) fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// Appends an RST_STREAM frame.
pub(crate) fn put_rst(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_header(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

/// Appends a GOAWAY frame.
pub(crate) fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    put_header(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_ignores_the_reserved_bit() {
        let mut out = Vec::new();
        put_header(&mut out, 0x12_3456, kind::HEADERS, flag::END_HEADERS, 7);
        assert_eq!(
            Header::parse(&out),
            Header {
                len: 0x12_3456,
                kind: kind::HEADERS,
                flags: flag::END_HEADERS,
                stream: 7
            }
        );
        out[5] |= 0x80;
        assert_eq!(Header::parse(&out).stream, 7);
        patch_len(&mut out, 0, 5);
        assert_eq!(Header::parse(&out).len, 5);
        assert_eq!(code_slot(7), 7);
        assert_eq!(CODE_NAMES[code_slot(0xdead)], "other");
    }
}
