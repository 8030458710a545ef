//! HPACK (RFC 7541) as the engine needs it: a response decoder that walks a header block in
//! place and keeps only what the engine uses, and the encoding of request fields.
//!
//! Why hand-written: the crates looked at (`hpack`, `fluke-hpack`/`loona-hpack`,
//! `httlib-hpack`) hand every decoded field to the caller as an owned or copy-on-write
//! buffer and keep dynamic-table entries as `Vec`s, so each Huffman-coded value (nginx
//! codes nearly all of its values) costs an allocation per response. The engine needs only
//! `:status`, and the table's bookkeeping. So the decoder keeps, per dynamic-table entry,
//! its size and whether it is a `:status` (and which), in a ring sized up front by the
//! table size we advertise; Huffman strings are decoded four bits at a time through a
//! table built once from the code ([`huffman_table`]), counting their length and keeping
//! their first bytes only. Every field is still decoded and checked, so the table stays in
//! step with the server's. Tests check it against RFC 7541's response examples (C.6, with
//! Huffman coding and table evictions) and round-trip the Huffman code for every byte; the
//! `hpack` fuzz target runs it on arbitrary blocks.
//!
//! Requests are encoded without the dynamic table (literal fields without indexing, no
//! Huffman), so one encoding per request shape is valid on any connection at any time.
//!
//! [`huffman_table`]: super::huffman_table

use std::collections::VecDeque;
use std::sync::OnceLock;

use super::huffman_table::CODES;

/// The dynamic table size we advertise (SETTINGS_HEADER_TABLE_SIZE): the RFC's default.
pub(crate) const TABLE_SIZE: usize = 4096;

/// Why a header block could not be decoded: a connection error (COMPRESSION_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HpackError {
    /// The block ended inside a field.
    Truncated,
    /// An integer above 2^32.
    IntegerOverflow,
    /// Index 0, or past the end of the tables.
    BadIndex,
    /// A Huffman string with EOS, or padding that is not a prefix of EOS or longer than 7 bits.
    BadHuffman,
    /// A table size update above the size we advertised (a table-size bomb), or one that
    /// does not open the block.
    BadTableSize,
}

/// The RFC 7541 static table (Appendix A): (name, value) for indexes 1..=61.
pub(crate) const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// What the engine takes from one response header block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Block {
    /// The `:status`, if the block had one with three digits.
    pub status: Option<u16>,
    /// The block's size decoded: names and values, as nghttp2 and h2load count it.
    pub raw_bytes: u64,
}

/// One dynamic-table entry: what the engine keeps of it.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Name and value lengths plus 32 (RFC 7541 4.1).
    size: u32,
    /// The name's length, for a literal that indexes it.
    name_len: u32,
    /// The status, when the entry is a `:status` field with three digits.
    status: Option<u16>,
    /// The name is `:status`.
    is_status: bool,
}

/// A connection's response decoder.
#[derive(Debug)]
pub(crate) struct Decoder {
    /// Newest first.
    entries: VecDeque<Entry>,
    size: usize,
    /// The size the server last set; at most [`TABLE_SIZE`].
    max_size: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

/// The first bytes of a decoded string, and its decoded length.
#[derive(Clone, Copy, Default)]
struct Small {
    len: usize,
    head: [u8; 8],
}

impl Small {
    fn push(&mut self, b: u8) {
        if self.len < self.head.len() {
            self.head[self.len] = b;
        }
        self.len += 1;
    }

    fn is(&self, s: &[u8]) -> bool {
        self.len == s.len() && s.len() <= self.head.len() && &self.head[..s.len()] == s
    }

