//! HPACK (RFC 7541): the request decoder, with Huffman coding and the dynamic table, and the
//! response encoder.
//!
//! Hand-written, as the load engine's is, and for the same reason: the crates looked at
//! (`hpack`, `fluke-hpack`/`loona-hpack`, `httlib-hpack`) keep each dynamic-table entry as its
//! own `Vec` and hand decoded fields out as owned or copy-on-write buffers, an allocation per
//! Huffman-coded field. Here the dynamic table is one byte buffer (growing to at most the
//! advertised table size) plus a ring of entry offsets, and fields are decoded into the worker's [`Fields`], whose buffers are reused: a kept-alive connection decodes
//! without allocating. Every RFC 7541 error is an [`HpackError`], which the connection turns
//! into a COMPRESSION_ERROR.
//!
//! Responses are encoded without the dynamic table: static-table indices for the names (and
//! for `:status` values the table has), literal values without indexing and without Huffman
//! coding. Indexing the repeated fields (`server`, `cache-control`, `content-type`) would save
//! some 55 bytes per response and the client's decoding; literals keep the encoder stateless
//! and cheapest for the server (whose CPU per request the shootout compares): a response head
//! is a plain copy of the HTTP/1 responder's fields, and no table is kept per connection.

use std::collections::VecDeque;

use h2wire::hpack::int;
pub use h2wire::hpack::{put_int, HpackError, STATIC};

/// The dynamic table size we advertise (SETTINGS_HEADER_TABLE_SIZE): the RFC's default.
pub const TABLE_SIZE: usize = 4096;

/// Decoded fields kept per header block at most; more make the list too large.
pub const MAX_FIELDS: usize = 128;

/// One decoded header list: the bytes of its names and values, and where each field is.
#[derive(Debug, Default)]
pub struct Fields {
    bytes: Vec<u8>,
    /// (name start, name end, value end) in `bytes`; the value starts at the name's end.
    spans: Vec<(u32, u32, u32)>,
    /// The list's size as SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC 9113 6.5.2).
    pub list_size: usize,
    /// The list went past the limit it was decoded with: the fields are incomplete.
    pub too_large: bool,
}

impl Fields {
    /// Empty, with room for a typical request.
    pub fn new() -> Self {
        Fields {
            bytes: Vec::with_capacity(1024),
            spans: Vec::with_capacity(32),
            list_size: 0,
            too_large: false,
        }
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
        self.list_size = 0;
        self.too_large = false;
    }

    /// The fields in order, as (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.spans.iter().map(|&(n, v, e)| {
            (
                &self.bytes[n as usize..v as usize],
                &self.bytes[v as usize..e as usize],
            )
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Absolute offset of the name in the table's byte stream.
    start: u64,
    name_len: u32,
    value_len: u32,
}

impl Entry {
    fn size(&self) -> usize {
        self.name_len as usize + self.value_len as usize + 32
    }
}

/// A connection's request decoder: the dynamic table.
#[derive(Debug)]
pub struct Decoder {
    /// Entry bytes, oldest first; `data[0]` is at absolute offset `base`.
    data: Vec<u8>,
    base: u64,
    /// Oldest first.
    entries: VecDeque<Entry>,
    /// The table's size by RFC 7541 4.1.
    size: usize,
    /// The size the client last set; at most [`TABLE_SIZE`].
    max_size: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// An empty table of [`TABLE_SIZE`]. Its buffers grow with what the client indexes
    /// (a few dozen bytes for most clients, at most the table size), so an idle connection
    /// does not pay for a full table; growth stops once the client's fields are in.
    pub fn new() -> Self {
        Decoder {
            data: Vec::new(),
            base: 0,
            entries: VecDeque::new(),
            size: 0,
            max_size: TABLE_SIZE,
        }
    }

