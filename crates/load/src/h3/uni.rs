//! The server's unidirectional streams as a client reads them: its control stream
//! (SETTINGS first, then GOAWAY; unknown frames skipped), its QPACK encoder stream (only a
//! table capacity of 0, which is all we allow) and decoder stream (Stream Cancellations
//! only), checked by `h3wire`; a push stream is an error (we never allow pushes), a second
//! stream of a critical type is H3_STREAM_CREATION_ERROR, and an unknown type is stopped
//! (STOP_SENDING H3_STREAM_CREATION_ERROR, RFC 9114 6.2.3) and forgotten, so that the
//! streams kept are the three critical ones and those whose type has not come yet.

use h3wire::error as h3err;
use h3wire::frame::{self, Header, Kind, Settings, UniStream};
use h3wire::qpack::stream::{check_decoder_stream, check_encoder_stream};
use h3wire::walk::{Frame, Take, WalkError, Walker};
use quinn_proto::{Connection, ReadError, StreamId};

/// The largest control frame held whole (SETTINGS, GOAWAY).
const MAX_CONTROL_FRAME: u64 = 16 * 1024;

/// Whether a stream is still to be read after [`Uni::read`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    Yes,
    /// Its type is unknown (it was stopped), or it ended: forget it.
    No,
}

/// The critical types among `uni`'s streams, as [`Uni::read`] takes them: control, QPACK
/// encoder, QPACK decoder.
pub(crate) fn kinds(uni: &[Uni]) -> [bool; 3] {
    let has = |k: UniStream| uni.iter().any(|u| u.kind == Some(k));
    [
        has(UniStream::Control),
        has(UniStream::QpackEncoder),
        has(UniStream::QpackDecoder),
    ]
}

/// One of the server's unidirectional streams.
pub(crate) struct Uni {
    pub(crate) id: StreamId,
    /// Its type, once its first bytes came.
    kind: Option<UniStream>,
    /// Bytes not yet taken: the stream type, or a QPACK instruction split across reads (a
    /// control frame split across reads is held by `walker`).
    pending: Vec<u8>,
    /// The control stream's frames.
    walker: Walker,
    /// The control stream's SETTINGS came.
    settings: Option<Settings>,
}

impl Uni {
    pub(crate) fn new(id: StreamId) -> Self {
        Self {
            id,
            kind: None,
            pending: Vec::new(),
            walker: Walker::new(MAX_CONTROL_FRAME),
            settings: None,
        }
    }

