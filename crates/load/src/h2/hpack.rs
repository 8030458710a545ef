//! HPACK (RFC 7541) as the engine needs it: a response decoder that walks a header block in
//! place and keeps only what the engine uses, and the encoding of request fields.
//!
//! Why hand-written: the crates looked at (`hpack`, `fluke-hpack`/`loona-hpack`,
//! `httlib-hpack`) hand every decoded field to the caller as an owned or copy-on-write
//! buffer and keep dynamic-table entries as `Vec`s, so each Huffman-coded value (nginx
//! codes nearly all of its values) costs an allocation per response. The engine needs only
//! `:status`, `content-length`, the checks of a response's form (RFC 9113 8.2 and 8.3: a
//! malformed response is never counted ok), and the table's bookkeeping. So the decoder
//! keeps, per dynamic-table entry, its size and what its name and value are to those checks
//! ([`Class`]), in a ring sized up front by the table size we advertise; Huffman strings are decoded four bits at a time through a
//! table built once from the code (`h2wire::hpack`), counting their length and keeping
//! their first bytes only. Every field is still decoded and checked, so the table stays in
//! step with the server's. Tests check it against RFC 7541's response examples (C.6, with
//! Huffman coding and table evictions) and round-trip the Huffman code for every byte; the
//! `hpack` fuzz target runs it on arbitrary blocks.
//!
//! Request fields are encoded by [`encoder`](super::encoder): indexed per connection into
//! the server's dynamic table once sent as literals, no Huffman coding. The primitives
//! (integers, the Huffman code, the static table) are `h2wire`'s, shared with avatar's server.

use std::collections::VecDeque;

pub use h2wire::hpack::HpackError;
pub(crate) use h2wire::hpack::{int, put_int, put_str, STATIC};
use stats::reason::Malformed;

/// The dynamic table size we advertise (SETTINGS_HEADER_TABLE_SIZE): the RFC's default.
pub(crate) const TABLE_SIZE: usize = 4096;

/// What the engine takes from one response header block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Block {
    /// The `:status`, if the block had one with three digits.
    pub status: Option<u16>,
    /// The block's size decoded: names and values, as nghttp2 and h2load count it.
    pub raw_bytes: u64,
    /// The `content-length`, when the block had one that is a number.
    pub content_length: Option<u64>,
    /// The block had a pseudo-header (`:status` included): trailers must not.
    pub pseudo: bool,
    /// The first rule of form the block broke (RFC 9113 8.2, 8.3); a head without
    /// `:status` is the connection's to judge (trailers have none).
    pub malformed: Option<Malformed>,
}

impl Block {
    /// Takes one decoded field into the block: the order and form of its pseudo-headers,
    /// its name's and value's bytes, `content-length`. The first rule broken is kept.
    fn take(&mut self, class: Class, regular_seen: &mut bool) {
        let broke = match class.name {
            Name::Bad => Some(Malformed::FieldName),
            _ if class.bad_value => Some(Malformed::FieldValue),
            Name::Status | Name::Pseudo if *regular_seen => Some(Malformed::Pseudo),
            Name::Status => {
                self.pseudo = true;
                match (self.status, class.number) {
                    // Three digits, the first 1 to 5 (RFC 9110 15): 0xx is no status.
                    (None, Some(n)) if class.three_digits && n >= 100 && n != 101 => {
                        self.status = Some(n as u16);
                        None
                    }
                    _ => Some(Malformed::Status),
                }
            }
            Name::Pseudo => {
                self.pseudo = true;
                Some(Malformed::Pseudo)
            }
            Name::Connection => Some(Malformed::ConnectionField),
            Name::ContentLength => {
                *regular_seen = true;
                match (self.content_length, class.number) {
                    (_, None) => Some(Malformed::ContentLength),
                    (Some(a), Some(b)) if a != b => Some(Malformed::ContentLength),
                    (_, n) => {
                        self.content_length = n;
                        None
                    }
                }
            }
            Name::Regular => {
                *regular_seen = true;
                None
            }
        };
        if self.malformed.is_none() {
            self.malformed = broke;
        }
    }
}

