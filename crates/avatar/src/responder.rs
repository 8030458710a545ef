//! Answers requests: routing, pre-built response heads, pipelined batches, body draining.
//!
//! This is the sans-I/O heart of the server. A worker hands it the bytes it has read for one
//! connection and an output buffer; it appends one response per complete request, in order,
//! and says how many bytes it used and what the connection should do next. The fuzz target
//! and the split-at-every-byte tests drive it directly. HTTP/2 requests, once checked and
//! turned into a [`Request`], are answered by [`Responder::answer_h2`]: the same routing,
//! heads and counters.

use std::io::Write;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::Arc;

use crate::date::{format_http_date, DATE_LEN};
use crate::etag;
use crate::metrics::{Metrics, ParseError, Route, Status};
use crate::request::{self, Method, Parsed, Request};
use crate::rng::Rng;
use crate::site::Site;
use crate::svg;

/// Per-connection protocol state that outlives one read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ConnState {
    /// Bytes of a request body still to be read and thrown away.
    pub body_remaining: u64,
    /// A head with a body completed since the caller last cleared this; the caller starts the
    /// body's deadline then, so a trickled body cannot extend it.
    pub body_started: bool,
    /// Bytes of the held partial head already parsed (see [`request::parse_resumed`]).
    pub head_scanned: usize,
}

/// What the connection should do after [`Responder::respond`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Every complete request was answered; the unconsumed bytes are the start of a head.
    NeedInput,
    /// The output buffer reached its limit: write it, then call again with the rest.
    OutputFull,
    /// Send the output, then close the connection.
    Close,
    /// Send the output, half-close, and discard input until the peer closes (after an error,
    /// or when unread bytes would make the close a reset).
    Linger,
}

/// The result of [`Responder::respond`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Input bytes used; the caller keeps the rest.
    pub consumed: usize,
    /// What to do next.
    pub next: Next,
}

/// Pre-built response heads, each starting with the status line and the `Date`.
#[derive(Debug, Clone, Copy)]
enum Head {
    Found,
    SvgOk,
    NotModified,
    ImageOk,
    Healthz,
    Metrics,
    BadRequest,
    NotFound,
    MethodNotAllowed,
    PayloadTooLarge,
    UriTooLong,
    HeaderFieldsTooLarge,
}

const HEAD_COUNT: usize = 12;

const IMMUTABLE: &str = "Cache-Control: public, max-age=31536000, immutable\r\n";
const TEXT: &str = "Content-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\n";

fn error_body(status: Status) -> &'static str {
    match status {
        Status::BadRequest => "bad request\n",
        Status::NotFound => "not found\n",
        Status::MethodNotAllowed => "method not allowed: use GET or HEAD\n",
        Status::PayloadTooLarge => "request body too large\n",
        Status::UriTooLong => "request target too long\n",
        Status::HeaderFieldsTooLarge => "request head too large\n",
        _ => "",
    }
}

/// One worker's responder: its own PRNG, its own copy of the heads with the current `Date`.
#[derive(Debug)]
pub struct Responder {
    site: Arc<Site>,
    metrics: Arc<Metrics>,
    worker: usize,
    rng: Rng,
    heads: Vec<u8>,
    spans: [Range<usize>; HEAD_COUNT],
    date: [u8; DATE_LEN],
    closing: bool,
    access_log: Option<Vec<u8>>,
    scratch: Vec<u8>,
}