    /// Reads what the stream has; `others`: the critical types the connection's other
    /// streams have ([`kinds`]). `Err`: the HTTP/3 or QPACK error code to close the
    /// connection with. A GOAWAY's id goes to `goaway`.
    pub(crate) fn read(
        &mut self,
        conn: &mut Connection,
        goaway: &mut Option<u64>,
        others: [bool; 3],
    ) -> Result<Keep, u64> {
        let mut stream = conn.recv_stream(self.id);
        let Ok(mut chunks) = stream.read(true) else {
            return Ok(Keep::No);
        };
        let mut out = Ok(Keep::Yes);
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    self.pending.extend_from_slice(&chunk.bytes);
                    if let Err(code) = self.take(goaway, others) {
                        out = Err(code);
                        break;
                    }
                    if matches!(self.kind, Some(UniStream::Unknown(_))) {
                        out = Ok(Keep::No);
                        break;
                    }
                }
                Ok(None) | Err(ReadError::Reset(_)) => {
                    out = self.ended();
                    break;
                }
                Err(ReadError::Blocked) => break,
            }
        }
        let _ = chunks.finalize();
        if matches!(self.kind, Some(UniStream::Unknown(_))) {
            let code = quinn_proto::VarInt::from_u32(h3err::H3_STREAM_CREATION_ERROR as u32);
            let _ = conn.recv_stream(self.id).stop(code);
        }
        out
    }

    /// The stream ended or was reset: the control and QPACK streams are critical, they may
    /// not (RFC 9114 6.2.1, RFC 9204 4.2); another is forgotten.
    fn ended(&self) -> Result<Keep, u64> {
        match self.kind {
            Some(UniStream::Control | UniStream::QpackEncoder | UniStream::QpackDecoder) => {
                Err(h3err::H3_CLOSED_CRITICAL_STREAM)
            }
            _ => Ok(Keep::No),
        }
    }

    /// Takes in the bytes pending, as far as they are whole.
    fn take(&mut self, goaway: &mut Option<u64>, others: [bool; 3]) -> Result<(), u64> {
        let kind = match self.kind {
            Some(k) => k,
            None => {
                let Some((k, n)) = UniStream::parse(&self.pending) else {
                    return Ok(());
                };
                // One of each critical stream (RFC 9114 6.2.1, RFC 9204 4.2).
                let twice = match k {
                    UniStream::Control => others[0],
                    UniStream::QpackEncoder => others[1],
                    UniStream::QpackDecoder => others[2],
                    _ => false,
                };
                if twice {
                    return Err(h3err::H3_STREAM_CREATION_ERROR);
                }
                self.pending.drain(..n);
                self.kind = Some(k);
                k
            }
        };
        match kind {
            UniStream::Control => self.control(goaway),
            UniStream::QpackEncoder => {
                check_encoder_stream(&self.pending).map_err(|e| e.code())?;
                self.pending.clear();
                Ok(())
            }
            UniStream::QpackDecoder => {
                let n = check_decoder_stream(&self.pending).map_err(|e| e.code())?;
                self.pending.drain(..n);
                Ok(())
            }
            // We sent no MAX_PUSH_ID: no push id is valid (RFC 9114 4.6).
            UniStream::Push => Err(h3err::H3_ID_ERROR),
            UniStream::Unknown(_) => {
                self.pending.clear();
                Ok(())
            }
        }
    }

    /// The control stream's frames: SETTINGS first and once, GOAWAY, others skipped. Takes
    /// all of `pending`: a frame split across reads is held by the walker.
    fn control(&mut self, goaway: &mut Option<u64>) -> Result<(), u64> {
        let Uni {
            pending,
            walker,
            settings,
            ..
        } = self;
        let mut b = &pending[..];
        while let Some(frame) = walker
            .next(&mut b, |head| take_control(head, settings.is_some()))
            .map_err(WalkError::code)?
        {
            // Nothing is streamed.
            let Frame::Whole(head, payload) = frame else {
                continue;
            };
            match head.kind {
                Kind::Settings if settings.is_some() => return Err(h3err::H3_FRAME_UNEXPECTED),
                Kind::Settings => *settings = Some(Settings::parse(payload).map_err(|e| e.code())?),
                Kind::Goaway => match frame::parse_id(payload).map_err(|e| e.code())? {
                    // A later GOAWAY may only lower the id (RFC 9114 5.2).
                    id if goaway.is_some_and(|g| id > g) => return Err(h3err::H3_ID_ERROR),
                    id if id % 4 != 0 => return Err(h3err::H3_ID_ERROR),
                    id => *goaway = Some(id),
                },
                // CANCEL_PUSH and MAX_PUSH_ID: no pushes here, nothing to do.
                _ => {}
            }
        }
        pending.clear();
        Ok(())
    }
}

/// What the control stream does with a frame, from its header and whether SETTINGS came:
/// SETTINGS first, then the control frames whole, unknown frames passed over.
fn take_control(head: &Header, settings_seen: bool) -> Result<Take, u64> {
    if !settings_seen && head.kind != Kind::Settings {
        return Err(h3err::H3_MISSING_SETTINGS);
    }
    if !head.kind.allowed_on(frame::Stream::Control) {
        return Err(h3err::H3_FRAME_UNEXPECTED);
    }
    Ok(if head.kind.buffered() {
        Take::Whole
    } else {
        Take::Skip
    })
}

#[cfg(test)]
mod tests;
