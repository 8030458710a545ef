use super::*;

#[test]
fn frame_headers_parse_as_the_bytes_arrive() {
    let mut stream = Vec::new();
    put_headers(&mut stream, &[0, 0, 0xd1]);
    put_data_header(&mut stream, 70_000);
    let want = Header {
        kind: Kind::Headers,
        len: 3,
        header_len: 2,
    };
    assert_eq!(parse_header(&stream, 16), Ok(Some(want)));
    let data = &stream[5..];
    // DATA is streamed: no limit applies to it.
    assert_eq!(
        parse_header(data, 16),
        Ok(Some(Header {
            kind: Kind::Data,
            len: 70_000,
            header_len: 5,
        }))
    );
    for cut in 0..data.len() {
        assert_eq!(parse_header(&data[..cut], 16), Ok(None), "{cut}");
    }
}

#[test]
fn a_buffered_frame_past_the_limit_is_refused() {
    let mut b = Vec::new();
    put_header(&mut b, kind::HEADERS, 1 << 20);
    let e = parse_header(&b, 65_536).unwrap_err();
    assert_eq!(
        e,
        FrameError::TooLarge {
            kind: Kind::Headers,
            len: 1 << 20,
            limit: 65_536,
        }
    );
    assert_eq!(e.code(), error::H3_EXCESSIVE_LOAD);
    b.clear();
    put_header(&mut b, kind::SETTINGS, 17);
    assert!(parse_header(&b, 16).is_err());
    assert!(parse_header(&b, 17).unwrap().is_some());
}

#[test]
fn reserved_and_unknown_types_are_skipped_and_http2_types_refused() {
    for t in [0x21, 0x21 + 0x1f * 7, 0x0e, 0xff, varint::MAX] {
        let mut b = Vec::new();
        put_header(&mut b, t, 1 << 30);
        let h = parse_header(&b, 16).unwrap().unwrap();
        assert_eq!((h.kind, h.len), (Kind::Unknown(t), 1 << 30), "{t:#x}");
    }
    for t in kind::HTTP2_ONLY {
        let e = parse_header(&[t as u8, 0], 16).unwrap_err();
        assert_eq!(e, FrameError::Http2Only(t));
        assert_eq!(e.code(), error::H3_FRAME_UNEXPECTED);
    }
    assert!(is_reserved(0x21) && is_reserved(0x40) && !is_reserved(0x22) && !is_reserved(0));
}

#[test]
fn each_kind_is_allowed_on_its_streams_only() {
    use Stream::*;
    let table = [
        (Kind::Data, [true, false, true]),
        (Kind::Headers, [true, false, true]),
        (Kind::CancelPush, [false, true, false]),
        (Kind::Settings, [false, true, false]),
        (Kind::PushPromise, [true, false, false]),
        (Kind::Goaway, [false, true, false]),
        (Kind::MaxPushId, [false, true, false]),
        (Kind::Unknown(0x21), [true, true, true]),
    ];
    for (kind, allowed) in table {
        for (stream, want) in [Request, Control, Push].into_iter().zip(allowed) {
            assert_eq!(kind.allowed_on(stream), want, "{kind:?} on {stream:?}");
        }
    }
}

#[test]
fn settings_round_trip_and_skip_reserved_ids() {
    let ours = Settings::static_qpack(16_384);
    let mut b = Vec::new();
    ours.put(&mut b);
    // Only MAX_FIELD_SECTION_SIZE: the QPACK settings at 0 are their defaults.
    assert_eq!(b, [0x04, 0x05, 0x06, 0x80, 0x00, 0x40, 0x00]);
    let h = parse_header(&b, 64).unwrap().unwrap();
    assert_eq!(Settings::parse(&b[h.header_len..]), Ok(ours));

    let theirs = Settings {
        qpack_max_table_capacity: 4096,
        max_field_section_size: None,
        qpack_blocked_streams: 100,
    };
    let mut b = Vec::new();
    put_settings(
        &mut b,
        theirs.pairs().chain([(0x21 + 0x1f * 3, 7), (0x4242, 1)]),
    );
    let h = parse_header(&b, 64).unwrap().unwrap();
    assert_eq!(h.len as usize, b.len() - h.header_len);
    assert_eq!(Settings::parse(&b[h.header_len..]), Ok(theirs));
    assert_eq!(Settings::parse(&[]), Ok(Settings::default()));
}

#[test]
fn bad_settings_are_refused() {
    let cases: &[(&[u8], FrameError, u64)] = &[
        (
            &[0x02, 0x00],
            FrameError::Http2Setting(2),
            error::H3_SETTINGS_ERROR,
        ),
        (
            &[0x05, 0x00],
            FrameError::Http2Setting(5),
            error::H3_SETTINGS_ERROR,
        ),
        (
            &[0x06, 0x01, 0x06, 0x02],
            FrameError::DuplicateSetting(6),
            error::H3_SETTINGS_ERROR,
        ),
        // An unknown id twice is a duplicate too.
        (
            &[0x21, 0x01, 0x01, 0x00, 0x21, 0x02],
            FrameError::DuplicateSetting(0x21),
            error::H3_SETTINGS_ERROR,
        ),
        // An id with no value, a value cut short.
        (&[0x06], FrameError::Malformed, error::H3_FRAME_ERROR),
        (&[0x06, 0x40], FrameError::Malformed, error::H3_FRAME_ERROR),
    ];
    for (payload, want, code) in cases {
        assert_eq!(Settings::parse(payload), Err(*want), "{payload:02x?}");
        assert_eq!(want.code(), *code);
    }
}

#[test]
fn goaway_carries_exactly_one_id() {
    let mut b = Vec::new();
    put_goaway(&mut b, 1_000_000);
    let h = parse_header(&b, 16).unwrap().unwrap();
    assert_eq!((h.kind, h.len), (Kind::Goaway, 4));
    assert_eq!(parse_id(&b[h.header_len..]), Ok(1_000_000));
    assert_eq!(parse_id(&[]), Err(FrameError::Malformed));
    assert_eq!(parse_id(&[0x40]), Err(FrameError::Malformed));
    assert_eq!(parse_id(&[0x01, 0x02]), Err(FrameError::Malformed));
}

#[test]
fn unidirectional_stream_types() {
    let mut b = Vec::new();
    for t in [0, 1, 2, 3, 0x21 + 0x1f, 0x54] {
        put_stream_type(&mut b, t);
    }
    let mut at = 0;
    let mut got = Vec::new();
    while let Some((s, len)) = UniStream::parse(&b[at..]) {
        got.push(s);
        at += len;
    }
    assert_eq!(
        got,
        [
            UniStream::Control,
            UniStream::Push,
            UniStream::QpackEncoder,
            UniStream::QpackDecoder,
            UniStream::Unknown(0x40),
            UniStream::Unknown(0x54),
        ]
    );
    assert_eq!(UniStream::parse(&[0x40]), None);
}