impl Responder {
    /// Creates worker `worker`'s responder; `unix_secs` sets the first `Date`.
    pub fn new(
        site: Arc<Site>,
        metrics: Arc<Metrics>,
        worker: usize,
        rng: Rng,
        unix_secs: u64,
    ) -> Self {
        let date = format_http_date(unix_secs);
        let mut heads = Vec::with_capacity(2048);
        let mut spans: [Range<usize>; HEAD_COUNT] = Default::default();
        let svg_len = site.svg.body_len();
        let mut add = |head: Head, status: Status, fields: &str| {
            let start = heads.len();
            heads.extend_from_slice(status.line().as_bytes());
            heads.extend_from_slice(b"\r\nDate: ");
            heads.extend_from_slice(&date);
            heads.extend_from_slice(b"\r\nServer: avatar\r\n");
            heads.extend_from_slice(fields.as_bytes());
            spans[head as usize] = start..heads.len();
        };
        add(
            Head::Found,
            Status::Found,
            "Cache-Control: no-store\r\nContent-Length: 0\r\nLocation: ",
        );
        add(
            Head::SvgOk,
            Status::Ok,
            &format!(
                "Content-Type: image/svg+xml; charset=utf-8\r\n{IMMUTABLE}X-Content-Type-Options: nosniff\r\nContent-Length: {svg_len}\r\nETag: "
            ),
        );
        add(
            Head::NotModified,
            Status::NotModified,
            &format!("{IMMUTABLE}ETag: "),
        );
        add(
            Head::ImageOk,
            Status::Ok,
            &format!("{IMMUTABLE}X-Content-Type-Options: nosniff\r\n"),
        );
        add(
            Head::Healthz,
            Status::Ok,
            &format!("{TEXT}Content-Length: 3\r\n"),
        );
        add(
            Head::Metrics,
            Status::Ok,
            "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: ",
        );
        for (head, status) in [
            (Head::BadRequest, Status::BadRequest),
            (Head::NotFound, Status::NotFound),
            (Head::MethodNotAllowed, Status::MethodNotAllowed),
            (Head::PayloadTooLarge, Status::PayloadTooLarge),
            (Head::UriTooLong, Status::UriTooLong),
            (Head::HeaderFieldsTooLarge, Status::HeaderFieldsTooLarge),
        ] {
            let allow = if status == Status::MethodNotAllowed {
                "Allow: GET, HEAD\r\n"
            } else {
                ""
            };
            let len = error_body(status).len();
            add(
                head,
                status,
                &format!("{TEXT}{allow}Content-Length: {len}\r\n"),
            );
        }
        Responder {
            site,
            metrics,
            worker,
            rng,
            heads,
            spans,
            date,
            closing: false,
            access_log: None,
            scratch: Vec::new(),
        }
    }

    /// Sets the `Date` in every pre-built head; the worker calls this once per second.
    pub fn set_date(&mut self, unix_secs: u64) {
        let date = format_http_date(unix_secs);
        if date == self.date {
            return;
        }
        self.date = date;
        // Every head is "HTTP/1.1 NNN Reason\r\nDate: <date>", so the date follows the first CRLF.
        for span in &self.spans {
            let head = &mut self.heads[span.clone()];
            let at = head.iter().position(|&b| b == b'\n').expect("status line") + 7;
            head[at..at + DATE_LEN].copy_from_slice(&date);
        }
    }

    /// From now on every response says `Connection: close` (graceful shutdown).
    pub fn set_closing(&mut self) {
        self.closing = true;
    }

    /// Turns the access log on; lines collect until [`Responder::take_access_log`].
    pub fn enable_access_log(&mut self) {
        self.access_log = Some(Vec::with_capacity(4096));
    }

    /// The access log lines collected since the last call, if logging is on.
    pub fn access_log(&mut self) -> Option<&mut Vec<u8>> {
        self.access_log.as_mut()
    }

    /// Answers the complete requests at the start of `input`, appending to `out`.
    ///
    /// Stops early once `out` holds `out_limit` bytes or more, or after a response that
    /// closes the connection. `peer` is only used for the access log.
    pub fn respond(
        &mut self,
        conn: &mut ConnState,
        input: &[u8],
        out: &mut Vec<u8>,
        out_limit: usize,
        peer: Option<SocketAddr>,
    ) -> Outcome {
        let mut pos = 0;
        loop {
            if conn.body_remaining > 0 {
                let n = conn.body_remaining.min((input.len() - pos) as u64);
                conn.body_remaining -= n;
                pos += n as usize;
                if conn.body_remaining > 0 {
                    return Outcome {
                        consumed: pos,
                        next: Next::NeedInput,
                    };
                }
            }
            if pos == input.len() {
                return Outcome {
                    consumed: pos,
                    next: Next::NeedInput,
                };
            }
            if out.len() >= out_limit {
                return Outcome {
                    consumed: pos,
                    next: Next::OutputFull,
                };
            }
            let head = &input[pos..];
            let parsed = request::parse_resumed(head, conn.head_scanned, &self.site.limits);
            conn.head_scanned = if matches!(parsed, Parsed::Partial) {
                head.len()
            } else {
                0
            };
            match parsed {
                Parsed::Partial => {
                    return Outcome {
                        consumed: pos,
                        next: Next::NeedInput,
                    }
                }
                Parsed::Error(kind) => {
                    self.metrics.worker(self.worker).parse_error(kind);
                    let status = kind.status();
                    self.error(status, true, false, false, out);
                    self.log(peer, None, status, error_body(status).len());
                    return Outcome {
                        consumed: input.len(),
                        next: Next::Linger,
                    };
                }
                Parsed::Complete(req) => {
                    pos += req.head_len;
                    if self.answer(conn, &req, out, peer) {
                        // Unread bytes (a body, pipelined requests) would turn our close into
                        // a reset that can destroy the response: linger for them instead.
                        let unread =
                            pos < input.len() || conn.body_remaining > 0 || req.transfer_encoding;
                        conn.body_remaining = 0;
                        let next = if unread { Next::Linger } else { Next::Close };
                        return Outcome {
                            consumed: input.len(),
                            next,
                        };
                    }
                }
            }
        }
    }

