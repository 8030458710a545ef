//! The responder's HTTP/1.1 response, re-encoded as an HTTP/2 HEADERS frame.
//!
//! The responder builds every response from pre-built heads (see [`crate::responder`]); the
//! HTTP/2 path reuses them as they are, so routing, statuses and fields have one source.
//! The head is ours, so its syntax is known: a status line, then `Name: value` lines.

use super::frame::{self, flag, kind, DEFAULT_MAX_FRAME};
use super::hpack;

/// The responder's response read as its parts: the status code, the fields (without the
/// connection-specific ones, which neither HTTP/2 nor HTTP/3 has: RFC 9113 8.2.2, RFC 9114
/// 4.2) and the body. HTTP/3 encodes the same head with QPACK ([`crate::h3::request`]).
#[derive(Debug, Clone, Copy)]
pub struct Parts<'r> {
    /// The three digits of the status.
    pub status: &'r [u8],
    /// The field lines.
    lines: &'r [u8],
    /// The body.
    pub body: &'r [u8],
}

impl<'r> Parts<'r> {
    /// Splits `resp`, an HTTP/1.1 response the responder built.
    pub fn of(resp: &'r [u8]) -> Self {
        let head_end = resp
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(resp.len(), |i| i + 4);
        let (head, body) = resp.split_at(head_end);
        let line_end = head
            .iter()
            .position(|&b| b == b'\n')
            .map_or(head.len(), |i| i + 1);
        let (status_line, lines) = head.split_at(line_end);
        Parts {
            status: status_line.get(9..12).unwrap_or(b"500"),
            lines,
            body,
        }
    }

    /// The fields, as (name, value), in order.
    pub fn fields(&self) -> impl Iterator<Item = (&'r [u8], &'r [u8])> {
        self.lines.split(|&b| b == b'\n').filter_map(|line| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let colon = line.iter().position(|&b| b == b':')?;
            let name = &line[..colon];
            if name.eq_ignore_ascii_case(b"connection") {
                return None;
            }
            Some((name, line[colon + 1..].trim_ascii_start()))
        })
    }
}

/// Appends the HEADERS frame for the head at the start of `resp` (with END_STREAM when no
/// body follows) and returns the body.
pub fn put_head<'r>(resp: &'r [u8], stream: u32, out: &mut Vec<u8>) -> &'r [u8] {
    let parts = Parts::of(resp);
    let body = parts.body;
    let flags = flag::END_HEADERS | if body.is_empty() { flag::END_STREAM } else { 0 };
    let at = out.len();
    frame::put_header(out, 0, kind::HEADERS, flags, stream);
    hpack::put_status(out, parts.status);
    for (name, value) in parts.fields() {
        hpack::put_field(out, name, value);
    }
    let len = out.len() - at - frame::HEADER_LEN;
    // Heads are built from fixed fields and a location of at most 2 KiB.
    debug_assert!(len <= DEFAULT_MAX_FRAME);
    frame::patch_len(out, at, len);
    body
}

#[cfg(test)]
mod tests;
