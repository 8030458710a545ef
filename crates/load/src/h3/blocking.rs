//! One blocking HTTP/3 connection for a few requests outside a run: the shootout's
//! verification speaks HTTP/3 through it when a scenario's levels do.
//!
//! The connection is the preflight's ([`super::Quic`]: the same handshake, the same
//! one-line errors), the request bytes are the engine's ([`super::request`]: QPACK with the
//! static table only), and the server's control and QPACK streams are read and checked by
//! the worker's own reader ([`super::uni`]), so a target passes verification only
//! where the engine can talk to it. The response is kept whole (the engine keeps only its
//! status): its stream is read to the FIN, then framed by `h3wire` (HEADERS, 1xx passed
//! over, DATA joined, trailers and unknown frames passed over). Requests go one at a time;
//! correctness, not speed, matters here.

use std::time::{Duration, Instant};

use h3wire::{error as h3err, frame, qpack};
use quinn_proto::{Dir, Event, ReadError, StreamEvent, StreamId};

use super::uni::{self, Keep, Uni};
use super::{ClosedPort, Quic, Turn, MAX_FIELD_SECTION};
use crate::{RequestSpec, SetupError, Target, Text, TlsOptions};

/// The largest response kept, bytes: verification reads redirects and small images.
const MAX_RESPONSE: usize = 16 << 20;

/// Why a request over HTTP/3 did not get a response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum H3Error {
    /// The server does not speak HTTP/3: nothing answers QUIC on its UDP port, or it
    /// selects no `h3` by ALPN. The reason says which.
    #[error("{0}")]
    NotHttp3(Text),
    /// Anything else: TLS, a reset stream, a connection error, a timeout.
    #[error("{0}")]
    Failed(Text),
}

/// One response, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H3Response {
    /// The final `:status`.
    pub status: u16,
    /// The final head's fields in order, pseudo-headers left out.
    pub headers: Vec<(String, String)>,
    /// The body, DATA frames joined.
    pub body: Vec<u8>,
    /// The server sent GOAWAY: the connection takes no new request.
    pub goaway: bool,
}

/// A blocking HTTP/3 client on one QUIC connection.
pub struct H3Client {
    quic: Quic,
    target: Target,
    timeout: Duration,
    /// The server's unidirectional streams being read.
    unis: Vec<Uni>,
    /// The server's GOAWAY, once it came.
    goaway: Option<u64>,
}

impl H3Client {
    /// Connects to `target` (an `https://` one: QUIC always runs TLS) with `tls`, `timeout`
    /// bounding the wait for QUIC's first answer, the handshake, and each response. A UDP
    /// port still closed (a server that binds it after its TCP port) is waited for until
    /// `timeout`, QUIC sending its Initial again meanwhile.
    pub fn connect(
        target: &Target,
        tls: &TlsOptions,
        timeout: Duration,
    ) -> Result<H3Client, H3Error> {
        let quic = Quic::handshake(target, tls, (timeout, timeout), ClosedPort::WaitsForIt);
        let mut quic = quic.map_err(|e| match e {
            SetupError::NoHttp3 { reason, .. } => H3Error::NotHttp3(reason),
            other => H3Error::Failed(other.text()),
        })?;
        // Our control stream, first of our unidirectional streams: SETTINGS as the
        // worker's (a QPACK table of 0, no blocked streams).
        let mut control = Vec::with_capacity(32);
        frame::put_stream_type(&mut control, frame::stream_type::CONTROL);
        frame::Settings::static_qpack(MAX_FIELD_SECTION).put(&mut control);
        if let Some(id) = quic.conn.streams().open(Dir::Uni) {
            let _ = quic.conn.send_stream(id).write(&control);
        }
        quic.flush();
        Ok(H3Client {
            quic,
            target: target.clone(),
            timeout,
            unis: Vec::new(),
            goaway: None,
        })
    }

