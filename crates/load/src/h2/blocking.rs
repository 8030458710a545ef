//! One blocking HTTP/2 connection for a few requests outside a run: the shootout's
//! verification speaks HTTP/2 through it when a scenario's levels do.
//!
//! It drives the engine's own [`Conn`] (frames, HPACK, windows, SETTINGS and PING answers)
//! with a keeping decoder ([`Conn::keeping`]), so a target passes verification exactly
//! when the engine can read it: there is no second HTTP/2 parser. Requests go one at a
//! time; correctness, not speed, matters here.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use super::conn::{Conn, Event, H2Options};
use super::encoder::Fields;
use super::frame::{code_slot, HEADER_LEN};
use super::request::RequestShape;
use super::{H2Counts, CODE_NAMES};
use crate::setup::{connect_h2, preface_answer, Connection};
use crate::template::Rng;
use crate::{RequestSpec, SetupError, Target, Text, TlsOptions};

/// Why a request over HTTP/2 did not get a response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum H2Error {
    /// The server does not speak HTTP/2: no `h2` by ALPN over TLS, or no SETTINGS in
    /// answer to the h2c preface. The reason says what it did instead.
    #[error("{0}")]
    NotHttp2(Text),
    /// Anything else: connect, TLS, a reset stream, a connection error, a timeout.
    #[error("{0}")]
    Failed(Text),
}

/// One response, whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H2Response {
    /// The final `:status`.
    pub status: u16,
    /// The final head's fields in order, pseudo-headers left out.
    pub headers: Vec<(String, String)>,
    /// The body, DATA frames joined, padding removed.
    pub body: Vec<u8>,
    /// The server sent GOAWAY: the connection takes no new stream.
    pub goaway: bool,
}

/// A blocking HTTP/2 client on one connection.
pub struct H2Client {
    conn: Connection,
    h2: Conn,
    target: Target,
    timeout: Duration,
    out: Vec<u8>,
    counts: H2Counts,
    rng: Rng,
    scratch: Vec<u8>,
    /// The request fields the connection may index, as the engine's run keeps them.
    fields: Fields,
    /// The server's first frame header has been checked to be SETTINGS.
    preface_checked: bool,
    /// Bytes read before that check.
    first: Vec<u8>,
    goaway: bool,
}

impl H2Client {
    /// Connects to `target` (h2 by ALPN for https, h2c with prior knowledge for http),
    /// with `timeout` bounding the connect, the handshake and each response.
    pub fn connect(
        target: &Target,
        tls: &TlsOptions,
        timeout: Duration,
    ) -> Result<H2Client, H2Error> {
        let conn = connect_h2(target, tls, timeout).map_err(|e| match e {
            SetupError::NoHttp2 { reason, .. } => H2Error::NotHttp2(reason),
            other => H2Error::Failed(other.text()),
        })?;
        let _ = conn.tcp().set_nodelay(true);
        Ok(H2Client {
            conn,
            h2: Conn::keeping(H2Options::default()),
            target: target.clone(),
            timeout,
            out: Vec::new(),
            counts: H2Counts::default(),
            rng: Rng::new(0, 0),
            scratch: Vec::new(),
            fields: Fields::default(),
            preface_checked: false,
            first: Vec::new(),
            goaway: false,
        })
    }