    /// Answers one HTTP/2 request, or refuses it with `Err`'s status, exactly as HTTP/1
    /// would: `out` gets an HTTP/1.1 head and the body, which the HTTP/2 layer re-encodes
    /// (see [`crate::h2::response`]).
    pub fn answer_h2(
        &mut self,
        req: Result<&Request<'_>, ParseError>,
        out: &mut Vec<u8>,
        peer: Option<SocketAddr>,
    ) {
        match req {
            Ok(req) => {
                // HTTP/2 frames bodies itself; the HTTP/1 drain count is not used.
                let mut state = ConnState::default();
                self.answer(&mut state, req, out, peer);
            }
            Err(kind) => {
                self.metrics.worker(self.worker).parse_error(kind);
                let status = kind.status();
                self.error(status, false, false, false, out);
                self.log(peer, None, status, error_body(status).len());
            }
        }
    }

    /// Answers one request; returns whether the connection must close afterwards.
    fn answer(
        &mut self,
        conn: &mut ConnState,
        req: &Request<'_>,
        out: &mut Vec<u8>,
        peer: Option<SocketAddr>,
    ) -> bool {
        // With Transfer-Encoding we cannot frame the body, so answer and close.
        let close = !req.keep_alive || req.transfer_encoding || self.closing;
        let keep_alive_10 = !close && req.minor_version == 0;
        if req.content_length > self.site.limits.max_body_bytes {
            self.metrics
                .worker(self.worker)
                .parse_error(ParseError::BodyTooLarge);
            let head_only = req.method == Method::Head;
            self.error(Status::PayloadTooLarge, true, false, head_only, out);
            self.log(peer, Some(req), Status::PayloadTooLarge, 0);
            conn.body_remaining = req.content_length;
            return true;
        }
        conn.body_remaining = req.content_length;
        conn.body_started |= req.content_length > 0;
        let head_only = req.method == Method::Head;
        let (route, status, body_len) = if req.method == Method::Other {
            self.error(Status::MethodNotAllowed, close, keep_alive_10, false, out);
            (
                Route::Rejected,
                Status::MethodNotAllowed,
                error_body(Status::MethodNotAllowed).len(),
            )
        } else {
            self.route(req, close, keep_alive_10, head_only, out)
        };
        self.metrics.worker(self.worker).request(route, status);
        self.log(
            peer,
            Some(req),
            status,
            if head_only { 0 } else { body_len },
        );
        close
    }

    /// Routes a GET or HEAD; returns the route, the status and the body length.
    fn route(
        &mut self,
        req: &Request<'_>,
        close: bool,
        keep_alive_10: bool,
        head_only: bool,
        out: &mut Vec<u8>,
    ) -> (Route, Status, usize) {
        let path = req.path;
        // /images/ first: its files may end in .svg.
        if let Some(images) = &self.site.images {
            if let Some(name) = path.strip_prefix(b"/images/") {
                let Some(file) = images.get(name) else {
                    return self.not_found(close, keep_alive_10, head_only, out);
                };
                let fresh = req
                    .if_none_match
                    .is_some_and(|f| etag::if_none_match(f, &file.etag));
                if fresh {
                    self.put_head(Head::NotModified, out);
                    out.extend_from_slice(&file.etag);
                    out.extend_from_slice(b"\r\n");
                    put_tail(close, keep_alive_10, out);
                    return (Route::Image, Status::NotModified, 0);
                }
                self.put_head(Head::ImageOk, out);
                out.extend_from_slice(&file.fields);
                put_tail(close, keep_alive_10, out);
                if !head_only {
                    out.extend_from_slice(&file.body);
                }
                return (Route::Image, Status::Ok, file.body.len());
            }
        }
        if let Some(color) = svg::color_from_path(path) {
            let tag = self.site.svg.etag(&color);
            let fresh = req
                .if_none_match
                .is_some_and(|f| etag::if_none_match(f, &tag));
            let head = if fresh {
                Head::NotModified
            } else {
                Head::SvgOk
            };
            self.put_head(head, out);
            out.extend_from_slice(&tag);
            out.extend_from_slice(b"\r\n");
            put_tail(close, keep_alive_10, out);
            if fresh {
                return (Route::Svg, Status::NotModified, 0);
            }
            if !head_only {
                self.site.svg.write_body(&color, out);
            }
            return (Route::Svg, Status::Ok, self.site.svg.body_len());
        }
        if path.ends_with(b".svg") {
            if path == b"/random.svg" {
                let color = svg::color_from_bits(self.rng.next_u64());
                self.put_head(Head::Found, out);
                out.push(b'/');
                out.extend_from_slice(&color);
                out.extend_from_slice(b".svg\r\n");
                put_tail(close, keep_alive_10, out);
                return (Route::RandomSvg, Status::Found, 0);
            }
            return self.not_found(close, keep_alive_10, head_only, out);
        }
        match path {
            b"/healthz" => {
                self.put_head(Head::Healthz, out);
                put_tail(close, keep_alive_10, out);
                if !head_only {
                    out.extend_from_slice(b"ok\n");
                }
                (Route::Healthz, Status::Ok, 3)
            }
            b"/metrics" => {
                let mut body = std::mem::take(&mut self.scratch);
                body.clear();
                self.metrics.render(&mut body);
                self.put_head(Head::Metrics, out);
                let _ = write!(out, "{}\r\n", body.len());
                put_tail(close, keep_alive_10, out);
                if !head_only {
                    out.extend_from_slice(&body);
                }
                let len = body.len();
                self.scratch = body;
                (Route::Metrics, Status::Ok, len)
            }
            _ => {
                // The hot path: a 302 to a random image, three copies into `out`.
                let n = self.site.locations.len() as u64;
                let location = &self.site.locations[self.rng.below(n) as usize];
                out.extend_from_slice(&self.heads[self.spans[Head::Found as usize].clone()]);
                out.extend_from_slice(location);
                out.extend_from_slice(b"\r\n");
                put_tail(close, keep_alive_10, out);
                (Route::Redirect, Status::Found, 0)
            }
        }
    }

