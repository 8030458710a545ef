//! The request side of HPACK's dynamic table: a run's fixed header fields (`:authority`,
//! `user-agent`, `accept`, the user's headers, a literal `:path`) are sent once per
//! connection as literals that the server indexes, and as one-byte indices after that, as
//! browsers, h2load and every HTTP/2 client do. Sending them as literals every time costs
//! the server a decode of each (nginx spent about 40% more CPU per request on foxbench's
//! requests than on h2load's at 10 streams, bench/runs/2026-11-25-h2-quiet).
//!
//! [`Fields`] holds the run's indexable fields, shared by every request shape. Each
//! connection's [`Encoder`] mirrors the server's decoder table: which fields it holds and at
//! which index, evicting oldest first as RFC 7541 4.4 does. It is fixed-size: encoding
//! allocates nothing.

use super::hpack;

/// The most distinct fields a run indexes; the rest are sent as literals without indexing.
pub(crate) const MAX_INDEXED: usize = 64;

/// The most entries a table of [`hpack::TABLE_SIZE`] bytes can hold (each takes 32 or more).
const MAX_ENTRIES: usize = hpack::TABLE_SIZE / 32;

/// The first dynamic-table index (RFC 7541 2.3.3): after the 61 static entries.
const FIRST_DYNAMIC: usize = 62;

/// One indexable field.
#[derive(Debug, Clone)]
struct Field {
    name: String,
    value: String,
    /// Its size in the table: name, value and 32 (RFC 7541 4.1).
    size: u32,
    /// The field as a literal with incremental indexing.
    indexing: Vec<u8>,
    /// The field as a literal without indexing, for a table too small to hold it.
    plain: Vec<u8>,
}

/// The run's indexable fields, shared by every request shape of the run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields {
    fields: Vec<Field>,
}

impl Fields {
    /// The id of `name: value`, added if new; `None` once [`MAX_INDEXED`] fields are held.
    pub fn intern(&mut self, name: &str, value: &str) -> Option<u16> {
        if let Some(i) = self
            .fields
            .iter()
            .position(|f| f.name == name && f.value == value)
        {
            return Some(i as u16);
        }
        if self.fields.len() >= MAX_INDEXED {
            return None;
        }
        let mut indexing = Vec::new();
        match hpack::static_index(name, "") {
            Some((i, _)) => hpack::put_int(&mut indexing, 0x40, 6, i),
            None => {
                indexing.push(0x40);
                hpack::put_str(&mut indexing, name.as_bytes());
            }
        }
        hpack::put_str(&mut indexing, value.as_bytes());
        let mut plain = Vec::new();
        hpack::put_field(&mut plain, name, value);
        self.fields.push(Field {
            name: name.to_owned(),
            value: value.to_owned(),
            size: (name.len() + value.len() + 32) as u32,
            indexing,
            plain,
        });
        Some((self.fields.len() - 1) as u16)
    }

    /// The most bytes field `id` takes encoded.
    pub fn max_len(&self, id: u16) -> usize {
        let f = &self.fields[usize::from(id)];
        f.indexing.len().max(f.plain.len())
    }
}

/// One connection's copy of what the server's decoder table holds of [`Fields`].
#[derive(Debug, Clone)]
pub(crate) struct Encoder {
    /// Per field: its insertion number (from 1), or 0 if never inserted.
    inserted_as: [u32; MAX_INDEXED],
    /// The entries' sizes in the table, oldest first: a ring of `len` from `head`.
    ring: [u32; MAX_ENTRIES],
    head: usize,
    len: usize,
    /// Insertions so far, and evictions (always of the oldest).
    inserted: u32,
    evicted: u32,
    /// The table's size now and its most, at most the server's HEADER_TABLE_SIZE.
    size: u32,
    max_size: u32,
    /// A size to announce at the start of the next header block (RFC 7541 6.3), and the
    /// smallest the table went to since the last block, announced first when smaller
    /// (RFC 7541 4.2: a shrink then a growth between two blocks are both signalled).
    announce: Option<u32>,
    announce_min: u32,
}

impl Default for Encoder {
    fn default() -> Self {
        Self {
            inserted_as: [0; MAX_INDEXED],
            ring: [0; MAX_ENTRIES],
            head: 0,
            len: 0,
            inserted: 0,
            evicted: 0,
            size: 0,
            max_size: hpack::TABLE_SIZE as u32,
            announce: None,
            announce_min: u32::MAX,
        }
    }
}

impl Encoder {
    /// The server's SETTINGS_HEADER_TABLE_SIZE: the table we use is at most that, and at
    /// most the RFC's default; a change is announced in the next header block.
    pub fn set_peer_max(&mut self, peer_max: u32) {
        let max = peer_max.min(hpack::TABLE_SIZE as u32);
        if max != self.max_size {
            self.max_size = max;
            self.evict_to(max);
            self.announce = Some(max);
            self.announce_min = self.announce_min.min(max);
        }
    }

    /// Appends what a header block must start with: a table size update, when one is due.
    #[inline]
    pub fn start_block(&mut self, out: &mut Vec<u8>) {
        if let Some(size) = self.announce.take() {
            if self.announce_min < size {
                hpack::put_int(out, 0x20, 5, self.announce_min as usize);
            }
            hpack::put_int(out, 0x20, 5, size as usize);
            self.announce_min = u32::MAX;
        }
    }

    /// Appends field `id`: its index when the table holds it, else a literal the server
    /// adds to its table (or, for a field larger than the table, one it does not).
    #[inline]
    pub fn put(&mut self, fields: &Fields, id: u16, out: &mut Vec<u8>) {
        let i = usize::from(id);
        let seq = self.inserted_as[i];
        if seq > self.evicted {
            hpack::put_int(out, 0x80, 7, FIRST_DYNAMIC + (self.inserted - seq) as usize);
            return;
        }
        let f = &fields.fields[i];
        if f.size > self.max_size {
            out.extend_from_slice(&f.plain);
            return;
        }
        out.extend_from_slice(&f.indexing);
        self.evict_to(self.max_size - f.size);
        self.ring[(self.head + self.len) % MAX_ENTRIES] = f.size;
        self.len += 1;
        self.size += f.size;
        self.inserted += 1;
        self.inserted_as[i] = self.inserted;
    }

    /// Evicts the oldest entries until the table takes at most `size` bytes.
    fn evict_to(&mut self, size: u32) {
        while self.size > size && self.len > 0 {
            self.size -= self.ring[self.head];
            self.head = (self.head + 1) % MAX_ENTRIES;
            self.len -= 1;
            self.evicted += 1;
        }
    }
}

#[cfg(test)]
mod tests;
