//! HTTP/2 frames (RFC 9113 sections 4 and 6): the 9-byte header, the constants, and the
//! frames either side writes, appended to a connection's output buffer.

/// The client connection preface (RFC 9113 3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Frame header length.
pub const HEADER_LEN: usize = 9;

/// The largest stream ID (2^31 - 1).
pub const MAX_STREAM_ID: u32 = (1 << 31) - 1;

/// The largest flow-control window (2^31 - 1).
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

/// The frame size every peer must accept (SETTINGS_MAX_FRAME_SIZE's initial value).
pub const DEFAULT_MAX_FRAME: u32 = 16_384;

/// Frame types.
pub mod kind {
    /// DATA.
    pub const DATA: u8 = 0;
    /// HEADERS.
    pub const HEADERS: u8 = 1;
    /// PRIORITY.
    pub const PRIORITY: u8 = 2;
    /// RST_STREAM.
    pub const RST_STREAM: u8 = 3;
    /// SETTINGS.
    pub const SETTINGS: u8 = 4;
    /// PUSH_PROMISE.
    pub const PUSH_PROMISE: u8 = 5;
    /// PING.
    pub const PING: u8 = 6;
    /// GOAWAY.
    pub const GOAWAY: u8 = 7;
    /// WINDOW_UPDATE.
    pub const WINDOW_UPDATE: u8 = 8;
    /// CONTINUATION.
    pub const CONTINUATION: u8 = 9;
}

/// Frame flags.
pub mod flag {
    /// END_STREAM (DATA, HEADERS).
    pub const END_STREAM: u8 = 0x1;
    /// ACK (SETTINGS, PING).
    pub const ACK: u8 = 0x1;
    /// END_HEADERS (HEADERS, CONTINUATION).
    pub const END_HEADERS: u8 = 0x4;
    /// PADDED (DATA, HEADERS).
    pub const PADDED: u8 = 0x8;
    /// PRIORITY (HEADERS).
    pub const PRIORITY: u8 = 0x20;
}

/// SETTINGS identifiers.
pub mod setting {
    /// SETTINGS_HEADER_TABLE_SIZE.
    pub const HEADER_TABLE_SIZE: u16 = 1;
    /// SETTINGS_ENABLE_PUSH.
    pub const ENABLE_PUSH: u16 = 2;
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub const MAX_CONCURRENT_STREAMS: u16 = 3;
    /// SETTINGS_INITIAL_WINDOW_SIZE.
    pub const INITIAL_WINDOW_SIZE: u16 = 4;
    /// SETTINGS_MAX_FRAME_SIZE.
    pub const MAX_FRAME_SIZE: u16 = 5;
    /// SETTINGS_MAX_HEADER_LIST_SIZE.
    pub const MAX_HEADER_LIST_SIZE: u16 = 6;
}

/// HTTP/2 error codes (RFC 9113 7), 0..=13.
pub mod code {
    /// Graceful.
    pub const NO_ERROR: u32 = 0;
    /// A protocol violation.
    pub const PROTOCOL_ERROR: u32 = 1;
    /// An unexpected internal error.
    pub const INTERNAL_ERROR: u32 = 2;
    /// Flow control violated.
    pub const FLOW_CONTROL_ERROR: u32 = 3;
    /// SETTINGS not acknowledged in time.
    pub const SETTINGS_TIMEOUT: u32 = 4;
    /// A frame on a closed stream.
    pub const STREAM_CLOSED: u32 = 5;
    /// A frame of the wrong size.
    pub const FRAME_SIZE_ERROR: u32 = 6;
    /// The stream was not processed.
    pub const REFUSED_STREAM: u32 = 7;
    /// The stream is no longer needed.
    pub const CANCEL: u32 = 8;
    /// HPACK failed.
    pub const COMPRESSION_ERROR: u32 = 9;
    /// A CONNECT tunnel failed.
    pub const CONNECT_ERROR: u32 = 10;
    /// The peer is generating excessive load.
    pub const ENHANCE_YOUR_CALM: u32 = 11;
    /// The transport's security is not enough.
    pub const INADEQUATE_SECURITY: u32 = 12;
    /// The request must be sent over HTTP/1.1.
    pub const HTTP_1_1_REQUIRED: u32 = 13;
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Payload length.
    pub len: usize,
    /// Frame type.
    pub kind: u8,
    /// Flags.
    pub flags: u8,
    /// Stream ID, without the reserved bit.
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

    /// Whether `f` is set.
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Appends a frame header.
#[inline]
pub fn put_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Rewrites the length of the frame header at `at`.
#[inline]
pub fn patch_len(out: &mut [u8], at: usize, len: usize) {
    let l = (len as u32).to_be_bytes();
    out[at..at + 3].copy_from_slice(&l[1..]);
}

/// Appends a SETTINGS frame with `(id, value)` pairs.
pub fn put_settings(out: &mut Vec<u8>, pairs: &[(u16, u32)]) {
    put_header(out, pairs.len() * 6, kind::SETTINGS, 0, 0);
    for (id, v) in pairs {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends a WINDOW_UPDATE frame.
pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_header(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

/// Appends an RST_STREAM frame.
pub fn put_rst(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_header(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

/// Appends a GOAWAY frame.
pub fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    put_header(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

#[cfg(test)]
mod tests;