    fn not_found(
        &mut self,
        close: bool,
        keep_alive_10: bool,
        head_only: bool,
        out: &mut Vec<u8>,
    ) -> (Route, Status, usize) {
        self.put_head(Head::NotFound, out);
        put_tail(close, keep_alive_10, out);
        let body = error_body(Status::NotFound);
        if !head_only {
            out.extend_from_slice(body.as_bytes());
        }
        (Route::NotFound, Status::NotFound, body.len())
    }

    /// Writes an error response, with its body unless the request was a HEAD.
    fn error(
        &mut self,
        status: Status,
        close: bool,
        keep_alive_10: bool,
        head_only: bool,
        out: &mut Vec<u8>,
    ) {
        let head = match status {
            Status::BadRequest => Head::BadRequest,
            Status::MethodNotAllowed => Head::MethodNotAllowed,
            Status::PayloadTooLarge => Head::PayloadTooLarge,
            Status::UriTooLong => Head::UriTooLong,
            Status::HeaderFieldsTooLarge => Head::HeaderFieldsTooLarge,
            _ => Head::NotFound,
        };
        if status != Status::MethodNotAllowed {
            self.metrics
                .worker(self.worker)
                .request(Route::Rejected, status);
        }
        self.put_head(head, out);
        put_tail(close, keep_alive_10, out);
        if !head_only {
            out.extend_from_slice(error_body(status).as_bytes());
        }
    }

    fn put_head(&self, head: Head, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.heads[self.spans[head as usize].clone()]);
    }

    fn log(
        &mut self,
        peer: Option<SocketAddr>,
        req: Option<&Request<'_>>,
        status: Status,
        body_len: usize,
    ) {
        let Some(log) = self.access_log.as_mut() else {
            return;
        };
        match peer {
            Some(p) => {
                let _ = write!(log, "{p}");
            }
            None => log.push(b'-'),
        }
        log.extend_from_slice(b" [");
        log.extend_from_slice(&self.date);
        log.extend_from_slice(b"] \"");
        match req {
            Some(r) => {
                push_escaped(log, r.method_raw);
                log.push(b' ');
                push_escaped(log, r.target);
                // Literals for HTTP/2 and HTTP/3, as before HTTP/3 came: no formatting there.
                match r.major_version {
                    2 => log.extend_from_slice(b" HTTP/2.0"),
                    3 => log.extend_from_slice(b" HTTP/3.0"),
                    _ => {
                        let _ = write!(log, " HTTP/1.{}", r.minor_version);
                    }
                }
            }
            None => log.push(b'-'),
        }
        let _ = writeln!(log, "\" {} {body_len}", status.code());
    }
}

/// Ends a head: the `Connection` field when needed, then the empty line.
#[inline]
fn put_tail(close: bool, keep_alive_10: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(if close {
        b"Connection: close\r\n\r\n"
    } else if keep_alive_10 {
        b"Connection: keep-alive\r\n\r\n"
    } else {
        b"\r\n"
    });
}

/// Appends `bytes` with quotes, backslashes and non-printable bytes as `\xNN`.
fn push_escaped(log: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' {
            log.push(b);
        } else {
            let _ = write!(log, "\\x{b:02x}");
        }
    }
}
