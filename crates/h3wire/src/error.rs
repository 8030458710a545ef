//! HTTP/3's error codes (RFC 9114 8.1) and QPACK's (RFC 9204 6), with their names: the code
//! a connection or stream is closed with, and the name the load engine counts it under.

/// Declares each code as a constant and lists it with its name, from one list.
macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = $code:literal,)*) => {
        $($(#[$doc])* pub const $name: u64 = $code;)*
        /// Every code this module names, with its name, in order.
        pub const ALL: &[(u64, &str)] = &[$(($code, stringify!($name)),)*];
    };
}

codes! {
    /// No error: closing a connection or stream that is no longer needed.
    H3_NO_ERROR = 0x100,
    /// A protocol violation with no more specific code, or an endpoint that will not use one.
    H3_GENERAL_PROTOCOL_ERROR = 0x101,
    /// An internal error in the HTTP stack.
    H3_INTERNAL_ERROR = 0x102,
    /// The peer created a stream that will not be accepted.
    H3_STREAM_CREATION_ERROR = 0x103,
    /// A stream the connection needs was closed or reset.
    H3_CLOSED_CRITICAL_STREAM = 0x104,
    /// A frame that is not allowed in the current state or on the current stream.
    H3_FRAME_UNEXPECTED = 0x105,
    /// A frame that fails its layout or size rules, or is truncated.
    H3_FRAME_ERROR = 0x106,
    /// The peer is generating excessive load.
    H3_EXCESSIVE_LOAD = 0x107,
    /// A stream or push id used wrongly (past a limit, reduced, reused).
    H3_ID_ERROR = 0x108,
    /// An error in the payload of a SETTINGS frame.
    H3_SETTINGS_ERROR = 0x109,
    /// No SETTINGS frame at the start of a control stream.
    H3_MISSING_SETTINGS = 0x10a,
    /// A request refused before any processing.
    H3_REQUEST_REJECTED = 0x10b,
    /// A request or its response cancelled.
    H3_REQUEST_CANCELLED = 0x10c,
    /// The client's stream ended before a full request.
    H3_REQUEST_INCOMPLETE = 0x10d,
    /// A malformed HTTP message.
    H3_MESSAGE_ERROR = 0x10e,
    /// A CONNECT request's TCP connection was reset or closed abnormally.
    H3_CONNECT_ERROR = 0x10f,
    /// The request must be retried over HTTP/1.1.
    H3_VERSION_FALLBACK = 0x110,
    /// A field section that cannot be decoded.
    QPACK_DECOMPRESSION_FAILED = 0x200,
    /// An encoder-stream instruction that cannot be applied.
    QPACK_ENCODER_STREAM_ERROR = 0x201,
    /// A decoder-stream instruction that cannot be applied.
    QPACK_DECODER_STREAM_ERROR = 0x202,
}

/// The name of `code` (`"H3_FRAME_ERROR"`), or `None` for a code neither RFC names (a
/// reserved one, 0x1f * N + 0x21, or any other).
pub fn name(code: u64) -> Option<&'static str> {
    ALL.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// Whether `code` is reserved to exercise unknown codes (RFC 9114 8.1: 0x1f * N + 0x21),
/// which carry no meaning.
pub fn is_reserved(code: u64) -> bool {
    crate::frame::is_reserved(code)
}

#[cfg(test)]
mod tests;
