use super::record::{record, Seen, Walk};
use super::*;
use crate::frame::{kind, put_data_header, put_goaway, put_header, put_headers, Kind, Settings};

/// HEADERS, SETTINGS and GOAWAY whole, DATA streamed, unknown types skipped, the rest
/// refused with the code 7.
fn policy(h: &Header) -> Result<Take, u64> {
    match h.kind {
        Kind::Headers | Kind::Settings | Kind::Goaway => Ok(Take::Whole),
        Kind::Data => Ok(Take::Stream),
        Kind::Unknown(_) => Ok(Take::Skip),
        _ => Err(7),
    }
}

/// Walks `chunks` as separate reads with [`policy`]: what they gave, and the most held.
fn walk<'a>(limit: u64, chunks: impl IntoIterator<Item = &'a [u8]>) -> (Walk, usize) {
    record(limit, chunks, policy)
}

/// HEADERS, an unknown frame, DATA, an empty DATA, trailers, SETTINGS and GOAWAY (whatever
/// a stream would allow: the walker knows only framing), with multi-byte lengths.
fn stream() -> Vec<u8> {
    let mut b = Vec::new();
    put_headers(&mut b, &[7; 70]);
    put_header(&mut b, 0x21, 3);
    b.extend_from_slice(b"abc");
    put_data_header(&mut b, 300);
    b.extend_from_slice(&[9; 300]);
    put_data_header(&mut b, 0);
    put_headers(&mut b, &[]);
    Settings::static_qpack(16_384).put(&mut b);
    put_goaway(&mut b, 1 << 20);
    b
}

#[test]
fn every_split_of_a_stream_gives_the_same_frames() {
    let b = stream();
    let (want, held) = walk(1024, [&b[..]]);
    assert_eq!((want.error, want.between_frames), (None, true));
    assert_eq!(held, 0, "nothing held when the stream comes in one read");
    assert_eq!(want.seen.len(), 12, "{want:?}");
    assert_eq!(want.seen[1], Seen::Whole(vec![7; 70]));
    assert_eq!(want.seen[4], Seen::Data(vec![9; 300]));
    assert_eq!(walk(1024, b.chunks(1)).0, want, "byte by byte");
    for cut in 0..=b.len() {
        let (split, held) = walk(1024, [&b[..cut], &b[cut..]]);
        assert_eq!(split, want, "cut at {cut}");
        assert!(held <= 70 + MAX_HEADER, "held {held} at cut {cut}");
    }
}

#[test]
fn a_stream_that_ends_inside_a_frame_is_not_between_frames() {
    let b = stream();
    let mut ends = vec![0];
    let mut at = 0;
    while at < b.len() {
        let h = frame::parse_header(&b[at..], 1024).unwrap().unwrap();
        at += h.header_len + h.len as usize;
        ends.push(at);
    }
    for cut in 0..=b.len() {
        let (w, _) = walk(1024, [&b[..cut]]);
        assert_eq!(w.error, None, "the stream ends at {cut}");
        assert_eq!(
            w.between_frames,
            ends.contains(&cut),
            "the stream ends at {cut}"
        );
    }
}

#[test]
fn an_unknown_frame_of_a_huge_length_is_skipped_without_holding_it() {
    let mut head = Vec::new();
    put_header(&mut head, 0x21 + 0x1f * 7, crate::varint::MAX);
    let filler = vec![0u8; 64 * 1024];
    let mut w = Walker::new(16);
    let mut heads = 0;
    for chunk in [&head[..3], &head[3..]]
        .into_iter()
        .chain(std::iter::repeat_n(&filler[..], 16))
    {
        let mut b = chunk;
        let step = w.next(&mut b, |h| {
            heads += 1;
            policy(h)
        });
        assert_eq!(step, Ok(None));
        assert!(b.is_empty());
        assert!(w.held() <= 3, "held {}", w.held());
    }
    assert_eq!(heads, 1, "one header, read once");
    assert_eq!(w.held(), 0);
    assert!(!w.between_frames(), "a megabyte into 2^62 bytes");
}

#[test]
fn a_frame_taken_whole_past_the_limit_is_too_large() {
    // HEADERS by parse_header's rule for the types held whole, DATA by the caller's ask.
    for (kind, t) in [(Kind::Headers, kind::HEADERS), (Kind::Data, kind::DATA)] {
        let mut b = Vec::new();
        put_header(&mut b, t, 101);
        let mut w = Walker::new(100);
        let got = w.next(&mut &b[..], |_| Ok::<_, ()>(Take::Whole));
        assert_eq!(
            got,
            Err(WalkError::Frame(FrameError::TooLarge {
                kind,
                len: 101,
                limit: 100
            })),
            "{kind:?}"
        );
        let mut b = Vec::new();
        put_header(&mut b, t, 100);
        b.extend_from_slice(&[1; 100]);
        let mut w = Walker::new(100);
        let got = w.next(&mut &b[..], |_| Ok::<_, ()>(Take::Whole));
        assert_eq!(got.map(|f| f.is_some()), Ok(true), "at the limit");
    }
    // DATA streamed, or skipped, has no limit.
    let mut b = Vec::new();
    put_data_header(&mut b, 1 << 40);
    for how in [Take::Stream, Take::Skip] {
        let mut w = Walker::new(100);
        assert_eq!(
            w.next(&mut &b[..], |_| Ok::<_, ()>(how)),
            Ok(None),
            "{how:?}"
        );
    }
}

#[test]
fn a_refusal_stops_the_walk_with_the_callers_error_and_an_http2_type_is_a_frame_error() {
    let mut b = Vec::new();
    put_header(&mut b, kind::MAX_PUSH_ID, 1);
    b.push(0);
    assert_eq!(walk(1024, [&b[..]]).0.error, Some(WalkError::Refused(7)));
    let mut b = Vec::new();
    put_header(&mut b, 0x6, 0);
    assert_eq!(
        walk(1024, [&b[..]]).0.error,
        Some(WalkError::Frame(FrameError::Http2Only(0x6)))
    );
    assert_eq!(
        WalkError::<u64>::Frame(FrameError::Http2Only(0x6)).code(),
        crate::error::H3_FRAME_UNEXPECTED
    );
    assert_eq!(WalkError::Refused(7u64).code(), 7);
}

#[test]
fn a_frame_whole_in_a_read_is_handed_over_where_it_lies() {
    let mut b = Vec::new();
    put_headers(&mut b, b"head");
    put_data_header(&mut b, 4);
    b.extend_from_slice(b"body");
    let mut w = Walker::new(1024);
    let mut input = &b[..];
    let Ok(Some(Frame::Whole(_, head))) = w.next(&mut input, policy) else {
        panic!("HEADERS");
    };
    assert!(std::ptr::eq(head, &b[2..6]), "HEADERS copied");
    let Ok(Some(Frame::Part(body))) = w.next(&mut input, policy) else {
        panic!("DATA");
    };
    assert!(std::ptr::eq(body, &b[8..]), "DATA copied");
    assert_eq!(w.next(&mut input, policy), Ok(None));
    assert!(w.between_frames());
}
