//! Request heads: httparse for the syntax, then the framing and limit rules this server enforces.

use crate::config::Limits;
use crate::metrics::ParseError;

/// Request fields beyond this count get a 431.
pub const MAX_HEADERS: usize = 64;

/// The request method, as far as routing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`: headers as for GET, no body.
    Head,
    /// Anything else: 405.
    Other,
}

/// A complete, valid request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    /// Bytes of the head, including the empty line.
    pub head_len: usize,
    /// The method.
    pub method: Method,
    /// The method as sent, for the access log.
    pub method_raw: &'a [u8],
    /// The target as sent.
    pub target: &'a [u8],
    /// The path: the target without scheme, authority and query.
    pub path: &'a [u8],
    /// Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
    /// Whether the client wants the connection kept open after this response.
    pub keep_alive: bool,
    /// The `Content-Length`, or 0.
    pub content_length: u64,
    /// Whether a `Transfer-Encoding` was sent (the body length is then unknown to us).
    pub transfer_encoding: bool,
    /// The `If-None-Match` value, if any.
    pub if_none_match: Option<&'a [u8]>,
    /// The HTTP version's major number: 1, or 2 or 3 for a request that came over HTTP/2 or
    /// HTTP/3 (for the access log).
    pub major_version: u8,
}

/// The result of parsing the start of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed<'a> {
    /// The head is not complete yet and within limits: read more.
    Partial,
    /// A head was parsed.
    Complete(Request<'a>),
    /// The head breaks the syntax or a limit.
    Error(ParseError),
}

/// Parses one request head at the start of `buf`, whose first `scanned` bytes were parsed
/// before and held no complete head.
///
/// httparse runs on the whole head only once the empty line that ends it may be there, and on
/// the request line alone once, when it completes (so a bad one gets its 400 at once); in
/// between only the limits are checked. A head trickled in byte by byte is then parsed a few
/// times, not once per byte (quadratic in its length). The result depends on the bytes only,
/// never on how they were split: `scanned` only saves work.
pub fn parse_resumed<'a>(buf: &'a [u8], scanned: usize, limits: &Limits) -> Parsed<'a> {
    let scanned = scanned.min(buf.len());
    // httparse skips empty lines before the request line.
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    let Some(line_len) = buf[start..].iter().position(|&b| b == b'\n') else {
        return partial(buf, limits);
    };
    let line_end = start + line_len;
    if line_end >= scanned {
        if let Parsed::Error(kind) = parse(&buf[..=line_end], limits) {
            return Parsed::Error(kind);
        }
    }
    // The end is "\n\n" or "\n\r\n" (httparse takes bare LF line ends too); one straddling
    // the old and new bytes starts at most 2 bytes before the new ones.
    let from = scanned.saturating_sub(2).max(line_end);
    let may_end = (from..buf.len()).any(|i| {
        buf[i] == b'\n'
            && match buf.get(i + 1) {
                Some(b'\n') => true,
                Some(b'\r') => buf.get(i + 2) == Some(&b'\n'),
                _ => false,
            }
    });
    if may_end {
        parse(buf, limits)
    } else {
        partial(buf, limits)
    }
}