    fn status(&self) -> Option<u16> {
        status_of(&self.head[..self.len.min(self.head.len())]).filter(|_| self.len == 3)
    }
}

fn status_of(v: &[u8]) -> Option<u16> {
    match v {
        [a, b, c] if v.iter().all(u8::is_ascii_digit) => {
            Some(u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'))
        }
        _ => None,
    }
}

impl Decoder {
    /// A decoder with no room allocated yet.
    pub fn empty() -> Self {
        Self {
            entries: VecDeque::new(),
            size: 0,
            max_size: TABLE_SIZE,
        }
    }

    /// Back to a new connection's empty table, keeping its room.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.size = 0;
        self.max_size = TABLE_SIZE;
    }

    pub fn new() -> Self {
        Self {
            // Each entry takes at least 32 bytes of the table: room for a full table.
            entries: VecDeque::with_capacity(TABLE_SIZE / 32),
            size: 0,
            max_size: TABLE_SIZE,
        }
    }

    /// Decodes one complete header block.
    pub fn decode(&mut self, mut b: &[u8]) -> Result<Block, HpackError> {
        let mut out = Block::default();
        let mut first = true;
        while let Some(&lead) = b.first() {
            if lead & 0x80 != 0 {
                // Indexed field.
                let (i, used) = int(b, 7)?;
                b = &b[used..];
                let (raw, status) = self.indexed(i)?;
                out.raw_bytes += raw;
                if let Some(s) = status {
                    out.status.get_or_insert(s);
                }
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
                let index = lead & 0xc0 == 0x40;
                let prefix = if index { 6 } else { 4 };
                let (i, used) = int(b, prefix)?;
                b = &b[used..];
                let (name_len, is_status) = if i == 0 {
                    let (name, used) = string(b)?;
                    b = &b[used..];
                    (name.len as u64, name.is(b":status"))
                } else {
                    self.name_of(i)?
                };
                let (value, used) = string(b)?;
                b = &b[used..];
                let status = if is_status { value.status() } else { None };
                if let Some(s) = status {
                    out.status.get_or_insert(s);
                }
                out.raw_bytes += name_len + value.len as u64;
                if index {
                    self.insert(name_len, value.len as u64, status, is_status);
                }
            }
            first = false;
        }
        Ok(out)
    }

    /// An indexed field's decoded size and status.
    fn indexed(&self, i: u64) -> Result<(u64, Option<u16>), HpackError> {
        match i {
            0 => Err(HpackError::BadIndex),
            1..=61 => {
                let (n, v) = STATIC[i as usize - 1];
                let status = (n == ":status").then(|| status_of(v.as_bytes())).flatten();
                Ok(((n.len() + v.len()) as u64, status))
            }
            _ => {
                let e = self
                    .entries
                    .get((i - 62) as usize)
                    .ok_or(HpackError::BadIndex)?;
                Ok((u64::from(e.size) - 32, e.status))
            }
        }
    }

    /// For a literal with an indexed name: the name's length, and whether it is `:status`.
    fn name_of(&self, i: u64) -> Result<(u64, bool), HpackError> {
        match i {
            0 => Err(HpackError::BadIndex),
            1..=61 => {
                let (n, _) = STATIC[i as usize - 1];
                Ok((n.len() as u64, n == ":status"))
            }
            _ => {
                let e = self
                    .entries
                    .get((i - 62) as usize)
                    .ok_or(HpackError::BadIndex)?;
                Ok((u64::from(e.name_len), e.is_status))
            }
        }
    }

    fn insert(&mut self, name_len: u64, value_len: u64, status: Option<u16>, is_status: bool) {
        let size = name_len + value_len + 32;
        if size > self.max_size as u64 {
            // Larger than the table: it empties the table (RFC 7541 4.4).
            self.entries.clear();
            self.size = 0;
            return;
        }
        self.evict(size as usize);
        self.entries.push_front(Entry {
            size: size as u32,
            name_len: name_len as u32,
            status,
            is_status,
        });
        self.size += size as usize;
    }

    /// Evicts the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            match self.entries.pop_back() {
                Some(e) => self.size -= e.size as usize,
                None => break,
            }
        }
    }
}

/// An HPACK integer with an `n`-bit prefix: its value and the bytes it took.
fn int(b: &[u8], n: u8) -> Result<(u64, usize), HpackError> {
    let mask = (1u16 << n) as u8 - 1;
    let first = *b.first().ok_or(HpackError::Truncated)? & mask;
    if first < mask {
        return Ok((u64::from(first), 1));
    }
    let mut v = u64::from(mask);
    for (k, &byte) in b.iter().enumerate().skip(1) {
        let shift = 7 * (k as u32 - 1);
        if shift > 28 {
            return Err(HpackError::IntegerOverflow);
        }
        v += u64::from(byte & 0x7f) << shift;
        if v > u64::from(u32::MAX) {
            return Err(HpackError::IntegerOverflow);
        }
        if byte & 0x80 == 0 {
            return Ok((v, k + 1));
        }
    }
    Err(HpackError::Truncated)
}

