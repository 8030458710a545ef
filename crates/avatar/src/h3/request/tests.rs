use super::*;
use crate::h2::request::{check, Checked};
use crate::metrics::ParseError;
use crate::request::Method;
use h3wire::qpack::Request as QRequest;

fn headers_frame(section: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::put_headers(&mut out, section);
    out
}

fn get(path: &str) -> Vec<u8> {
    QRequest {
        method: "GET",
        scheme: "https",
        authority: "127.0.0.1",
        path,
        headers: &[],
    }
    .encode()
}

#[test]
fn a_request_head_decodes_into_the_request_http2_would_make() {
    let mut fields = Fields::new();
    let limits = Limits::default();
    decode(
        &mut qpack::Decoder::default(),
        &get("/ff8800.svg?x=1"),
        &mut fields,
        &limits,
    )
    .unwrap();
    let Checked::Request(r) = check(&fields, &limits) else {
        panic!("not a request");
    };
    assert_eq!(r.req.method, Method::Get);
    assert_eq!(r.req.path, b"/ff8800.svg");
    assert_eq!(r.req.target, b"/ff8800.svg?x=1");
}

#[test]
fn a_section_that_needs_the_dynamic_table_fails_decompression() {
    let mut fields = Fields::new();
    // Required Insert Count 1: a reference into the table we set at capacity 0.
    let err = decode(
        &mut qpack::Decoder::default(),
        &[0x02, 0x00, 0x80],
        &mut fields,
        &Limits::default(),
    );
    assert_eq!(err, Err(h3err::QPACK_DECOMPRESSION_FAILED));
    // An indexed field line into the dynamic table (T=0).
    let err = decode(
        &mut qpack::Decoder::default(),
        &[0x00, 0x00, 0x80],
        &mut fields,
        &Limits::default(),
    );
    assert_eq!(err, Err(h3err::QPACK_DECOMPRESSION_FAILED));
}

#[test]
fn a_head_past_the_field_section_limit_is_a_431() {
    let limits = Limits {
        max_header_list_bytes: 200,
        ..Limits::default()
    };
    let big = "x".repeat(300);
    let section = QRequest {
        method: "GET",
        scheme: "https",
        authority: "a",
        path: "/",
        headers: &[("x-big", &big)],
    }
    .encode();
    let mut fields = Fields::new();
    decode(
        &mut qpack::Decoder::default(),
        &section,
        &mut fields,
        &limits,
    )
    .unwrap();
    assert!(fields.too_large);
    assert!(matches!(
        check(&fields, &limits),
        Checked::Refused(ParseError::HeadTooLarge)
    ));
}

/// Walks `b`, one read, to its end: the field sections handed over.
fn walk_all(rx: &mut Rx, b: &[u8]) -> Result<Vec<Vec<u8>>, u64> {
    let mut b = b;
    let mut sections = Vec::new();
    while let Some(frame) = rx.walk(&mut b)? {
        if let WalkFrame::Whole(_, section) = frame {
            sections.push(section.to_vec());
        }
    }
    Ok(sections)
}

#[test]
fn headers_split_at_every_byte_come_out_whole() {
    let mut bytes = Vec::new();
    // An unknown (reserved) frame first, which is passed over.
    frame::put_header(&mut bytes, 0x21, 3);
    bytes.extend_from_slice(b"abc");
    let section = get("/healthz");
    bytes.extend_from_slice(&headers_frame(&section));
    frame::put_data_header(&mut bytes, 4);
    bytes.extend_from_slice(b"body");
    for cut in 0..bytes.len() {
        let mut rx = Rx::new(1024);
        let mut got = walk_all(&mut rx, &bytes[..cut]).unwrap();
        got.extend(walk_all(&mut rx, &bytes[cut..]).unwrap());
        assert_eq!(got, std::slice::from_ref(&section), "cut at {cut}");
        assert_eq!(rx.body_bytes, 4, "cut at {cut}");
        assert!(rx.walker.between_frames(), "cut at {cut}");
    }
}

#[test]
fn data_before_headers_is_frame_unexpected() {
    let mut b = Vec::new();
    frame::put_data_header(&mut b, 1);
    b.push(0);
    assert_eq!(
        walk_all(&mut Rx::new(1024), &b),
        Err(h3err::H3_FRAME_UNEXPECTED)
    );
}

#[test]
fn an_encoded_head_past_twice_the_limit_is_excessive_load() {
    let mut b = Vec::new();
    frame::put_header(&mut b, frame::kind::HEADERS, 5000);
    let limits = Limits {
        max_header_list_bytes: 2048,
        ..Limits::default()
    };
    assert_eq!(
        walk_all(&mut Rx::new(super::super::conn::section_limit(&limits)), &b),
        Err(h3err::H3_EXCESSIVE_LOAD)
    );
}