/// What a field's name is to the checks of a response's form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Name {
    /// Any other field.
    Regular,
    Status,
    ContentLength,
    /// A pseudo-header other than `:status`: a request's, or an unknown one.
    Pseudo,
    /// A connection-specific field (RFC 9113 8.2.2).
    Connection,
    /// A name no field may have (RFC 9113 8.2.1).
    Bad,
}

/// What a field is to the checks of a response's form, kept per table entry so that an
/// indexed field is checked as its literal was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Class {
    name: Name,
    /// The value as a decimal number, when every byte of it is a digit (and it fits).
    number: Option<u64>,
    /// The value is three digits: a `:status`'s form.
    three_digits: bool,
    /// The value has NUL, CR or LF, or a space or tab at either end (RFC 9113 8.2.1).
    bad_value: bool,
}

impl Class {
    /// A field whose name is `name` and value `value`.
    fn of(name: Name, value: &Small) -> Self {
        // Only `:status` and `content-length` are read as numbers.
        let number = match name {
            Name::Status | Name::ContentLength => value.number(),
            _ => None,
        };
        Class {
            name,
            number,
            three_digits: value.len == 3 && number.is_some(),
            bad_value: value.bad_value(),
        }
    }

    /// A static-table entry's (RFC 7541 Appendix A): the request pseudo-headers at 1-7,
    /// `:status` at 8-14 (three digits each), `content-length` at 28 (its value empty:
    /// not a number), `transfer-encoding` at 57; no value there has a byte a value may not.
    fn of_static(i: usize) -> Self {
        let name = match i {
            1..=7 => Name::Pseudo,
            8..=14 => Name::Status,
            28 => Name::ContentLength,
            57 => Name::Connection,
            _ => Name::Regular,
        };
        let number = match name {
            Name::Status => STATIC[i - 1].1.parse().ok(),
            _ => None,
        };
        Class {
            name,
            number,
            three_digits: name == Name::Status,
            bad_value: false,
        }
    }
}

/// One dynamic-table entry: what the engine keeps of it.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Name and value lengths plus 32 (RFC 7541 4.1).
    size: u32,
    /// The name's length, for a literal that indexes it.
    name_len: u32,
    class: Class,
}

/// A connection's response decoder.
#[derive(Debug)]
pub(crate) struct Decoder {
    /// Newest first.
    entries: VecDeque<Entry>,
    size: usize,
    /// The size the server last set; at most [`TABLE_SIZE`].
    max_size: usize,
    /// Every field whole, for the shootout's verification ([`Decoder::capturing`]); `None`
    /// on the engine's path, which keeps only what it counts.
    capture: Option<Box<Capture>>,
}

/// The most a capturing decoder keeps of one block decoded (names and values): the
/// verification's bound, far above any real response head (a 256 KiB block of one-byte
/// references to one 4 KB entry would decode to about 1 GiB).
const MAX_CAPTURED: u64 = 1 << 20;

/// A header field decoded whole: name and value bytes.
pub(crate) type Field = (Vec<u8>, Vec<u8>);

/// What a capturing decoder keeps: the dynamic table's entries whole, in step with
/// `entries`, and the fields of the last block decoded.
#[derive(Debug, Default)]
struct Capture {
    /// Newest first, as `entries`.
    table: VecDeque<Field>,
    fields: Vec<Field>,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

/// The first bytes of a decoded string, its decoded length, and what the checks of a
/// field's form need of the rest, taken as the bytes come (no allocation). Per byte it
/// stores, ORs in the byte's flags ([`BYTE_FLAGS`]) and counts: every response field
/// passes through here, so the checks cost one table load a byte (bench/load.py over h2
/// measured the first version, with a comparison chain and digit arithmetic per byte, at
/// 1.03x the client's CPU per request).
#[derive(Clone, Copy, Default)]
struct Small {
    len: usize,
    /// The longest name compared is `transfer-encoding`'s 17 bytes; the longest number
    /// read, 20 digits (past u64, which [`Small::number`] refuses).
    head: [u8; 24],
    /// The flags of every byte but the first, ORed.
    rest: u8,
    last: u8,
}

/// The byte is not a digit.
const NOT_DIGIT: u8 = 1;
/// No field name may hold the byte (RFC 9113 8.2.1: controls, space, uppercase, DEL and
/// above; a colon, but for a pseudo-header's first byte, which [`Small::name`] checks).
const BAD_IN_NAME: u8 = 2;
/// No field value may hold the byte: NUL, CR, LF.
const BAD_IN_VALUE: u8 = 4;
/// A colon: bad in a name past its first byte.
const COLON: u8 = 8;

/// Each byte's flags, built once at compile time.
const BYTE_FLAGS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0usize;
    while b < 256 {
        let c = b as u8;
        let mut f = 0;
        if !c.is_ascii_digit() {
            f |= NOT_DIGIT;
        }
        if c <= 0x20 || c.is_ascii_uppercase() || c >= 0x7f {
            f |= BAD_IN_NAME;
        }
        if c == 0 || c == b'\r' || c == b'\n' {
            f |= BAD_IN_VALUE;
        }
        if c == b':' {
            f |= COLON;
        }
        t[b] = f;
        b += 1;
    }
    t
};

