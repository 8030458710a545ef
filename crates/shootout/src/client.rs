//! The blocking HTTP/1.1 client verification and readiness use: one connection, plain or
//! TLS, whole responses read with a deadline. Correctness, not speed, matters here.
//! [`Session`] speaks HTTP/2 or HTTP/3 instead when the endpoint asks for it, through the
//! load engine's own blocking clients: [`load::H2Client`] (h2 by ALPN over TLS, h2c with
//! prior knowledge) and [`load::H3Client`] (h3 over QUIC), one stream per request.
//!
//! A TLS endpoint speaks TLS through the load engine's own blocking client
//! ([`load::connect_blocking`]), with the scenario's certificate check; its errors name the
//! suite keys that fix them ([`crate::wording`]). Responses are framed by the load engine's own
//! [`load::parse_head`] and [`load::Framer`], so a target passes verification exactly when
//! the engine can read it: where a response ends, whether it is valid, and whether the
//! connection may carry another request.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use load::{Framer, Framing, Head, ParseError, Step};

use crate::suite::Multiplexed;
use crate::wording::SuiteKeys;

/// One parsed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body as sent: a chunked body keeps its chunk framing.
    pub body: Vec<u8>,
    /// The connection cannot carry another request, as the load engine decides it
    /// (Connection: close, HTTP/1.0 without keep-alive, a body read to the close, ...).
    pub close: bool,
}

impl Response {
    /// The first header of that name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

const MAX_RESPONSE: usize = 1 << 20;

/// Where a target listens and, for a TLS scenario, how to speak TLS to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The target's address.
    pub addr: SocketAddr,
    /// The TLS settings; `None` for plain HTTP.
    pub tls: Option<load::TlsOptions>,
    /// Speak HTTP/2 (h2 by ALPN over TLS, h2c with prior knowledge over plain TCP) or
    /// HTTP/3 (h3 over QUIC, on the same port number over UDP); `None`: HTTP/1.1.
    pub version: Option<Multiplexed>,
    /// The target's name, for messages.
    pub name: String,
}

impl Endpoint {
    /// Plain HTTP/1.1 at `addr`.
    pub fn plain(addr: SocketAddr) -> Endpoint {
        Endpoint {
            addr,
            tls: None,
            version: None,
            name: addr.to_string(),
        }
    }

    /// How the multiplexed version is reached here, for messages.
    fn mode(&self) -> &'static str {
        match (self.version, self.tls.is_some()) {
            (Some(Multiplexed::Http3), _) => "h3 over QUIC",
            (_, true) => "h2 by ALPN over TLS",
            (_, false) => "h2c prior knowledge",
        }
    }
}

/// A verification connection, speaking what the endpoint says: HTTP/1.1 through
/// [`Client`], HTTP/2 through the load engine's own blocking client ([`load::H2Client`]).
pub enum Session {
    /// HTTP/1.1.
    Http1(Client),
    /// HTTP/2 (h2 or h2c).
    Http2 {
        /// The connection.
        client: Box<load::H2Client>,
        /// The target's name and how it was reached, for messages.
        at: Box<Endpoint>,
    },
    /// HTTP/3 (h3).
    Http3 {
        /// The connection.
        client: Box<load::H3Client>,
        /// The target's name and how it was reached, for messages.
        at: Box<Endpoint>,
    },
}

impl Session {
    /// Connects to `at` as it says; the error is one line. A target that does not speak
    /// HTTP/2 or HTTP/3 when asked to gets `target NAME does not speak HTTP/2 (MODE):
    /// REASON`.
    pub fn open(at: &Endpoint, timeout: Duration) -> Result<Session, String> {
        Session::connect(at, timeout).map_err(|u| u.line)
    }

    /// [`Session::open`], telling a target that does not speak HTTP/3 at all
    /// ([`Unreached::no_http3`]) from one that failed otherwise.
    pub fn connect(at: &Endpoint, timeout: Duration) -> Result<Session, Unreached> {
        let failed = |line| Unreached {
            line,
            no_http3: false,
        };
        let Some(version) = at.version else {
            return Client::open(at, timeout)
                .map(Session::Http1)
                .map_err(failed);
        };
        let scheme = if at.tls.is_some() { "https" } else { "http" };
        let target = load::Target::parse(&format!("{scheme}://{}/", at.addr))
            .map_err(|e| failed(e.to_string()))?;
        let tls = at.tls.clone().unwrap_or_default();
        let boxed = Box::new(at.clone());
        match version {
            Multiplexed::Http2 => load::H2Client::connect(&target, &tls, timeout)
                .map(|c| Session::Http2 {
                    client: Box::new(c),
                    at: boxed,
                })
                .map_err(|e| failed(h2_error(at, e))),
            Multiplexed::Http3 => load::H3Client::connect(&target, &tls, timeout)
                .map(|c| Session::Http3 {
                    client: Box::new(c),
                    at: boxed,
                })
                .map_err(|e| Unreached {
                    no_http3: matches!(e, load::H3Error::NotHttp3(_)),
                    line: h3_error(at, e),
                }),
        }
    }

