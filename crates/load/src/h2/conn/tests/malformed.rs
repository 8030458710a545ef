//! Malformed responses (RFC 9113 8.1.1: "Clients MUST NOT accept a malformed response"):
//! each case, fed whole and byte by byte, ends its stream as [`Event::Malformed`] with the
//! rule it broke, never as a response, and the stream is reset with PROTOCOL_ERROR; the
//! well-formed cases beside them (HEAD, 204 and 304 without content, padding, agreeing
//! content-lengths, trailers) still complete.

use super::*;

/// A literal field without indexing, its name a literal too (no Huffman coding).
fn lit(name: &[u8], value: &[u8]) -> Vec<u8> {
    let mut b = vec![0x00, name.len() as u8];
    b.extend_from_slice(name);
    b.push(value.len() as u8);
    b.extend_from_slice(value);
    b
}

/// A head block: `:status 200` (static index 8), then `fields`.
fn head_200(fields: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut b = vec![0x88];
    for (n, v) in fields {
        b.extend(lit(n, v));
    }
    b
}

fn headers(stream: u32, end: bool, block: &[u8]) -> Vec<u8> {
    let flags = flag::END_HEADERS | if end { flag::END_STREAM } else { 0 };
    frame(kind::HEADERS, flags, stream, block)
}

fn data(stream: u32, end: bool, payload: &[u8]) -> Vec<u8> {
    frame(
        kind::DATA,
        if end { flag::END_STREAM } else { 0 },
        stream,
        payload,
    )
}

/// The server's frames after its SETTINGS, fed to a connection with one stream of a
/// `method` request open, whole and byte by byte: the events (both ways alike), and
/// whether our RST_STREAM with PROTOCOL_ERROR for stream 1 went out.
#[track_caller]
fn feed(method: &str, frames: &[Vec<u8>]) -> (Vec<Event>, bool) {
    let mut server = settings(&[]);
    for f in frames {
        server.extend_from_slice(f);
    }
    let run = |bytewise: bool| {
        let mut f = Fixture::new(opts(10), 0);
        let spec = RequestSpec {
            method: method.into(),
            ..RequestSpec::default()
        };
        let target = Target::parse("http://127.0.0.1:1/").unwrap();
        f.shapes = vec![RequestShape::new(&spec, &target, &mut f.fields, true).unwrap()];
        f.open(1);
        f.out.clear();
        let mut events = Vec::new();
        let chunks: Vec<&[u8]> = if bytewise {
            server.chunks(1).collect()
        } else {
            vec![&server[..]]
        };
        for chunk in chunks {
            f.c.feed(chunk, &f.shapes, &mut f.out, &mut f.counts, &mut |e| {
                events.push(e)
            })
            .expect("a malformed response is a stream error, not the connection's");
        }
        let rst = frame(kind::RST_STREAM, 0, 1, &code::PROTOCOL_ERROR.to_be_bytes());
        let reset = f.out.windows(rst.len()).any(|w| w == rst.as_slice());
        (events, reset)
    };
    let whole = run(false);
    assert_eq!(whole, run(true), "fed whole and byte by byte");
    whole
}

fn ok() -> (Vec<Event>, bool) {
    (
        vec![Event::Response {
            stream: 1,
            status: 200,
        }],
        false,
    )
}

fn bad(what: Malformed) -> (Vec<Event>, bool) {
    (vec![Event::Malformed { stream: 1, what }], true)
}