impl Small {
    #[inline]
    fn push(&mut self, b: u8) {
        if self.len < self.head.len() {
            self.head[self.len] = b;
        }
        if self.len > 0 {
            self.rest |= BYTE_FLAGS[usize::from(b)];
        }
        self.last = b;
        self.len += 1;
    }

    /// The flags of every byte, the first included.
    fn flags(&self) -> u8 {
        match self.len {
            0 => 0,
            _ => self.rest | BYTE_FLAGS[usize::from(self.head[0])],
        }
    }

    fn is(&self, s: &[u8]) -> bool {
        self.len == s.len() && s.len() <= self.head.len() && &self.head[..s.len()] == s
    }

    /// The value as a decimal number: every byte a digit, at least one, and it fits.
    fn number(&self) -> Option<u64> {
        if self.len == 0 || self.len > self.head.len() || self.flags() & NOT_DIGIT != 0 {
            return None;
        }
        self.head[..self.len].iter().try_fold(0u64, |n, d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
    }

    fn bad_value(&self) -> bool {
        self.len > 0
            && (self.flags() & BAD_IN_VALUE != 0
                || matches!(self.head[0], b' ' | b'\t')
                || matches!(self.last, b' ' | b'\t'))
    }

    /// What this string is as a field's name.
    fn name(&self) -> Name {
        const CONNECTION: [&[u8]; 5] = [
            b"connection",
            b"keep-alive",
            b"proxy-connection",
            b"transfer-encoding",
            b"upgrade",
        ];
        let first = self.head[0];
        if self.len == 0
            || self.rest & (BAD_IN_NAME | COLON) != 0
            || BYTE_FLAGS[usize::from(first)] & BAD_IN_NAME != 0
        {
            Name::Bad
        } else if first == b':' {
            if self.is(b":status") {
                Name::Status
            } else {
                Name::Pseudo
            }
        } else if self.is(b"content-length") {
            Name::ContentLength
        } else if CONNECTION.iter().any(|c| self.is(c)) {
            Name::Connection
        } else {
            Name::Regular
        }
    }
}

impl Decoder {
    /// A decoder with no room allocated yet.
    pub fn empty() -> Self {
        Self {
            entries: VecDeque::new(),
            size: 0,
            max_size: TABLE_SIZE,
            capture: None,
        }
    }

    /// Back to a new connection's empty table, keeping its room.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.size = 0;
        self.max_size = TABLE_SIZE;
        if let Some(c) = &mut self.capture {
            c.table.clear();
            c.fields.clear();
        }
    }

    pub fn new() -> Self {
        Self {
            // Each entry takes at least 32 bytes of the table: room for a full table.
            entries: VecDeque::with_capacity(TABLE_SIZE / 32),
            size: 0,
            max_size: TABLE_SIZE,
            capture: None,
        }
    }

    /// A decoder that also keeps every field whole ([`Decoder::fields`]): for a client
    /// that must check headers (verification), not for the load path. The same walk
    /// decodes both, so what verification sees is what the engine decodes.
    pub fn capturing() -> Self {
        Self {
            capture: Some(Box::default()),
            ..Self::new()
        }
    }

