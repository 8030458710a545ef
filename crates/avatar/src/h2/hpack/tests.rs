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
