//! HTTP/2 over cleartext (h2c) with prior knowledge, on the HTTP/1.1 port.
//!
//! The worker tells the two apart by the first bytes of a connection: the client preface
//! (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`) means HTTP/2, as in Go's and hyper's servers; a first
//! read that is a proper prefix of it waits for more. The `Upgrade: h2c` dance of HTTP/1.1 is
//! not done (an `Upgrade` header is ignored and the request answered over HTTP/1.1), as
//! browsers never use h2c and load tools use prior knowledge.
//!
//! - [`frame`]: the frame header and the frames the server writes.
//! - [`hpack`]: the request decoder (Huffman, dynamic table) and the response encoder.
//! - [`request`]: a header list checked and turned into the HTTP/1 parser's [`Request`].
//! - [`response`]: the responder's HTTP/1.1 head re-encoded as HEADERS.
//! - [`conn`]: one connection's streams, windows, SETTINGS and limits, sans I/O.
//!
//! Requests are answered by the same [`Responder`] as HTTP/1 requests, as soon as their
//! header block is complete; a request body is read and thrown away. Limits, each counted
//! in `/metrics` (`avatar_h2_events_total{kind}`): SETTINGS_MAX_CONCURRENT_STREAMS
//! (`--h2-max-streams`, REFUSED_STREAM past it), SETTINGS_MAX_HEADER_LIST_SIZE (a 431 past
//! it), SETTINGS_MAX_FRAME_SIZE 16 KiB (FRAME_SIZE_ERROR past it), and the flood defences:
//! RST_STREAM as a token bucket (rapid reset, CVE-2023-44487), a bound on a header block's
//! bytes and CONTINUATION frames (CVE-2024-27316), and a budget of control frames earned by
//! requests and time; each ends the connection with GOAWAY ENHANCE_YOUR_CALM.
//!
//! [`Request`]: crate::request::Request
//! [`Responder`]: crate::responder::Responder

pub mod conn;
pub mod frame;
pub mod hpack;
pub mod limits;
pub mod request;
pub mod response;

pub use conn::{Conn, Ctx, Scratch};
pub use frame::PREFACE;

/// What the first bytes of a connection are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniff {
    /// A proper prefix of the HTTP/2 preface: wait for more.
    Partial,
    /// The HTTP/2 preface.
    H2,
    /// Anything else that may be HTTP/1.
    H1,
    /// A complete first line of three words whose third is no HTTP version: neither HTTP/1
    /// nor the HTTP/2 preface, so the connection is closed without an answer (RFC 9113 3.4:
    /// an invalid preface is a connection error; an HTTP/1 400 would be garbage to an h2 client).
    NotHttp,
}

/// Tells HTTP/2 from HTTP/1 by the first bytes of a connection.
pub fn sniff(first: &[u8]) -> Sniff {
    if first.len() < PREFACE.len() && PREFACE.starts_with(first) {
        return Sniff::Partial;
    }
    if first.starts_with(PREFACE) {
        return Sniff::H2;
    }
    let Some(line_end) = first.iter().position(|&b| b == b'\n') else {
        return Sniff::H1;
    };
    let line = first[..line_end]
        .strip_suffix(b"\r")
        .unwrap_or(&first[..line_end]);
    let mut words = line.split(|&b| b == b' ').filter(|w| !w.is_empty());
    match (words.next(), words.next(), words.next()) {
        (Some(_), Some(_), Some(version)) if !version.starts_with(b"HTTP/") => Sniff::NotHttp,
        _ => Sniff::H1,
    }
}

#[cfg(test)]
mod tests;
