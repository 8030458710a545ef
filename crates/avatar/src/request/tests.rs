use super::*;

/// Feeds `head` one byte at a time the way the responder does; returns the last result
/// and the number of httparse runs.
fn trickle(head: &[u8]) -> (Parsed<'_>, usize) {
    HTTPARSE_CALLS.with(|c| c.set(0));
    let mut scanned = 0;
    let mut last = Parsed::Partial;
    for end in 1..=head.len() {
        last = parse_resumed(&head[..end], scanned, &limits());
        if last != Parsed::Partial {
            break;
        }
        scanned = end;
    }
    (last, HTTPARSE_CALLS.with(|c| c.get()))
}

#[test]
fn trickled_head_is_not_reparsed_per_byte() {
    let head = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nX-Long: {}\r\nX-Two: y\r\n\r\n",
        "v".repeat(6000)
    );
    let (last, calls) = trickle(head.as_bytes());
    let Parsed::Complete(req) = last else {
        panic!("{last:?}")
    };
    assert_eq!(req.head_len, head.len());
    // The request line once, and each line end that might have been the empty line.
    assert!(
        calls <= 8,
        "httparse ran {calls} times for {} bytes",
        head.len()
    );
}

#[test]
fn resumed_parse_agrees_with_a_full_parse() {
    let heads: &[&[u8]] = &[
        b"GET / HTTP/1.1\r\nHost: t\r\n\r\n",
        b"GET / HTTP/1.1\nHost: t\n\n",
        b"GET / HTTP/1.1\r\nHost: t\n\r\n",
        b"\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n",
        b"GET / HTTP/1.0\r\n\r\n",
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: t\r\nno colon\r\n\r\n",
        b"GET /\x01 HTTP/1.1\r\n",
    ];
    for &head in heads {
        let (last, _) = trickle(head);
        let mut want = Parsed::Partial;
        for end in 1..=head.len() {
            want = parse(&head[..end], &limits());
            if want != Parsed::Partial {
                break;
            }
        }
        let what = String::from_utf8_lossy(head);
        assert_eq!(last, want, "{what:?}");
    }
}

fn limits() -> Limits {
    Limits::default()
}

#[test]
fn parses_a_typical_get() {
    let buf = b"GET /x?y=1 HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"t\"\r\n\r\nGET";
    let Parsed::Complete(req) = parse(buf, &limits()) else {
        panic!()
    };
    assert_eq!(req.head_len, buf.len() - 3);
    assert_eq!(req.method, Method::Get);
    assert_eq!(req.path, b"/x");
    assert_eq!(req.target, b"/x?y=1");
    assert!(req.keep_alive);
    assert_eq!(req.if_none_match, Some(&b"\"t\""[..]));
}

#[test]
fn keep_alive_rules() {
    let cases: &[(&[u8], bool)] = &[
        (b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
            false,
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, CLOSE\r\n\r\n",
            false,
        ),
        (b"GET / HTTP/1.0\r\n\r\n", false),
        (b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
    ];
    for &(buf, want) in cases {
        let Parsed::Complete(req) = parse(buf, &limits()) else {
            panic!()
        };
        assert_eq!(req.keep_alive, want, "{:?}", String::from_utf8_lossy(buf));
    }
}

#[test]
fn absolute_form_targets() {
    for (target, path) in [
        ("http://a.example/x.svg?q", "/x.svg"),
        ("HTTPS://a.example", "/"),
        ("http://a.example?q", "/"),
    ] {
        assert_eq!(
            path_of(target.as_bytes()),
            Some(path.as_bytes()),
            "{target}"
        );
    }
    assert_eq!(path_of(b"*"), None);
    assert_eq!(path_of(b"x"), None);
}

#[test]
fn content_length_values() {
    assert_eq!(parse_content_length(b"0"), Some(0));
    assert_eq!(parse_content_length(b" 12 "), Some(12));
    for bad in [
        &b""[..],
        b"-1",
        b"+1",
        b"1,1",
        b"0x10",
        b"9999999999999999999",
    ] {
        assert_eq!(
            parse_content_length(bad),
            None,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}
