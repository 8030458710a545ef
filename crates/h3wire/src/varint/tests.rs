use super::*;

/// RFC 9000 A.1's examples: (encoding, value).
const RFC_9000_A1: [(&[u8], u64); 5] = [
    (
        &[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c],
        151_288_809_941_952_652,
    ),
    (&[0x9d, 0x7f, 0x3e, 0x7d], 494_878_333),
    (&[0x7b, 0xbd], 15_293),
    (&[0x25], 37),
    (&[0x40, 0x25], 37),
];

#[test]
fn rfc_9000_a1_examples_decode() {
    for (bytes, v) in RFC_9000_A1 {
        assert_eq!(decode(bytes), Some((v, bytes.len())), "{bytes:02x?}");
        // A byte more after it is not read.
        let mut longer = bytes.to_vec();
        longer.push(0xff);
        assert_eq!(decode(&longer), Some((v, bytes.len())));
    }
}

#[test]
fn rfc_9000_a1_examples_encode_shortest() {
    // All but 0x4025, the two-byte form of 37: an encoder writes the shortest.
    for (bytes, v) in &RFC_9000_A1[..4] {
        let mut out = Vec::new();
        put(&mut out, *v);
        assert_eq!(&out[..], *bytes);
        assert_eq!(size(*v), bytes.len());
    }
}

#[test]
fn every_prefix_of_an_integer_needs_more() {
    for (bytes, _) in RFC_9000_A1 {
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None, "{:02x?}", &bytes[..cut]);
        }
    }
}

#[test]
fn boundaries_round_trip() {
    for v in [
        0,
        63,
        64,
        16_383,
        16_384,
        (1 << 30) - 1,
        1 << 30,
        MAX - 1,
        MAX,
    ] {
        let mut out = Vec::new();
        put(&mut out, v);
        assert_eq!(out.len(), size(v), "{v}");
        assert_eq!(decode(&out), Some((v, out.len())), "{v}");
    }
}

#[test]
fn write_into_a_short_buffer_writes_nothing() {
    let mut b = [0u8; 3];
    assert_eq!(write(&mut b, 16_384), None);
    assert_eq!(b, [0; 3]);
    assert_eq!(write(&mut b, 16_383), Some(2));
}

#[test]
#[should_panic(expected = "above the largest")]
fn a_value_above_the_max_is_refused() {
    size(MAX + 1);
}
