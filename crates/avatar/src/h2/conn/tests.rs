//! The connection against client byte streams built frame by frame: the preface, SETTINGS,
//! requests answered over the responder, flow control, and each limit and flood defence.

use std::sync::Arc;

use super::*;
use crate::config::Config;
use crate::h2::frame::{flag, kind};
use crate::h2::hpack::put_int;
use crate::metrics::Metrics;
use crate::rng::Rng;
use crate::site::Site;

/// A connection, a responder over the default site, and what the server wrote.
struct Fixture {
    conn: Conn,
    responder: Responder,
    scratch: Scratch,
    metrics: Arc<Metrics>,
    limits: Limits,
    held: Vec<u8>,
    out: Vec<u8>,
    next: Next,
}

impl Fixture {
    fn new() -> Self {
        let config = Config::default();
        let site = Arc::new(Site::from_config(&config).unwrap());
        let metrics = Arc::new(Metrics::new(1));
        Fixture {
            conn: Conn::new(),
            responder: Responder::new(site, Arc::clone(&metrics), 0, Rng::from_seed(1), 0),
            scratch: Scratch::new(),
            metrics,
            limits: config.limits,
            held: Vec::new(),
            out: Vec::new(),
            next: Next::NeedInput,
        }
    }

    /// Feeds bytes as the worker does: appended to what was held, the rest held again.
    fn feed(&mut self, bytes: &[u8]) {
        self.held.extend_from_slice(bytes);
        loop {
            let mut cx = Ctx {
                responder: &mut self.responder,
                scratch: &mut self.scratch,
                metrics: self.metrics.worker(0),
                limits: &self.limits,
                peer: None,
                now_s: 0,
            };
            let o = self
                .conn
                .process(&self.held, &mut self.out, usize::MAX, &mut cx);
            self.held.drain(..o.consumed);
            self.next = o.next;
            if o.next != Next::OutputFull {
                return;
            }
        }
    }

    /// The frames written so far: (type, flags, stream, payload).
    fn frames(&self) -> Vec<(u8, u8, u32, Vec<u8>)> {
        let mut at = 0;
        let mut v = Vec::new();
        while at + HEADER_LEN <= self.out.len() {
            let h = Header::parse(&self.out[at..]);
            let p = self.out[at + HEADER_LEN..at + HEADER_LEN + h.len].to_vec();
            v.push((h.kind, h.flags, h.stream, p));
            at += HEADER_LEN + h.len;
        }
        v
    }

    fn goaway_code(&self) -> Option<u32> {
        self.frames()
            .iter()
            .find(|f| f.0 == kind::GOAWAY)
            .map(|f| u32::from_be_bytes([f.3[4], f.3[5], f.3[6], f.3[7]]))
    }

    fn started() -> Self {
        let mut f = Fixture::new();
        let mut hello = PREFACE.to_vec();
        frame::put_settings(&mut hello, &[]);
        f.feed(&hello);
        f
    }
}

fn request(path: &str) -> Vec<u8> {
    let mut b = vec![0x82, 0x86]; // :method GET, :scheme http
    b.push(0x04); // :path, literal without indexing
    put_int(&mut b, 0, 7, path.len());
    b.extend_from_slice(path.as_bytes());
    b
}

fn headers(stream: u32, block: &[u8], flags: u8) -> Vec<u8> {
    let mut out = Vec::new();
    frame::put_header(&mut out, block.len(), kind::HEADERS, flags, stream);
    out.extend_from_slice(block);
    out
}

const END: u8 = flag::END_HEADERS | flag::END_STREAM;

#[test]
fn preface_then_a_request_gets_settings_and_a_302() {
    let mut f = Fixture::started();
    f.feed(&headers(1, &request("/"), END));
    let frames = f.frames();
    assert_eq!(frames[0].0, kind::SETTINGS);
    assert_eq!((frames[1].0, frames[1].1), (kind::SETTINGS, flag::ACK));
    let (k, flags, stream, ref block) = frames[2];
    assert_eq!((k, flags, stream), (kind::HEADERS, END, 1));
    let mut fields = Fields::new();
    Decoder::new().decode(block, &mut fields, 1 << 16).unwrap();
    let list: Vec<_> = fields.iter().collect();
    assert_eq!(list[0], (&b":status"[..], &b"302"[..]));
    assert!(list
        .iter()
        .any(|(n, v)| *n == b"location" && v.starts_with(b"https://")));
    assert_eq!(f.metrics.h2_events(H2Event::Connection), 1);
}

#[test]
fn split_at_every_byte_gives_the_same_frames() {
    let mut whole = PREFACE.to_vec();
    frame::put_settings(&mut whole, &[(setting::INITIAL_WINDOW_SIZE, 100)]);
    whole.extend(headers(1, &request("/00ff00.svg"), END));
    whole.extend(headers(3, &request("/healthz"), END));
    let mut a = Fixture::new();
    a.feed(&whole);
    for cut in 1..whole.len() {
        let mut b = Fixture::new();
        b.feed(&whole[..cut]);
        b.feed(&whole[cut..]);
        assert_eq!(a.out, b.out, "cut at {cut}");
    }
}

