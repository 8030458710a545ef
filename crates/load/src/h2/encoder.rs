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
    /// A size to announce at the start of the next header block (RFC 7541 6.3).
    announce: Option<u32>,
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
        }
    }

    /// Appends what a header block must start with: a table size update, when one is due.
    #[inline]
    pub fn start_block(&mut self, out: &mut Vec<u8>) {
        if let Some(size) = self.announce.take() {
            hpack::put_int(out, 0x20, 5, size as usize);
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
mod tests {
    use super::*;

    /// The fields a decoder that keeps the whole table (loona-hpack, which passes h2spec)
    /// reads from blocks made by `Encoder`, across table pressure and size changes.
    fn decoded(blocks: &[Vec<u8>], sizes: &[(usize, usize)]) -> Vec<Vec<(String, String)>> {
        let mut d = loona_hpack::Decoder::new();
        let mut out = Vec::new();
        for (n, b) in blocks.iter().enumerate() {
            if let Some(&(_, s)) = sizes.iter().find(|(at, _)| *at == n) {
                d.set_max_table_size(s);
            }
            let list = d.decode(b).unwrap_or_else(|e| panic!("block {n}: {e:?}"));
            out.push(
                list.into_iter()
                    .map(|(k, v)| (String::from_utf8(k).unwrap(), String::from_utf8(v).unwrap()))
                    .collect(),
            );
        }
        out
    }

    #[test]
    fn indexed_fields_decode_to_the_same_fields_under_eviction_and_size_changes() {
        let mut fields = Fields::default();
        // 40 fields of about 150 bytes: 6 KB, more than a 4 KB table holds.
        let pairs: Vec<(String, String)> = (0..40)
            .map(|i| (format!("x-field-{i}"), "v".repeat(100 + i)))
            .chain([(":authority".into(), "127.0.0.1:8080".into())])
            .collect();
        let ids: Vec<u16> = pairs
            .iter()
            .map(|(k, v)| fields.intern(k, v).unwrap())
            .collect();
        assert_eq!(fields.intern(&pairs[3].0, &pairs[3].1), Some(ids[3]));
        let mut enc = Encoder::default();
        let mut blocks = Vec::new();
        let mut want = Vec::new();
        // The decoder's size changes take effect at these blocks: (block, size).
        let sizes = [(300, 1000), (600, 0), (700, 4096)];
        let mut x = 7u64;
        for n in 0..1000 {
            if let Some(&(_, s)) = sizes.iter().find(|(at, _)| *at == n) {
                enc.set_peer_max(s as u32);
            }
            let mut b = Vec::new();
            enc.start_block(&mut b);
            let mut w = Vec::new();
            for _ in 0..5 {
                // A few fields often, the others now and then.
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = if x >> 60 < 12 {
                    (x >> 33) as usize % 4
                } else {
                    (x >> 33) as usize % ids.len()
                };
                enc.put(&fields, ids[i], &mut b);
                w.push(pairs[i].clone());
            }
            blocks.push(b);
            want.push(w);
        }
        assert_eq!(decoded(&blocks, &sizes), want);
        // Once held, a field is one byte.
        let mut b = Vec::new();
        enc.put(&fields, ids[0], &mut b);
        let mut again = Vec::new();
        enc.put(&fields, ids[0], &mut again);
        assert_eq!(again.len(), 1);
    }

    #[test]
    fn a_field_larger_than_the_table_is_sent_without_indexing() {
        let mut fields = Fields::default();
        let big = fields.intern("x-big", &"b".repeat(200)).unwrap();
        let mut enc = Encoder::default();
        enc.set_peer_max(100);
        let mut b = Vec::new();
        enc.start_block(&mut b);
        enc.put(&fields, big, &mut b);
        enc.put(&fields, big, &mut b);
        let mut d = loona_hpack::Decoder::new();
        d.set_max_table_size(100);
        let list = d.decode(&b).unwrap();
        assert_eq!(list.len(), 2);
        assert!(list.iter().all(|(k, v)| k == b"x-big" && v.len() == 200));
    }

    #[test]
    fn interning_stops_at_the_bound() {
        let mut fields = Fields::default();
        for i in 0..MAX_INDEXED {
            assert!(fields.intern("x", &i.to_string()).is_some());
        }
        assert_eq!(fields.intern("x", "one more"), None);
        assert_eq!(fields.intern("x", "0"), Some(0));
    }
}