/// A string literal: its decoded length and first bytes, and the bytes it took.
fn string(b: &[u8]) -> Result<(Small, usize), HpackError> {
    let huff = b.first().ok_or(HpackError::Truncated)? & 0x80 != 0;
    let (len, used) = int(b, 7)?;
    let end = used
        .checked_add(len as usize)
        .filter(|&e| e <= b.len())
        .ok_or(HpackError::Truncated)?;
    let raw = &b[used..end];
    let mut s = Small::default();
    if huff {
        huffman(raw, &mut s)?;
    } else {
        s.len = raw.len();
        let n = raw.len().min(s.head.len());
        s.head[..n].copy_from_slice(&raw[..n]);
    }
    Ok((s, end))
}

/// One step of the nibble decoder: from a state, on four bits.
#[derive(Clone, Copy, Default)]
struct Step {
    next: u8,
    /// The symbol completed on the way, or `NONE`.
    sym: u16,
    /// EOS was decoded: an error.
    fail: bool,
}

const NONE: u16 = u16::MAX;

struct Nibbles {
    steps: Vec<[Step; 16]>,
    /// A string may end in this state: the bits since the last symbol are at most seven
    /// ones (a prefix of EOS).
    accept: Vec<bool>,
}

/// The nibble table, built once from the code: states are the code tree's inner nodes.
fn nibbles() -> &'static Nibbles {
    static TABLE: OnceLock<Nibbles> = OnceLock::new();
    TABLE.get_or_init(|| {
        // The tree: node 0 is the root; children[n][bit] is a node, or a leaf as !sym.
        let mut children: Vec<[i32; 2]> = vec![[0, 0]];
        for (sym, &(bits, code)) in CODES.iter().enumerate() {
            let mut n = 0usize;
            for k in (0..bits).rev() {
                let bit = ((code >> k) & 1) as usize;
                if k == 0 {
                    children[n][bit] = !(sym as i32);
                } else {
                    if children[n][bit] == 0 {
                        children.push([0, 0]);
                        children[n][bit] = (children.len() - 1) as i32;
                    }
                    n = children[n][bit] as usize;
                }
            }
        }
        // Accepting states: reached from the root by ones only, at depth 0..=7.
        let mut accept = vec![false; children.len()];
        let mut n = 0usize;
        accept[0] = true;
        for _ in 0..7 {
            n = children[n][1] as usize;
            accept[n] = true;
        }
        let steps = (0..children.len())
            .map(|state| {
                let mut row = [Step::default(); 16];
                for (nib, step) in row.iter_mut().enumerate() {
                    let mut n = state;
                    let mut sym = NONE;
                    let mut fail = false;
                    for k in (0..4).rev() {
                        let c = children[n][(nib >> k) & 1];
                        if c < 0 {
                            let s = !c;
                            if s == 256 {
                                fail = true;
                            }
                            sym = s as u16;
                            n = 0;
                        } else {
                            n = c as usize;
                        }
                    }
                    *step = Step {
                        next: n as u8,
                        sym,
                        fail,
                    };
                }
                row
            })
            .collect();
        Nibbles { steps, accept }
    })
}

/// Decodes a Huffman string into `out` (its length and first bytes).
fn huffman(raw: &[u8], out: &mut Small) -> Result<(), HpackError> {
    let t = nibbles();
    let mut state = 0u8;
    for &byte in raw {
        for nib in [byte >> 4, byte & 0x0f] {
            let step = t.steps[usize::from(state)][usize::from(nib)];
            if step.fail {
                return Err(HpackError::BadHuffman);
            }
            if step.sym != NONE {
                out.push(step.sym as u8);
            }
            state = step.next;
        }
    }
    if !t.accept[usize::from(state)] {
        return Err(HpackError::BadHuffman);
    }
    Ok(())
}