    /// Decodes one complete header block into `out` (cleared first). Past `list_limit` bytes
    /// of header list the fields stop being kept (`out.too_large`), but the block is still
    /// checked to its end, so the table stays in step with the client's: past the limit a
    /// field is only counted (its bytes are copied only when the table must take it in).
    pub fn decode(
        &mut self,
        mut b: &[u8],
        out: &mut Fields,
        list_limit: usize,
    ) -> Result<(), HpackError> {
        out.clear();
        let mut first = true;
        while let Some(&lead) = b.first() {
            if lead & 0x80 != 0 && !out.too_large {
                // An indexed field that would pass the limit is not copied at all.
                let (n, v) = self.entry_lens(int(b, 7)?.0)?;
                if out.list_size + n + v + 32 > list_limit {
                    out.too_large = true;
                }
            }
            if out.too_large {
                // Past the limit nothing is kept: the rest is only checked and counted, so a
                // byte of input costs no more than it did to send (an indexed reference to a
                // 4 KB entry is one byte).
                b = self.skip_field(b, out)?;
                continue;
            }
            let mark = out.bytes.len();
            let (index_it, name_end) = if lead & 0x80 != 0 {
                // Indexed field.
                let (i, used) = int(b, 7)?;
                b = &b[used..];
                let (name_end, _) = self.copy_indexed(i, true, &mut out.bytes)?;
                (false, name_end)
            } else if lead & 0xe0 == 0x20 {
                // Dynamic table size update: only before the first field.
                let (size, used) = int(b, 5)?;
                b = &b[used..];
                if !first || size > TABLE_SIZE as u64 {
                    return Err(HpackError::BadTableSize);
                }
                self.max_size = size as usize;
                self.evict(0);
                continue;
            } else {
                // Literal: with incremental indexing (01), without (0000), never (0001).
                let index_it = lead & 0xc0 == 0x40;
                let prefix = if index_it { 6 } else { 4 };
                let (i, used) = int(b, prefix)?;
                b = &b[used..];
                let name_end = if i == 0 {
                    let used = string(b, &mut out.bytes)?;
                    b = &b[used..];
                    out.bytes.len()
                } else {
                    self.copy_indexed(i, false, &mut out.bytes)?.0
                };
                let used = string(b, &mut out.bytes)?;
                b = &b[used..];
                (index_it, name_end)
            };
            first = false;
            let name_len = name_end - mark;
            let value_len = out.bytes.len() - name_end;
            if index_it {
                self.insert(&out.bytes[mark..name_end], &out.bytes[name_end..]);
            }
            out.list_size += name_len + value_len + 32;
            if out.list_size > list_limit || out.spans.len() >= MAX_FIELDS {
                out.too_large = true;
            }
            if out.too_large {
                out.bytes.truncate(mark);
            } else {
                out.spans
                    .push((mark as u32, name_end as u32, out.bytes.len() as u32));
            }
        }
        Ok(())
    }

