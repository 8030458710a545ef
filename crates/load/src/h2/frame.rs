//! HTTP/2 frames (RFC 9113 section 4 and 6) as the client uses them: the wire format is
//! `h2wire`'s, shared with avatar's server; the error codes' names are the engine's
//! (counted by code in its reports).

/// HTTP/2 error codes (RFC 9113 7), 0..=13; others are reported as "other".
pub use h2wire::frame::code;
pub(crate) use h2wire::frame::{
    flag, kind, patch_len, put_goaway, put_header, put_rst, put_settings, put_window_update,
    setting, Header, DEFAULT_MAX_FRAME, HEADER_LEN, MAX_STREAM_ID, MAX_WINDOW, PREFACE,
};

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

#[cfg(test)]
mod tests;
