use super::*;

#[test]
fn every_code_has_its_rfc_name() {
    assert_eq!(name(0x100), Some("H3_NO_ERROR"));
    assert_eq!(name(0x106), Some("H3_FRAME_ERROR"));
    assert_eq!(name(0x110), Some("H3_VERSION_FALLBACK"));
    assert_eq!(name(0x200), Some("QPACK_DECOMPRESSION_FAILED"));
    assert_eq!(name(0x202), Some("QPACK_DECODER_STREAM_ERROR"));
    assert_eq!(name(H3_MESSAGE_ERROR), Some("H3_MESSAGE_ERROR"));
    // 0x100..=0x110 and 0x200..=0x202, each once, in order.
    let codes: Vec<u64> = ALL.iter().map(|(c, _)| *c).collect();
    let want: Vec<u64> = (0x100..=0x110).chain(0x200..=0x202).collect();
    assert_eq!(codes, want);
}

#[test]
fn unnamed_and_reserved_codes_have_no_name() {
    for code in [0, 0xff, 0x111, 0x1ff, 0x203, 0x21, 0x21 + 0x1f * 9] {
        assert_eq!(name(code), None, "{code:#x}");
    }
    assert!(is_reserved(0x21));
    assert!(is_reserved(0x21 + 0x1f * 1000));
    assert!(!is_reserved(0x100));
}