/// Parses one request head at the start of `buf`.
pub fn parse<'a>(buf: &'a [u8], limits: &Limits) -> Parsed<'a> {
    #[cfg(test)]
    HTTPARSE_CALLS.with(|c| c.set(c.get() + 1));
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let head_len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return partial(buf, limits),
        Err(httparse::Error::TooManyHeaders) => return Parsed::Error(ParseError::HeadTooLarge),
        Err(_) => return Parsed::Error(ParseError::Malformed),
    };
    let (Some(method_raw), Some(target), Some(minor_version)) = (req.method, req.path, req.version)
    else {
        return Parsed::Error(ParseError::Malformed);
    };
    // The target first: a head that is too big because of its target gets 414, as it would
    // had it arrived in pieces.
    if target.len() > limits.max_target_bytes {
        return Parsed::Error(ParseError::TargetTooLong);
    }
    if head_len > limits.max_head_bytes {
        return Parsed::Error(ParseError::HeadTooLarge);
    }
    let Some(path) = path_of(target.as_bytes()) else {
        return Parsed::Error(ParseError::Malformed);
    };
    let method = match method_raw {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        _ => Method::Other,
    };

    let mut hosts = 0u32;
    let mut content_length: Option<u64> = None;
    let mut transfer_encoding = false;
    let mut conn_close = false;
    let mut conn_keep_alive = false;
    let mut if_none_match = None;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        // Dispatch on length first: most fields are none of these.
        match name.len() {
            4 if name.eq_ignore_ascii_case(b"host") => hosts += 1,
            10 if name.eq_ignore_ascii_case(b"connection") => {
                for token in h.value.split(|&b| b == b',') {
                    let token = token.trim_ascii();
                    conn_close |= token.eq_ignore_ascii_case(b"close");
                    conn_keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
                }
            }
            13 if name.eq_ignore_ascii_case(b"if-none-match") => if_none_match = Some(h.value),
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                let Some(n) = parse_content_length(h.value) else {
                    return Parsed::Error(ParseError::BadContentLength);
                };
                if content_length.is_some_and(|prev| prev != n) {
                    return Parsed::Error(ParseError::BadContentLength);
                }
                content_length = Some(n);
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => transfer_encoding = true,
            _ => {}
        }
    }
    if content_length.is_some() && transfer_encoding {
        return Parsed::Error(ParseError::Smuggling);
    }
    if hosts > 1 || (minor_version == 1 && hosts == 0) {
        return Parsed::Error(ParseError::BadHost);
    }
    let keep_alive = if minor_version == 1 {
        !conn_close
    } else {
        conn_keep_alive && !conn_close
    };
    Parsed::Complete(Request {
        head_len,
        method,
        method_raw: method_raw.as_bytes(),
        target: target.as_bytes(),
        path,
        minor_version,
        keep_alive,
        content_length: content_length.unwrap_or(0),
        transfer_encoding,
        if_none_match,
        major_version: 1,
    })
}

/// Decides whether an incomplete head may still become valid.
fn partial<'a>(buf: &[u8], limits: &Limits) -> Parsed<'a> {
    // httparse skips empty lines before the request line; so do we.
    let start = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    let line = &buf[start..];
    match line.iter().position(|&b| b == b'\n') {
        None if line.len() > limits.max_target_bytes + 32 => {
            // Still inside the request line, and already longer than any allowed target.
            return Parsed::Error(ParseError::TargetTooLong);
        }
        Some(end) => {
            // The line is complete: judge the target first, as parse() does for a whole head,
            // so a long target gets 414 however the head was split.
            let mut words = line[..end].split(|&b| b == b' ');
            let target_len = words.nth(1).map_or(0, <[u8]>::len);
            if target_len > limits.max_target_bytes {
                return Parsed::Error(ParseError::TargetTooLong);
            }
        }
        None => {}
    }
    if buf.len() > limits.max_head_bytes {
        return Parsed::Error(ParseError::HeadTooLarge);
    }
    Parsed::Partial
}

/// The path of an origin-form or absolute-form target, without its query.
pub(crate) fn path_of(target: &[u8]) -> Option<&[u8]> {
    let path = if target.first() == Some(&b'/') {
        target
    } else {
        let rest = strip_prefix_ignore_case(target, b"http://")
            .or_else(|| strip_prefix_ignore_case(target, b"https://"))?;
        match rest.iter().position(|&b| matches!(b, b'/' | b'?')) {
            Some(i) if rest[i] == b'/' => &rest[i..],
            _ => b"/",
        }
    };
    let end = path.iter().position(|&b| b == b'?').unwrap_or(path.len());
    Some(&path[..end])
}

fn strip_prefix_ignore_case<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    (s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

/// Parses a `Content-Length` value: 1 to 18 digits, nothing else.
pub(crate) fn parse_content_length(value: &[u8]) -> Option<u64> {
    let value = value.trim_ascii();
    if value.is_empty() || value.len() > 18 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        value
            .iter()
            .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')),
    )
}

#[cfg(test)]
thread_local! {
    static HTTPARSE_CALLS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests;
