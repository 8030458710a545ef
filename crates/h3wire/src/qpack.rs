//! QPACK (RFC 9204) with the static table only: we advertise a dynamic table capacity of 0
//! and no blocked streams (SETTINGS, [`crate::frame::Settings::static_qpack`]), so every
//! field section is a prefix of two zero bytes (Required Insert Count 0, Delta Base 0) and
//! field lines that reference the static table or carry literals.
//!
//! The encoder writes each field as an indexed line when the static table has the pair,
//! else a literal with a static name reference, else a literal with a literal name, each
//! string Huffman-coded when that is shorter. The decoder walks a section in place and hands
//! each field to a callback, refusing whatever a capacity of 0 forbids (a non-zero Required
//! Insert Count, a dynamic or post-base reference) as QPACK_DECOMPRESSION_FAILED, and a
//! field list past the caller's limit. [`head`] is the client's path: it keeps only
//! `:status` and `content-length`, with no allocation. The encoder and decoder streams are
//! [`stream`]'s.
//!
//! The primitives are HPACK's (RFC 9204 4.1.1, 4.1.2), taken from `h2wire::hpack`: prefix
//! integers (up to 62 bits, as RFC 9204 4.1.1 requires, where HPACK's stop at 2^32), the
//! Huffman code and its nibble decoder.

use h2wire::hpack::{self, HpackError};
use thiserror::Error;

use crate::error;

pub mod stream;
mod table;

pub use table::{find, STATIC};

/// Why a field section could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum QpackError {
    /// The prefix's Required Insert Count is not 0: the section needs a dynamic table, and
    /// we advertised a capacity of 0.
    #[error("the field section needs a dynamic table (Required Insert Count above 0), and its capacity is 0")]
    RequiredInsertCount,
    /// The prefix's Delta Base is negative with a Required Insert Count of 0.
    #[error("the field section's base is negative")]
    NegativeBase,
    /// A field line references the dynamic table.
    #[error("a field line references the dynamic table, whose capacity is 0")]
    DynamicReference,
    /// A field line references the dynamic table past the base.
    #[error("a field line references the dynamic table past the base, and its capacity is 0")]
    PostBaseReference,
    /// The section ends inside its prefix or a field line.
    #[error("the field section ends inside a field line")]
    Truncated,
    /// A Huffman string with EOS, or padding that is not a prefix of EOS or longer than 7
    /// bits.
    #[error("a Huffman-coded string is invalid")]
    BadHuffman,
    /// A static index past the table's 99 entries.
    #[error("static table index {0} is past the table's last, 98")]
    BadIndex(u64),
    /// An integer above 2^62 - 1.
    #[error("an integer in the field section is above 2^62 - 1")]
    IntegerOverflow,
    /// The decoded fields (name, value and 32 bytes each, RFC 9114 4.2.2) passed the
    /// caller's limit.
    #[error("the decoded field section is past the limit of {limit} bytes")]
    TooLarge {
        /// The caller's limit: the MAX_FIELD_SECTION_SIZE it advertised.
        limit: u64,
    },
}

impl QpackError {
    /// The HTTP/3 error code to close the connection or stream with: a section past the
    /// limit is the peer's excess, any other a section that cannot be decoded.
    pub fn code(self) -> u64 {
        match self {
            QpackError::TooLarge { .. } => error::H3_EXCESSIVE_LOAD,
            _ => error::QPACK_DECOMPRESSION_FAILED,
        }
    }
}

impl From<HpackError> for QpackError {
    fn from(e: HpackError) -> Self {
        match e {
            HpackError::IntegerOverflow => QpackError::IntegerOverflow,
            HpackError::BadHuffman => QpackError::BadHuffman,
            // The primitives used here return nothing else.
            _ => QpackError::Truncated,
        }
    }
}

/// A prefix integer of up to 62 bits (RFC 9204 4.1.1): its value and the bytes it took.
#[inline]
pub(crate) fn int(b: &[u8], n: u8) -> Result<(u64, usize), HpackError> {
    hpack::int_up_to(b, n, hpack::INT_MAX_62)
}

/// What one field costs of a field section's size (RFC 9114 4.2.2): its name, its value and
/// 32 bytes.
#[inline]
pub fn field_size(name_len: usize, value_len: usize) -> u64 {
    name_len as u64 + value_len as u64 + 32
}

// The encoder.

/// Appends the field section prefix: Required Insert Count 0, Delta Base 0.
#[inline]
pub fn put_prefix(out: &mut Vec<u8>) {
    out.extend_from_slice(&[0, 0]);
}

/// Appends one field line: indexed when the static table has the pair, else a literal
/// with the static name's index, else a literal with a literal name.
pub fn put_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    match find(name, value) {
        // Indexed field line, static (1T, T=1): 6-bit index.
        Some((i, true)) => hpack::put_int(out, 0xc0, 6, i),
        // Literal with name reference, static (01NT, N=0, T=1): 4-bit index, then the value.
        Some((i, false)) => {
            hpack::put_int(out, 0x50, 4, i);
            put_string(out, 0, 7, value);
        }
        // Literal with literal name (001NH, N=0): the name with a 3-bit length, the value.
        None => {
            put_string(out, 0x20, 3, name);
            put_string(out, 0, 7, value);
        }
    }
}

