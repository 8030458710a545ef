use super::*;

/// A response stream: a HEADERS frame of `status` and `headers`, then `body` in DATA
/// frames of `chunk` bytes.
fn stream(status: u16, headers: &[(&str, &str)], body: &[u8], chunk: usize) -> Vec<u8> {
    let mut section = Vec::new();
    qpack::encode_response(&mut section, status, headers);
    let mut out = Vec::new();
    frame::put_headers(&mut out, &section);
    for c in body.chunks(chunk) {
        frame::put_data_header(&mut out, c.len() as u64);
        out.extend_from_slice(c);
    }
    out
}

#[test]
fn a_response_keeps_its_status_fields_and_joined_body() {
    let b = stream(302, &[("location", "/x"), ("x-a", "1")], b"hello world", 4);
    let r = parse(&b).unwrap();
    assert_eq!(r.status, 302);
    assert_eq!(
        r.headers,
        vec![("location".into(), "/x".into()), ("x-a".into(), "1".into())]
    );
    assert_eq!(r.body, b"hello world");
}

#[test]
fn an_interim_head_is_passed_over_and_trailers_are_dropped() {
    let mut b = stream(103, &[("link", "</a>")], b"", 1);
    b.extend(stream(200, &[("x-b", "2")], b"ok", 8));
    let mut trailer = Vec::new();
    qpack::encode(&mut trailer, [(&b"x-t"[..], &b"t"[..])]);
    frame::put_headers(&mut b, &trailer);
    let r = parse(&b).unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]));
    assert_eq!(r.headers, vec![("x-b".into(), "2".into())]);
}

#[test]
fn a_stream_cut_inside_a_frame_or_without_a_head_is_an_error() {
    let b = stream(200, &[], b"body", 8);
    assert!(parse(&b[..b.len() - 1])
        .unwrap_err()
        .contains("inside a frame"));
    let mut data = Vec::new();
    frame::put_data_header(&mut data, 2);
    data.extend_from_slice(b"ab");
    assert!(parse(&data)
        .unwrap_err()
        .contains("before the response's HEADERS"));
    assert!(parse(&[]).unwrap_err().contains("without a response"));
}
