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

    /// Empties the list for the next header block.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.spans.clear();
        self.list_size = 0;
        self.too_large = false;
    }

    /// Appends one field decoded by another codec (HTTP/3's QPACK), counting its size and
    /// keeping it only while the list is within `list_limit` and [`MAX_FIELDS`].
    pub fn push(&mut self, name: &[u8], value: &[u8], list_limit: usize) {
        self.list_size = self.list_size.saturating_add(name.len() + value.len() + 32);
        if self.list_size > list_limit || self.spans.len() >= MAX_FIELDS {
            self.too_large = true;
        }
        if self.too_large {
            return;
        }
        let start = self.bytes.len();
        self.bytes.extend_from_slice(name);
        let name_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.spans
            .push((start as u32, name_end as u32, self.bytes.len() as u32));
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
mod tests;