/// Appends a string literal whose length has an `n`-bit prefix, `flags` above it and its
/// Huffman bit just above the prefix: Huffman-coded when that is shorter.
fn put_string(out: &mut Vec<u8>, flags: u8, n: u8, s: &[u8]) {
    let start = out.len();
    hpack::huffman_encode(s, out);
    let coded = out.len() - start;
    out.truncate(start);
    if coded < s.len() {
        // Coded twice rather than into a scratch buffer: no allocation, and encoding is
        // done once per request shape.
        hpack::put_int(out, flags | 1 << n, n, coded);
        hpack::huffman_encode(s, out);
    } else {
        hpack::put_int(out, flags, n, s.len());
        out.extend_from_slice(s);
    }
}

/// Appends a whole field section: the prefix, then each field.
pub fn encode<'a>(out: &mut Vec<u8>, fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) {
    put_prefix(out);
    for (name, value) in fields {
        put_field(out, name, value);
    }
}

/// A request's head, as a client sends it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `:method`.
    pub method: &'a str,
    /// `:scheme`.
    pub scheme: &'a str,
    /// `:authority`.
    pub authority: &'a str,
    /// `:path`.
    pub path: &'a str,
    /// Every other field, in order, names in lowercase.
    pub headers: &'a [(&'a str, &'a str)],
}

impl Request<'_> {
    /// The request's field section, to encode once and send as many times as wanted
    /// ([`crate::frame::put_headers`]).
    pub fn encode(&self) -> Vec<u8> {
        let pseudo = [
            (":method", self.method),
            (":scheme", self.scheme),
            (":authority", self.authority),
            (":path", self.path),
        ];
        let mut out = Vec::new();
        encode(
            &mut out,
            pseudo
                .iter()
                .chain(self.headers)
                .map(|(n, v)| (n.as_bytes(), v.as_bytes())),
        );
        out
    }
}

/// Appends a response's field section: `:status` (100 to 999), then `headers`.
pub fn encode_response(out: &mut Vec<u8>, status: u16, headers: &[(&str, &str)]) {
    let digits = [
        b'0' + (status / 100 % 10) as u8,
        b'0' + (status / 10 % 10) as u8,
        b'0' + (status % 10) as u8,
    ];
    encode(
        out,
        std::iter::once((&b":status"[..], &digits[..]))
            .chain(headers.iter().map(|(n, v)| (n.as_bytes(), v.as_bytes()))),
    );
}

// The decoder.

/// Where a decoded string goes: all of it (a `Vec`), or what a caller keeps of it.
pub trait Sink {
    /// Empties it for the next string.
    fn clear(&mut self);
    /// Takes one byte.
    fn push(&mut self, b: u8);
    /// Takes a run of bytes.
    fn extend(&mut self, s: &[u8]);
    /// The string's whole length so far.
    fn len(&self) -> usize;
    /// Whether nothing has been taken.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Sink for Vec<u8> {
    fn clear(&mut self) {
        Vec::clear(self);
    }

    fn push(&mut self, b: u8) {
        Vec::push(self, b);
    }

    fn extend(&mut self, s: &[u8]) {
        self.extend_from_slice(s);
    }

    fn len(&self) -> usize {
        Vec::len(self)
    }
}

/// Walks the field section `b`, decoding each field's name and value into the sinks
/// and calling `each` with them; the fields' size ([`field_size`]) may not pass `limit`.
/// Returns that size.
pub fn walk<S: Sink>(
    mut b: &[u8],
    limit: u64,
    name: &mut S,
    value: &mut S,
    mut each: impl FnMut(&S, &S),
) -> Result<u64, QpackError> {
    // The prefix: Required Insert Count with an 8-bit prefix, any encoding of which but 0
    // is above 0; then the Delta Base's sign and its 7-bit integer.
    match b {
        [] | [0] => return Err(QpackError::Truncated),
        [0, base, ..] => {
            if base & 0x80 != 0 {
                return Err(QpackError::NegativeBase);
            }
            let (_, used) = int(&b[1..], 7)?;
            b = &b[1 + used..];
        }
        _ => return Err(QpackError::RequiredInsertCount),
    }
    let mut size = 0u64;
    while let Some(&lead) = b.first() {
        let used = if lead & 0x80 != 0 {
            // Indexed field line (1T).
            if lead & 0x40 == 0 {
                return Err(QpackError::DynamicReference);
            }
            let (i, used) = int(b, 6)?;
            let (n, v) = entry(i)?;
            name.clear();
            name.extend(n.as_bytes());
            value.clear();
            value.extend(v.as_bytes());
            used
        } else if lead & 0x40 != 0 {
            // Literal with name reference (01NT).
            if lead & 0x10 == 0 {
                return Err(QpackError::DynamicReference);
            }
            let (i, used) = int(b, 4)?;
            let (n, _) = entry(i)?;
            name.clear();
            name.extend(n.as_bytes());
            used + string(&b[used..], 7, value)?
        } else if lead & 0x20 != 0 {
            // Literal with literal name (001NH).
            let used = string(b, 3, name)?;
            used + string(&b[used..], 7, value)?
        } else {
            // Indexed field line with post-base index (0001), literal with post-base name
            // reference (0000).
            return Err(QpackError::PostBaseReference);
        };
        b = &b[used..];
        size += field_size(name.len(), value.len());
        if size > limit {
            return Err(QpackError::TooLarge { limit });
        }
        each(name, value);
    }
    Ok(size)
}