    /// The fields of the last block decoded, in order; empty unless capturing.
    pub fn fields(&self) -> &[Field] {
        self.capture.as_ref().map_or(&[], |c| &c.fields)
    }

    /// The whole (name, value) of an indexed field, when capturing.
    fn full_indexed(&self, i: u64) -> Option<Field> {
        let c = self.capture.as_ref()?;
        match i {
            1..=61 => {
                let (n, v) = STATIC[i as usize - 1];
                Some((n.into(), v.into()))
            }
            _ => c.table.get((i - 62) as usize).cloned(),
        }
    }

    /// Decodes one complete header block.
    pub fn decode(&mut self, mut b: &[u8]) -> Result<Block, HpackError> {
        let mut out = Block::default();
        let mut first = true;
        let mut regular_seen = false;
        if let Some(c) = &mut self.capture {
            c.fields.clear();
        }
        while let Some(&lead) = b.first() {
            if lead & 0x80 != 0 {
                // Indexed field.
                let (i, used) = int(b, 7)?;
                b = &b[used..];
                let (raw, class) = self.indexed(i)?;
                out.raw_bytes += raw;
                if self.capture.is_some() && out.raw_bytes > MAX_CAPTURED {
                    return Err(HpackError::ListTooLarge);
                }
                if let Some(f) = self.full_indexed(i) {
                    self.capture.as_mut().expect("capturing").fields.push(f);
                }
                out.take(class, &mut regular_seen);
            } else if lead & 0xe0 == 0x20 {
                // Dynamic table size update: only at the start of a block.
                let (size, used) = int(b, 5)?;
                b = &b[used..];
                if !first || size > TABLE_SIZE as u64 {
                    return Err(HpackError::BadTableSize);
                }
                self.max_size = size as usize;
                self.evict(0);
                continue; // several updates may open a block
            } else {
                // Literal: with incremental indexing (01), without (0000), never (0001).
                if self.capture.is_some() && out.raw_bytes > MAX_CAPTURED {
                    return Err(HpackError::ListTooLarge);
                }
                let index = lead & 0xc0 == 0x40;
                let prefix = if index { 6 } else { 4 };
                let (i, used) = int(b, prefix)?;
                b = &b[used..];
                let name_at = b;
                let (name_len, name) = if i == 0 {
                    let (name, used) = string::<Small>(b)?;
                    b = &b[used..];
                    (name.len as u64, name.name())
                } else {
                    self.name_of(i)?
                };
                let value_at = b;
                let (value, used) = string::<Small>(b)?;
                b = &b[used..];
                let full = match &self.capture {
                    None => None,
                    Some(_) => {
                        let name = match i {
                            0 => string::<Vec<u8>>(name_at)?.0,
                            _ => self.full_indexed(i).map(|f| f.0).unwrap_or_default(),
                        };
                        Some((name, string::<Vec<u8>>(value_at)?.0))
                    }
                };
                if let (Some(c), Some(f)) = (&mut self.capture, &full) {
                    c.fields.push(f.clone());
                }
                let class = Class::of(name, &value);
                out.take(class, &mut regular_seen);
                out.raw_bytes += name_len + value.len as u64;
                if index {
                    self.insert(name_len, value.len as u64, class, full);
                }
            }
            first = false;
        }
        Ok(out)
    }

    /// An indexed field's decoded size and class.
    fn indexed(&self, i: u64) -> Result<(u64, Class), HpackError> {
        match i {
            0 => Err(HpackError::BadIndex),
            1..=61 => {
                let (n, v) = STATIC[i as usize - 1];
                Ok(((n.len() + v.len()) as u64, Class::of_static(i as usize)))
            }
            _ => {
                let e = self
                    .entries
                    .get((i - 62) as usize)
                    .ok_or(HpackError::BadIndex)?;
                Ok((u64::from(e.size) - 32, e.class))
            }
        }
    }

    /// For a literal with an indexed name: the name's length and what it is.
    fn name_of(&self, i: u64) -> Result<(u64, Name), HpackError> {
        match i {
            0 => Err(HpackError::BadIndex),
            1..=61 => {
                let (n, _) = STATIC[i as usize - 1];
                Ok((n.len() as u64, Class::of_static(i as usize).name))
            }
            _ => {
                let e = self
                    .entries
                    .get((i - 62) as usize)
                    .ok_or(HpackError::BadIndex)?;
                Ok((u64::from(e.name_len), e.class.name))
            }
        }
    }

