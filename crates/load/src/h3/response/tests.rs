use super::*;

fn headers(status: u16) -> Vec<u8> {
    let mut section = Vec::new();
    qpack::encode_response(&mut section, status, &[("content-length", "2")]);
    let mut out = Vec::new();
    frame::put_headers(&mut out, &section);
    out
}

fn response(status: u16, body: &[u8]) -> Vec<u8> {
    let mut out = headers(status);
    frame::put_data_header(&mut out, body.len() as u64);
    out.extend_from_slice(body);
    out
}

#[test]
fn a_response_split_at_every_byte_frames_the_same() {
    let mut bytes = headers(103);
    bytes.extend(response(200, b"ok"));
    // An unknown frame between them is passed over.
    frame::put_header(&mut bytes, 0x21, 3);
    bytes.extend_from_slice(b"abc");
    for split in 0..=bytes.len() {
        let mut r = Response::new();
        r.feed(&bytes[..split]).expect("a good response");
        r.feed(&bytes[split..]).expect("a good response");
        assert_eq!(r.status(), Some(200), "split at {split}");
        assert_eq!(r.at_fin(), Ok(200), "split at {split}");
    }
}

/// The fuzz target's head (`crates/load/fuzz/fuzz_targets/h3_response.rs`): `:status: 200` alone.
#[test]
fn the_fuzz_targets_head_is_a_200_however_split() {
    let head = [0x01, 0x03, 0x00, 0x00, 0xd9];
    for cut in 0..=head.len() {
        assert_eq!(fuzz_feed(&head, cut), Ok(200), "cut at {cut}");
    }
    assert_eq!(
        fuzz_feed(&head[..4], 2),
        Err(Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse)))
    );
}

#[test]
fn data_before_headers_is_malformed() {
    let mut bytes = Vec::new();
    frame::put_data_header(&mut bytes, 2);
    bytes.extend_from_slice(b"ok");
    let f = Response::new().feed(&bytes).expect_err("DATA first");
    assert_eq!(f.kind, Kind::Protocol);
}

#[test]
fn a_settings_frame_on_a_request_stream_is_unexpected() {
    let mut bytes = response(200, b"");
    frame::Settings::default().put(&mut bytes);
    let f = Response::new()
        .feed(&bytes)
        .expect_err("SETTINGS on a request stream");
    assert_eq!(
        f,
        Reason::new(
            Kind::Protocol,
            Cause::H3Sent(h3err::H3_FRAME_UNEXPECTED as u32)
        )
    );
}
