use super::*;

macro_rules! head {
    ($bytes:expr, head=$h:expr, Err($e:expr)) => {
        assert_eq!(
            parse_head($bytes, $h),
            Err($e),
            "{:?}",
            String::from_utf8_lossy($bytes)
        )
    };
    ($bytes:expr, head=$h:expr, None) => {
        assert_eq!(
            parse_head($bytes, $h),
            Ok(None),
            "{:?}",
            String::from_utf8_lossy($bytes)
        )
    };
    ($bytes:expr, head=$h:expr, $status:expr, $framing:expr, close=$close:expr) => {{
        let got = parse_head($bytes, $h)
            .unwrap_or_else(|e| panic!("{:?}: {e:?}", String::from_utf8_lossy($bytes)))
            .unwrap_or_else(|| panic!("{:?}: partial", String::from_utf8_lossy($bytes)));
        assert_eq!(
            (got.status, got.framing, got.close),
            ($status, $framing, $close),
            "{:?}",
            String::from_utf8_lossy($bytes)
        );
    }};
}

#[test]
fn heads() {
    use Framing::*;
    head!(
        b"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
        head = false,
        302,
        Empty,
        close = false
    );
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        head = false,
        200,
        Length(5),
        close = false
    );
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
        head = true,
        200,
        Empty,
        close = false
    );
    head!(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        head = false,
        200,
        Chunked,
        close = false
    );
    head!(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 9\r\n\r\n",
        head = false,
        200,
        Chunked,
        close = true
    );
    head!(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        head = false,
        200,
        UntilClose,
        close = true
    );
    head!(
        b"HTTP/1.0 200 OK\r\n\r\n",
        head = false,
        200,
        UntilClose,
        close = true
    );
    head!(
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n",
        head = false,
        200,
        Length(2),
        close = true
    );
    head!(
        b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\n",
        head = false,
        200,
        Length(2),
        close = false
    );
    head!(
        b"HTTP/1.1 200 OK\r\nConnection: foo, close\r\nContent-Length: 2\r\n\r\n",
        head = false,
        200,
        Length(2),
        close = true
    );
    head!(
        b"HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n",
        head = false,
        204,
        Empty,
        close = false
    );
    head!(
        b"HTTP/1.1 304 Not Modified\r\n\r\n",
        head = false,
        304,
        Empty,
        close = false
    );
    head!(
        b"HTTP/1.1 100 Continue\r\n\r\n",
        head = false,
        100,
        Empty,
        close = false
    );
    head!(
        b"HTTP/1.1 500 Oops\r\ncontent-length:  3 \r\n\r\n",
        head = false,
        500,
        Length(3),
        close = false
    );
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
        head = false,
        200,
        Length(3),
        close = false
    );
    head!(
        b"HTTP/1.1 302 Found\r\nLocation: /x\r\n",
        head = false,
        None
    );
    head!(b"HTTP/1.1 302", head = false, None);
    head!(b"", head = false, None);
    head!(b"garbage\r\n\r\n", head = false, Err(ParseError::Head));
    head!(
        b"HTTP/1.1 2OO OK\r\n\r\n",
        head = false,
        Err(ParseError::Head)
    );
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
        head = false,
        Err(ParseError::ContentLength)
    );
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        head = false,
        Err(ParseError::ContentLength)
    );
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        head = false,
        Err(ParseError::ContentLength)
    );
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        head = false,
        Err(ParseError::ContentLength)
    );
    head!(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
        head = false,
        Err(ParseError::Upgrade)
    );
}

