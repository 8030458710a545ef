//! A request shape encoded once for HTTP/2: its HPACK header block as literal bytes and
//! template values, and its body.
//!
//! The block uses no dynamic table, so it is valid on every connection. A value with
//! random parts (`/{hex:6}.svg`) is filled per request into a scratch buffer the worker
//! owns, then written with its length: no allocation per request.

use super::frame::{self, flag, kind};
use super::hpack;
use crate::template::{Rng, Template};
use crate::{RequestSpec, Scheme, Target, TargetError};

/// One piece of a header block.
#[derive(Debug, Clone)]
enum Part {
    /// Encoded bytes.
    Bytes(Vec<u8>),
    /// A string literal's value with random parts, its length written when filled.
    Value(Template),
}

/// One request shape, HPACK-encoded once.
#[derive(Debug, Clone)]
pub(crate) struct RequestShape {
    parts: Vec<Part>,
    /// The request body, sent in DATA frames as the server's windows allow.
    pub body: Vec<u8>,
    /// Names and values of the literal fields, as h2load counts header bytes.
    raw_fixed: u64,
    /// The most bytes the header block can take.
    pub max_block: usize,
}

/// Header fields that HTTP/2 forbids (RFC 9113 8.2.2); Host becomes `:authority`.
const CONNECTION_SPECIFIC: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
];

impl RequestShape {
    /// Encodes `spec` for `target`: the same fields as HTTP/1.1 sends, names lowercased,
    /// Host as `:authority`, connection-specific fields left out.
    pub fn new(spec: &RequestSpec, target: &Target) -> Result<Self, TargetError> {
        let path = spec.checked_path()?;
        let mut s = RequestShape {
            parts: Vec::new(),
            body: spec.body.clone(),
            raw_fixed: 0,
            max_block: 0,
        };
        let mut block = Vec::new();
        let field = |block: &mut Vec<u8>, raw: &mut u64, name: &str, value: &str| {
            hpack::put_field(block, name, value);
            *raw += (name.len() + value.len()) as u64;
        };
        let mut raw = 0u64;
        field(&mut block, &mut raw, ":method", &spec.method);
        let scheme = match target.scheme {
            Scheme::Http => "http",
            Scheme::Https => "https",
        };
        field(&mut block, &mut raw, ":scheme", scheme);
        if path.is_literal() {
            field(&mut block, &mut raw, ":path", &spec.path);
        } else {
            hpack::put_name(&mut block, ":path");
            raw += 5;
            s.parts.push(Part::Bytes(std::mem::take(&mut block)));
            s.parts.push(Part::Value(path));
        }
        let authority = spec
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("host"))
            .map_or(target.host_header.as_str(), |(_, v)| v.as_str());
        field(&mut block, &mut raw, ":authority", authority);
        let defaults = spec.default_headers(target, false);
        let fixed = defaults
            .iter()
            .map(|(k, v)| (*k, v.as_str()))
            .chain(spec.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        for (k, v) in fixed {
            let name = k.to_ascii_lowercase();
            if name == "host" || CONNECTION_SPECIFIC.contains(&name.as_str()) {
                continue;
            }
            field(&mut block, &mut raw, &name, v);
        }
        for (k, v) in &spec.random_headers {
            let value = RequestSpec::checked_random_header(k, v)?;
            let name = k.to_ascii_lowercase();
            if CONNECTION_SPECIFIC.contains(&name.as_str()) {
                continue;
            }
            hpack::put_name(&mut block, &name);
            raw += name.len() as u64;
            s.parts.push(Part::Bytes(std::mem::take(&mut block)));
            s.parts.push(Part::Value(value));
        }
        if !block.is_empty() {
            s.parts.push(Part::Bytes(block));
        }
        s.raw_fixed = raw;
        s.max_block = s
            .parts
            .iter()
            .map(|p| match p {
                Part::Bytes(b) => b.len(),
                // A length of up to 2^21 takes at most 4 bytes.
                Part::Value(t) => t.max_len() + 4,
            })
            .sum();
        if s.max_block > frame::DEFAULT_MAX_FRAME as usize {
            return Err(TargetError::Header(format!(
                "the request's headers take {} bytes encoded: HTTP/2 sends at most {} in one frame",
                s.max_block,
                frame::DEFAULT_MAX_FRAME
            )));
        }
        Ok(s)
    }

    /// The most bytes one request's HEADERS frame takes.
    pub fn max_headers_frame(&self) -> usize {
        frame::HEADER_LEN + self.max_block
    }

    /// The body's DATA frames at most: the body and one frame header per 16 KiB.
    pub fn max_data_frames(&self) -> usize {
        self.body.len() + frame::HEADER_LEN * (self.body.len() / 16_384 + 1)
    }

    /// Appends the HEADERS frame of one request on `stream`; `end_stream` when there is no
    /// body. Returns the block's encoded and decoded sizes.
    #[inline]
    pub fn put_headers(
        &self,
        stream: u32,
        end_stream: bool,
        rng: &mut Rng,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
    ) -> (u64, u64) {
        let at = out.len();
        let flags = flag::END_HEADERS | if end_stream { flag::END_STREAM } else { 0 };
        frame::put_header(out, 0, kind::HEADERS, flags, stream);
        let mut raw = self.raw_fixed;
        for p in &self.parts {
            match p {
                Part::Bytes(b) => out.extend_from_slice(b),
                Part::Value(t) => {
                    scratch.clear();
                    t.fill(rng, scratch);
                    hpack::put_str(out, scratch);
                    raw += scratch.len() as u64;
                }
            }
        }
        let len = out.len() - at - frame::HEADER_LEN;
        frame::patch_len(out, at, len);
        (len as u64, raw)
    }

    /// The largest value with random parts, for the scratch buffer's capacity.
    pub fn max_value(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Bytes(_) => 0,
                Part::Value(t) => t.max_len(),
            })
            .max()
            .unwrap_or(0)
    }
}
