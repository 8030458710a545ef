use super::*;
use crate::h2::hpack::{put_int, Decoder};

fn fields(list: &[(&str, &str)]) -> Fields {
    let mut block = Vec::new();
    for (n, v) in list {
        block.push(0);
        put_int(&mut block, 0, 7, n.len());
        block.extend_from_slice(n.as_bytes());
        put_int(&mut block, 0, 7, v.len());
        block.extend_from_slice(v.as_bytes());
    }
    let mut f = Fields::new();
    Decoder::new().decode(&block, &mut f, 1 << 16).unwrap();
    f
}

const GOOD: [(&str, &str); 4] = [
    (":method", "GET"),
    (":scheme", "http"),
    (":path", "/ff8800.svg?x=1"),
    (":authority", "a"),
];

#[test]
fn a_good_request_routes_like_http1() {
    let f = fields(&GOOD);
    let Checked::Request(r) = check(&f, &Limits::default()) else {
        panic!("refused")
    };
    assert_eq!(r.req.path, b"/ff8800.svg");
    assert_eq!(r.req.method, Method::Get);
    assert!(!r.has_length);
}

/// RFC 9113 8.2 and 8.3: each of these is malformed.
#[test]
fn malformed_lists() {
    let cases: &[&[(&str, &str)]] = &[
        &[(":method", "GET"), (":scheme", "http")],
        &[(":method", "GET"), (":path", "/")],
        &[(":scheme", "http"), (":path", "/")],
        &[(":method", "GET"), (":scheme", "http"), (":path", "")],
        &[
            (":method", "GET"),
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":status", "200"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            ("a", "b"),
            (":path", "/"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("X-Up", "1"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("connection", "close"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("te", "gzip"),
        ],
        &[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            ("content-length", "x"),
        ],
    ];
    for list in cases {
        let f = fields(list);
        assert!(
            matches!(check(&f, &Limits::default()), Checked::Malformed),
            "{list:?}"
        );
    }
    let f = fields(&[
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/"),
        ("te", "trailers"),
    ]);
    assert!(matches!(check(&f, &Limits::default()), Checked::Request(_)));
}

#[test]
fn limits_refuse_with_http1_statuses() {
    let long = format!("/{}", "a".repeat(5000));
    let f = fields(&[(":method", "GET"), (":scheme", "http"), (":path", &long)]);
    assert!(matches!(
        check(&f, &Limits::default()),
        Checked::Refused(ParseError::TargetTooLong)
    ));
}
