//! A request stream as the server reads it (RFC 9114 4.1): HEADERS first, its field section
//! decoded with QPACK into the field list HTTP/2 decodes into, checked and answered by
//! [`crate::h2::request`], the responder's head re-encoded with QPACK; then DATA (the body,
//! counted and thrown away), trailers and unknown frames passed over, to the stream's FIN.

use h3wire::error as h3err;
use h3wire::frame::{self, Kind};
use h3wire::qpack::{self, QpackError};
use h3wire::walk::{Frame as WalkFrame, Take, WalkError, Walker};

use crate::config::Limits;
use crate::h2::hpack::Fields;
use crate::h2::response;

/// A request stream's reading state, kept between reads.
#[derive(Debug)]
pub struct Rx {
    /// The stream's frames: a frame split across reads is held here.
    pub walker: Walker,
    /// The request's HEADERS came.
    pub headers_done: bool,
    /// Its trailers (a second HEADERS) came: no frame of the message may follow.
    pub trailers_done: bool,
    /// Body bytes (DATA payloads) so far, counted as each DATA frame's header comes.
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
    /// A request stream's state before its first byte; a HEADERS frame longer than
    /// `section_limit` is H3_EXCESSIVE_LOAD.
    pub fn new(section_limit: u64) -> Self {
        Rx {
            walker: Walker::new(section_limit),
            headers_done: false,
            trailers_done: false,
            body_bytes: 0,
            content_length: None,
        }
    }

    /// What the stream's FIN, after every byte was walked, makes of the request.
    pub fn at_fin(&self) -> End {
        if !self.walker.between_frames() {
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

    /// Walks the frames in `b`, advancing it, to the request's HEADERS, handed over whole
    /// (its field section), or `None` once `b` is used up. DATA, trailers and unknown
    /// frames are passed over. `Err`: the HTTP/3 error code to close the connection with.
    pub fn walk<'r, 'b: 'r>(&'r mut self, b: &mut &'b [u8]) -> Result<Option<WalkFrame<'r>>, u64> {
        let Rx {
            walker,
            headers_done,
            trailers_done,
            body_bytes,
            ..
        } = self;
        let frame = walker
            .next(b, |head| {
                if !head.kind.allowed_on(frame::Stream::Request) || head.kind == Kind::PushPromise {
                    // A client never sends PUSH_PROMISE (RFC 9114 7.2.5).
                    return Err(h3err::H3_FRAME_UNEXPECTED);
                }
                Ok(match head.kind {
                    Kind::Headers if !*headers_done => Take::Whole,
                    Kind::Data if !*headers_done || *trailers_done => {
                        return Err(h3err::H3_FRAME_UNEXPECTED)
                    }
                    // Trailers end the message (RFC 9114 4.1).
                    Kind::Headers if *trailers_done => return Err(h3err::H3_FRAME_UNEXPECTED),
                    Kind::Headers => {
                        *trailers_done = true;
                        Take::Skip
                    }
                    Kind::Data => {
                        *body_bytes = body_bytes.saturating_add(head.len);
                        Take::Skip
                    }
                    _ => Take::Skip,
                })
            })
            .map_err(WalkError::code)?;
        if let Some(WalkFrame::Whole(..)) = frame {
            *headers_done = true;
        }
        Ok(frame)
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