    /// Sends one request and reads its response whole. Over HTTP/1.1, `close` adds
    /// `Connection: close`; over HTTP/2 and HTTP/3 a stream ends with its response, and
    /// `close` in the response means the server sent GOAWAY.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        close: bool,
    ) -> Result<Response, String> {
        let spec = || load::RequestSpec {
            method: method.into(),
            path: path.into(),
            headers: std::iter::once(("User-Agent".to_string(), "foxbench-verify".into()))
                .chain(headers.iter().cloned())
                .collect(),
            ..load::RequestSpec::default()
        };
        match self {
            Session::Http1(c) => c.send(method, path, headers, close),
            Session::Http2 { client, at } => {
                let r = client.send(&spec()).map_err(|e| h2_error(at, e))?;
                Ok(Response {
                    status: r.status,
                    headers: r.headers,
                    body: r.body,
                    close: r.goaway,
                })
            }
            Session::Http3 { client, at } => {
                let r = client.send(&spec()).map_err(|e| h3_error(at, e))?;
                Ok(Response {
                    status: r.status,
                    headers: r.headers,
                    body: r.body,
                    close: r.goaway,
                })
            }
        }
    }
}

/// Why a [`Session`] did not open.
#[derive(Debug)]
pub struct Unreached {
    /// What went wrong, in one line.
    pub line: String,
    /// True when the target does not speak HTTP/3 at all (nothing answered h3 over QUIC).
    pub no_http3: bool,
}

/// An HTTP/2 client's error as verification words it: a target that does not speak
/// HTTP/2 is named, with how it was asked.
fn h2_error(at: &Endpoint, e: load::H2Error) -> String {
    match e {
        load::H2Error::NotHttp2(reason) => format!(
            "target {} does not speak HTTP/2 ({}): {}",
            at.name,
            at.mode(),
            reason.worded(&SuiteKeys)
        ),
        load::H2Error::Failed(m) => m.worded(&SuiteKeys),
    }
}

/// An HTTP/3 client's error as verification words it: `target NAME does not speak HTTP/3
/// (MODE): REASON`, as HTTP/2's, for a target that does not, which the runner then skips
/// the HTTP/3 cells of.
fn h3_error(at: &Endpoint, e: load::H3Error) -> String {
    match e {
        load::H3Error::NotHttp3(reason) => format!(
            "target {} does not speak HTTP/3 ({}): {}",
            at.name,
            at.mode(),
            reason.worded(&SuiteKeys)
        ),
        load::H3Error::Failed(m) => m.worded(&SuiteKeys),
    }
}

/// A connection that sends requests and reads whole responses.
pub struct Client {
    stream: load::Connection,
    buf: Vec<u8>,
    deadline: Duration,
}