    /// Checks and counts one field of a block already too large, returning the rest of the
    /// block. Nothing is copied to `out` except a field the client indexes, which the table
    /// must take in (a table entry's bytes at most).
    fn skip_field<'b>(
        &mut self,
        mut b: &'b [u8],
        out: &mut Fields,
    ) -> Result<&'b [u8], HpackError> {
        let lead = b[0];
        if lead & 0x80 != 0 {
            let (i, used) = int(b, 7)?;
            let (name_len, value_len) = self.entry_lens(i)?;
            out.list_size = out.list_size.saturating_add(name_len + value_len + 32);
            return Ok(&b[used..]);
        }
        if lead & 0xe0 == 0x20 {
            // A table size update after a field.
            return Err(HpackError::BadTableSize);
        }
        let index_it = lead & 0xc0 == 0x40;
        let (i, used) = int(b, if index_it { 6 } else { 4 })?;
        b = &b[used..];
        let mark = out.bytes.len();
        if index_it {
            let name_end = if i == 0 {
                let used = string(b, &mut out.bytes)?;
                b = &b[used..];
                out.bytes.len()
            } else {
                self.copy_indexed(i, false, &mut out.bytes)?.0
            };
            let used = string(b, &mut out.bytes)?;
            b = &b[used..];
            self.insert(&out.bytes[mark..name_end], &out.bytes[name_end..]);
            out.list_size = out.list_size.saturating_add(out.bytes.len() - mark + 32);
            out.bytes.truncate(mark);
            return Ok(b);
        }
        let name_len = if i == 0 {
            let (used, len) = string_len(b)?;
            b = &b[used..];
            len
        } else {
            self.entry_lens(i)?.0
        };
        let (used, value_len) = string_len(b)?;
        out.list_size = out.list_size.saturating_add(name_len + value_len + 32);
        Ok(&b[used..])
    }

    /// The name and value lengths of entry `i`, copying nothing.
    fn entry_lens(&self, i: u64) -> Result<(usize, usize), HpackError> {
        match i {
            0 => Err(HpackError::BadIndex),
            1..=61 => {
                let (n, v) = STATIC[i as usize - 1];
                Ok((n.len(), v.len()))
            }
            _ => {
                let k = (i - 62) as usize;
                if k >= self.entries.len() {
                    return Err(HpackError::BadIndex);
                }
                let e = self.entries[self.entries.len() - 1 - k];
                Ok((e.name_len as usize, e.value_len as usize))
            }
        }
    }

    /// Appends the name (and, when `with_value`, the value) of entry `i`; returns where the
    /// name ends in `out`, and the entry's size.
    fn copy_indexed(
        &self,
        i: u64,
        with_value: bool,
        out: &mut Vec<u8>,
    ) -> Result<(usize, usize), HpackError> {
        match i {
            0 => Err(HpackError::BadIndex),
            1..=61 => {
                let (n, v) = STATIC[i as usize - 1];
                out.extend_from_slice(n.as_bytes());
                let name_end = out.len();
                if with_value {
                    out.extend_from_slice(v.as_bytes());
                }
                Ok((name_end, n.len() + v.len() + 32))
            }
            _ => {
                let k = (i - 62) as usize;
                if k >= self.entries.len() {
                    return Err(HpackError::BadIndex);
                }
                // Index 62 is the newest entry.
                let e = self.entries[self.entries.len() - 1 - k];
                let at = (e.start - self.base) as usize;
                let name_end = at + e.name_len as usize;
                out.extend_from_slice(&self.data[at..name_end]);
                let out_name_end = out.len();
                if with_value {
                    out.extend_from_slice(&self.data[name_end..name_end + e.value_len as usize]);
                }
                Ok((out_name_end, e.size()))
            }
        }
    }

    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = name.len() + value.len() + 32;
        if size > self.max_size {
            // Larger than the table: it empties the table (RFC 7541 4.4).
            self.evict(self.max_size + 1);
            return;
        }
        self.evict(size);
        let start = self.base + self.data.len() as u64;
        self.data.extend_from_slice(name);
        self.data.extend_from_slice(value);
        self.entries.push_back(Entry {
            start,
            name_len: name.len() as u32,
            value_len: value.len() as u32,
        });
        self.size += size;
    }

    /// Evicts the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        let mut drop_bytes = 0usize;
        while self.size + room > self.max_size {
            let Some(e) = self.entries.pop_front() else {
                break;
            };
            self.size -= e.size();
            drop_bytes += e.size() - 32;
        }
        if drop_bytes > 0 {
            // At most the table size: a short move, and only when the table is full.
            self.data.drain(..drop_bytes);
            self.base += drop_bytes as u64;
        }
    }
}

/// Decodes a string literal onto `out`; returns the bytes it took.
fn string(b: &[u8], out: &mut Vec<u8>) -> Result<usize, HpackError> {
    let huff = b.first().ok_or(HpackError::Truncated)? & 0x80 != 0;
    let (len, used) = int(b, 7)?;
    let end = used
        .checked_add(len as usize)
        .filter(|&e| e <= b.len())
        .ok_or(HpackError::Truncated)?;
    let raw = &b[used..end];
    if huff {
        huffman(raw, out)?;
    } else {
        out.extend_from_slice(raw);
    }
    Ok(end)
}

/// Checks a string literal without keeping it (Huffman coding is still validated); returns
/// the bytes it took and its decoded length.
fn string_len(b: &[u8]) -> Result<(usize, usize), HpackError> {
    let huff = b.first().ok_or(HpackError::Truncated)? & 0x80 != 0;
    let (len, used) = int(b, 7)?;
    let end = used
        .checked_add(len as usize)
        .filter(|&e| e <= b.len())
        .ok_or(HpackError::Truncated)?;
    let raw = &b[used..end];
    let decoded = if huff {
        let mut n = 0usize;
        h2wire::hpack::huffman(raw, |_| n += 1)?;
        n
    } else {
        raw.len()
    };
    Ok((end, decoded))
}

/// Decodes a Huffman string onto `out`.
#[inline]
fn huffman(raw: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
    h2wire::hpack::huffman(raw, |b| out.push(b))
}

