use super::*;

#[test]
fn sniff_tells_the_protocols_apart() {
    let cases: [(&[u8], Sniff); 8] = [
        (b"", Sniff::Partial),
        (b"PRI * HTTP/2", Sniff::Partial),
        (PREFACE, Sniff::H2),
        (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00", Sniff::H2),
        (b"GET / HTTP/1.1\r\n", Sniff::H1),
        (b"GARBAGE\r\n\r\n", Sniff::H1),
        (b"GET / HTTP/2.0\r\n", Sniff::H1),
        (b"INVALID CONNECTION PREFACE\r\n\r\n", Sniff::NotHttp),
    ];
    for (bytes, want) in cases {
        assert_eq!(sniff(bytes), want, "{:?}", String::from_utf8_lossy(bytes));
    }
}