#[test]
fn content_length_that_disagrees_with_the_data_is_malformed_both_ways() {
    let cl = |n: &[u8]| head_200(&[(b"content-length", n)]);
    // 10 declared, 5 sent: found at the end of the stream.
    let short = feed(
        "GET",
        &[headers(1, false, &cl(b"10")), data(1, true, b"12345")],
    );
    assert_eq!(short, bad(Malformed::ContentLength));
    // 2 declared, 11 sent: found as the excess arrives, before the stream ends.
    let long = feed(
        "GET",
        &[headers(1, false, &cl(b"2")), data(1, false, b"12345678901")],
    );
    assert_eq!(long, bad(Malformed::ContentLength));
    // Over two frames, the second one's END_STREAM short of it.
    let split = feed(
        "GET",
        &[
            headers(1, false, &cl(b"6")),
            data(1, false, b"abc"),
            data(1, true, b"de"),
        ],
    );
    assert_eq!(split, bad(Malformed::ContentLength));
    // As declared: ok, padding left out of the count.
    assert_eq!(
        feed(
            "GET",
            &[headers(1, false, &cl(b"4")), data(1, true, b"body")]
        ),
        ok()
    );
    let padded = frame(
        kind::DATA,
        flag::PADDED | flag::END_STREAM,
        1,
        b"\x03body\0\0\0",
    );
    assert_eq!(feed("GET", &[headers(1, false, &cl(b"4")), padded]), ok());
    // No content-length: any length.
    assert_eq!(
        feed(
            "GET",
            &[headers(1, false, &head_200(&[])), data(1, true, b"x")]
        ),
        ok()
    );
}

#[test]
fn content_length_not_a_number_or_two_that_disagree_is_malformed() {
    for (what, fields) in [
        ("letters", vec![(&b"content-length"[..], &b"ten"[..])]),
        ("empty", vec![(b"content-length", b"")]),
        ("signed", vec![(b"content-length", b"+4")]),
        (
            "overflowing",
            vec![(b"content-length", b"99999999999999999999999")],
        ),
        (
            "two that disagree",
            vec![(b"content-length", b"4"), (b"content-length", b"5")],
        ),
    ] {
        let r = feed(
            "GET",
            &[
                headers(1, false, &head_200(&fields)),
                data(1, true, b"body"),
            ],
        );
        assert_eq!(r, bad(Malformed::ContentLength), "{what}");
    }
    // The static table's `content-length` (index 28) has an empty value: indexed whole,
    // it is not a number.
    let r = feed("GET", &[headers(1, true, &[0x88, 0x80 | 28])]);
    assert_eq!(r, bad(Malformed::ContentLength));
    // Two that agree are one.
    let two = head_200(&[(b"content-length", b"4"), (b"content-length", b"4")]);
    assert_eq!(
        feed("GET", &[headers(1, false, &two), data(1, true, b"body")]),
        ok()
    );
}

#[test]
fn responses_without_content_may_declare_a_length_but_carry_none() {
    let cl = head_200(&[(b"content-length", b"100")]);
    // A response to HEAD: its content-length is the GET's.
    assert_eq!(feed("HEAD", &[headers(1, true, &cl)]), ok());
    assert_eq!(
        feed("HEAD", &[headers(1, false, &cl), data(1, true, b"")]),
        ok()
    );
    // ... but DATA with content on it is malformed.
    assert_eq!(
        feed("HEAD", &[headers(1, false, &cl), data(1, true, b"abc")]),
        bad(Malformed::ContentLength)
    );
    // 204 (static index 9) and 304 (index 11): no content whatever the field says.
    for status in [0x89u8, 0x8b] {
        let mut block = vec![status];
        block.extend(lit(b"content-length", b"5"));
        let (ev, reset) = feed("GET", &[headers(1, true, &block)]);
        assert!(!reset, "{ev:?}");
        assert!(
            matches!(ev[..], [Event::Response { stream: 1, .. }]),
            "{ev:?}"
        );
        let r = feed("GET", &[headers(1, false, &block), data(1, true, b"x")]);
        assert_eq!(r, bad(Malformed::ContentLength));
    }
}

#[test]
fn data_before_the_response_headers_is_malformed() {
    assert_eq!(
        feed(
            "GET",
            &[data(1, false, b"early"), headers(1, true, &head_200(&[]))]
        ),
        bad(Malformed::FrameOrder)
    );
    // After an interim head only: the final head has not come either.
    let interim = [0x08, 0x03, b'1', b'0', b'3'];
    assert_eq!(
        feed("GET", &[headers(1, false, &interim), data(1, true, b"x")]),
        bad(Malformed::FrameOrder)
    );
}

