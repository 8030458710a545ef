use super::*;

#[test]
fn integers_round_trip_and_overflow_is_an_error() {
    for (n, v) in [
        (5u8, 0usize),
        (5, 10),
        (5, 31),
        (5, 1337),
        (7, 127),
        (4, 1 << 20),
    ] {
        let mut out = Vec::new();
        put_int(&mut out, 0, n, v);
        assert_eq!(int(&out, n), Ok((v as u64, out.len())), "n={n} v={v}");
    }
    assert_eq!(
        int(&[0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], 5),
        Err(HpackError::IntegerOverflow)
    );
    assert_eq!(int(&[0x1f, 0x80], 5), Err(HpackError::Truncated));
    assert_eq!(int(&[], 5), Err(HpackError::Truncated));
}

#[test]
fn huffman_round_trips_every_byte_and_rejects_bad_padding_and_eos() {
    let all: Vec<u8> = (0..=255).collect();
    let mut coded = Vec::new();
    huffman_encode(&all, &mut coded);
    let mut back = Vec::new();
    huffman(&coded, |b| back.push(b)).unwrap();
    assert_eq!(back, all);
    // RFC 7541 C.4.1: "www.example.com".
    let www = [
        0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
    ];
    let mut s = Vec::new();
    huffman(&www, |b| s.push(b)).unwrap();
    assert_eq!(s, b"www.example.com");
    // Padding of zeros, padding longer than 7 bits, and EOS itself.
    assert_eq!(huffman(&[0x00], |_| ()), Err(HpackError::BadHuffman));
    assert_eq!(huffman(&[0xf1, 0x00], |_| ()), Err(HpackError::BadHuffman));
    assert_eq!(huffman(&[0xff, 0xff], |_| ()), Err(HpackError::BadHuffman));
    assert_eq!(
        huffman(&[0xff, 0xff, 0xff, 0xff], |_| ()),
        Err(HpackError::BadHuffman)
    );
}

#[test]
fn static_table_is_rfc_7541_appendix_a() {
    assert_eq!(STATIC[0], (":authority", ""));
    assert_eq!(STATIC[7], (":status", "200"));
    assert_eq!(STATIC[60], ("www-authenticate", ""));
}

#[test]
fn integers_up_to_62_bits_for_qpack() {
    // 2^62 - 1 with a 6-bit prefix: 63, then 2^62 - 64 in nine groups of 7 bits.
    let mut out = Vec::new();
    put_int(&mut out, 0, 6, INT_MAX_62 as usize);
    assert_eq!(int_up_to(&out, 6, INT_MAX_62), Ok((INT_MAX_62, out.len())));
    assert_eq!(int(&out, 6), Err(HpackError::IntegerOverflow));
    // One more is refused, as is a tenth continuation byte.
    let mut over = Vec::new();
    put_int(&mut over, 0, 6, INT_MAX_62 as usize + 1);
    assert_eq!(
        int_up_to(&over, 6, INT_MAX_62),
        Err(HpackError::IntegerOverflow)
    );
    let long = [
        0x3f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
    ];
    assert_eq!(
        int_up_to(&long, 6, INT_MAX_62),
        Err(HpackError::IntegerOverflow)
    );
    // 2^32's bound is unchanged: a fifth continuation byte is refused even if zero.
    let padded = [0x1f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
    assert_eq!(int(&padded, 5), Err(HpackError::IntegerOverflow));
    assert_eq!(int_up_to(&padded, 5, INT_MAX_62), Ok((31, 7)));
}
