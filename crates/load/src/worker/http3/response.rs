//! A request stream's response as the client reads it: HEADERS (its `:status`; 1xx passed
//! over; trailers read and dropped), DATA and unknown frames passed over, complete at the
//! stream's FIN; a frame split across reads is kept until it is whole.

use h3wire::{error as h3err, frame, qpack};
use quinn_proto::{Connection, StreamId, VarInt};
use stats::reason::{At, Cause, Kind, Reason};

use super::{Failure, MAX_FIELD_SECTION};

/// A request stream's response, as it is read.
pub(super) struct Rx {
    /// The stream the request went out on.
    pub(super) id: StreamId,
    /// Its request's tag ([`super::Pending::stream`]).
    pub(super) tag: u32,
    pub(super) shape: u32,
    /// Bytes of the request not yet taken by the stream (its flow control).
    pub(super) unsent: usize,
    /// The start of a frame split across reads.
    pub(super) pending: Vec<u8>,
    /// Payload bytes to pass over (DATA, unknown frames).
    pub(super) skip: u64,
    pub(super) status: Option<u16>,
}

/// Reads what a request stream has: `None` while its response goes on, else its status or
/// why it failed.
pub(super) fn read_response(
    conn: &mut Connection,
    id: StreamId,
    rx: &mut Rx,
) -> Option<Result<u16, Failure>> {
    let mut stream = conn.recv_stream(id);
    let mut chunks = match stream.read(true) {
        Ok(c) => c,
        Err(_) => {
            return Some(Err(Reason::new(
                Kind::Read,
                Cause::Closed(At::BeforeResponse),
            )))
        }
    };
    let mut out = None;
    loop {
        match chunks.next(usize::MAX) {
            Ok(Some(chunk)) => {
                if let Err(f) = feed(rx, &chunk.bytes) {
                    out = Some(Err(f));
                    break;
                }
            }
            Ok(None) => {
                out = Some(match rx.status {
                    Some(s) if rx.pending.is_empty() && rx.skip == 0 => Ok(s),
                    Some(_) => Err(Reason::new(Kind::Read, Cause::Closed(At::MidBody))),
                    None => Err(Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse))),
                });
                break;
            }
            Err(quinn_proto::ReadError::Blocked) => break,
            Err(quinn_proto::ReadError::Reset(code)) => {
                let code = u32::try_from(code.into_inner()).unwrap_or(u32::MAX);
                out = Some(Err(Reason::new(Kind::Reset, Cause::H3Received(code))));
                break;
            }
        }
    }
    let _ = chunks.finalize();
    if matches!(out, Some(Err(_))) {
        // A response that failed: the rest of it is not wanted.
        let _ = conn
            .recv_stream(id)
            .stop(VarInt::from_u32(h3err::H3_REQUEST_CANCELLED as u32));
    }
    out
}

/// Frames a response's bytes: HEADERS (its `:status`; 1xx ones are passed over; trailers
/// are read and dropped), DATA and unknown frames passed over.
pub(super) fn feed(rx: &mut Rx, data: &[u8]) -> Result<(), Failure> {
    if rx.pending.is_empty() {
        let used = walk(rx, data)?;
        rx.pending.extend_from_slice(&data[used..]);
    } else {
        let mut joined = std::mem::take(&mut rx.pending);
        joined.extend_from_slice(data);
        let used = walk(rx, &joined)?;
        joined.drain(..used);
        rx.pending = joined;
    }
    Ok(())
}

/// Walks the frames of `b`; returns how many bytes it used, the rest the start of a frame.
fn walk(rx: &mut Rx, b: &[u8]) -> Result<usize, Failure> {
    let broke = |code: u64| Reason::new(Kind::Protocol, Cause::H3Sent(code as u32));
    let mut at = 0;
    loop {
        if rx.skip > 0 {
            let n = rx.skip.min((b.len() - at) as u64);
            at += n as usize;
            rx.skip -= n;
            if rx.skip > 0 {
                return Ok(at);
            }
        }
        let head = match frame::parse_header(&b[at..], MAX_FIELD_SECTION) {
            Ok(Some(h)) => h,
            Ok(None) => return Ok(at),
            Err(e) => return Err(broke(e.code())),
        };
        match head.kind {
            frame::Kind::Data => {
                if rx.status.is_none() {
                    return Err(Reason::new(
                        Kind::Protocol,
                        Cause::Malformed(stats::reason::Malformed::FrameOrder),
                    ));
                }
                at += head.header_len;
                rx.skip = head.len;
            }
            frame::Kind::Headers => {
                let end = at + head.header_len + head.len as usize;
                if end > b.len() {
                    return Ok(at);
                }
                let section = &b[at + head.header_len..end];
                let h = qpack::head(section, MAX_FIELD_SECTION).map_err(|e| broke(e.code()))?;
                if rx.status.is_none() {
                    match h.status {
                        Some(s) if (100..200).contains(&s) => {}
                        Some(s) if (200..1000).contains(&s) => rx.status = Some(s),
                        _ => {
                            return Err(Reason::new(
                                Kind::Protocol,
                                Cause::Malformed(stats::reason::Malformed::Status),
                            ))
                        }
                    }
                }
                at = end;
            }
            frame::Kind::Unknown(_) => {
                at += head.header_len;
                rx.skip = head.len;
            }
            // We sent no MAX_PUSH_ID: no push id is valid (RFC 9114 7.2.5).
            frame::Kind::PushPromise => return Err(broke(h3err::H3_ID_ERROR)),
            _ => return Err(broke(h3err::H3_FRAME_UNEXPECTED)),
        }
    }
}