    /// Adds an entry; `full` is the field whole when capturing.
    fn insert(&mut self, name_len: u64, value_len: u64, class: Class, full: Option<Field>) {
        let size = name_len + value_len + 32;
        if size > self.max_size as u64 {
            // Larger than the table: it empties the table (RFC 7541 4.4).
            self.entries.clear();
            self.size = 0;
            if let Some(c) = &mut self.capture {
                c.table.clear();
            }
            return;
        }
        self.evict(size as usize);
        self.entries.push_front(Entry {
            size: size as u32,
            name_len: name_len as u32,
            class,
        });
        if let (Some(c), Some(f)) = (&mut self.capture, full) {
            c.table.push_front(f);
        }
        self.size += size as usize;
    }

    /// Evicts the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            match self.entries.pop_back() {
                Some(e) => {
                    self.size -= e.size as usize;
                    if let Some(c) = &mut self.capture {
                        c.table.pop_back();
                    }
                }
                None => break,
            }
        }
    }
}

/// Where a decoded string goes: its length and first bytes ([`Small`], the engine's), or
/// all of it (a capturing decoder's).
trait Sink: Default {
    fn push(&mut self, b: u8);
    fn put_raw(&mut self, raw: &[u8]) {
        for &b in raw {
            self.push(b);
        }
    }
}

impl Sink for Small {
    fn push(&mut self, b: u8) {
        Small::push(self, b);
    }
}

impl Sink for Vec<u8> {
    fn push(&mut self, b: u8) {
        Vec::push(self, b);
    }

    fn put_raw(&mut self, raw: &[u8]) {
        self.extend_from_slice(raw);
    }
}

/// A string literal: its decoded length and first bytes (or all of it), and the bytes it
/// took.
fn string<S: Sink>(b: &[u8]) -> Result<(S, usize), HpackError> {
    let huff = b.first().ok_or(HpackError::Truncated)? & 0x80 != 0;
    let (len, used) = int(b, 7)?;
    let end = used
        .checked_add(len as usize)
        .filter(|&e| e <= b.len())
        .ok_or(HpackError::Truncated)?;
    let raw = &b[used..end];
    let mut s = S::default();
    if huff {
        huffman(raw, &mut s)?;
    } else {
        s.put_raw(raw);
    }
    Ok((s, end))
}

/// Decodes a Huffman string into `out` (its length and first bytes, or all of it).
#[inline]
fn huffman(raw: &[u8], out: &mut impl Sink) -> Result<(), HpackError> {
    h2wire::hpack::huffman(raw, |b| out.push(b))
}

/// The static index of `name` with `value`, or of `name` alone: (index, value matched).
pub(crate) fn static_index(name: &str, value: &str) -> Option<(usize, bool)> {
    let mut by_name = None;
    for (i, (n, v)) in STATIC.iter().enumerate() {
        if *n == name {
            if *v == value {
                return Some((i + 1, true));
            }
            by_name.get_or_insert((i + 1, false));
        }
    }
    by_name
}

/// Appends a field's name part for a literal without indexing: the name's static index
/// when it has one, else the name itself. The value follows.
pub(crate) fn put_name(out: &mut Vec<u8>, name: &str) {
    match static_index(name, "") {
        Some((i, _)) => put_int(out, 0, 4, i),
        None => {
            out.push(0);
            put_str(out, name.as_bytes());
        }
    }
}

/// Appends a whole field with a literal value: an indexed field when the static table
/// holds the pair, else a literal without indexing.
pub(crate) fn put_field(out: &mut Vec<u8>, name: &str, value: &str) {
    if let Some((i, true)) = static_index(name, value) {
        put_int(out, 0x80, 7, i);
        return;
    }
    put_name(out, name);
    put_str(out, value.as_bytes());
}

#[cfg(test)]
pub(crate) fn huffman_encode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    h2wire::hpack::huffman_encode(s, &mut out);
    out
}

#[cfg(test)]
mod tests;
