//! HTTP/2 frames (RFC 9113 sections 4 and 6) as the server uses them: the wire format (the
//! 9-byte header, the constants, the frames written into the worker's output buffer) is
//! `h2wire`'s, shared with the load engine's client; the limits here are the server's.

pub use h2wire::frame::{
    code, flag, kind, patch_len, put_goaway, put_header, put_rst, put_settings, put_window_update,
    setting, Header, HEADER_LEN, PREFACE,
};

/// The largest stream ID, and the largest flow-control window (2^31 - 1).
pub const MAX_31: u32 = h2wire::frame::MAX_STREAM_ID;

/// The frame size every peer must accept, and the largest we accept (SETTINGS_MAX_FRAME_SIZE).
pub const DEFAULT_MAX_FRAME: usize = h2wire::frame::DEFAULT_MAX_FRAME as usize;

/// The largest SETTINGS_MAX_FRAME_SIZE a peer may state (2^24 - 1).
pub const MAX_FRAME_LIMIT: u32 = (1 << 24) - 1;

/// The initial flow-control window (RFC 9113 6.9.2).
pub const DEFAULT_WINDOW: i64 = 65_535;
