//! The fuzz property in ordinary `cargo test`: seeded random and mutated inputs through the
//! same entry point as `fuzz/fuzz_targets/respond.rs`.

use avatar::harness::Harness;
use avatar::rng::Rng;

const SEEDS: &[&[u8]] = &[
    b"GET / HTTP/1.1\r\nHost: t\r\n\r\n",
    b"HEAD /ff8800.svg HTTP/1.1\r\nHost: t\r\nIf-None-Match: W/\"x\", *\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n",
    b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbodyGET /random.svg HTTP/1.1\r\nHost: t\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n",
    b"GET http://h/a.svg?q HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
];

const TOKENS: &[&[u8]] = &[
    b"\r\n",
    b"\r\n\r\n",
    b" ",
    b":",
    b"HTTP/1.1",
    b"HTTP/1.0",
    b"Content-Length: ",
    b"Transfer-Encoding: chunked",
    b"Host: x",
    b"Connection: close",
    b"GET ",
    b"/metrics",
    b".svg",
    b"\0",
    b"\xff",
    b"99999999999",
];

fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    for _ in 0..=rng.below(4) {
        let len = data.len() as u64;
        match rng.below(6) {
            0 if len > 0 => {
                let i = rng.below(len) as usize;
                data[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(len + 1) as usize;
                data.insert(i, rng.next_u64() as u8);
            }
            2 if len > 0 => {
                let i = rng.below(len) as usize;
                let n = (rng.below(8) as usize).min(data.len() - i);
                data.drain(i..i + n);
            }
            3 => {
                let i = rng.below(len + 1) as usize;
                let t = TOKENS[rng.below(TOKENS.len() as u64) as usize];
                data.splice(i..i, t.iter().copied());
            }
            4 => {
                let other = SEEDS[rng.below(SEEDS.len() as u64) as usize];
                data.extend_from_slice(other);
            }
            _ => {
                let i = rng.below(len + 1) as usize;
                data.truncate(i);
            }
        }
    }
}

#[test]
fn random_and_mutated_inputs_keep_the_invariants() {
    let harness = Harness::new();
    let mut rng = Rng::from_seed(0x5eed_f0c5);
    let iterations = if cfg!(debug_assertions) {
        200_000
    } else {
        500_000
    };
    for i in 0..iterations {
        let data: Vec<u8> = if i % 8 == 0 {
            // Pure noise, short.
            (0..rng.below(64)).map(|_| rng.next_u64() as u8).collect()
        } else {
            let mut d = SEEDS[rng.below(SEEDS.len() as u64) as usize].to_vec();
            mutate(&mut rng, &mut d);
            d
        };
        let cut = rng.below(data.len() as u64 + 1) as usize;
        harness.check(&data, cut);
    }
}

/// The fuzz property of `fuzz/fuzz_targets/h3.rs` in ordinary `cargo test`: an HTTP/3
/// request stream (an unknown frame, a head, a body, trailers), split at every byte and
/// mutated, walked, decoded and answered the same as unsplit.
#[test]
fn h3_request_streams_split_and_mutated_keep_the_invariants() {
    use h3wire::frame;

    let harness = Harness::new();
    // The fuzz target's head, `GET /` with `:authority: a`.
    let get = [0x01, 0x08, 0x00, 0x00, 0xd1, 0xd7, 0xc1, 0x50, 0x01, b'a'];
    let t = harness.check_h3(&get, 3);
    assert!(t.answer.is_some_and(|a| a.starts_with(b"HTTP/1.1 ")));
    assert_eq!(t.end, Some(avatar::h3::request::End::Complete));
    let mut stream = Vec::new();
    frame::put_header(&mut stream, 0x21, 2);
    stream.extend_from_slice(b"zz");
    let section = h3wire::qpack::Request {
        method: "POST",
        scheme: "https",
        authority: "a",
        path: "/ff8800.svg",
        headers: &[("content-length", "4")],
    }
    .encode();
    frame::put_headers(&mut stream, &section);
    frame::put_data_header(&mut stream, 4);
    stream.extend_from_slice(b"body");
    frame::put_headers(&mut stream, &[0, 0]);
    let whole = harness.run_h3([&stream[..]]);
    assert_eq!(
        (whole.error, whole.end),
        (None, Some(avatar::h3::request::End::Complete))
    );
    assert_eq!((whole.body_bytes, whole.length_broken), (4, false));
    for cut in 0..=stream.len() {
        assert_eq!(harness.check_h3(&stream, cut), whole, "cut at {cut}");
    }
    let mut rng = Rng::from_seed(0x5eed_0f03);
    for _ in 0..20_000 {
        let mut d = stream.clone();
        for _ in 0..=rng.below(4) {
            let i = rng.below(d.len() as u64) as usize;
            match rng.below(3) {
                0 => d[i] ^= 1 << rng.below(8),
                1 => d.insert(i, rng.next_u64() as u8),
                _ => d.truncate(i),
            }
            if d.is_empty() {
                break;
            }
        }
        let cut = rng.below(d.len() as u64 + 1) as usize;
        harness.check_h3(&d, cut);
    }
}

/// The fuzz target's first find: a head, then a frame no request stream carries (SETTINGS).
/// Split after the head, the head was answered before the connection error; in one read
/// it was not. The error closes the connection either way, so the answer is not compared.
#[test]
fn a_connection_error_after_a_head_hides_the_answer_however_the_reads_fall() {
    let harness = Harness::new();
    let mut stream = vec![0x01, 0x08, 0x00, 0x00, 0xd1, 0xd7, 0xc1, 0x50, 0x01, b'a'];
    stream.extend_from_slice(&[0x04, 0x60, 0x80]);
    for cut in 0..=stream.len() {
        let t = harness.check_h3(&stream, cut);
        assert_eq!(
            t.error,
            Some(h3wire::error::H3_FRAME_UNEXPECTED),
            "cut at {cut}"
        );
        assert_eq!(t.answer, None, "cut at {cut}");
    }
}

/// The fuzz target's second find: an HTTP/2 frame type (WINDOW_UPDATE) whose header is
/// split across reads. Split, the walker held the header's first byte when the error came;
/// in one read it held nothing. The stream is read no more, so what it held is not compared.
#[test]
fn the_bytes_held_when_a_frame_error_closes_the_connection_are_not_compared() {
    let harness = Harness::new();
    let stream = [0x08, 0x00, 0x3d, 0x0c];
    for cut in 0..=stream.len() {
        let t = harness.check_h3(&stream, cut);
        assert_eq!(
            t.error,
            Some(h3wire::error::H3_FRAME_UNEXPECTED),
            "cut at {cut}"
        );
        assert_eq!(t.held, 0, "cut at {cut}");
    }
}
