//! The frames of one stream, walked as its bytes arrive (RFC 9114 7.1): fed slices that
//! split frames anywhere, a [`Walker`] reads each frame header, asks the caller what to do
//! with the payload ([`Take`]), and hands over frames held whole, streamed payload bytes,
//! or nothing for a payload it passes over. The caller keeps its own rules (which frame
//! may come when, on which stream, and the error code for each breach): the walker knows
//! only framing, and its one limit on what it holds.
//!
//! Hand-written rather than taken from a crate: it is the per-request path of the avatar
//! server and the per-response path of the load client, where a frame whole in a read is
//! handed over without a copy and only a frame split across reads is held. The HTTP/3
//! crates (`h3`, `quiche`) decode frames inside their own stream and connection types,
//! from buffers of their own; none offers a sans-I/O incremental walker over the caller's
//! slices.

use crate::frame::{self, FrameError, Header};

/// The longest frame header: a type and a length, each up to 8 bytes.
const MAX_HEADER: usize = 16;

/// What the walker does with a frame's payload, as the caller says from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// Hold it whole, up to the walker's limit, and hand it over as one slice: HEADERS,
    /// SETTINGS, GOAWAY.
    Whole,
    /// Hand its bytes over as they come, without copying them: DATA read by the caller.
    Stream,
    /// Pass over it without holding any of it: unknown and reserved types, or a payload
    /// the caller only counts.
    Skip,
}

/// What a step of the walk gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// A frame taken whole ([`Take::Whole`]): its header and payload.
    Whole(Header, &'a [u8]),
    /// The next bytes of a streamed payload ([`Take::Stream`]), never empty; the payload
    /// ends once its header's length has come.
    Part(&'a [u8]),
}

/// Why a walk stopped: the bytes broke HTTP/3's framing, or the caller refused a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkError<E> {
    /// An HTTP/2 frame type, or a frame to hold whole past the walker's limit.
    Frame(FrameError),
    /// The caller's refusal of a frame, from its header.
    Refused(E),
}

impl<E> WalkError<E> {
    /// The caller's error, a framing error made into one by `frame`.
    pub fn or_frame(self, frame: impl FnOnce(FrameError) -> E) -> E {
        match self {
            WalkError::Frame(e) => frame(e),
            WalkError::Refused(e) => e,
        }
    }
}

impl WalkError<u64> {
    /// The HTTP/3 error code to close the connection with, for a caller whose refusals are
    /// codes.
    pub fn code(self) -> u64 {
        self.or_frame(FrameError::code)
    }
}

/// Where the walk is in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// At a frame header (its first bytes held, when split).
    Header,
    /// Inside a payload the caller takes as `take`: `left` bytes still to come (a payload
    /// taken whole counts its bytes held instead).
    Payload { head: Header, take: Take, left: u64 },
}

/// One stream's frames, walked across reads.
#[derive(Debug, Clone)]
pub struct Walker {
    /// The longest payload held whole.
    limit: u64,
    at: At,
    /// A frame header split across reads, or the payload so far of a frame taken whole.
    held: Vec<u8>,
    /// `held` is a whole frame handed over by the last step: dropped at the next.
    handed: bool,
}

impl Walker {
    /// A walker at a stream's start that holds no payload longer than `limit` bytes: a
    /// longer frame of a type the reader holds whole ([`frame::Kind::buffered`]), or one the
    /// caller asks for whole, is [`FrameError::TooLarge`].
    pub fn new(limit: u64) -> Self {
        Walker {
            limit,
            at: At::Header,
            held: Vec::new(),
            handed: false,
        }
    }

    /// Walks `input` on to the next frame to hand over, advancing it past the bytes used:
    /// `Ok(None)` once it is used up (what is left of a split frame is held). `take` says,
    /// for each frame header, what to do with the payload, or refuses the frame.
    pub fn next<'r, 'b: 'r, E>(
        &'r mut self,
        input: &mut &'b [u8],
        mut take: impl FnMut(&Header) -> Result<Take, E>,
    ) -> Result<Option<Frame<'r>>, WalkError<E>> {
        if self.handed {
            self.held.clear();
            self.handed = false;
        }
        loop {
            match self.at {
                At::Header => {
                    let Some(head) = self.header(input).map_err(WalkError::Frame)? else {
                        return Ok(None);
                    };
                    let how = take(&head).map_err(WalkError::Refused)?;
                    if how == Take::Whole && head.len > self.limit {
                        return Err(WalkError::Frame(FrameError::TooLarge {
                            kind: head.kind,
                            len: head.len,
                            limit: self.limit,
                        }));
                    }
                    if how == Take::Whole && head.len <= input.len() as u64 {
                        // Whole in this read: handed over where it lies.
                        let (payload, rest) = input.split_at(head.len as usize);
                        *input = rest;
                        return Ok(Some(Frame::Whole(head, payload)));
                    }
                    if head.len > 0 {
                        self.at = At::Payload {
                            head,
                            take: how,
                            left: head.len,
                        };
                    }
                }
                At::Payload {
                    head,
                    take: Take::Whole,
                    ..
                } => {
                    // Under the limit, so the length is a usize.
                    let need = head.len as usize - self.held.len();
                    let n = need.min(input.len());
                    self.held.extend_from_slice(&input[..n]);
                    *input = &input[n..];
                    if n < need {
                        return Ok(None);
                    }
                    self.at = At::Header;
                    self.handed = true;
                    return Ok(Some(Frame::Whole(head, &self.held)));
                }
                At::Payload { head, take, left } => {
                    if input.is_empty() {
                        return Ok(None);
                    }
                    let n = left.min(input.len() as u64);
                    let (bytes, rest) = input.split_at(n as usize);
                    *input = rest;
                    self.at = if n == left {
                        At::Header
                    } else {
                        At::Payload {
                            head,
                            take,
                            left: left - n,
                        }
                    };
                    if take == Take::Stream {
                        return Ok(Some(Frame::Part(bytes)));
                    }
                }
            }
        }
    }

    /// Reads the frame header at the walk's position, from the bytes held and `input`.
    fn header(&mut self, input: &mut &[u8]) -> Result<Option<Header>, FrameError> {
        if self.held.is_empty() {
            let head = frame::parse_header(input, self.limit)?;
            match head {
                Some(h) => *input = &input[h.header_len..],
                None => {
                    self.held.extend_from_slice(input);
                    *input = &[];
                }
            }
            return Ok(head);
        }
        // The bytes held ended inside the header: at most enough to finish it are added.
        let had = self.held.len();
        let n = (MAX_HEADER - had).min(input.len());
        self.held.extend_from_slice(&input[..n]);
        let head = frame::parse_header(&self.held, self.limit)?;
        match head {
            Some(h) => {
                *input = &input[h.header_len - had..];
                self.held.clear();
            }
            // Any header fits in MAX_HEADER bytes: `input` was all taken.
            None => *input = &input[n..],
        }
        Ok(head)
    }

    /// Whether the bytes so far end at a frame's end: at a stream's FIN, the stream was
    /// whole; otherwise it was truncated (H3_FRAME_ERROR, RFC 9114 7.1).
    pub fn between_frames(&self) -> bool {
        self.at == At::Header && (self.held.is_empty() || self.handed)
    }

    /// The bytes held of a frame split across reads: never more than the limit and a
    /// frame header.
    pub fn held(&self) -> usize {
        if self.handed {
            0
        } else {
            self.held.len()
        }
    }
}

#[doc(hidden)]
pub mod record;

#[cfg(test)]
mod tests;
