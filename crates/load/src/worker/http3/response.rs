//! A request stream's response as the client reads it from quinn, framed by
//! [`Response`], complete at the stream's FIN.

use h3wire::error as h3err;
use quinn_proto::{Connection, StreamId, VarInt};
use stats::reason::{At, Cause, Kind, Reason};

use super::Failure;
use crate::h3::response::Response;

/// A request stream's response, as it is read.
pub(super) struct Rx {
    /// The stream the request went out on.
    pub(super) id: StreamId,
    /// Its request's tag ([`super::Pending::stream`]).
    pub(super) tag: u32,
    pub(super) shape: u32,
    /// Bytes of the request not yet taken by the stream (its flow control).
    pub(super) unsent: usize,
    /// The response's frames, read so far.
    pub(super) response: Response,
}

impl Rx {
    /// A response's reading state, before its first byte.
    pub(super) fn new(id: StreamId, tag: u32, shape: u32, unsent: usize) -> Self {
        Rx {
            id,
            tag,
            shape,
            unsent,
            response: Response::new(),
        }
    }
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
                if let Err(f) = rx.response.feed(&chunk.bytes) {
                    out = Some(Err(f));
                    break;
                }
            }
            Ok(None) => {
                out = Some(rx.response.at_fin());
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