/// A coding after chunked makes the body run to the close, and Content-Length must not
/// cut it short: the Framer used to count 3 bytes and read the rest as the next head.
#[test]
fn te_chunked_not_last_reads_to_close() {
    use Framing::*;
    head!(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\nContent-Length: 3\r\n\r\n",
        head = false,
        200,
        UntilClose,
        close = true
    );
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: gzip\r\n\r\n",
        head = false,
        200,
        UntilClose,
        close = true
    );
    // Repeated fields form one list: chunked then gzip is not chunked.
    head!(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n",
        head = false,
        200,
        UntilClose,
        close = true
    );
    let mut f = Framer::new();
    let stream = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabcdef";
    assert_eq!(f.next(stream, false), Ok(Step::Body));
    assert_eq!(f.eof(), Some(200));
}

/// Content-Length beside Transfer-Encoding: chunked may be a smuggling attempt: the body
/// is read as chunked, but the connection used to be reused after it.
#[test]
fn te_with_content_length_is_not_reused() {
    use Framing::*;
    head!(
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n",
        head = false,
        200,
        Chunked,
        close = true
    );
}

/// An HTTP/1.0 response with Transfer-Encoding has faulty framing (RFC 9112 6.1): read it
/// by Transfer-Encoding, then close, even with Connection: keep-alive.
#[test]
fn te_in_http10_is_not_reused() {
    use Framing::*;
    head!(
        b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
        head = false,
        200,
        Chunked,
        close = true
    );
}

/// Empty list elements do not count (RFC 9110 5.6.1): "chunked," used to read as a
/// final empty coding, so a chunked body was read to the close.
#[test]
fn te_empty_list_elements_are_ignored() {
    use Framing::*;
    for te in [&b"chunked,"[..], b"chunked , ", b" , chunked"] {
        let mut h = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: ".to_vec();
        h.extend_from_slice(te);
        h.extend_from_slice(b"\r\n\r\n");
        head!(&h, head = false, 200, Chunked, close = false);
    }
}

