//! The connection state machine against server byte streams built frame by frame, each fed
//! whole and byte by byte (frames split across reads).

use super::*;
use crate::h2::frame::put_header;
use crate::{RequestSpec, Target};

fn shape(body: usize, fields: &mut Fields) -> RequestShape {
    let spec = RequestSpec {
        method: if body > 0 { "POST" } else { "GET" }.into(),
        body: vec![b'x'; body],
        ..RequestSpec::default()
    };
    RequestShape::new(
        &spec,
        &Target::parse("http://127.0.0.1:1/").unwrap(),
        fields,
        true,
    )
    .unwrap()
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_header(&mut out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
    out
}

fn settings(pairs: &[(u16, u32)]) -> Vec<u8> {
    let mut out = Vec::new();
    frame::put_settings(&mut out, pairs);
    out
}

/// A connection with `n` streams open on shape `s`, its preface written.
struct Fixture {
    c: Conn,
    shapes: Vec<RequestShape>,
    fields: Fields,
    out: Vec<u8>,
    counts: H2Counts,
    ids: Vec<u32>,
}

impl Fixture {
    fn new(opts: H2Options, body: usize) -> Self {
        let mut fields = Fields::default();
        Fixture {
            c: Conn::new(opts),
            shapes: vec![shape(body, &mut fields)],
            fields,
            out: Vec::new(),
            counts: H2Counts::default(),
            ids: Vec::new(),
        }
    }

    fn open(&mut self, n: usize) {
        for _ in 0..n {
            let id = self.c.open(
                0,
                &self.shapes[0],
                &self.fields,
                &mut Rng::new(0, 0),
                &mut Vec::new(),
                &mut self.out,
                &mut self.counts,
            );
            self.ids.push(id);
        }
    }

    /// Feeds `data` whole, then (on a clone of the state) byte by byte; both must agree.
    fn feed(&mut self, data: &[u8]) -> (Vec<Event>, Result<(), ConnError>) {
        let mut whole = Vec::new();
        let r = self.c.feed(
            data,
            &self.shapes,
            &mut self.out,
            &mut self.counts,
            &mut |e| whole.push(e),
        );
        (whole, r)
    }
}

fn split_feed(opts: H2Options, streams: usize, data: &[u8]) -> (Vec<Event>, Result<(), ConnError>) {
    let mut f = Fixture::new(opts, 0);
    f.open(streams);
    let mut events = Vec::new();
    for b in data {
        let r = f.c.feed(
            std::slice::from_ref(b),
            &f.shapes,
            &mut f.out,
            &mut f.counts,
            &mut |e| events.push(e),
        );
        if r.is_err() {
            return (events, r);
        }
    }
    (events, Ok(()))
}

fn opts(streams: u32) -> H2Options {
    H2Options {
        streams,
        ..H2Options::default()
    }
}

/// Feeds whole and byte by byte, asserts both give the same events and result.
#[track_caller]
fn both(streams: usize, data: &[u8]) -> (Vec<Event>, Result<(), ConnError>) {
    let mut f = Fixture::new(opts(100), 0);
    f.open(streams);
    let whole = f.feed(data);
    let split = split_feed(opts(100), streams, data);
    assert_eq!(whole, split, "fed whole and byte by byte");
    whole
}

#[test]
fn preface_settings_and_window_go_out_once() {
    let mut f = Fixture::new(opts(10), 0);
    f.open(2);
    assert!(f.out.starts_with(frame::PREFACE));
    assert_eq!(
        f.out.windows(24).filter(|w| *w == frame::PREFACE).count(),
        1
    );
    let h = Header::parse(&f.out[24..]);
    assert_eq!((h.kind, h.stream), (kind::SETTINGS, 0));
    assert_eq!(f.ids, [1, 3]);
}

#[test]
fn capacity_is_one_until_the_server_says_then_its_limit() {
    let mut f = Fixture::new(opts(100), 0);
    assert_eq!(f.c.capacity(), 1);
    let (ev, r) = f.feed(&settings(&[(setting::MAX_CONCURRENT_STREAMS, 5)]));
    assert!(ev.is_empty() && r.is_ok());
    assert_eq!(f.c.capacity(), 5);
    assert_eq!(f.c.server_max_streams(), Some(5));
    assert_eq!(f.counts.server_max_streams, Some(5));
    // Our SETTINGS ACK went out.
    let ack = frame(kind::SETTINGS, flag::ACK, 0, &[]);
    assert!(f.out.windows(9).any(|w| w == ack.as_slice()));
    f.c.drain();
    assert_eq!(f.c.capacity(), 0);
}

fn response(stream: u32, status_block: &[u8], body: usize) -> Vec<u8> {
    let mut d = frame(kind::HEADERS, flag::END_HEADERS, stream, status_block);
    d.extend(frame(
        kind::DATA,
        flag::END_STREAM,
        stream,
        &vec![b'z'; body],
    ));
    d
}

#[test]
fn responses_complete_on_end_stream_in_any_order_and_split() {
    let mut data = settings(&[]);
    data.extend(response(3, &[0x88], 100)); // :status 200
    let mut h = vec![0x48, 0x03];
    h.extend_from_slice(b"302"); // :status 302, literal with indexing
    data.extend(response(1, &h, 0));
    data.extend(response(5, &[0xbe], 16_000)); // 302 from the dynamic table
    let (ev, r) = both(3, &data);
    r.unwrap();
    assert_eq!(
        ev,
        [
            Event::Response {
                stream: 3,
                status: 200
            },
            Event::Response {
                stream: 1,
                status: 302
            },
            Event::Response {
                stream: 5,
                status: 302
            },
        ]
    );
}

#[test]
fn headers_over_continuation_frames() {
    let mut data = settings(&[]);
    let block = [0x48, 0x03, b'2', b'0', b'4'];
    data.extend(frame(kind::HEADERS, flag::END_STREAM, 1, &block[..2]));
    data.extend(frame(kind::CONTINUATION, 0, 1, &block[2..3]));
    data.extend(frame(kind::CONTINUATION, flag::END_HEADERS, 1, &block[3..]));
    let (ev, r) = both(1, &data);
    r.unwrap();
    assert_eq!(
        ev,
        [Event::Response {
            stream: 1,
            status: 204
        }]
    );
    // A CONTINUATION without HEADERS, or another frame inside a block, is an error.
    let mut bad = settings(&[]);
    bad.extend(frame(kind::CONTINUATION, flag::END_HEADERS, 1, &[0x88]));
    assert_eq!(both(1, &bad).1, Err(ConnError::Local(Violation::Protocol)));
    let mut bad = settings(&[]);
    bad.extend(frame(kind::HEADERS, 0, 1, &[0x88]));
    bad.extend(frame(kind::PING, 0, 0, &[0; 8]));
    assert_eq!(both(1, &bad).1, Err(ConnError::Local(Violation::Protocol)));
}

#[test]
fn interim_responses_and_trailers() {
    let mut data = settings(&[]);
    let mut interim = vec![0x08, 0x03];
    interim.extend_from_slice(b"103");
    data.extend(frame(kind::HEADERS, flag::END_HEADERS, 1, &interim));
    data.extend(frame(kind::HEADERS, flag::END_HEADERS, 1, &[0x8d])); // 404
    data.extend(frame(kind::DATA, 0, 1, b"body"));
    // Trailers: a block without :status ends the stream.
    data.extend(frame(
        kind::HEADERS,
        flag::END_HEADERS | flag::END_STREAM,
        1,
        &[0x00, 0x01, b'x', 0x01, b'y'],
    ));
    let (ev, r) = both(1, &data);
    r.unwrap();
    assert_eq!(
        ev,
        [Event::Response {
            stream: 1,
            status: 404
        }]
    );
    // A stream whose DATA comes before any head is malformed.
    let mut data = settings(&[]);
    data.extend(frame(kind::DATA, flag::END_STREAM, 1, b""));
    assert_eq!(
        both(1, &data).0,
        [Event::Malformed {
            stream: 1,
            what: Malformed::FrameOrder
        }]
    );
}

#[test]
fn rst_stream_refused_and_other_codes() {
    let mut data = settings(&[]);
    data.extend(frame(
        kind::RST_STREAM,
        0,
        1,
        &code::REFUSED_STREAM.to_be_bytes(),
    ));
    data.extend(frame(kind::RST_STREAM, 0, 3, &2u32.to_be_bytes()));
    data.extend(frame(kind::RST_STREAM, 0, 99, &2u32.to_be_bytes())); // not ours
    let mut f = Fixture::new(opts(4), 0);
    f.open(2);
    let (ev, r) = f.feed(&data);
    r.unwrap();
    assert_eq!(
        ev,
        [
            Event::Refused { stream: 1 },
            Event::Reset { stream: 3, code: 2 }
        ]
    );
    assert_eq!(f.counts.rst_received[7], 1);
    assert_eq!(f.counts.rst_received[2], 2);
    assert_eq!(f.c.open_streams(), 0);
}

#[test]
fn goaway_graceful_keeps_processed_streams_and_error_fails_all() {
    let goaway = |last: u32, c: u32| {
        let mut p = last.to_be_bytes().to_vec();
        p.extend(c.to_be_bytes());
        frame(kind::GOAWAY, 0, 0, &p)
    };
    let mut data = settings(&[]);
    data.extend(goaway(3, code::NO_ERROR));
    data.extend(response(3, &[0x88], 0));
    let mut f = Fixture::new(opts(4), 0);
    f.open(3);
    let (ev, r) = f.feed(&data);
    r.unwrap();
    assert_eq!(
        ev,
        [
            Event::GoAway { last_stream: 3 },
            Event::Response {
                stream: 3,
                status: 200
            }
        ]
    );
    assert_eq!(f.c.capacity(), 0);
    let mut data = settings(&[]);
    data.extend(goaway(0, 2));
    assert_eq!(both(1, &data).1, Err(ConnError::Remote(2)));
}

#[test]
fn connection_errors_by_cause() {
    type Case = (&'static str, Vec<u8>, ConnError);
    let after_settings = |tail: Vec<u8>| {
        let mut d = settings(&[]);
        d.extend(tail);
        d
    };
    let cases: Vec<Case> = vec![
        (
            "garbage instead of the preface",
            b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec(),
            ConnError::Local(Violation::NoPreface),
        ),
        (
            "a frame before SETTINGS",
            frame(kind::PING, 0, 0, &[0; 8]),
            ConnError::Local(Violation::NoPreface),
        ),
        (
            "a frame larger than our SETTINGS_MAX_FRAME_SIZE",
            after_settings(frame(
                kind::HEADERS,
                flag::END_HEADERS,
                1,
                &vec![0x88; 16_385],
            )),
            ConnError::Local(Violation::FrameSize),
        ),
        (
            "a PUSH_PROMISE",
            after_settings(frame(
                kind::PUSH_PROMISE,
                flag::END_HEADERS,
                1,
                &[0, 0, 0, 2, 0x82],
            )),
            ConnError::Local(Violation::Protocol),
        ),
        (
            "an HPACK table-size bomb",
            after_settings(frame(
                kind::HEADERS,
                flag::END_HEADERS,
                1,
                &[0x3f, 0xe1, 0xff, 0x03],
            )),
            ConnError::Local(Violation::Hpack(HpackError::BadTableSize)),
        ),
        (
            "push enabled by the server",
            settings(&[(setting::ENABLE_PUSH, 1)]),
            ConnError::Local(Violation::Protocol),
        ),
        (
            "a window past 2^31-1",
            after_settings(frame(kind::WINDOW_UPDATE, 0, 0, &MAX_WINDOW.to_be_bytes())),
            ConnError::Local(Violation::FlowControl),
        ),
        (
            "a PING of the wrong size",
            after_settings(frame(kind::PING, 0, 0, &[0; 7])),
            ConnError::Local(Violation::FrameSize),
        ),
    ];
    for (what, data, want) in cases {
        assert_eq!(both(1, &data).1, Err(want), "{what}");
    }
    assert_eq!(
        ConnError::Local(Violation::Flood).code(),
        code::ENHANCE_YOUR_CALM
    );
}

#[test]
fn pings_are_answered_and_a_flood_is_cut() {
    let mut f = Fixture::new(opts(1), 0);
    f.open(1);
    let mut data = settings(&[]);
    data.extend(frame(kind::PING, 0, 0, b"12345678"));
    f.feed(&data).1.unwrap();
    let ack = frame(kind::PING, flag::ACK, 0, b"12345678");
    assert!(f.out.windows(ack.len()).any(|w| w == ack.as_slice()));
    let ping = frame(kind::PING, 0, 0, b"abcdefgh");
    let flood: Vec<u8> = ping.repeat(MAX_CONTROL_WITHOUT_PROGRESS as usize + 1);
    assert_eq!(f.feed(&flood).1, Err(ConnError::Local(Violation::Flood)));
}

/// Each frame a server can send without end while no response progresses is a flood: the
/// connection fails after the bound, whatever the frame (rapid reset and CONTINUATION floods
/// included), and one response in between sets the count back.
#[test]
fn floods_of_every_frame_kind_are_cut_and_a_response_resets_the_count() {
    let n = MAX_CONTROL_WITHOUT_PROGRESS as usize + 1;
    let cases: [(&str, Vec<u8>, Vec<u8>); 8] = [
        ("ping", vec![], frame(kind::PING, 0, 0, b"abcdefgh")),
        (
            "ping ack",
            vec![],
            frame(kind::PING, flag::ACK, 0, b"abcdefgh"),
        ),
        ("settings", vec![], settings(&[])),
        (
            "window update",
            vec![],
            frame(kind::WINDOW_UPDATE, 0, 0, &1u32.to_be_bytes()),
        ),
        (
            "priority",
            vec![],
            frame(kind::PRIORITY, 0, 1, &[0, 0, 0, 0, 16]),
        ),
        ("unknown type", vec![], frame(0xfa, 0, 0, b"x")),
        (
            "reset of a stream not ours",
            vec![],
            frame(kind::RST_STREAM, 0, 99, &8u32.to_be_bytes()),
        ),
        (
            "empty continuation",
            frame(kind::HEADERS, 0, 1, &[0x88]),
            frame(kind::CONTINUATION, 0, 1, b""),
        ),
    ];
    for (what, lead, one) in cases {
        let mut f = Fixture::new(opts(1), 0);
        f.open(1);
        let mut data = settings(&[]);
        data.extend(lead);
        data.extend(one.repeat(n));
        assert_eq!(
            f.feed(&data).1,
            Err(ConnError::Local(Violation::Flood)),
            "{what}"
        );
    }
    // Just under the bound, a response, then as many again: no flood.
    let mut f = Fixture::new(opts(1), 0);
    f.open(2);
    let ping = frame(kind::PING, 0, 0, b"abcdefgh");
    // SETTINGS, the PINGs and the response's HEADERS: the bound exactly.
    let mut data = settings(&[]);
    data.extend(ping.repeat(n - 3));
    data.extend(frame(
        kind::HEADERS,
        flag::END_HEADERS | flag::END_STREAM,
        1,
        &[0x88],
    ));
    data.extend(ping.repeat(n - 2));
    let (events, r) = f.feed(&data);
    r.unwrap();
    assert_eq!(
        events,
        [Event::Response {
            stream: 1,
            status: 200
        }]
    );
}

/// A WINDOW_UPDATE that overflows one stream's window ends that stream alone, reset by us
/// with FLOW_CONTROL_ERROR (RFC 9113 6.9.1); the connection and its other streams go on.
#[test]
fn a_stream_window_overflow_resets_that_stream_only() {
    let mut f = Fixture::new(opts(10), 0);
    f.open(2);
    let mut data = settings(&[]);
    data.extend(frame(
        kind::WINDOW_UPDATE,
        0,
        1,
        &0x7fff_ffffu32.to_be_bytes(),
    ));
    data.extend(frame(
        kind::HEADERS,
        flag::END_HEADERS | flag::END_STREAM,
        3,
        &[0x88],
    ));
    let (events, r) = f.feed(&data);
    r.unwrap();
    assert_eq!(
        events,
        [
            Event::Broken {
                stream: 1,
                code: code::FLOW_CONTROL_ERROR
            },
            Event::Response {
                stream: 3,
                status: 200
            }
        ]
    );
    let rst = frame(
        kind::RST_STREAM,
        0,
        1,
        &code::FLOW_CONTROL_ERROR.to_be_bytes(),
    );
    assert!(f.out.windows(rst.len()).any(|w| w == rst.as_slice()));
}

#[test]
fn bodies_wait_for_the_servers_windows() {
    let mut f = Fixture::new(opts(1), 100_000);
    f.open(1);
    let data_sent = |out: &[u8]| -> usize {
        // Walk our own output's frames after the preface.
        let mut i = frame::PREFACE.len();
        let mut n = 0;
        while i + 9 <= out.len() {
            let h = Header::parse(&out[i..]);
            if h.kind == kind::DATA {
                n += h.len;
            }
            i += 9 + h.len;
        }
        n
    };
    assert_eq!(data_sent(&f.out), 65_535);
    f.feed(&settings(&[])).1.unwrap();
    assert_eq!(data_sent(&f.out), 65_535);
    f.feed(&frame(kind::WINDOW_UPDATE, 0, 1, &40_000u32.to_be_bytes()))
        .1
        .unwrap();
    assert_eq!(
        data_sent(&f.out),
        65_535,
        "the connection window is still shut"
    );
    f.feed(&frame(kind::WINDOW_UPDATE, 0, 0, &40_000u32.to_be_bytes()))
        .1
        .unwrap();
    assert_eq!(data_sent(&f.out), 100_000);
}

#[test]
fn window_updates_as_data_is_consumed() {
    let o = H2Options {
        streams: 1,
        window: 1000,
        connection_window: 65_535,
        first_stream_id: 1,
    };
    let mut f = Fixture::new(o, 0);
    f.open(1);
    let before = f.out.len();
    let mut data = settings(&[]);
    data.extend(frame(kind::HEADERS, flag::END_HEADERS, 1, &[0x88]));
    data.extend(frame(kind::DATA, 0, 1, &[0; 600]));
    f.feed(&data).1.unwrap();
    let update = frame(kind::WINDOW_UPDATE, 0, 1, &600u32.to_be_bytes());
    assert!(f.out[before..]
        .windows(update.len())
        .any(|w| w == update.as_slice()));
    // More than the stream's window at once is a flow-control error.
    let (_, r) = f.feed(&frame(kind::DATA, 0, 1, &[0; 1001]));
    assert_eq!(r, Err(ConnError::Local(Violation::FlowControl)));
}

/// Regression: the room was the streams allowed, not the IDs left, so the stream after
/// 2^31 - 1 went out as stream 1 and nginx closed the connection (PROTOCOL_ERROR).
#[test]
fn stream_ids_run_out_before_2_pow_31_capacity_counts_ids_left() {
    let mut f = Fixture::new(
        H2Options {
            first_stream_id: frame::MAX_STREAM_ID - 2,
            ..opts(4)
        },
        0,
    );
    f.feed(&settings(&[])).1.unwrap();
    assert_eq!(
        f.c.capacity(),
        2,
        "two IDs left, though four streams are allowed"
    );
    f.open(1);
    assert!(!f.c.ids_exhausted());
    assert_eq!(f.c.capacity(), 2, "one open, one ID left");
    f.open(1);
    assert_eq!(f.ids, [frame::MAX_STREAM_ID - 2, frame::MAX_STREAM_ID]);
    assert!(f.c.ids_exhausted());
    assert_eq!(f.c.capacity(), 0);
    f.c.reset();
    assert!(!f.c.ids_exhausted());
}

#[test]
fn cancelled_streams_send_rst_and_their_frames_are_ignored() {
    let mut f = Fixture::new(opts(2), 0);
    f.open(1);
    f.c.cancel(1, &mut f.out);
    let rst = frame(kind::RST_STREAM, 0, 1, &code::CANCEL.to_be_bytes());
    assert!(f.out.ends_with(&rst));
    let mut data = settings(&[]);
    data.extend(response(1, &[0x88], 10));
    let (ev, r) = f.feed(&data);
    r.unwrap();
    assert!(ev.is_empty());
}

/// A keeping connection (verification's) gives the final head's fields and the body
/// whole: interim 103 dropped, padding removed, DATA split over frames and reads, a
/// stream's response kept apart from another's; the engine's connection keeps nothing.
#[test]
fn a_keeping_connection_gives_head_and_body_whole_without_padding() {
    // :status 103: a literal without indexing, its name static index 8.
    let early = [0x08u8, 0x03, b'1', b'0', b'3'];
    // :status 200 (static index 8), then a literal `content-type: text/plain`.
    let mut head = vec![0x88];
    hpack::put_field(&mut head, "content-type", "text/plain");
    let mut server = settings(&[]);
    server.extend(frame(kind::HEADERS, flag::END_HEADERS, 1, &early));
    server.extend(frame(kind::HEADERS, flag::END_HEADERS, 1, &head));
    server.extend(frame(kind::HEADERS, flag::END_HEADERS, 3, &[0x8d])); // 404 on stream 3
                                                                        // Padded: pad length 3, "hello ", three bytes of padding.
    server.extend(frame(kind::DATA, flag::PADDED, 1, b"\x03hello \0\0\0"));
    server.extend(frame(kind::DATA, flag::END_STREAM, 3, b"gone"));
    server.extend(frame(kind::DATA, flag::END_STREAM, 1, b"world"));
    for bytewise in [false, true] {
        let mut f = Fixture::new(opts(10), 0);
        f.c = Conn::keeping(opts(10));
        f.open(2);
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
            .unwrap();
        }
        assert_eq!(
            events,
            [
                Event::Response {
                    stream: 3,
                    status: 404
                },
                Event::Response {
                    stream: 1,
                    status: 200
                }
            ],
            "bytewise {bytewise}"
        );
        let (fields, body) = f.c.take_response(1).unwrap();
        assert_eq!(
            fields,
            [
                (b":status".to_vec(), b"200".to_vec()),
                (b"content-type".to_vec(), b"text/plain".to_vec())
            ],
            "bytewise {bytewise}"
        );
        assert_eq!(body, b"hello world", "bytewise {bytewise}");
        assert_eq!(f.c.take_response(3).unwrap().1, b"gone");
        assert_eq!(f.c.take_response(1), None, "taken once");
    }
    let mut f = Fixture::new(opts(10), 0);
    f.open(2);
    f.feed(&server).1.unwrap();
    assert_eq!(f.c.take_response(1), None, "the engine keeps nothing");
}

/// A server's HEADERS or DATA on a stream we never opened (idle, or even: a push we
/// disabled) is a connection error (RFC 9113 5.1): it was ignored.
#[test]
fn frames_on_streams_never_opened_are_protocol_errors() {
    for (what, f) in [
        (
            "headers on an idle stream",
            frame(kind::HEADERS, flag::END_HEADERS, 5, &[0x88]),
        ),
        (
            "headers on an even stream",
            frame(kind::HEADERS, flag::END_HEADERS, 2, &[0x88]),
        ),
        (
            "data on an idle stream",
            frame(kind::DATA, flag::END_STREAM, 7, b"x"),
        ),
    ] {
        let mut data = settings(&[]);
        data.extend(f);
        assert_eq!(
            both(2, &data).1,
            Err(ConnError::Local(Violation::Protocol)),
            "{what}"
        );
    }
}

/// A DATA frame whose pad length is its payload's length or more is a connection error
/// (RFC 9113 6.1): the engine skipped the payload unread; a valid pad is accepted.
#[test]
fn data_padding_as_long_as_the_payload_is_a_protocol_error() {
    let mut head = settings(&[]);
    head.extend(frame(kind::HEADERS, flag::END_HEADERS, 1, &[0x88]));
    let mut bad = head.clone();
    bad.extend(frame(
        kind::DATA,
        flag::PADDED | flag::END_STREAM,
        1,
        &[3, b'a', 0],
    ));
    assert_eq!(both(1, &bad).1, Err(ConnError::Local(Violation::Protocol)));
    let mut good = head;
    good.extend(frame(
        kind::DATA,
        flag::PADDED | flag::END_STREAM,
        1,
        &[1, b'a', 0],
    ));
    assert_eq!(
        both(1, &good),
        (
            vec![Event::Response {
                stream: 1,
                status: 200
            }],
            Ok(())
        )
    );
}

mod malformed;
