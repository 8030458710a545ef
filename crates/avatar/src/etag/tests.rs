use super::*;

#[test]
fn fnv_matches_reference_vectors() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(&hex16(0x0123_4567_89ab_cdef), b"0123456789abcdef");
}

#[test]
fn if_none_match_table() {
    let tag = b"\"ff8800-abc\"";
    let cases: &[(&[u8], bool)] = &[
        (b"\"ff8800-abc\"", true),
        (b"W/\"ff8800-abc\"", true),
        (b"*", true),
        (b"\"x\", \"ff8800-abc\"", true),
        (b"\"x\" ,\t W/\"ff8800-abc\" ", true),
        (b"\"ff8800-ab\"", false),
        (b"ff8800-abc", false),
        (b"", false),
        (b"\"x\",\"y\"", false),
    ];
    for &(field, want) in cases {
        assert_eq!(
            if_none_match(field, tag),
            want,
            "{:?}",
            String::from_utf8_lossy(field)
        );
    }
}