#[test]
fn the_responders_head_is_reencoded_lowercase_without_connection() {
    let resp = b"HTTP/1.1 302 Found\r\nDate: x\r\nConnection: close\r\nLocation: /a\r\nContent-Length: 0\r\n\r\n";
    let mut out = Vec::new();
    let body = put_response(resp, &mut out, &mut Vec::new());
    assert!(body.is_empty());
    let head = frame::parse_header(&out, 4096).unwrap().unwrap();
    assert_eq!(head.kind, Kind::Headers);
    assert_eq!(
        out.len(),
        head.header_len + head.len as usize,
        "no DATA frame"
    );
    let fields = qpack::decode(&out[head.header_len..], 4096).unwrap();
    let names: Vec<&[u8]> = fields.iter().map(|(n, _)| &n[..]).collect();
    assert_eq!(
        names,
        [&b":status"[..], b"date", b"location", b"content-length"]
    );
    assert_eq!(fields[0].1, b"302");
}

#[test]
fn a_body_follows_its_data_frame_header() {
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
    let mut out = Vec::new();
    let body = put_response(resp, &mut out, &mut Vec::new());
    assert_eq!(body, b"ok\n");
    let head = frame::parse_header(&out, 4096).unwrap().unwrap();
    let data = frame::parse_header(&out[head.header_len + head.len as usize..], 4096)
        .unwrap()
        .unwrap();
    assert_eq!((data.kind, data.len), (Kind::Data, 3));
}

#[test]
fn a_body_breaks_its_content_length_past_it_or_short_of_it_at_the_end() {
    let rx = |cl: Option<u64>, body: u64| Rx {
        content_length: cl,
        body_bytes: body,
        ..Rx::new(1024)
    };
    for (cl, body, ended, broken) in [
        (None, 10, true, false),
        (Some(5), 2, false, false),
        (Some(5), 2, true, true),
        (Some(5), 6, false, true),
        (Some(5), 5, true, false),
    ] {
        assert_eq!(
            rx(cl, body).length_broken(ended),
            broken,
            "{cl:?} {body} {ended}"
        );
    }
}

#[test]
fn a_clean_end_inside_a_frame_is_a_frame_error_and_before_headers_incomplete() {
    let mut headers = Vec::new();
    frame::put_headers(&mut headers, &[0, 0, 0xd1]);
    let mut data = Vec::new();
    frame::put_data_header(&mut data, 4);
    data.extend_from_slice(b"body");
    let mut unknown = Vec::new();
    frame::put_header(&mut unknown, 0x21, 1);
    unknown.push(0);
    let cases: [(&str, Vec<u8>, End); 7] = [
        ("nothing", Vec::new(), End::Incomplete),
        ("an unknown frame only", unknown.clone(), End::Incomplete),
        ("half a frame header", vec![0x01], End::Truncated),
        (
            "half of HEADERS",
            headers[..headers.len() - 1].to_vec(),
            End::Truncated,
        ),
        ("HEADERS", headers.clone(), End::Complete),
        (
            "HEADERS, half of DATA",
            [&headers[..], &data[..data.len() - 2]].concat(),
            End::Truncated,
        ),
        (
            "HEADERS, DATA",
            [&headers[..], &data[..]].concat(),
            End::Complete,
        ),
    ];
    for (what, bytes, want) in cases {
        let mut rx = Rx::new(1 << 16);
        walk_all(&mut rx, &bytes).unwrap();
        assert_eq!(rx.at_fin(), want, "{what}");
    }
}

#[test]
fn headers_or_data_after_trailers_are_frame_unexpected() {
    let mut headers = Vec::new();
    frame::put_headers(&mut headers, &[0, 0, 0xd1]);
    let mut data = Vec::new();
    frame::put_data_header(&mut data, 1);
    data.push(b'x');
    for (what, after) in [("HEADERS", &headers), ("DATA", &data)] {
        let b = [&headers[..], &data[..], &headers[..], &after[..]].concat();
        assert_eq!(
            walk_all(&mut Rx::new(1 << 16), &b),
            Err(h3err::H3_FRAME_UNEXPECTED),
            "{what} after trailers"
        );
    }
}

#[test]
fn a_field_name_longer_than_the_lowercase_buffer_is_not_truncated() {
    let name = format!("X-{}", "Long".repeat(30));
    let resp = format!("HTTP/1.1 200 OK\r\n{name}: v\r\nContent-Length: 0\r\n\r\n");
    let mut out = Vec::new();
    put_response(resp.as_bytes(), &mut out, &mut Vec::new());
    let head = frame::parse_header(&out, 4096).unwrap().unwrap();
    let fields = qpack::decode(&out[head.header_len..], 4096).unwrap();
    assert_eq!(fields[1].0, name.to_ascii_lowercase().as_bytes());
}
