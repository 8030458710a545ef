//! A request stream as the server reads it (RFC 9114 4.1): HEADERS first, its field section
//! decoded with QPACK into the field list HTTP/2 decodes into, checked and answered by
//! [`crate::h2::request`], the responder's head re-encoded with QPACK; then DATA (the body,
//! counted and thrown away), trailers and unknown frames passed over, to the stream's FIN.

use h3wire::error as h3err;
use h3wire::frame::{self, Kind};
use h3wire::qpack::{self, QpackError};

use crate::config::Limits;
use crate::h2::hpack::Fields;
use crate::h2::response;

/// What the frames of a request stream's bytes gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing whole yet, or only frames passed over.
    More,
    /// The request's field section, `payload` bytes at `at` in the bytes walked.
    Headers {
        /// Where the section starts.
        at: usize,
        /// Its length.
        len: usize,
    },
}

/// A request stream's reading state, kept between reads.
#[derive(Debug, Default)]
pub struct Rx {
    /// The start of a frame split across reads.
    pub pending: Vec<u8>,
    /// Payload bytes still to pass over (DATA, trailers, unknown frames).
    pub skip: u64,
    /// The request's HEADERS came.
    pub headers_done: bool,
    /// Its trailers (a second HEADERS) came: no frame of the message may follow.
    pub trailers_done: bool,
    /// Body bytes (DATA payloads) so far.
    pub body_bytes: u64,
    /// The request's `content-length`, which its DATA must add up to (RFC 9114 4.1.2).
    pub content_length: Option<u64>,
}

/// What a request stream's clean end (FIN) makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Its frames were whole and its HEADERS came.
    Complete,
    /// Whole frames but no HEADERS: a stream error H3_REQUEST_INCOMPLETE (RFC 9114 4.1.2).
    Incomplete,
    /// It ended inside a frame: a connection error H3_FRAME_ERROR (RFC 9114 7.1).
    Truncated,
}

impl Rx {
    /// What the stream's FIN, after every byte was walked, makes of the request.
    pub fn at_fin(&self) -> End {
        if !self.pending.is_empty() || self.skip > 0 {
            End::Truncated
        } else if !self.headers_done {
            End::Incomplete
        } else {
            End::Complete
        }
    }

    /// Whether the body so far breaks the `content-length`: past it, or short of it at
    /// the stream's end (`ended`).
    pub fn length_broken(&self, ended: bool) -> bool {
        self.content_length
            .is_some_and(|cl| self.body_bytes > cl || (ended && self.body_bytes != cl))
    }
}

impl Rx {
    /// Walks the frames in `b` until the request's HEADERS: returns how many bytes were used
    /// and what they gave. The rest (the start of a frame) is for the caller to keep.
    /// `Err`: the HTTP/3 error code to close the connection with.
    pub fn walk(&mut self, b: &[u8], section_limit: u64) -> Result<(usize, Step), u64> {
        let mut at = 0;
        loop {
            if self.skip > 0 {
                let n = self.skip.min((b.len() - at) as u64);
                at += n as usize;
                self.skip -= n;
                if self.skip > 0 {
                    return Ok((at, Step::More));
                }
            }
            let head = match frame::parse_header(&b[at..], section_limit) {
                Ok(Some(h)) => h,
                Ok(None) => return Ok((at, Step::More)),
                Err(e) => return Err(e.code()),
            };
            if !head.kind.allowed_on(frame::Stream::Request) || head.kind == Kind::PushPromise {
                // A client never sends PUSH_PROMISE (RFC 9114 7.2.5).
                return Err(h3err::H3_FRAME_UNEXPECTED);
            }
            match head.kind {
                Kind::Headers if !self.headers_done => {
                    let len = head.len as usize;
                    let start = at + head.header_len;
                    if b.len() - start < len {
                        return Ok((at, Step::More));
                    }
                    self.headers_done = true;
                    return Ok((start + len, Step::Headers { at: start, len }));
                }
                Kind::Data if !self.headers_done || self.trailers_done => {
                    return Err(h3err::H3_FRAME_UNEXPECTED)
                }
                // Trailers end the message (RFC 9114 4.1).
                Kind::Headers if self.trailers_done => return Err(h3err::H3_FRAME_UNEXPECTED),
                Kind::Headers => self.trailers_done = true,
                Kind::Data => self.body_bytes = self.body_bytes.saturating_add(head.len),
                _ => {}
            }
            at += head.header_len;
            self.skip = head.len;
        }
    }
}

/// Decodes a request's field section into `fields`: past `limits.max_header_list_bytes`
/// the list is marked too large (a 431, as over HTTP/2). `Err`: a section that needs the
/// dynamic table we refused, or is malformed (QPACK_DECOMPRESSION_FAILED).
pub fn decode(
    decoder: &mut qpack::Decoder,
    section: &[u8],
    fields: &mut Fields,
    limits: &Limits,
) -> Result<(), u64> {
    fields.clear();
    let limit = limits.max_header_list_bytes;
    match decoder.decode(section, limit as u64, |n, v| fields.push(n, v, limit)) {
        Ok(_) => Ok(()),
        Err(QpackError::TooLarge { .. }) => {
            fields.too_large = true;
            Ok(())
        }
        Err(e) => Err(e.code()),
    }
}

/// Encodes the responder's HTTP/1.1 response `resp` as HTTP/3 frames: appends HEADERS and
/// a DATA frame header to `out` (the body is not copied) and returns the body, which the
/// caller writes after it. `section` is scratch.
pub fn put_response<'r>(resp: &'r [u8], out: &mut Vec<u8>, section: &mut Vec<u8>) -> &'r [u8] {
    let parts = response::Parts::of(resp);
    section.clear();
    qpack::put_prefix(section);
    qpack::put_field(section, b":status", parts.status);
    // Field names are lowercase in HTTP/3 (RFC 9114 4.2); ours are short ASCII, lowered on
    // the stack, and a longer one (none today) takes an allocation rather than a cut.
    let mut lower = [0u8; 64];
    for (name, value) in parts.fields() {
        if name.len() > lower.len() {
            qpack::put_field(section, &name.to_ascii_lowercase(), value);
            continue;
        }
        let lower = &mut lower[..name.len()];
        for (d, s) in lower.iter_mut().zip(name) {
            *d = s.to_ascii_lowercase();
        }
        qpack::put_field(section, lower, value);
    }
    frame::put_headers(out, section);
    if !parts.body.is_empty() {
        frame::put_data_header(out, parts.body.len() as u64);
    }
    parts.body
}

#[cfg(test)]
mod tests;