impl Client {
    /// Connects over plain TCP with a timeout that also bounds each response.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> std::io::Result<Client> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        Ok(Client::over(stream.into(), timeout))
    }

    /// Connects to `at`, with a TLS handshake for a TLS scenario (the load engine's
    /// [`load::connect_blocking`]), with a timeout that also bounds each response. The
    /// error is one line; one about the certificate names the scenario keys that fix it.
    pub fn open(at: &Endpoint, timeout: Duration) -> Result<Client, String> {
        let Some(tls) = &at.tls else {
            return Client::connect(at.addr, timeout).map_err(|e| format!("cannot connect: {e}"));
        };
        let target =
            load::Target::parse(&format!("https://{}/", at.addr)).map_err(|e| e.to_string())?;
        load::connect_blocking(&target, tls, timeout)
            .map(|c| Client::over(c, timeout))
            .map_err(|e| e.text().worded(&SuiteKeys))
    }

    fn over(stream: load::Connection, timeout: Duration) -> Client {
        let _ = stream.tcp().set_nodelay(true);
        Client {
            stream,
            buf: Vec::new(),
            deadline: timeout,
        }
    }

    /// Sends one request; `close` adds `Connection: close`.
    pub fn request(&mut self, method: &str, path: &str, close: bool) -> Result<Response, String> {
        self.send(method, path, &[], close)
    }

    /// Sends one request with extra headers; `close` adds `Connection: close`.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(String, String)],
        close: bool,
    ) -> Result<Response, String> {
        let extra: String = headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\r\n"))
            .collect();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: foxbench-verify\r\n{extra}{}\r\n",
            if close { "Connection: close\r\n" } else { "" }
        );
        self.stream
            .write_all(req.as_bytes())
            .map_err(|e| format!("cannot send the request: {e}"))?;
        self.read_response(method == "HEAD")
    }

    fn fill(&mut self, end: Instant) -> Result<usize, String> {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("no complete response within {:?}", self.deadline));
        }
        self.stream
            .tcp()
            .set_read_timeout(Some(left))
            .map_err(|e| e.to_string())?;
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            // A TLS peer that closes without close_notify: the end of the stream all the same.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                if self.buf.len() > MAX_RESPONSE {
                    return Err("response larger than 1 MiB".into());
                }
                Ok(n)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(format!("no complete response within {:?}", self.deadline))
            }
            Err(e) => Err(format!("read failed: {e}")),
        }
    }

    /// Reads one response, framed as the load engine frames it.
    pub fn read_response(&mut self, head_request: bool) -> Result<Response, String> {
        let end = Instant::now() + self.deadline;
        let head = self.final_head(head_request, end)?;
        if let Framing::Length(n) = head.framing {
            if n > MAX_RESPONSE as u64 {
                return Err(format!("Content-Length {n} is over 1 MiB"));
            }
        }
        let headers = fields(&self.buf[..head.len]);
        // The framer starts at the final head (interim ones are gone) and runs to the end
        // of this response; anything after it stays in `buf` for the next one.
        let mut framer = Framer::new();
        let mut framed = 0;
        let (status, close, len) = loop {
            match framer.next(&self.buf[framed..], head_request) {
                Ok(Step::Complete {
                    status,
                    close,
                    used,
                }) => break (status, close, framed + used),
                Ok(Step::Body) => framed = self.buf.len(),
                Ok(Step::PartialHead { used }) => framed += used,
                Err(e) => return Err(explain(e, &self.buf)),
            }
            if self.fill(end)? == 0 {
                match framer.eof() {
                    Some(status) => break (status, true, self.buf.len()),
                    None => {
                        return Err(format!(
                            "connection closed inside the body, after {} bytes",
                            self.buf.len() - head.len
                        ))
                    }
                }
            }
        };
        let body = self.buf[head.len..len].to_vec();
        self.buf.drain(..len);
        Ok(Response {
            status,
            headers,
            body,
            close,
        })
    }

    /// Reads up to the final response's head, dropping interim (1xx) heads before it.
    fn final_head(&mut self, head_request: bool, end: Instant) -> Result<Head, String> {
        loop {
            match load::parse_head(&self.buf, head_request) {
                Ok(Some(h)) if h.interim => {
                    self.buf.drain(..h.len);
                }
                Ok(Some(h)) => return Ok(h),
                Ok(None) => {
                    if self.fill(end)? == 0 {
                        return Err(if self.buf.is_empty() {
                            "connection closed without a response".into()
                        } else {
                            "connection closed inside the response head".into()
                        });
                    }
                }
                Err(e) => return Err(explain(e, &self.buf)),
            }
        }
    }
}

/// The header fields of a head that [`load::parse_head`] accepted, names as sent.
fn fields(head: &[u8]) -> Vec<(String, String)> {
    head.split(|&b| b == b'\n')
        .skip(1)
        .filter_map(|line| {
            let colon = line.iter().position(|&b| b == b':')?;
            Some((
                String::from_utf8_lossy(&line[..colon]).into_owned(),
                String::from_utf8_lossy(&line[colon + 1..])
                    .trim()
                    .to_string(),
            ))
        })
        .collect()
}

/// What a framing error means for the target, and what to fix.
fn explain(e: ParseError, buf: &[u8]) -> String {
    match e {
        ParseError::Head => {
            let shown: String = String::from_utf8_lossy(&buf[..buf.len().min(40)])
                .escape_debug()
                .collect();
            format!("malformed response head: {shown:?} is not an HTTP/1.x status line and headers")
        }
        ParseError::HeadTooLarge => format!(
            "response head over {} KiB without its blank line: is this an HTTP/1.x server?",
            load::MAX_HEAD / 1024
        ),
        ParseError::ContentLength => {
            "invalid Content-Length (not a decimal number, or sent twice with different values): send one length".into()
        }
        ParseError::Chunk => {
            "malformed chunked body (a chunk size is not hexadecimal, or a chunk lacks its CRLF)".into()
        }
        ParseError::Upgrade => {
            "the server switched protocols (101): a load test needs plain HTTP/1.1 answers".into()
        }
    }
}