#[test]
fn a_bad_preface_closes_without_a_word() {
    let mut f = Fixture::new();
    f.feed(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n");
    assert_eq!(f.next, Next::Close);
    assert!(f.out.is_empty());
}

#[test]
fn flow_control_holds_the_body_until_the_window_opens() {
    let mut f = Fixture::new();
    let mut hello = PREFACE.to_vec();
    frame::put_settings(&mut hello, &[(setting::INITIAL_WINDOW_SIZE, 10)]);
    f.feed(&hello);
    f.feed(&headers(1, &request("/00ff00.svg"), END));
    let data: Vec<_> = f
        .frames()
        .into_iter()
        .filter(|x| x.0 == kind::DATA)
        .collect();
    assert_eq!(data.len(), 1);
    assert_eq!(data[0].3.len(), 10);
    assert!(f.conn.has_streams());
    let mut wu = Vec::new();
    frame::put_window_update(&mut wu, 1, 1 << 20);
    f.feed(&wu);
    let data: Vec<_> = f
        .frames()
        .into_iter()
        .filter(|x| x.0 == kind::DATA)
        .collect();
    let total: usize = data.iter().map(|d| d.3.len()).sum();
    assert_eq!(total, f.responder_svg_len());
    assert_eq!(data.last().unwrap().1, flag::END_STREAM);
    assert!(!f.conn.has_streams());
}

impl Fixture {
    fn responder_svg_len(&self) -> usize {
        Site::from_config(&Config::default())
            .unwrap()
            .svg()
            .body_len()
    }
}

#[test]
fn streams_past_the_limit_are_refused() {
    let mut f = Fixture::new();
    f.limits.max_concurrent_streams = 2;
    let mut hello = PREFACE.to_vec();
    // A zero window keeps every answered stream open.
    frame::put_settings(&mut hello, &[(setting::INITIAL_WINDOW_SIZE, 0)]);
    f.feed(&hello);
    for id in [1, 3, 5] {
        f.feed(&headers(id, &request("/00ff00.svg"), END));
    }
    let rst: Vec<_> = f
        .frames()
        .into_iter()
        .filter(|x| x.0 == kind::RST_STREAM)
        .collect();
    assert_eq!(rst.len(), 1);
    assert_eq!(rst[0].2, 5);
    assert_eq!(rst[0].3, code::REFUSED_STREAM.to_be_bytes());
    assert_eq!(f.metrics.h2_events(H2Event::StreamRefused), 1);
}

#[test]
fn rapid_reset_ends_in_enhance_your_calm() {
    let mut f = Fixture::started();
    let mut flood = Vec::new();
    for i in 0..=RESET_BURST {
        let id = 2 * i + 1;
        flood.extend(headers(id, &request("/"), flag::END_HEADERS));
        frame::put_rst(&mut flood, id, 8);
    }
    f.feed(&flood);
    assert_eq!(f.goaway_code(), Some(code::ENHANCE_YOUR_CALM));
    assert_eq!(f.next, Next::Linger);
    assert_eq!(f.metrics.h2_events(H2Event::RapidReset), 1);
}

#[test]
fn continuation_flood_ends_in_enhance_your_calm() {
    for (chunk, frames) in [(0usize, MAX_CONTINUATIONS as usize + 1), (4096, 9)] {
        let mut f = Fixture::started();
        let mut flood = headers(1, &request("/"), 0);
        for _ in 0..frames {
            frame::put_header(&mut flood, chunk, kind::CONTINUATION, 0, 1);
            flood.extend(std::iter::repeat_n(0x82, chunk));
        }
        f.feed(&flood);
        assert_eq!(f.goaway_code(), Some(code::ENHANCE_YOUR_CALM), "{chunk}");
        assert_eq!(f.metrics.h2_events(H2Event::ContinuationFlood), 1);
    }
}

#[test]
fn ping_flood_ends_in_enhance_your_calm() {
    let mut f = Fixture::started();
    let mut flood = Vec::new();
    for _ in 0..=CONTROL_BURST {
        frame::put_header(&mut flood, 8, kind::PING, 0, 0);
        flood.extend_from_slice(&[7; 8]);
    }
    f.feed(&flood);
    assert_eq!(f.goaway_code(), Some(code::ENHANCE_YOUR_CALM));
    assert_eq!(f.metrics.h2_events(H2Event::ControlFlood), 1);
}

#[test]
fn a_frame_past_the_max_size_is_a_frame_size_error() {
    let mut f = Fixture::started();
    let mut big = Vec::new();
    frame::put_header(&mut big, DEFAULT_MAX_FRAME + 1, kind::DATA, 0, 1);
    f.feed(&big);
    assert_eq!(f.goaway_code(), Some(code::FRAME_SIZE_ERROR));
    assert_eq!(f.metrics.h2_events(H2Event::FrameTooLarge), 1);
}

#[test]
fn a_header_list_past_the_limit_gets_431() {
    let mut f = Fixture::started();
    f.limits.max_header_list_bytes = 1000;
    let mut block = request("/");
    block.push(0);
    put_int(&mut block, 0, 7, 1);
    block.push(b'x');
    put_int(&mut block, 0, 7, 2000);
    block.extend(std::iter::repeat_n(b'v', 2000));
    f.feed(&headers(1, &block, END));
    let h = f
        .frames()
        .into_iter()
        .find(|x| x.0 == kind::HEADERS)
        .unwrap();
    let mut fields = Fields::new();
    Decoder::new().decode(&h.3, &mut fields, 1 << 16).unwrap();
    assert_eq!(fields.iter().next().unwrap().1, b"431");
    assert_eq!(f.metrics.h2_events(H2Event::HeaderListTooLarge), 1);
}

/// An idle h2 connection holds its state and nothing else until the client indexes fields:
/// no HPACK table, block or stream buffer is allocated up front.
#[test]
fn an_idle_connection_is_small() {
    assert!(
        std::mem::size_of::<Conn>() <= 320,
        "{}",
        std::mem::size_of::<Conn>()
    );
    let f = Fixture::started();
    assert_eq!(f.conn.streams.capacity(), 0);
    assert_eq!(f.conn.block.capacity(), 0);
}

/// A 431 answers an oversized header block without paying back the control budget: the
/// block is charged to it, so a client cannot send such blocks without limit.
#[test]
fn oversized_header_blocks_spend_the_control_budget() {
    let mut f = Fixture::started();
    f.limits.max_header_list_bytes = 1000;
    // The first block indexes a 1,100-byte field; every later one refers to it in one byte.
    let mut first = request("/");
    first.extend_from_slice(&[0x40, 1, b'x']);
    put_int(&mut first, 0, 7, 1100);
    first.extend(std::iter::repeat_n(b'v', 1100));
    let mut flood = headers(1, &first, END);
    let mut bomb = request("/");
    bomb.push(0xbe);
    for i in 1..=CONTROL_BURST {
        flood.extend(headers(2 * i + 1, &bomb, END));
    }
    f.feed(&flood);
    assert_eq!(f.goaway_code(), Some(code::ENHANCE_YOUR_CALM));
    assert_eq!(f.metrics.h2_events(H2Event::ControlFlood), 1);
    assert_eq!(
        f.metrics.h2_events(H2Event::HeaderListTooLarge),
        u64::from(CONTROL_BURST)
    );
}

/// DATA on a closed stream draws a RST_STREAM from the server; each is charged to the resets
/// budget, so a flood of them ends in ENHANCE_YOUR_CALM rather than a reset per frame forever.
#[test]
fn data_on_closed_streams_spends_the_resets_budget() {
    let mut f = Fixture::started();
    f.feed(&headers(1, &request("/"), END));
    let mut flood = Vec::new();
    for _ in 0..=RESET_BURST {
        frame::put_header(&mut flood, 1, kind::DATA, 0, 1);
        flood.push(0);
    }
    f.feed(&flood);
    let rst = f
        .frames()
        .iter()
        .filter(|x| x.0 == kind::RST_STREAM)
        .count();
    assert_eq!(rst, RESET_BURST as usize);
    assert_eq!(f.goaway_code(), Some(code::ENHANCE_YOUR_CALM));
    assert_eq!(f.metrics.h2_events(H2Event::RapidReset), 1);
}

/// The client's preface ends with SETTINGS (RFC 9113 3.4): any other first frame is a
/// connection PROTOCOL_ERROR, and no request sent before it is answered.
#[test]
fn a_first_frame_other_than_settings_is_a_protocol_error() {
    for first in [kind::HEADERS, kind::PING, kind::SETTINGS] {
        let mut f = Fixture::new();
        let mut hello = PREFACE.to_vec();
        match first {
            kind::HEADERS => hello.extend(headers(1, &request("/"), END)),
            kind::PING => {
                frame::put_header(&mut hello, 8, kind::PING, 0, 0);
                hello.extend_from_slice(&[0; 8]);
            }
            // A SETTINGS ACK is no client preface either.
            _ => frame::put_header(&mut hello, 0, kind::SETTINGS, flag::ACK, 0),
        }
        f.feed(&hello);
        assert_eq!(f.goaway_code(), Some(code::PROTOCOL_ERROR), "first {first}");
        assert!(f.frames().iter().all(|x| x.0 != kind::HEADERS));
    }
}