#[test]
fn interim_response_that_ends_the_stream_is_malformed() {
    for status in [&b"100"[..], b"103"] {
        let mut block = vec![0x08, 0x03];
        block.extend_from_slice(status);
        assert_eq!(
            feed("GET", &[headers(1, true, &block)]),
            bad(Malformed::InterimEnd)
        );
    }
    // An interim head then the final one: ok.
    let interim = [0x08, 0x03, b'1', b'0', b'3'];
    assert_eq!(
        feed(
            "GET",
            &[headers(1, false, &interim), headers(1, true, &[0x88])]
        ),
        ok()
    );
}

#[test]
fn status_missing_repeated_not_three_digits_or_101_is_malformed() {
    let lit_status = |v: &[u8]| {
        let mut b = vec![0x08, v.len() as u8];
        b.extend_from_slice(v);
        b
    };
    let mut twice = vec![0x88];
    twice.extend(lit_status(b"200"));
    for (what, block) in [
        ("none", lit(b"server", b"x")),
        ("two", twice),
        ("two digits", lit_status(b"20")),
        ("four digits", lit_status(b"2000")),
        ("not digits", lit_status(b"2x0")),
        ("below 100", lit_status(b"099")),
        ("101", lit_status(b"101")),
    ] {
        assert_eq!(
            feed("GET", &[headers(1, true, &block)]),
            bad(Malformed::Status),
            "{what}"
        );
    }
}

#[test]
fn pseudo_headers_out_of_place_are_malformed() {
    let mut after_regular = lit(b"server", b"x");
    after_regular.push(0x88);
    let mut path = vec![0x88];
    path.push(0x84); // `:path /`, static index 4: a request's
    for (what, block) in [
        ("a request's", path),
        ("an unknown one", head_200(&[(b":foo", b"bar")])),
        ("after a regular field", after_regular),
    ] {
        assert_eq!(
            feed("GET", &[headers(1, true, &block)]),
            bad(Malformed::Pseudo),
            "{what}"
        );
    }
    // In the trailers.
    assert_eq!(
        feed(
            "GET",
            &[
                headers(1, false, &[0x88]),
                data(1, false, b"x"),
                headers(1, true, &[0x88])
            ]
        ),
        bad(Malformed::Pseudo)
    );
}

#[test]
fn trailers_that_do_not_end_the_stream_are_malformed() {
    let trailer = lit(b"grpc-status", b"0");
    assert_eq!(
        feed(
            "GET",
            &[headers(1, false, &[0x88]), headers(1, false, &trailer)]
        ),
        bad(Malformed::FrameOrder)
    );
    assert_eq!(
        feed(
            "GET",
            &[
                headers(1, false, &[0x88]),
                data(1, false, b"x"),
                headers(1, true, &trailer)
            ]
        ),
        ok()
    );
}

#[test]
fn field_names_and_values_outside_the_rules_are_malformed() {
    for (what, name, value, rule) in [
        ("uppercase", &b"Server"[..], &b"x"[..], Malformed::FieldName),
        ("a colon inside", b"x:y", b"1", Malformed::FieldName),
        ("a space", b"x y", b"1", Malformed::FieldName),
        ("empty", b"", b"1", Malformed::FieldName),
        ("non-ASCII", b"caf\xc3\xa9", b"1", Malformed::FieldName),
        ("a CR", b"x", b"a\rb", Malformed::FieldValue),
        ("an LF", b"x", b"a\nb", Malformed::FieldValue),
        ("a NUL", b"x", b"a\0b", Malformed::FieldValue),
        ("a leading space", b"x", b" a", Malformed::FieldValue),
        ("a trailing tab", b"x", b"a\t", Malformed::FieldValue),
        (
            "connection",
            b"connection",
            b"close",
            Malformed::ConnectionField,
        ),
        (
            "keep-alive",
            b"keep-alive",
            b"timeout=5",
            Malformed::ConnectionField,
        ),
        (
            "proxy-connection",
            b"proxy-connection",
            b"x",
            Malformed::ConnectionField,
        ),
        (
            "transfer-encoding",
            b"transfer-encoding",
            b"chunked",
            Malformed::ConnectionField,
        ),
        ("upgrade", b"upgrade", b"h2c", Malformed::ConnectionField),
    ] {
        assert_eq!(
            feed("GET", &[headers(1, true, &head_200(&[(name, value)]))]),
            bad(rule),
            "{what}"
        );
    }
    // Inner spaces, and every other visible byte in a value, are fine.
    assert_eq!(
        feed(
            "GET",
            &[headers(1, true, &head_200(&[(b"x-ok", b"a b\tc~!\x80")]))]
        ),
        ok()
    );
}

