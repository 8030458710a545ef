//! The hello backend's protocol: bytes of a connection in, one reply at a time out. No I/O,
//! so the event loop (main.rs) stays about sockets and timers, and this part can be tested
//! with byte-string tables and fuzzed (fuzz/).
#![forbid(unsafe_code)]

use std::time::Duration;

/// A request head (line and headers) longer than this is answered 400 and the connection closed.
pub const MAX_HEAD: usize = 16 * 1024;
const MAX_HEADERS: usize = 64;
/// The largest delay a request (or the command line) may ask for.
pub const MAX_DELAY_MS: u64 = 60_000;

/// What the start of a connection's unread bytes holds.
#[derive(Debug)]
pub enum Parsed {
    /// Not a whole request head yet (and under MAX_HEAD): read more.
    Partial,
    /// A request (or garbage, answered 400 with `reply.close`): `used` bytes of head, then
    /// `body_len` bytes of body to skip.
    Request {
        used: usize,
        reply: Reply,
        delay: Duration,
        body_len: u64,
    },
}

/// Parses the first request in `buf` and builds its reply.
pub fn parse_one(buf: &[u8], stats: &Stats, default_delay: Duration) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let refuse = |reply| Parsed::Request {
        used: buf.len(),
        reply,
        delay: Duration::ZERO,
        body_len: 0,
    };
    match req.parse(buf) {
        Ok(httparse::Status::Complete(used)) => match answer(&req, stats, default_delay) {
            Ok((reply, delay, body_len)) => Parsed::Request {
                used,
                reply,
                delay,
                body_len,
            },
            Err(why) => refuse(bad_request(why)),
        },
        Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => Parsed::Partial,
        Ok(httparse::Status::Partial) => refuse(bad_request("request head longer than 16 KiB")),
        Err(e) => refuse(bad_request(&format!("malformed request: {e}"))),
    }
}

/// A delay in ms from its decimal text, when in 0..=MAX_DELAY_MS.
pub fn parse_delay(s: &[u8]) -> Option<u64> {
    let n: u64 = std::str::from_utf8(s).ok()?.parse().ok()?;
    (n <= MAX_DELAY_MS).then_some(n)
}

/// One response in a connection's queue, in request order.
#[derive(Debug)]
pub struct Reply {
    pub bytes: Vec<u8>,
    /// False while its delay runs.
    pub ready: bool,
    /// Counts in /stats' `requests` when sent.
    pub hello: bool,
    /// The connection closes once it is written.
    pub close: bool,
}

/// The counters /stats reports.
#[derive(Debug, Default)]
pub struct Stats {
    /// /hello replies sent.
    pub requests: u64,
    /// Connections accepted.
    pub connections: u64,
}

/// The reply to one parsed request, its delay and the length of its body to skip; Err is a 400
/// that closes the connection (the framing of what follows is unknown).
fn answer(
    req: &httparse::Request,
    stats: &Stats,
    default_delay: Duration,
) -> Result<(Reply, Duration, u64), &'static str> {
    let mut request_id: Option<&[u8]> = None;
    let mut close = req.version == Some(0);
    let mut body_len = 0u64;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("x-request-id") {
            request_id = Some(h.value);
        } else if h.name.eq_ignore_ascii_case("connection") {
            let v = h.value;
            if contains_token(v, b"close") {
                close = true;
            } else if contains_token(v, b"keep-alive") {
                close = false;
            }
        } else if h.name.eq_ignore_ascii_case("content-length") {
            body_len = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .ok_or("bad Content-Length")?;
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("Transfer-Encoding is not supported");
        }
    }
    let target = req.path.expect("a complete request has a path");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut delay = default_delay;
    let (status, content_type, body, hello) = match (req.method, path) {
        (Some("GET"), "/hello") => {
            for pair in query.split('&') {
                if let Some(v) = pair.strip_prefix("delay_ms=") {
                    let Some(ms) = parse_delay(v.as_bytes()) else {
                        return Ok((
                            response(
                                "400 Bad Request",
                                "text/plain",
                                b"delay_ms must be an integer in 0..=60000\n",
                                None,
                                close,
                                false,
                            ),
                            Duration::ZERO,
                            body_len,
                        ));
                    };
                    delay = Duration::from_millis(ms);
                }
            }
            let mut body = b"hello".to_vec();
            if let Some(id) = request_id {
                body.push(b' ');
                body.extend_from_slice(id);
            }
            body.push(b'\n');
            ("200 OK", "text/plain", body, true)
        }
        (Some("GET"), "/stats") => {
            // The counters as of this reply's parsing; it is not delayed, so that is when it is sent
            // unless pipelined behind delayed replies.
            let json = format!(
                "{{\"requests\": {}, \"connections\": {}}}\n",
                stats.requests, stats.connections
            );
            ("200 OK", "application/json", json.into_bytes(), false)
        }
        (Some("GET"), _) => (
            "404 Not Found",
            "text/plain",
            b"not found: try GET /hello or GET /stats\n".to_vec(),
            false,
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            b"only GET is served\n".to_vec(),
            false,
        ),
    };
    if !hello {
        delay = Duration::ZERO;
    }
    let echo = if hello { request_id } else { None };
    Ok((
        response(status, content_type, &body, echo, close, hello),
        delay,
        body_len,
    ))
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

