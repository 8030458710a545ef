use super::*;

fn uni(kind: u64, bytes: &[u8]) -> (Uni, Result<bool, u64>, bool) {
    let mut u = Uni {
        id: StreamId::new(quinn_proto::Side::Client, Dir::Uni, 0),
        kind: None,
        pending: Vec::new(),
        walker: Walker::new(MAX_CONTROL_FRAME),
    };
    let mut peer = Peer::default();
    frame::put_stream_type(&mut u.pending, kind);
    u.pending.extend_from_slice(bytes);
    let r = take_uni(&mut u, &mut peer);
    (u, r, peer.settings_seen)
}

fn settings() -> Vec<u8> {
    let mut b = Vec::new();
    Settings::static_qpack(16384).put(&mut b);
    b
}

#[test]
fn the_control_stream_must_start_with_settings() {
    let mut goaway = Vec::new();
    frame::put_goaway(&mut goaway, 0);
    assert_eq!(
        uni(stream_type::CONTROL, &goaway).1,
        Err(h3err::H3_MISSING_SETTINGS)
    );
    let (_, r, seen) = uni(stream_type::CONTROL, &settings());
    assert_eq!(r, Ok(true));
    assert!(seen);
}

#[test]
fn a_second_settings_or_a_data_frame_on_control_is_unexpected() {
    let mut b = settings();
    b.extend_from_slice(&settings());
    assert_eq!(
        uni(stream_type::CONTROL, &b).1,
        Err(h3err::H3_FRAME_UNEXPECTED)
    );
    let mut b = settings();
    frame::put_data_header(&mut b, 0);
    assert_eq!(
        uni(stream_type::CONTROL, &b).1,
        Err(h3err::H3_FRAME_UNEXPECTED)
    );
}

#[test]
fn control_frames_split_at_every_byte_are_taken_whole() {
    let mut b = settings();
    frame::put_header(&mut b, 0x21, 2);
    b.extend_from_slice(b"zz");
    frame::put_goaway(&mut b, 4);
    for cut in 0..b.len() {
        let mut u = Uni {
            id: StreamId::new(quinn_proto::Side::Client, Dir::Uni, 0),
            kind: Some(UniStream::Control),
            pending: Vec::new(),
            walker: Walker::new(MAX_CONTROL_FRAME),
        };
        let mut seen = false;
        for part in [&b[..cut], &b[cut..]] {
            u.pending.extend_from_slice(part);
            control_frames(&mut u, &mut seen).unwrap();
        }
        assert!(
            seen && u.pending.is_empty() && u.walker.between_frames(),
            "cut at {cut}"
        );
    }
}

#[test]
fn an_insert_into_the_refused_dynamic_table_is_an_encoder_stream_error() {
    assert_eq!(uni(stream_type::QPACK_ENCODER, &[0x20]).1, Ok(true));
    // Set Dynamic Table Capacity 32, then Insert with Literal Name.
    assert_eq!(
        uni(stream_type::QPACK_ENCODER, &[0x3f, 0x01]).1,
        Err(h3err::QPACK_ENCODER_STREAM_ERROR)
    );
    assert_eq!(
        uni(stream_type::QPACK_ENCODER, &[0x41, b'a', 0x01, b'b']).1,
        Err(h3err::QPACK_ENCODER_STREAM_ERROR)
    );
}

#[test]
fn unknown_streams_are_refused_not_read_and_a_push_stream_is_an_error() {
    assert_eq!(uni(0x21, b"anything").1, Ok(false));
    assert_eq!(
        uni(stream_type::PUSH, b"").1,
        Err(h3err::H3_STREAM_CREATION_ERROR)
    );
    assert_eq!(uni(stream_type::QPACK_DECODER, &[0x40 | 4]).1, Ok(true));
}

#[test]
fn a_second_qpack_stream_of_a_kind_is_a_stream_creation_error() {
    for kind in [stream_type::QPACK_ENCODER, stream_type::QPACK_DECODER] {
        let mut peer = Peer::default();
        for (n, want) in [(0, Ok(true)), (4, Err(h3err::H3_STREAM_CREATION_ERROR))] {
            let mut u = Uni {
                id: StreamId::new(quinn_proto::Side::Client, Dir::Uni, n),
                kind: None,
                pending: Vec::new(),
                walker: Walker::new(MAX_CONTROL_FRAME),
            };
            frame::put_stream_type(&mut u.pending, kind);
            assert_eq!(take_uni(&mut u, &mut peer), want, "stream type {kind:#x}");
        }
    }
}
