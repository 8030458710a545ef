use super::*;

#[test]
fn header_round_trips_and_ignores_the_reserved_bit() {
    let mut out = Vec::new();
    put_header(&mut out, 0x12_3456, kind::HEADERS, flag::END_HEADERS, 7);
    let h = Header::parse(&out);
    assert_eq!((h.len, h.kind, h.flags, h.stream), (0x12_3456, 1, 4, 7));
    assert!(h.has(flag::END_HEADERS) && !h.has(flag::END_STREAM));
    out[5] |= 0x80;
    assert_eq!(Header::parse(&out).stream, 7);
    patch_len(&mut out, 0, 5);
    assert_eq!(Header::parse(&out).len, 5);
}

#[test]
fn control_frames_have_their_sizes() {
    let mut out = Vec::new();
    put_settings(
        &mut out,
        &[
            (setting::MAX_CONCURRENT_STREAMS, 100),
            (setting::ENABLE_PUSH, 0),
        ],
    );
    assert_eq!(Header::parse(&out).len, 12);
    out.clear();
    put_window_update(&mut out, 3, 1000);
    assert_eq!(
        (Header::parse(&out).kind, out.len()),
        (kind::WINDOW_UPDATE, 13)
    );
    out.clear();
    put_rst(&mut out, 3, code::CANCEL);
    assert_eq!(&out[9..], &code::CANCEL.to_be_bytes());
    out.clear();
    put_goaway(&mut out, 5, code::NO_ERROR);
    assert_eq!(
        (Header::parse(&out).len, &out[9..13]),
        (8, &5u32.to_be_bytes()[..])
    );
}