fn response(
    status: &str,
    content_type: &str,
    body: &[u8],
    request_id: Option<&[u8]>,
    close: bool,
    hello: bool,
) -> Reply {
    let mut bytes = Vec::with_capacity(160 + body.len());
    bytes.extend_from_slice(b"HTTP/1.1 ");
    bytes.extend_from_slice(status.as_bytes());
    bytes.extend_from_slice(b"\r\nContent-Type: ");
    bytes.extend_from_slice(content_type.as_bytes());
    bytes.extend_from_slice(format!("\r\nContent-Length: {}\r\n", body.len()).as_bytes());
    if let Some(id) = request_id {
        bytes.extend_from_slice(b"X-Request-Id: ");
        bytes.extend_from_slice(id);
        bytes.extend_from_slice(b"\r\n");
    }
    if close {
        bytes.extend_from_slice(b"Connection: close\r\n");
    }
    bytes.extend_from_slice(b"\r\n");
    bytes.extend_from_slice(body);
    Reply {
        bytes,
        ready: false,
        hello,
        close,
    }
}

fn bad_request(why: &str) -> Reply {
    response(
        "400 Bad Request",
        "text/plain",
        format!("bad request: {why}\n").as_bytes(),
        None,
        true,
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_DELAY: Duration = Duration::ZERO;

    fn parse(raw: &[u8]) -> Parsed {
        parse_one(
            raw,
            &Stats {
                requests: 7,
                connections: 3,
            },
            NO_DELAY,
        )
    }

    /// (request bytes, expected reply bytes, delay ms, head length used, body to skip)
    #[test]
    fn replies() {
        let cases: &[(&[u8], &[u8], u64, u64)] = &[
            (b"GET /hello HTTP/1.1\r\nX-Request-Id: a1\r\n\r\n",
             b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\nX-Request-Id: a1\r\n\r\nhello a1\n", 0, 0),
            (b"GET /hello HTTP/1.1\r\n\r\n",
             b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\nhello\n", 0, 0),
            (b"GET /hello?a=1&delay_ms=250 HTTP/1.1\r\nx-request-id: B\r\n\r\n",
             b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 8\r\nX-Request-Id: B\r\n\r\nhello B\n", 250, 0),
            (b"GET /hello HTTP/1.0\r\n\r\n",
             b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n", 0, 0),
            (b"GET /hello HTTP/1.1\r\nConnection: Keep-Alive, Close\r\nContent-Length: 5\r\n\r\n",
             b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n", 0, 5),
            (b"GET /stats HTTP/1.1\r\n\r\n",
             b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 34\r\n\r\n{\"requests\": 7, \"connections\": 3}\n", 0, 0),
            (b"GET /stats?delay_ms=500 HTTP/1.1\r\nX-Request-Id: s\r\n\r\n",
             b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 34\r\n\r\n{\"requests\": 7, \"connections\": 3}\n", 0, 0),
            (b"GET /hello?delay_ms=60001 HTTP/1.1\r\n\r\n",
             b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 41\r\n\r\ndelay_ms must be an integer in 0..=60000\n", 0, 0),
            (b"POST /hello HTTP/1.1\r\nContent-Length: 2\r\n\r\n",
             b"HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 19\r\n\r\nonly GET is served\n", 0, 2),
        ];
        for &(raw, want, delay_ms, body) in cases {
            match parse(raw) {
                Parsed::Request {
                    used,
                    reply,
                    delay,
                    body_len,
                } => {
                    assert_eq!(
                        String::from_utf8_lossy(&reply.bytes),
                        String::from_utf8_lossy(want),
                        "{raw:?}"
                    );
                    assert_eq!(delay, Duration::from_millis(delay_ms), "{raw:?}");
                    assert_eq!(used, raw.len(), "{raw:?}");
                    assert_eq!(body_len, body, "{raw:?}");
                }
                Parsed::Partial => panic!("{raw:?}: partial"),
            }
        }
    }

    #[test]
    fn refused_with_400_and_close() {
        let long = [b"GET /hello HTTP/1.1\r\nX: ".as_slice(), &[b'a'; MAX_HEAD]].concat();
        let cases: &[&[u8]] = &[
            b"\x00garbage\r\n\r\n",
            b"GET /hello HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"GET /hello HTTP/1.1\r\nContent-Length: lots\r\n\r\n",
            &long,
        ];
        for raw in cases {
            let Parsed::Request { reply, .. } = parse(raw) else {
                panic!("{raw:?}: partial")
            };
            assert!(reply.bytes.starts_with(b"HTTP/1.1 400 "), "{raw:?}");
            assert!(reply.close && !reply.hello, "{raw:?}");
        }
    }

    #[test]
    fn partial_heads_wait() {
        for raw in [
            b"".as_slice(),
            b"GET /hel",
            b"GET /hello HTTP/1.1\r\nX-Request-Id: 1\r\n",
        ] {
            assert!(matches!(parse(raw), Parsed::Partial), "{raw:?}");
        }
    }

    #[test]
    fn only_hello_counts_and_echoes() {
        let Parsed::Request { reply, .. } = parse(b"GET /nope HTTP/1.1\r\nX-Request-Id: z\r\n\r\n")
        else {
            panic!()
        };
        assert!(reply.bytes.starts_with(b"HTTP/1.1 404 ") && !reply.hello);
        assert!(!reply.bytes.windows(12).any(|w| w == b"X-Request-Id"));
    }
}