    /// Sends one request on a new stream and reads its response whole.
    pub fn send(&mut self, spec: &RequestSpec) -> Result<H3Response, H3Error> {
        let failed = |m: String| H3Error::Failed(m.into());
        if self.goaway.is_some() {
            return Err(failed(
                "the server sent GOAWAY: no new request on this connection".into(),
            ));
        }
        let bytes = super::request(&self.target, spec).map_err(|e| failed(e.to_string()))?;
        let end = Instant::now() + self.timeout;
        let id = loop {
            self.events()?;
            if let Some(id) = self.quic.conn.streams().open(Dir::Bi) {
                break id;
            }
            self.wait(end, "no stream credit from the server")?;
        };
        let out = self.exchange(id, &bytes, end);
        if out.is_err() {
            self.abandon(id);
        }
        out
    }

    /// Writes `bytes` on stream `id` and reads its response whole, until `end`.
    fn exchange(
        &mut self,
        id: StreamId,
        bytes: &[u8],
        end: Instant,
    ) -> Result<H3Response, H3Error> {
        let failed = |m: String| H3Error::Failed(m.into());
        let mut written = 0;
        let mut stream = Vec::new();
        loop {
            if written < bytes.len() {
                let mut s = self.quic.conn.send_stream(id);
                match s.write(&bytes[written..]) {
                    Ok(n) => written += n,
                    Err(quinn_proto::WriteError::Blocked) => {}
                    Err(e) => return Err(failed(format!("cannot send the request: {e}"))),
                }
                if written == bytes.len() {
                    let _ = s.finish();
                }
            }
            if self.read_stream(id, &mut stream)? {
                self.quic.flush();
                let mut r = parse(&stream).map_err(failed)?;
                r.goaway = self.goaway.is_some();
                return Ok(r);
            }
            self.events()?;
            let stream_id = u64::from(quinn_proto::VarInt::from(id));
            if let Some(g) = self.goaway.filter(|g| stream_id >= *g) {
                return Err(failed(format!(
                    "the server sent GOAWAY (stream {g}) before answering stream {stream_id}"
                )));
            }
            self.wait(end, "no complete response")?;
        }
    }

    /// Gives up stream `id` after an error (a write refused, the size cap, a reset, the
    /// timeout): its receive side stopped and its send side reset with
    /// H3_REQUEST_CANCELLED, sent at once, so the server does not go on with it.
    fn abandon(&mut self, id: StreamId) {
        let code = quinn_proto::VarInt::from_u32(h3err::H3_REQUEST_CANCELLED as u32);
        let _ = self.quic.conn.recv_stream(id).stop(code);
        let _ = self.quic.conn.send_stream(id).reset(code);
        self.quic.flush();
    }

    /// Reads what stream `id` has into `into`; true at its FIN.
    fn read_stream(&mut self, id: StreamId, into: &mut Vec<u8>) -> Result<bool, H3Error> {
        let failed = |m: String| Err(H3Error::Failed(m.into()));
        let mut recv = self.quic.conn.recv_stream(id);
        let Ok(mut chunks) = recv.read(true) else {
            return failed("the response stream is gone".into());
        };
        let mut out = Ok(false);
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    into.extend_from_slice(&chunk.bytes);
                    if into.len() > MAX_RESPONSE {
                        out = failed(format!("the response is larger than {MAX_RESPONSE} bytes"));
                        break;
                    }
                }
                Ok(None) => {
                    out = Ok(true);
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(code)) => {
                    out = failed(format!(
                        "the server reset the stream ({})",
                        code_name(code.into_inner())
                    ));
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        out
    }

