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

/// A shrink then a growth before the next block are both announced, smallest first
/// (RFC 7541 4.2): only the last was.
#[test]
fn a_shrink_then_a_growth_announce_the_smallest_size_first() {
    let fields = Fields::default();
    let mut enc = Encoder::default();
    enc.set_peer_max(0);
    enc.set_peer_max(4096);
    let mut b = Vec::new();
    enc.start_block(&mut b);
    assert_eq!(b, [0x20, 0x3f, 0xe1, 0x1f]);
    b.clear();
    enc.start_block(&mut b);
    assert!(b.is_empty(), "announced once");
    enc.set_peer_max(1000);
    enc.start_block(&mut b);
    let mut one = Vec::new();
    hpack::put_int(&mut one, 0x20, 5, 1000);
    assert_eq!(b, one, "a shrink alone is one update");
    let _ = fields;
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
