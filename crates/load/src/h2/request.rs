//! A request shape encoded once for HTTP/2: its HPACK header block as encoded bytes, fixed
//! fields that the connection's dynamic table may hold ([`encoder`](super::encoder)), and
//! template values, and its body.
//!
//! A value with random parts (`/{hex:6}.svg`) is filled per request into a scratch buffer
//! the worker owns, then written with its length: no allocation per request.

use super::encoder::{Encoder, Fields};
use super::frame::{self, flag, kind};
use super::hpack;
use crate::template::{Rng, Template};
use crate::{RequestSpec, Scheme, Target, TargetError};

/// One piece of a header block.
#[derive(Debug, Clone)]
enum Part {
    /// Encoded bytes.
    Bytes(Vec<u8>),
    /// A fixed field of the run's [`Fields`]: indexed once the connection's table holds it.
    Field(u16),
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
    /// The method is HEAD: the response has no content (RFC 9110 9.3.2).
    pub head: bool,
}

/// Header fields that HTTP/2 forbids (RFC 9113 8.2.2), and HTTP/3 likewise (RFC 9114
/// 4.2); Host becomes `:authority`.
pub(crate) const CONNECTION_SPECIFIC: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "te",
];

/// Appends a fixed field to the shape being built. A field the static table holds whole is
/// one byte already; the others are indexed per connection (`index`, while `fields` has
/// room), else sent as literals.
fn push_field(
    s: &mut RequestShape,
    block: &mut Vec<u8>,
    raw: &mut u64,
    fields: &mut Fields,
    name: &str,
    value: &str,
    index: bool,
) {
    *raw += (name.len() + value.len()) as u64;
    let id = match hpack::static_index(name, value) {
        Some((_, true)) => None,
        _ if index => fields.intern(name, value),
        _ => None,
    };
    match id {
        Some(id) => {
            if !block.is_empty() {
                s.parts.push(Part::Bytes(std::mem::take(block)));
            }
            s.parts.push(Part::Field(id));
        }
        None => hpack::put_field(block, name, value),
    }
}

impl RequestShape {
    /// Encodes `spec` for `target`: the same fields as HTTP/1.1 sends, names lowercased,
    /// Host as `:authority`, connection-specific fields left out. Fixed fields go into
    /// `fields`, to be indexed per connection; a literal `:path` too when `index_path`.
    pub fn new(
        spec: &RequestSpec,
        target: &Target,
        fields: &mut Fields,
        index_path: bool,
    ) -> Result<Self, TargetError> {
        let path = spec.checked_path()?;
        let mut s = RequestShape {
            parts: Vec::new(),
            body: spec.body.clone(),
            raw_fixed: 0,
            max_block: 0,
            head: spec.method == "HEAD",
        };
        let mut block = Vec::new();
        let mut raw = 0u64;
        push_field(
            &mut s,
            &mut block,
            &mut raw,
            fields,
            ":method",
            &spec.method,
            true,
        );
        let scheme = match target.scheme {
            Scheme::Http => "http",
            Scheme::Https => "https",
        };
        push_field(
            &mut s, &mut block, &mut raw, fields, ":scheme", scheme, true,
        );
        if path.is_literal() {
            push_field(
                &mut s, &mut block, &mut raw, fields, ":path", &spec.path, index_path,
            );
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
        push_field(
            &mut s,
            &mut block,
            &mut raw,
            fields,
            ":authority",
            authority,
            true,
        );
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
            push_field(&mut s, &mut block, &mut raw, fields, &name, v, true);
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
        // A table size update may lead the block: up to 4 bytes.
        s.max_block = 4 + s
            .parts
            .iter()
            .map(|p| match p {
                Part::Bytes(b) => b.len(),
                Part::Field(id) => fields.max_len(*id),
                // A length of up to 2^21 takes at most 4 bytes.
                Part::Value(t) => t.max_len() + 4,
            })
            .sum::<usize>();
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
    /// body. `enc` is the connection's table of `fields`. Returns the block's encoded and
    /// decoded sizes.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn put_headers(
        &self,
        stream: u32,
        end_stream: bool,
        rng: &mut Rng,
        scratch: &mut Vec<u8>,
        enc: &mut Encoder,
        fields: &Fields,
        out: &mut Vec<u8>,
    ) -> (u64, u64) {
        let at = out.len();
        let flags = flag::END_HEADERS | if end_stream { flag::END_STREAM } else { 0 };
        frame::put_header(out, 0, kind::HEADERS, flags, stream);
        enc.start_block(out);
        let mut raw = self.raw_fixed;
        for p in &self.parts {
            match p {
                Part::Bytes(b) => out.extend_from_slice(b),
                Part::Field(id) => enc.put(fields, *id, out),
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
                Part::Bytes(_) | Part::Field(_) => 0,
                Part::Value(t) => t.max_len(),
            })
            .max()
            .unwrap_or(0)
    }
}
