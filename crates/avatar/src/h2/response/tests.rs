use super::*;
use crate::h2::hpack::{Decoder, Fields};

#[test]
fn head_becomes_headers_and_body_follows() {
    let resp = b"HTTP/1.1 200 OK\r\nDate: x\r\nServer: avatar\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: 3\r\n\r\nok\n";
    let mut out = Vec::new();
    let body = put_head(resp, 3, &mut out);
    assert_eq!(body, b"ok\n");
    let h = frame::Header::parse(&out);
    assert_eq!(
        (h.kind, h.flags, h.stream),
        (kind::HEADERS, flag::END_HEADERS, 3)
    );
    let mut f = Fields::new();
    Decoder::new().decode(&out[9..], &mut f, 1 << 16).unwrap();
    let names: Vec<_> = f.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
    assert_eq!(names[0], (b":status".to_vec(), b"200".to_vec()));
    assert_eq!(
        names[3],
        (b"x-content-type-options".to_vec(), b"nosniff".to_vec())
    );
    assert_eq!(names.len(), 5, "connection is dropped");
    let mut out = Vec::new();
    assert!(put_head(b"HTTP/1.1 302 Found\r\nLocation: /a\r\n\r\n", 1, &mut out).is_empty());
    assert!(frame::Header::parse(&out).has(flag::END_STREAM));
}