/// Appends an HPACK integer with an `n`-bit prefix to `out`, `flags` in the prefix's
/// first byte above the prefix.
pub(crate) fn put_int(out: &mut Vec<u8>, flags: u8, n: u8, v: usize) {
    let mask = (1usize << n) - 1;
    if v < mask {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut v = v - mask;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// Appends a string literal, not Huffman-coded.
pub(crate) fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_int(out, 0, 7, s.len());
    out.extend_from_slice(s);
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
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &c in s {
        let (n, code) = CODES[usize::from(c)];
        acc = (acc << n) | u64::from(code);
        bits += u32::from(n);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) as u8) | (0xff >> bits));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn huff_str(s: &[u8]) -> Vec<u8> {
        let h = huffman_encode(s);
        let mut out = Vec::new();
        put_int(&mut out, 0x80, 7, h.len());
        out.extend_from_slice(&h);
        out
    }

    #[test]
    fn huffman_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255u8).collect();
        for s in [&b"302"[..], b":status", b"", b"nginx/1.22.1", &all] {
            let mut small = Small::default();
            huffman(&huffman_encode(s), &mut small).unwrap();
            assert_eq!(small.len, s.len());
            assert_eq!(&small.head[..s.len().min(8)], &s[..s.len().min(8)]);
        }
    }

    #[test]
    fn huffman_rejects_bad_padding_and_eos() {
        // RFC 7541 5.2: padding of zeros, padding of 8 bits or more, and EOS are errors.
        let mut s = Small::default();
        let mut good = huffman_encode(b"a"); // 5 bits + 3 bits of padding
        assert!(huffman(&good, &mut s).is_ok());
        good[0] &= 0xf8;
        assert_eq!(
            huffman(&good, &mut Small::default()),
            Err(HpackError::BadHuffman)
        );
        assert_eq!(
            huffman(&[0xff], &mut Small::default()),
            Err(HpackError::BadHuffman)
        );
        assert_eq!(
            huffman(&[0xff, 0xff, 0xff, 0xff], &mut Small::default()),
            Err(HpackError::BadHuffman)
        );
    }

    /// RFC 7541 C.6: three responses with Huffman coding and evictions, decoded by the
    /// dynamic table; the statuses come back, and the third response finds `:status 302`
    /// ... evicted and a new literal in its place.
    #[test]
    fn rfc7541_c6_responses() {
        let hex = |s: &str| -> Vec<u8> {
            let s: String = s.split_whitespace().collect();
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let mut d = Decoder::new();
        d.max_size = 256;
        let r1 = hex("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3");
        let b = d.decode(&r1).unwrap();
        assert_eq!(b.status, Some(302));
        assert_eq!(d.size, 222);
        let r2 = hex("4883 640e ffc1 c0bf");
        let b = d.decode(&r2).unwrap();
        assert_eq!(b.status, Some(307));
        assert_eq!(d.size, 222);
        let r3 = hex("88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07");
        let b = d.decode(&r3).unwrap();
        assert_eq!(b.status, Some(200));
        assert_eq!(d.size, 215);
        assert_eq!(d.entries.len(), 3);
    }

    #[test]
    fn status_from_every_kind_of_field() {
        type Case = (&'static [u8], Option<u16>);
        let literal_302: Vec<u8> = [&[0x08u8, 0x03][..], b"302"].concat();
        let mut huff = vec![0x48];
        huff.extend(huff_str(b"404"));
        let cases: [Case; 3] = [(&[0x88], Some(200)), (&[0x8d], Some(404)), (&[0xbe], None)];
        for (block, want) in cases {
            let mut d = Decoder::new();
            if want.is_none() {
                assert_eq!(d.decode(block), Err(HpackError::BadIndex));
                continue;
            }
            assert_eq!(d.decode(block).unwrap().status, want);
        }
        let mut d = Decoder::new();
        assert_eq!(d.decode(&literal_302).unwrap().status, Some(302));
        assert_eq!(d.decode(&huff).unwrap().status, Some(404));
        // Indexed from the dynamic table: entry 62 is the 404 just inserted.
        assert_eq!(d.decode(&[0xbe]).unwrap().status, Some(404));
    }

    #[test]
    fn malformed_blocks_are_errors_not_panics() {
        type Case = (&'static [u8], HpackError);
        let cases: [Case; 6] = [
            (&[0x80], HpackError::BadIndex),
            (
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
                HpackError::IntegerOverflow,
            ),
            (&[0x04, 0x05, b'a'], HpackError::Truncated),
            (&[0x3f, 0xe1, 0x7f], HpackError::BadTableSize), // a table-size bomb
            (&[0x88, 0x20], HpackError::BadTableSize),       // an update after a field
            (&[0x04, 0x81, 0xff], HpackError::BadHuffman),
        ];
        for (block, want) in cases {
            assert_eq!(Decoder::new().decode(block), Err(want), "{block:02x?}");
        }
    }

    #[test]
    fn integers_round_trip() {
        for v in [0usize, 1, 14, 15, 16, 126, 127, 128, 300, 16384, 1 << 20] {
            for n in [4u8, 5, 6, 7] {
                let mut out = Vec::new();
                put_int(&mut out, 0, n, v);
                assert_eq!(int(&out, n).unwrap(), (v as u64, out.len()));
            }
        }
    }
}