/// Static table entry `i`.
#[inline]
fn entry(i: u64) -> Result<(&'static str, &'static str), QpackError> {
    STATIC
        .get(i as usize)
        .copied()
        .ok_or(QpackError::BadIndex(i))
}

/// Decodes a string literal whose length has an `n`-bit prefix and its Huffman bit just
/// above, into `out`: returns the bytes it took.
#[inline]
fn string<S: Sink>(b: &[u8], n: u8, out: &mut S) -> Result<usize, QpackError> {
    let huff = *b.first().ok_or(QpackError::Truncated)? & (1 << n) != 0;
    let (len, used) = int(b, n)?;
    let end = used
        .checked_add(len as usize)
        .filter(|&e| e <= b.len())
        .ok_or(QpackError::Truncated)?;
    let raw = &b[used..end];
    out.clear();
    if huff {
        hpack::huffman(raw, |c| out.push(c))?;
    } else {
        out.extend(raw);
    }
    Ok(end)
}

/// A decoder that keeps each field whole, in buffers it reuses from one section to the
/// next: the server's, and a client's that checks headers.
#[derive(Debug, Default)]
pub struct Decoder {
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Decoder {
    /// Decodes `section`, calling `each` with every field's name and value, in order; the
    /// fields' size may not pass `limit` (the MAX_FIELD_SECTION_SIZE we advertised).
    /// Returns that size.
    pub fn decode(
        &mut self,
        section: &[u8],
        limit: u64,
        mut each: impl FnMut(&[u8], &[u8]),
    ) -> Result<u64, QpackError> {
        walk(section, limit, &mut self.name, &mut self.value, |n, v| {
            each(n, v)
        })
    }
}

/// A field decoded whole: name and value.
pub type Field = (Vec<u8>, Vec<u8>);

/// Decodes `section` into a list of fields (tests, verification; not the load path).
pub fn decode(section: &[u8], limit: u64) -> Result<Vec<Field>, QpackError> {
    let mut fields = Vec::new();
    Decoder::default().decode(section, limit, |n, v| fields.push((n.to_vec(), v.to_vec())))?;
    Ok(fields)
}

/// What the client keeps of a response's field section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Head {
    /// The first `:status` whose value is three digits.
    pub status: Option<u16>,
    /// The first `content-length` whose value is a decimal number that fits.
    pub content_length: Option<u64>,
    /// The fields' size ([`field_size`]).
    pub size: u64,
}

/// The first bytes of a decoded string and its whole length: no allocation.
#[derive(Default)]
struct Small {
    len: usize,
    /// `content-length` is 14 bytes; a u64 is at most 20 digits.
    head: [u8; 20],
}

impl Small {
    fn is(&self, s: &[u8]) -> bool {
        self.len == s.len() && self.head.get(..s.len()) == Some(s)
    }

    /// The value as a decimal number: at least one byte, every one a digit, and it fits.
    fn number(&self) -> Option<u64> {
        let digits = self.head.get(..self.len).filter(|d| !d.is_empty())?;
        digits.iter().try_fold(0u64, |n, &d| {
            if !d.is_ascii_digit() {
                return None;
            }
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
    }
}

impl Sink for Small {
    fn clear(&mut self) {
        self.len = 0;
    }

    #[inline]
    fn push(&mut self, b: u8) {
        if let Some(slot) = self.head.get_mut(self.len) {
            *slot = b;
        }
        self.len += 1;
    }

    fn extend(&mut self, s: &[u8]) {
        if let Some(room) = self.head.get_mut(self.len..) {
            let keep = s.len().min(room.len());
            room[..keep].copy_from_slice(&s[..keep]);
        }
        self.len += s.len();
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// Decodes a response's field section keeping only `:status` and `content-length`: the
/// client's path. Every field is still decoded and checked, and the size bounded by `limit`.
pub fn head(section: &[u8], limit: u64) -> Result<Head, QpackError> {
    let mut out = Head::default();
    let (mut name, mut value) = (Small::default(), Small::default());
    out.size = walk(section, limit, &mut name, &mut value, |n, v| {
        if out.status.is_none() && n.is(b":status") && v.len == 3 {
            out.status = v.number().map(|s| s as u16);
        } else if out.content_length.is_none() && n.is(b"content-length") {
            out.content_length = v.number();
        }
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests;