/// The checks see what Huffman decoding and the dynamic table give, not only literals: an
/// uppercase name Huffman-coded, and a connection-specific field indexed into the table by
/// one response and referenced by the next.
#[test]
fn huffman_coded_and_indexed_fields_are_checked_as_literals_are() {
    let mut huff = vec![0x88, 0x00];
    let name = hpack::huffman_encode(b"X-Upper");
    huff.push(0x80 | name.len() as u8);
    huff.extend(name);
    huff.extend([0x01, b'1']);
    assert_eq!(
        feed("GET", &[headers(1, true, &huff)]),
        bad(Malformed::FieldName)
    );

    // Stream 1 indexes `connection: close` (literal with incremental indexing) and is
    // malformed; stream 3 references the entry (index 62) and is malformed too.
    let mut server = settings(&[]);
    let mut first = vec![0x88, 0x40, 10];
    first.extend_from_slice(b"connection");
    first.extend([5]);
    first.extend_from_slice(b"close");
    server.extend(headers(1, true, &first));
    server.extend(headers(3, true, &[0x88, 0x80 | 62]));
    let mut f = Fixture::new(opts(10), 0);
    f.open(2);
    let (ev, r) = f.feed(&server);
    r.unwrap();
    assert_eq!(
        ev,
        [
            Event::Malformed {
                stream: 1,
                what: Malformed::ConnectionField
            },
            Event::Malformed {
                stream: 3,
                what: Malformed::ConnectionField
            }
        ]
    );
}

/// Frames on a stream we reset as malformed are ignored, and the connection serves on.
#[test]
fn after_a_malformed_response_the_connection_serves_on() {
    let mut server = settings(&[]);
    server.extend(data(1, false, b"early"));
    server.extend(headers(1, false, &[0x88]));
    server.extend(data(1, true, b"late"));
    server.extend(headers(3, true, &[0x88]));
    let mut f = Fixture::new(opts(10), 0);
    f.open(2);
    let (ev, r) = f.feed(&server);
    r.unwrap();
    assert_eq!(
        ev,
        [
            Event::Malformed {
                stream: 1,
                what: Malformed::FrameOrder
            },
            Event::Response {
                stream: 3,
                status: 200
            }
        ]
    );
}

/// A server that lowers its SETTINGS_MAX_CONCURRENT_STREAMS mid-connection (100, then 2)
/// is reported at its lowest, and its highest beside it.
#[test]
fn server_max_streams_lowered_mid_run_is_reported_at_its_lowest() {
    let mut f = Fixture::new(opts(100), 0);
    f.feed(&settings(&[(setting::MAX_CONCURRENT_STREAMS, 100)]))
        .1
        .unwrap();
    f.feed(&settings(&[(setting::MAX_CONCURRENT_STREAMS, 2)]))
        .1
        .unwrap();
    assert_eq!(f.c.capacity(), 2);
    assert_eq!(f.counts.server_max_streams, Some(2));
    assert_eq!(f.counts.server_max_streams_highest, Some(100));
}
