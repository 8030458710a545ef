use super::*;

#[test]
fn an_encoder_stream_may_only_set_a_capacity_of_zero() {
    assert_eq!(check_encoder_stream(&[]), Ok(()));
    assert_eq!(check_encoder_stream(&[0x20, 0x20]), Ok(()));
    let cases: &[(&[u8], EncoderStreamError)] = &[
        (&[0x21], EncoderStreamError::Capacity),
        // RFC 9204 B.2's encoder stream: capacity 220, then inserts.
        (
            &[0x3f, 0xbd, 0x01, 0xc0, 0x0f],
            EncoderStreamError::Capacity,
        ),
        (&[0x20, 0xc0, 0x00], EncoderStreamError::Insert),
        (&[0x80, 0x00], EncoderStreamError::Insert),
        (&[0x43, b'a', b'b', b'c', 0x00], EncoderStreamError::Insert),
        (&[0x00], EncoderStreamError::Duplicate),
        (&[0x1f, 0x10], EncoderStreamError::Duplicate),
    ];
    for (b, want) in cases {
        assert_eq!(check_encoder_stream(b), Err(*want), "{b:02x?}");
        assert_eq!(want.code(), crate::error::QPACK_ENCODER_STREAM_ERROR);
    }
}

#[test]
fn a_decoder_stream_may_only_cancel_streams() {
    // Stream Cancellation of streams 4 and 100 (63 + 37), then the start of a third.
    let b = [0x44, 0x7f, 0x25, 0x7f];
    assert_eq!(check_decoder_stream(&b), Ok(3));
    assert_eq!(check_decoder_stream(&b[..2]), Ok(1));
    let cases: &[(&[u8], DecoderStreamError)] = &[
        (&[0x84], DecoderStreamError::SectionAcknowledgment(4)),
        (&[0x40, 0x01], DecoderStreamError::InsertCountIncrement(1)),
        (&[0x00], DecoderStreamError::InsertCountIncrement(0)),
        (
            &[
                0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            DecoderStreamError::IntegerOverflow,
        ),
    ];
    for (b, want) in cases {
        assert_eq!(check_decoder_stream(b), Err(*want), "{b:02x?}");
        assert_eq!(want.code(), crate::error::QPACK_DECODER_STREAM_ERROR);
    }
}

#[test]
fn a_stream_cancellation_past_2_32_is_read_as_qpack_integers_go_to_62_bits() {
    // QUIC stream ids go to 2^62 - 1; HPACK's integers stop at 2^32.
    let mut b = Vec::new();
    h2wire::hpack::put_int(&mut b, 0x40, 6, (1 << 40) + 4);
    assert_eq!(check_decoder_stream(&b), Ok(b.len()));
}