    /// Takes in what QUIC has: the connection's loss, the server's streams (read and
    /// checked as the worker does: a violation closes the connection with its code).
    fn events(&mut self) -> Result<(), H3Error> {
        let failed = |m: String| Err(H3Error::Failed(m.into()));
        while let Some(ev) = self.quic.conn.poll() {
            match ev {
                Event::ConnectionLost { reason } => {
                    return failed(format!("the QUIC connection was lost: {reason}"))
                }
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = self.quic.conn.streams().accept(Dir::Uni) {
                        self.unis.push(Uni::new(id));
                    }
                }
                _ => {}
            }
        }
        let mut i = 0;
        while i < self.unis.len() {
            let kinds = uni::kinds(&self.unis);
            match self.unis[i].read(&mut self.quic.conn, &mut self.goaway, kinds) {
                Ok(Keep::Yes) => i += 1,
                Ok(Keep::No) => {
                    self.unis.swap_remove(i);
                }
                Err(code) => {
                    self.quic.close(code);
                    return failed(format!(
                        "the server broke HTTP/3 on its own streams: foxbench closed the connection ({})",
                        code_name(code)
                    ));
                }
            }
        }
        self.quic.flush();
        Ok(())
    }

    /// Waits for the next datagram or timer, until `end`; past it, `what` within the
    /// timeout is the error.
    fn wait(&mut self, end: Instant, what: &str) -> Result<(), H3Error> {
        if Instant::now() >= end {
            return Err(H3Error::Failed(
                format!("{what} within {:?}", self.timeout).into(),
            ));
        }
        match self.quic.turn(end) {
            Ok(Turn::Datagram | Turn::Quiet) => Ok(()),
            Err(e) => Err(H3Error::Failed(format!("read failed: {e}").into())),
        }
    }
}

impl Drop for H3Client {
    /// Closes the connection (H3_NO_ERROR), so the server need not wait for its idle
    /// timeout.
    fn drop(&mut self) {
        self.quic.close(h3err::H3_NO_ERROR);
    }
}

/// An HTTP/3 code's name, else its number.
fn code_name(code: u64) -> String {
    h3err::name(code).map_or_else(|| format!("0x{code:x}"), str::to_string)
}

/// A whole response stream, framed: the final HEADERS (1xx ones passed over), DATA
/// joined; trailers and unknown frames passed over.
fn parse(mut b: &[u8]) -> Result<H3Response, String> {
    let mut head: Option<(u16, Vec<(String, String)>)> = None;
    let mut body = Vec::new();
    loop {
        let h = match frame::parse_header(b, MAX_RESPONSE as u64) {
            Ok(Some(h)) => h,
            Ok(None) if b.is_empty() => break,
            Ok(None) => return Err("the response stream ended inside a frame".into()),
            Err(e) => {
                return Err(format!(
                    "the response is malformed ({})",
                    code_name(e.code())
                ))
            }
        };
        let end = h.header_len + h.len as usize;
        if end > b.len() {
            return Err("the response stream ended inside a frame".into());
        }
        let payload = &b[h.header_len..end];
        match h.kind {
            frame::Kind::Headers if head.is_none() => {
                let fields = qpack::decode(payload, MAX_FIELD_SECTION).map_err(|e| {
                    format!(
                        "the response's HEADERS are malformed ({})",
                        code_name(e.code())
                    )
                })?;
                let status = fields
                    .iter()
                    .find(|(n, _)| n == b":status")
                    .and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse::<u16>().ok())
                    .filter(|s| (100..1000).contains(s))
                    .ok_or("the response's HEADERS have no valid :status")?;
                if status >= 200 {
                    let headers = fields
                        .iter()
                        .filter(|(n, _)| !n.starts_with(b":"))
                        .map(|(n, v)| {
                            (
                                String::from_utf8_lossy(n).into_owned(),
                                String::from_utf8_lossy(v).into_owned(),
                            )
                        })
                        .collect();
                    head = Some((status, headers));
                }
            }
            frame::Kind::Headers => {} // trailers
            frame::Kind::Data if head.is_some() => body.extend_from_slice(payload),
            frame::Kind::Data => return Err("DATA came before the response's HEADERS".into()),
            frame::Kind::Unknown(_) => {}
            _ => {
                return Err(format!(
                    "an unexpected frame on the response stream ({:?})",
                    h.kind
                ))
            }
        }
        b = &b[end..];
    }
    let (status, headers) = head.ok_or("the stream ended without a response")?;
    Ok(H3Response {
        status,
        headers,
        body,
        goaway: false,
    })
}

#[cfg(test)]
mod tests;
