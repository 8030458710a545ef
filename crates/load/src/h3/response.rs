//! A response's frames as the client reads them from its request stream, sans I/O:
//! HEADERS (its `:status`; 1xx passed over; trailers read and dropped), DATA and unknown
//! frames passed over; a frame split across reads is held by the walker until it is whole.

use h3wire::walk::{Frame, Take, Walker};
use h3wire::{error as h3err, frame, qpack};
use stats::reason::{At, Cause, Kind, Reason};

use super::MAX_FIELD_SECTION;

/// A response's frames, read so far.
pub(crate) struct Response {
    walker: Walker,
    status: Option<u16>,
}

impl Response {
    /// A response before its first byte.
    pub(crate) fn new() -> Self {
        Response {
            walker: Walker::new(MAX_FIELD_SECTION),
            status: None,
        }
    }

    /// Its final status, once its HEADERS came.
    pub(crate) fn status(&self) -> Option<u16> {
        self.status
    }

    /// What the stream's clean end (FIN) makes of the response: its status once it had
    /// one and its frames were whole.
    pub(crate) fn at_fin(&self) -> Result<u16, Reason> {
        match self.status {
            Some(s) if self.walker.between_frames() => Ok(s),
            Some(_) => Err(Reason::new(Kind::Read, Cause::Closed(At::MidBody))),
            None => Err(Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse))),
        }
    }

    /// Frames a response's bytes: HEADERS (its `:status`; 1xx ones are passed over; trailers
    /// are read and dropped), DATA and unknown frames passed over.
    pub(crate) fn feed(&mut self, data: &[u8]) -> Result<(), Reason> {
        let mut b = data;
        let Response { walker, status } = self;
        while let Some(frame) = walker
            .next(&mut b, |head| take(head, *status))
            .map_err(|e| e.or_frame(|e| broke(e.code())))?
        {
            // Nothing is streamed: only HEADERS comes whole.
            let Frame::Whole(_, section) = frame else {
                continue;
            };
            let h = qpack::head(section, MAX_FIELD_SECTION).map_err(|e| broke(e.code()))?;
            if status.is_none() {
                match h.status {
                    Some(s) if (100..200).contains(&s) => {}
                    Some(s) if (200..1000).contains(&s) => *status = Some(s),
                    _ => {
                        return Err(Reason::new(
                            Kind::Protocol,
                            Cause::Malformed(stats::reason::Malformed::Status),
                        ))
                    }
                }
            }
        }
        Ok(())
    }
}

/// What a response stream does with a frame, from its header and the status so far:
/// HEADERS whole, DATA (after a final status) and unknown frames passed over.
fn take(head: &frame::Header, status: Option<u16>) -> Result<Take, Reason> {
    match head.kind {
        frame::Kind::Data if status.is_none() => Err(Reason::new(
            Kind::Protocol,
            Cause::Malformed(stats::reason::Malformed::FrameOrder),
        )),
        frame::Kind::Data | frame::Kind::Unknown(_) => Ok(Take::Skip),
        frame::Kind::Headers => Ok(Take::Whole),
        // We sent no MAX_PUSH_ID: no push id is valid (RFC 9114 7.2.5).
        frame::Kind::PushPromise => Err(broke(h3err::H3_ID_ERROR)),
        _ => Err(broke(h3err::H3_FRAME_UNEXPECTED)),
    }
}

/// A response that broke HTTP/3's rules, which we close the connection for with `code`.
fn broke(code: u64) -> Reason {
    Reason::new(Kind::Protocol, Cause::H3Sent(code as u32))
}

/// Frames a response stream's bytes as a server would send them, delivered in two reads
/// split at `split`, then the stream's end: the fuzz target's entry. Returns what the
/// stream gave, its status or why it failed, which must not depend on the split.
///
/// Panics if more than a HEADERS frame and a frame header is held between reads.
#[doc(hidden)]
pub fn fuzz_feed(data: &[u8], split: usize) -> Result<u16, Reason> {
    let mut r = Response::new();
    let split = split.min(data.len());
    for part in [&data[..split], &data[split..]] {
        r.feed(part)?;
        let held = r.walker.held() as u64;
        assert!(held <= MAX_FIELD_SECTION + 16, "held {held} bytes");
    }
    r.at_fin()
}

#[cfg(test)]
mod tests;