/// Appends `:status` with a three-digit code: indexed when the static table has it.
pub fn put_status(out: &mut Vec<u8>, code: &[u8]) {
    let indexed = match code {
        b"200" => 8,
        b"204" => 9,
        b"206" => 10,
        b"304" => 11,
        b"400" => 12,
        b"404" => 13,
        b"500" => 14,
        _ => 0,
    };
    if indexed > 0 {
        put_int(out, 0x80, 7, indexed);
    } else {
        // Literal without indexing, name `:status` (index 8).
        put_int(out, 0, 4, 8);
        put_int(out, 0, 7, code.len());
        out.extend_from_slice(code);
    }
}

/// Appends a field as a literal without indexing, its name lowercased (HTTP/2 names are
/// lowercase) and taken from the static table when it is there.
pub fn put_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    match static_name(name) {
        Some(i) => put_int(out, 0, 4, i),
        None => {
            out.push(0);
            put_int(out, 0, 7, name.len());
            out.extend(name.iter().map(u8::to_ascii_lowercase));
        }
    }
    put_int(out, 0, 7, value.len());
    out.extend_from_slice(value);
}

/// The static index of a response field's name (any case), for the names avatar sends.
fn static_name(name: &[u8]) -> Option<usize> {
    const NAMES: [(&[u8], usize); 9] = [
        (b"date", 33),
        (b"server", 54),
        (b"cache-control", 24),
        (b"content-length", 28),
        (b"content-type", 31),
        (b"location", 46),
        (b"etag", 34),
        (b"allow", 22),
        (b"last-modified", 44),
    ];
    NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, i)| i)
}

