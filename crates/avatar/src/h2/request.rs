//! An HTTP/2 request's header list checked (RFC 9113 8.2 and 8.3) and turned into the
//! [`Request`] the HTTP/1 parser would have made, so the [`Responder`] routes both alike.

use std::net::SocketAddr;

use super::hpack::Fields;
use crate::config::Limits;
use crate::metrics::ParseError;
use crate::request::{self as http1, Method, Request};
use crate::responder::Responder;

/// What a header list amounts to.
#[derive(Debug)]
pub enum Checked<'a> {
    /// A request to route.
    Request(H2Request<'a>),
    /// A well-formed request refused by a limit or the target's syntax: answered with the
    /// status HTTP/1 gives.
    Refused(ParseError),
    /// A malformed request (RFC 9113 8.1.1): a stream error of type PROTOCOL_ERROR.
    Malformed,
}

/// A request, and whether it stated its body's length.
#[derive(Debug)]
pub struct H2Request<'a> {
    /// The request, as the HTTP/1 parser would have made it.
    pub req: Request<'a>,
    /// A `content-length` was sent (the DATA frames must then add up to it).
    pub has_length: bool,
}

/// Checks a decoded header list.
pub fn check<'a>(fields: &'a Fields, limits: &Limits) -> Checked<'a> {
    if fields.too_large {
        return Checked::Refused(ParseError::HeadTooLarge);
    }
    let mut method = None;
    let mut scheme = None;
    let mut path = None;
    let mut authority = None;
    let mut regular = false;
    let mut content_length: Option<u64> = None;
    let mut if_none_match = None;
    for (name, value) in fields.iter() {
        if name.is_empty() || value.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n') {
            return Checked::Malformed;
        }
        if name[0] == b':' {
            let slot = match name {
                b":method" => &mut method,
                b":scheme" => &mut scheme,
                b":path" => &mut path,
                b":authority" => &mut authority,
                _ => return Checked::Malformed,
            };
            if regular || slot.is_some() {
                return Checked::Malformed;
            }
            *slot = Some(value);
            continue;
        }
        regular = true;
        if name
            .iter()
            .any(|&b| b.is_ascii_uppercase() || b <= b' ' || b == b':' || b >= 0x7f)
        {
            return Checked::Malformed;
        }
        match name {
            b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding"
            | b"upgrade" => return Checked::Malformed,
            b"te" if value != b"trailers" => return Checked::Malformed,
            b"content-length" => {
                let Some(n) = http1::parse_content_length(value) else {
                    return Checked::Malformed;
                };
                if content_length.is_some_and(|prev| prev != n) {
                    return Checked::Malformed;
                }
                content_length = Some(n);
            }
            b"if-none-match" => if_none_match = Some(value),
            _ => {}
        }
    }
    let Some(method_raw) = method else {
        return Checked::Malformed;
    };
    let (target, path) = if method_raw == b"CONNECT" {
        // CONNECT names an authority, not a path (RFC 9113 8.5); it gets the 405 any other
        // method does.
        match (authority, scheme, path) {
            (Some(a), None, None) => (a, &b""[..]),
            _ => return Checked::Malformed,
        }
    } else {
        let (Some(_), Some(target)) = (scheme, path) else {
            return Checked::Malformed;
        };
        if target.is_empty() {
            return Checked::Malformed;
        }
        if target.len() > limits.max_target_bytes {
            return Checked::Refused(ParseError::TargetTooLong);
        }
        let Some(path) = http1::path_of(target) else {
            return Checked::Refused(ParseError::Malformed);
        };
        (target, path)
    };
    let method = match method_raw {
        b"GET" => Method::Get,
        b"HEAD" => Method::Head,
        _ => Method::Other,
    };
    Checked::Request(H2Request {
        req: Request {
            head_len: 0,
            method,
            method_raw,
            target,
            path,
            minor_version: 1,
            keep_alive: true,
            content_length: content_length.unwrap_or(0),
            transfer_encoding: false,
            if_none_match,
            major_version: 2,
        },
        has_length: content_length.is_some(),
    })
}

/// Answers a checked request (not a malformed one) into `resp`, as an HTTP/1.1 head and body.
pub fn answer(
    checked: &Checked<'_>,
    responder: &mut Responder,
    resp: &mut Vec<u8>,
    peer: Option<SocketAddr>,
) {
    match checked {
        Checked::Request(r) => responder.answer_h2(Ok(&r.req), resp, peer),
        Checked::Refused(kind) => responder.answer_h2(Err(*kind), resp, peer),
        Checked::Malformed => {}
    }
}

#[cfg(test)]
mod tests;