    /// Sends one request on a new stream and reads its response whole.
    pub fn send(&mut self, spec: &RequestSpec) -> Result<H2Response, H2Error> {
        let failed = |m: String| H2Error::Failed(m.into());
        if self.goaway {
            return Err(failed(
                "the server sent GOAWAY: no new stream on this connection".into(),
            ));
        }
        let shape = RequestShape::new(spec, &self.target, &mut self.fields, false)
            .map_err(|e| failed(e.to_string()))?;
        let shapes = [shape];
        let id = self.h2.open(
            0,
            &shapes[0],
            &self.fields,
            &mut self.rng,
            &mut self.scratch,
            &mut self.out,
            &mut self.counts,
        );
        self.flush()?;
        let end = Instant::now() + self.timeout;
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(failed(format!(
                    "no complete response within {:?}",
                    self.timeout
                )));
            }
            let _ = self.conn.tcp().set_read_timeout(Some(left));
            let n = match self.conn.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => 0,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if !self.preface_checked {
                        return Err(H2Error::NotHttp2(
                            preface_answer(Err(e), self.timeout).unwrap_err(),
                        ));
                    }
                    continue;
                }
                Err(e) => return Err(failed(format!("read failed: {e}"))),
            };
            let mut data = &buf[..n];
            if !self.preface_checked {
                if n == 0 && self.first.is_empty() {
                    return Err(H2Error::NotHttp2(
                        "it closed the connection in answer to the connection preface: is it an HTTP/2 server?".into(),
                    ));
                }
                self.first.extend_from_slice(data);
                if n > 0 && self.first.len() < HEADER_LEN {
                    continue;
                }
                // Judged on the first frame header's worth, as --http2's preflight does.
                let head = &self.first[..self.first.len().min(HEADER_LEN)];
                preface_answer(Ok(head), self.timeout).map_err(H2Error::NotHttp2)?;
                self.preface_checked = true;
                let first = std::mem::take(&mut self.first);
                let done = self.feed(&first, &shapes, id)?;
                self.flush()?;
                if let Some(r) = done {
                    return Ok(r);
                }
                data = &[];
            }
            if n == 0 {
                return Err(failed(
                    "the server closed the connection before the response".into(),
                ));
            }
            let done = self.feed(data, &shapes, id)?;
            self.flush()?;
            if let Some(r) = done {
                return Ok(r);
            }
        }
    }

    /// Feeds what was read; the response of stream `id` when it completed.
    fn feed(
        &mut self,
        data: &[u8],
        shapes: &[RequestShape],
        id: u32,
    ) -> Result<Option<H2Response>, H2Error> {
        let mut mine = None;
        let mut goaway_below = None;
        self.h2
            .feed(
                data,
                shapes,
                &mut self.out,
                &mut self.counts,
                &mut |e| match e {
                    Event::GoAway { last_stream } => goaway_below = Some(last_stream),
                    e if stream_of(e) == Some(id) => mine = Some(e),
                    _ => {}
                },
            )
            .map_err(|e| {
                H2Error::Failed(
                    format!(
                        "HTTP/2 connection error {}",
                        CODE_NAMES[code_slot(e.code())]
                    )
                    .into(),
                )
            })?;
        if let Some(last) = goaway_below {
            self.goaway = true;
            if last < id && mine.is_none() {
                return Err(H2Error::Failed(
                    format!(
                        "the server sent GOAWAY (last stream {last}) before answering stream {id}"
                    )
                    .into(),
                ));
            }
        }
        match mine {
            None => Ok(None),
            Some(Event::Response { status, .. }) => {
                let (fields, body) = self.h2.take_response(id).unwrap_or_default();
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
                Ok(Some(H2Response {
                    status,
                    headers,
                    body,
                    goaway: self.goaway,
                }))
            }
            Some(Event::Reset { code, .. }) => Err(H2Error::Failed(
                format!(
                    "the server reset the stream ({})",
                    CODE_NAMES[code_slot(code)]
                )
                .into(),
            )),
            Some(Event::Refused { .. }) => Err(H2Error::Failed(
                "the server refused the stream (REFUSED_STREAM)".into(),
            )),
            Some(Event::Malformed { what, .. }) => Err(H2Error::Failed(
                format!("the response was malformed: {}", what.words()).into(),
            )),
            Some(Event::Broken { code, .. }) => Err(H2Error::Failed(
                format!(
                    "the server broke flow control on the stream, which foxbench reset ({})",
                    CODE_NAMES[code_slot(code)]
                )
                .into(),
            )),
            Some(Event::GoAway { .. }) => Ok(None),
        }
    }

    fn flush(&mut self) -> Result<(), H2Error> {
        if self.out.is_empty() {
            return Ok(());
        }
        let _ = self.conn.tcp().set_write_timeout(Some(self.timeout));
        let r = self
            .conn
            .write_all(&self.out)
            .and_then(|()| self.conn.flush());
        self.out.clear();
        r.map_err(|e| H2Error::Failed(format!("cannot send: {e}").into()))
    }
}

/// The stream an event is about; `None` for a GOAWAY.
fn stream_of(e: Event) -> Option<u32> {
    match e {
        Event::Response { stream, .. }
        | Event::Reset { stream, .. }
        | Event::Refused { stream }
        | Event::Broken { stream, .. }
        | Event::Malformed { stream, .. } => Some(stream),
        Event::GoAway { .. } => None,
    }
}
