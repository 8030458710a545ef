//! The responder's HTTP/1.1 response, re-encoded as an HTTP/2 HEADERS frame.
//!
//! The responder builds every response from pre-built heads (see [`crate::responder`]); the
//! HTTP/2 path reuses them as they are, so routing, statuses and fields have one source.
//! The head is ours, so its syntax is known: a status line, then `Name: value` lines.

use super::frame::{self, flag, kind, DEFAULT_MAX_FRAME};
use super::hpack;

/// Appends the HEADERS frame for the head at the start of `resp` (with END_STREAM when no
/// body follows) and returns the body.
pub fn put_head<'r>(resp: &'r [u8], stream: u32, out: &mut Vec<u8>) -> &'r [u8] {
    let head_end = resp
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(resp.len(), |i| i + 4);
    let (head, body) = resp.split_at(head_end);
    let flags = flag::END_HEADERS | if body.is_empty() { flag::END_STREAM } else { 0 };
    let at = out.len();
    frame::put_header(out, 0, kind::HEADERS, flags, stream);
    let mut lines = head.split(|&b| b == b'\n');
    let status_line = lines.next().unwrap_or_default();
    hpack::put_status(out, status_line.get(9..12).unwrap_or(b"500"));
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let name = &line[..colon];
        // Connection-specific fields do not exist in HTTP/2 (RFC 9113 8.2.2).
        if name.eq_ignore_ascii_case(b"connection") {
            continue;
        }
        hpack::put_field(out, name, line[colon + 1..].trim_ascii_start());
    }
    let len = out.len() - at - frame::HEADER_LEN;
    // Heads are built from fixed fields and a location of at most 2 KiB.
    debug_assert!(len <= DEFAULT_MAX_FRAME);
    frame::patch_len(out, at, len);
    body
}

#[cfg(test)]
mod tests;