#[cfg(test)]
pub(crate) fn huffman_encode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    h2wire::hpack::huffman_encode(s, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn list(f: &Fields) -> Vec<(String, String)> {
        f.iter()
            .map(|(n, v)| {
                (
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect()
    }

    /// RFC 7541 C.4: three requests with Huffman coding, sharing the dynamic table.
    #[test]
    fn rfc7541_c4_requests_with_huffman() {
        let mut d = Decoder::new();
        let mut f = Fields::new();
        d.decode(
            &hex("8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"),
            &mut f,
            1 << 20,
        )
        .unwrap();
        assert_eq!(list(&f)[3], (":authority".into(), "www.example.com".into()));
        assert_eq!(d.size, 57);
        d.decode(&hex("8286 84be 5886 a8eb 1064 9cbf"), &mut f, 1 << 20)
            .unwrap();
        assert_eq!(list(&f)[4], ("cache-control".into(), "no-cache".into()));
        assert_eq!(list(&f)[3].1, "www.example.com");
        assert_eq!(d.size, 110);
        d.decode(
            &hex("8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"),
            &mut f,
            1 << 20,
        )
        .unwrap();
        assert_eq!(list(&f)[4], ("custom-key".into(), "custom-value".into()));
        assert_eq!(list(&f)[1], (":scheme".into(), "https".into()));
        assert_eq!(d.size, 164);
    }

    /// RFC 7541 C.5-style evictions with a small table: the oldest entries go first.
    #[test]
    fn evictions_keep_the_newest_entries() {
        let mut d = Decoder::new();
        let mut f = Fields::new();
        // Size update to 100, then two literals with indexing of 40+ bytes each.
        let mut block = vec![0x3f, 0x45]; // 31 + 69 = 100
        for (n, v) in [("aaaa", "1111111111"), ("bbbb", "2222222222")] {
            block.push(0x40);
            put_int(&mut block, 0, 7, n.len());
            block.extend_from_slice(n.as_bytes());
            put_int(&mut block, 0, 7, v.len());
            block.extend_from_slice(v.as_bytes());
        }
        d.decode(&block, &mut f, 1 << 20).unwrap();
        assert_eq!(d.entries.len(), 2);
        // A third evicts the first.
        let third = [&[0x40, 0x04][..], b"cccc", &[0x0a], b"3333333333"].concat();
        d.decode(&third, &mut f, 1 << 20).unwrap();
        assert_eq!(d.entries.len(), 2);
        d.decode(&[0xbe, 0xbf], &mut f, 1 << 20).unwrap();
        assert_eq!(list(&f)[0].0, "cccc");
        assert_eq!(list(&f)[1].0, "bbbb");
        assert_eq!(
            d.decode(&[0xc0], &mut f, 1 << 20),
            Err(HpackError::BadIndex)
        );
    }

    #[test]
    fn malformed_blocks_are_errors_not_panics() {
        type Case = (&'static [u8], HpackError);
        let cases: [Case; 7] = [
            (&[0x80], HpackError::BadIndex),
            (&[0xbe], HpackError::BadIndex),
            (
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
                HpackError::IntegerOverflow,
            ),
            (&[0x04, 0x05, b'a'], HpackError::Truncated),
            (&[0x3f, 0xe1, 0x7f], HpackError::BadTableSize),
            (&[0x82, 0x20], HpackError::BadTableSize),
            (&[0x04, 0x81, 0xff], HpackError::BadHuffman),
        ];
        for (block, want) in cases {
            let r = Decoder::new().decode(block, &mut Fields::new(), 1 << 20);
            assert_eq!(r, Err(want), "{block:02x?}");
        }
    }

    #[test]
    fn huffman_round_trips_every_byte_and_rejects_bad_padding() {
        let all: Vec<u8> = (0..=255u8).collect();
        for s in [&b"302"[..], b"", b"www.example.com", &all] {
            let mut out = Vec::new();
            huffman(&huffman_encode(s), &mut out).unwrap();
            assert_eq!(out, s);
        }
        let mut zero_pad = huffman_encode(b"a");
        zero_pad[0] &= 0xf8;
        for bad in [&zero_pad[..], &[0xff], &[0xff, 0xff, 0xff, 0xff]] {
            assert_eq!(huffman(bad, &mut Vec::new()), Err(HpackError::BadHuffman));
        }
    }

    #[test]
    fn list_limit_marks_too_large_but_decodes_on() {
        let mut d = Decoder::new();
        let mut f = Fields::new();
        let block = [
            &[0x40, 0x01][..],
            b"x",
            &[0x7f, 0x00],
            &[b'v'; 127],
            &[0x82],
        ]
        .concat();
        d.decode(&block, &mut f, 100).unwrap();
        assert!(f.too_large);
        assert_eq!(d.entries.len(), 1, "the table still took the entry");
    }

    /// An HPACK bomb: one large indexed field referenced byte after byte in a block over the
    /// limit. Past the limit the fields are counted, not copied, so the block costs what its
    /// bytes cost to read, and the table still takes what the client indexes.
    #[test]
    fn oversized_block_counts_indexed_fields_without_copying_them() {
        let mut d = Decoder::new();
        let mut f = Fields::new();
        let big = "v".repeat(4000);
        let mut block = vec![0x40, 1, b'x'];
        put_int(&mut block, 0, 7, big.len());
        block.extend_from_slice(big.as_bytes());
        d.decode(&block, &mut f, 1 << 20).unwrap();
        assert!(!f.too_large);
        let entry = 1 + 4000 + 32;

        let mut bomb = Fields::default();
        let mut block = vec![0xbe; 16 * 1024];
        // A field indexed past the limit still enters the table; a bad index is still an error.
        block.extend_from_slice(&[0x40, 1, b'y', 1, b'z']);
        block.push(0xbe);
        d.decode(&block, &mut bomb, 4000).unwrap();
        assert!(bomb.too_large);
        assert_eq!(bomb.spans.len(), 0);
        assert!(
            bomb.bytes.capacity() < 64,
            "only the indexed y: z was copied"
        );
        assert_eq!(bomb.list_size, 16 * 1024 * entry + 2 * (1 + 1 + 32));
        assert_eq!(d.entries.len(), 2);
        assert_eq!(
            d.decode(&[0xbe, 0xc0], &mut bomb, 10),
            Err(HpackError::BadIndex)
        );
        // Huffman strings are still checked past the limit: 0x00 pads with zeros, not ones.
        let block = [0xbe, 0xbe, 0x00, 0x81, 0x00, 0x01, b'v'];
        assert!(d.decode(&block, &mut bomb, 10).is_err());
    }

    #[test]
    fn encoder_output_decodes() {
        let mut out = Vec::new();
        put_status(&mut out, b"302");
        put_status(&mut out, b"200");
        put_field(&mut out, b"Location", b"/x.png");
        put_field(&mut out, b"X-Content-Type-Options", b"nosniff");
        let mut f = Fields::new();
        Decoder::new().decode(&out, &mut f, 1 << 20).unwrap();
        let l = list(&f);
        assert_eq!(l[0], (":status".into(), "302".into()));
        assert_eq!(l[1], (":status".into(), "200".into()));
        assert_eq!(l[2], ("location".into(), "/x.png".into()));
        assert_eq!(l[3], ("x-content-type-options".into(), "nosniff".into()));
    }
}
