//! The HPACK decoder against RFC 7541's examples, every kind of field, malformed blocks,
//! and the capturing decoder verification uses.

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

/// A capturing decoder gives every field whole, from each kind of field (indexed from
/// the dynamic table after evictions, literal with an indexed name, Huffman-coded), on
/// RFC 7541 C.6's three responses; its table stays in step with the counting one's.
#[test]
fn capturing_gives_rfc7541_c6_fields_whole() {
    let hex = |s: &str| -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    let mut d = Decoder::capturing();
    d.max_size = 256;
    let fields = |d: &Decoder| -> Vec<(String, String)> {
        d.fields()
            .iter()
            .map(|(n, v)| {
                (
                    String::from_utf8(n.clone()).unwrap(),
                    String::from_utf8(v.clone()).unwrap(),
                )
            })
            .collect()
    };
    let owned = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    d.decode(&hex("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3")).unwrap();
    assert_eq!(
        fields(&d),
        owned(&[
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ])
    );
    d.decode(&hex("4883 640e ffc1 c0bf")).unwrap();
    assert_eq!(
        fields(&d),
        owned(&[
            (":status", "307"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ])
    );
    let b = d.decode(&hex("88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07")).unwrap();
    assert_eq!(b.status, Some(200));
    assert_eq!(
        fields(&d),
        owned(&[
            (":status", "200"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ("location", "https://www.example.com"),
            ("content-encoding", "gzip"),
            (
                "set-cookie",
                "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
            ),
        ])
    );
    assert_eq!(d.capture.as_ref().unwrap().table.len(), d.entries.len());
    assert!(Decoder::new().fields().is_empty());
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

/// One 4 KB entry, then a block of one-byte references to it: the capturing decoder
/// (verification's) stops at its bound instead of holding about a GiB; the engine's,
/// which keeps only sizes, decodes it.
#[test]
fn capturing_decoder_bounds_what_a_block_decodes_to() {
    let mut block = vec![0x40];
    put_str(&mut block, b"x");
    put_str(&mut block, &[b'a'; 4000]);
    block.extend(std::iter::repeat_n(0xbe, 300));
    assert_eq!(
        Decoder::capturing().decode(&block),
        Err(HpackError::ListTooLarge)
    );
    let engine = Decoder::new().decode(&block).unwrap();
    assert_eq!(engine.raw_bytes, 301 * 4001);
}