#[test]
fn head_too_large() {
    let mut big = b"HTTP/1.1 200 OK\r\n".to_vec();
    while big.len() <= MAX_HEAD {
        big.extend_from_slice(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    assert!(matches!(
        parse_head(&big, false),
        Err(ParseError::HeadTooLarge) | Err(ParseError::Head)
    ));
}

/// Feeds `body` to a fresh decoder split at every pair of boundaries; expects the
/// body to end exactly at `end`.
#[track_caller]
fn chunked_ends_at(body: &[u8], end: usize) {
    for split in 0..=body.len() {
        let mut d = Chunked::new();
        let (a, done) = d.feed(&body[..split]).unwrap();
        if done {
            assert_eq!(a, end, "split {split}");
            continue;
        }
        assert_eq!(a, split);
        let (b, done) = d.feed(&body[split..]).unwrap();
        assert!(done, "split {split}: not done");
        assert_eq!(split + b, end, "split {split}");
    }
    // One byte at a time.
    let mut d = Chunked::new();
    for (i, b) in body.iter().enumerate() {
        let (n, done) = d.feed(std::slice::from_ref(b)).unwrap();
        assert_eq!(n, 1);
        if done {
            assert_eq!(i + 1, end);
            return;
        }
    }
    panic!("never done");
}

#[test]
fn chunked_bodies() {
    chunked_ends_at(b"5\r\nhello\r\n0\r\n\r\n", 15);
    chunked_ends_at(b"5\r\nhello\r\n0\r\n\r\nHTTP/1.1", 15);
    chunked_ends_at(b"A;name=value\r\n0123456789\r\n0\r\n\r\n", 31);
    chunked_ends_at(
        b"3\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\nOther: y\r\n\r\n",
        42,
    );
    chunked_ends_at(b"3\nabc\n0\n\n", 9);
    chunked_ends_at(b"0\r\n\r\n", 5);
    chunked_ends_at(
        b"ff\r\n"
            .iter()
            .chain([b'x'; 255].iter())
            .chain(b"\r\n0\r\n\r\n")
            .copied()
            .collect::<Vec<_>>()
            .as_slice(),
        4 + 255 + 7,
    );
}

/// Drives a framer over `stream` delivered in pieces cut at `cuts`, the way the worker
/// does: a partial head is kept and presented again with the next piece.
fn frame_all(stream: &[u8], cuts: &[usize], head_request: bool) -> Result<Vec<u16>, ParseError> {
    let mut f = Framer::new();
    let mut out = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(stream.len())).collect();
    bounds.push(stream.len());
    bounds.sort_unstable();
    let mut prev = 0;
    for b in bounds {
        pending.extend_from_slice(&stream[prev..b]);
        prev = b;
        let mut i = 0;
        while i < pending.len() {
            match f.next(&pending[i..], head_request)? {
                Step::Complete { status, used, .. } => {
                    assert!(used > 0 && i + used <= pending.len());
                    out.push(status);
                    i += used;
                }
                Step::Body => i = pending.len(),
                Step::PartialHead { used } => {
                    i += used;
                    break;
                }
            }
        }
        pending.drain(..i);
    }
    if let Some(status) = f.eof() {
        out.push(status);
    }
    Ok(out)
}

fn response_strategy() -> impl proptest::strategy::Strategy<Value = (Vec<u8>, u16)> {
    use proptest::prelude::*;
    prop_oneof![
        // 204 and 304 never have a body; they get their own arm.
        (
            (200u16..600).prop_filter("no body", |s| *s != 204 && *s != 304),
            proptest::collection::vec(any::<u8>(), 0..300)
        )
            .prop_map(|(st, body)| {
                let mut r = format!("HTTP/1.1 {st} X\r\nContent-Length: {}\r\n\r\n", body.len())
                    .into_bytes();
                r.extend_from_slice(&body);
                (r, st)
            }),
        (proptest::collection::vec(1usize..70, 0..5), any::<bool>()).prop_map(
            |(chunks, trailer)| {
                let mut r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                for n in chunks {
                    r.extend_from_slice(format!("{n:x};e=1\r\n").as_bytes());
                    r.extend(std::iter::repeat_n(b'z', n));
                    r.extend_from_slice(b"\r\n");
                }
                r.extend_from_slice(b"0\r\n");
                if trailer {
                    r.extend_from_slice(b"T: v\r\n");
                }
                r.extend_from_slice(b"\r\n");
                (r, 200)
            }
        ),
        Just((
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n".to_vec(),
            204
        )),
        Just((
            b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n".to_vec(),
            304
        )),
    ]
}

proptest::proptest! {
    #[test]
    fn framer_finds_every_response_wherever_reads_split(
        responses in proptest::collection::vec(response_strategy(), 1..8),
        cuts in proptest::collection::vec(0usize..4000, 0..12),
        close_delimited_last in proptest::bool::ANY,
    ) {
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (bytes, status) in &responses {
            stream.extend_from_slice(bytes);
            want.push(*status);
        }
        if close_delimited_last {
            stream.extend_from_slice(b"HTTP/1.0 203 Fine\r\n\r\nto the end");
            want.push(203);
        }
        proptest::prop_assert_eq!(frame_all(&stream, &cuts, false).unwrap(), want);
    }

    #[test]
    fn framer_never_panics_on_garbage(
        bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
        cuts in proptest::collection::vec(0usize..600, 0..6),
        head in proptest::bool::ANY,
    ) {
        let _ = frame_all(&bytes, &cuts, head);
        let mut with_head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        with_head.extend_from_slice(&bytes);
        let _ = frame_all(&with_head, &cuts, head);
    }
}

#[test]
fn chunked_errors() {
    for bad in [
        &b"x\r\n"[..],
        b"\r\n",
        b"5\r\nhelloX",
        b"11111111111111111\r\n",
        b"5\r\nhello\rX",
        b"0\r\n\rX",
    ] {
        assert_eq!(
            Chunked::new().feed(bad).map(|_| ()),
            Err(ParseError::Chunk),
            "{bad:?}"
        );
    }
}
