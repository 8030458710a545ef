//! Raw-bytes request tables, pipelining and split heads, through the harness and real sockets.

use std::io::Write;
use std::time::Duration;

use avatar::harness::Harness;

use crate::common::{parse_response, Avatar, Reader};

/// (request bytes, expected status, connection closed afterwards)
macro_rules! req {
    ($($bytes:expr => $status:expr, $closed:expr;)*) => {
        vec![$(($bytes.to_vec(), $status, $closed)),*]
    };
}

fn table() -> Vec<(Vec<u8>, u16, bool)> {
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(5000));
    let huge_line = format!("GET /{} HTTP/1.1\r\nHost: t\r\n\r\n", "a".repeat(9000));
    let big_head = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n",
        "b".repeat(9000)
    );
    let many_fields: String = (0..70).map(|i| format!("X-{i}: v\r\n")).collect();
    let many_fields = format!("GET / HTTP/1.1\r\nHost: t\r\n{many_fields}\r\n");
    let mut cases = req! {
        b"GET / HTTP/1.1\r\nHost: t\r\n\r\n" => 302, false;
        b"GET /any/path?x=1 HTTP/1.1\r\nHost: t\r\n\r\n" => 302, false;
        b"HEAD / HTTP/1.1\r\nHost: t\r\n\r\n" => 302, false;
        b"\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n" => 302, false;
        b"GET http://t/ff8800.svg HTTP/1.1\r\nHost: t\r\n\r\n" => 200, false;
        b"GET / HTTP/1.0\r\n\r\n" => 302, true;
        b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" => 302, false;
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n" => 302, true;
        b"GET /random.svg HTTP/1.1\r\nHost: t\r\n\r\n" => 302, false;
        b"GET /ff8800.svg HTTP/1.1\r\nHost: t\r\n\r\n" => 200, false;
        b"GET /A8DB7D.svg HTTP/1.1\r\nHost: t\r\n\r\n" => 200, false;
        b"GET /ff8800.svg HTTP/1.1\r\nHost: t\r\nIf-None-Match: *\r\n\r\n" => 304, false;
        b"GET /ff880.svg HTTP/1.1\r\nHost: t\r\n\r\n" => 404, false;
        b"GET /fox.svg HTTP/1.1\r\nHost: t\r\n\r\n" => 404, false;
        b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n" => 200, false;
        b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n" => 200, false;
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc" => 405, false;
        b"DELETE /x HTTP/1.1\r\nHost: t\r\n\r\n" => 405, false;
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello" => 302, false;
        b"GET / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" => 302, true;
        // Malformed: 400 and close.
        b"GARBAGE\r\n\r\n" => 400, true;
        b"GET / HTTP/2.0\r\nHost: t\r\n\r\n" => 400, true;
        b"GET / HTTP/1.1\r\nHost: t\r\nno colon here\r\n\r\n" => 400, true;
        b"GET / HTTP/1.1\r\nHost: t\r\n folded: obs-fold\r\n\r\n" => 400, true;
        b"GET /\x01 HTTP/1.1\r\nHost: t\r\n\r\n" => 400, true;
        b"GET * HTTP/1.1\r\nHost: t\r\n\r\n" => 400, true;
        b"GET / HTTP/1.1\r\n\r\n" => 400, true;
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" => 400, true;
        // Smuggling and framing.
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc" => 400, true;
        b"GET / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc" => 400, true;
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd" => 400, true;
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n" => 400, true;
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 1e3\r\n\r\n" => 400, true;
        b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 70000\r\n\r\n" => 413, true;
    };
    cases.push((long_target.into_bytes(), 414, true));
    cases.push((huge_line.into_bytes(), 414, true));
    cases.push((big_head.into_bytes(), 431, true));
    cases.push((many_fields.into_bytes(), 431, true));
    cases
}

#[test]
fn table_through_the_harness() {
    let harness = Harness::new();
    for (bytes, status, closed) in table() {
        let t = harness.run([&bytes[..]]);
        let (resp, _) =
            parse_response(&t.output, bytes.starts_with(b"HEAD")).unwrap_or_else(|| {
                panic!(
                    "no response to {:?}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(80)])
                )
            });
        let what = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
        assert_eq!(resp.status, status, "{what}");
        assert_eq!(t.closed, closed, "closed? {what}");
        assert_eq!(resp.header("connection") == Some("close"), closed, "{what}");
        assert!(resp.header("date").is_some_and(|d| d.ends_with(" GMT")));
    }
}

#[test]
fn table_over_loopback() {
    let server = Avatar::start(&[]);
    for (bytes, status, closed) in table() {
        let mut s = server.connect();
        s.write_all(&bytes).unwrap();
        let mut reader = Reader::new();
        let resp = reader.read(&mut s, bytes.starts_with(b"HEAD"));
        let what = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).into_owned();
        assert_eq!(resp.status, status, "{what}");
        if closed {
            assert!(reader.closed(&mut s), "expected a close after {what}");
        } else {
            // Still usable: a second request on the same connection.
            s.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
                .unwrap();
            assert_eq!(
                reader.read(&mut s, false).status,
                200,
                "second request after {what}"
            );
        }
    }
}

#[test]
fn error_responses_carry_a_reason_and_405_an_allow() {
    let harness = Harness::new();
    let t = harness.run([&b"PUT / HTTP/1.1\r\nHost: t\r\n\r\n"[..]]);
    let (resp, _) = parse_response(&t.output, false).unwrap();
    assert_eq!(resp.header("allow"), Some("GET, HEAD"));
    assert!(!resp.body.is_empty());
}

#[test]
fn head_has_the_get_headers_and_no_body() {
    let harness = Harness::new();
    let get = harness
        .run([&b"GET /ff8800.svg HTTP/1.1\r\nHost: t\r\n\r\n"[..]])
        .output;
    let head = harness
        .run([&b"HEAD /ff8800.svg HTTP/1.1\r\nHost: t\r\n\r\n"[..]])
        .output;
    let (g, glen) = parse_response(&get, false).unwrap();
    let (h, hlen) = parse_response(&head, true).unwrap();
    assert_eq!(g.headers, h.headers);
    assert_eq!(glen, get.len());
    assert_eq!(hlen, head.len(), "HEAD sent a body");
}

fn pipelined_batch() -> Vec<u8> {
    let mut batch = Vec::new();
    for i in 0..20 {
        batch.extend_from_slice(match i % 5 {
            0 => &b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"[..],
            1 => b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n",
            2 => b"HEAD /00ff00.svg HTTP/1.1\r\nHost: t\r\n\r\n",
            3 => b"GET /0000ff.svg HTTP/1.1\r\nHost: t\r\n\r\n",
            _ => b"GET /nope.svg HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi",
        });
    }
    batch
}

fn expected_statuses() -> Vec<(u16, bool)> {
    (0..20)
        .map(|i| ([302, 200, 200, 200, 404][i % 5], i % 5 == 2))
        .collect()
}

#[test]
fn pipelined_batch_is_answered_in_order_over_loopback() {
    let server = Avatar::start(&[]);
    let mut s = server.connect();
    s.write_all(&pipelined_batch()).unwrap();
    let mut reader = Reader::new();
    for (i, (status, head)) in expected_statuses().into_iter().enumerate() {
        let resp = reader.read(&mut s, head);
        assert_eq!(resp.status, status, "response {i}");
        if i % 5 == 3 {
            assert!(String::from_utf8_lossy(&resp.body).contains("#0000ff"));
        }
    }
}

#[test]
fn pipelined_batch_through_the_harness_with_small_output_limit() {
    // A small output limit forces the "write, then answer the rest" path.
    let mut harness = Harness::new();
    let whole = harness.run([&pipelined_batch()[..]]);
    harness.set_out_limit(100);
    let limited = harness.run([&pipelined_batch()[..]]);
    assert_eq!(whole, limited);
}

#[test]
fn every_request_split_at_every_byte_boundary() {
    let harness = Harness::new();
    let mut inputs: Vec<Vec<u8>> = table()
        .into_iter()
        .map(|(b, _, _)| b)
        .filter(|b| b.len() < 600)
        .collect();
    inputs.push(pipelined_batch());
    for input in &inputs {
        let whole = harness.run([&input[..]]);
        for cut in 0..=input.len() {
            let split = harness.run([&input[..cut], &input[cut..]]);
            assert_eq!(
                whole,
                split,
                "cut at {cut} of {:?}",
                String::from_utf8_lossy(input)
            );
        }
    }
    // Byte by byte: every boundary at once.
    for input in &inputs {
        let whole = harness.run([&input[..]]);
        let bytes = harness.run(input.chunks(1));
        assert_eq!(
            whole,
            bytes,
            "byte by byte: {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn split_heads_over_loopback() {
    let server = Avatar::start(&[]);
    let req = b"GET /ff8800.svg HTTP/1.1\r\nHost: t\r\n\r\n";
    let mut s = server.connect();
    let mut reader = Reader::new();
    for cut in 1..req.len() {
        s.write_all(&req[..cut]).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        s.write_all(&req[cut..]).unwrap();
        assert_eq!(reader.read(&mut s, false).status, 200, "cut at {cut}");
    }
}

/// A 5000-byte target and a 3500-byte field: over both the target and the head limit.
fn long_target_and_big_head() -> Vec<u8> {
    format!(
        "GET /{} HTTP/1.1\r\nHost: t\r\nX-Big: {}\r\n\r\n",
        "a".repeat(5000),
        "b".repeat(3500)
    )
    .into_bytes()
}

#[test]
fn long_target_gets_414_at_every_split_point() {
    let harness = Harness::new();
    let input = long_target_and_big_head();
    let whole = harness.run([&input[..]]);
    assert_eq!(parse_response(&whole.output, false).unwrap().0.status, 414);
    for cut in 0..=input.len() {
        let split = harness.run([&input[..cut], &input[cut..]]);
        let (resp, _) = parse_response(&split.output, false).unwrap();
        assert_eq!(resp.status, 414, "cut at {cut}");
    }
}

#[test]
fn long_target_gets_414_over_loopback_however_split() {
    let server = Avatar::start(&[]);
    let input = long_target_and_big_head();
    for cut in (0..input.len())
        .step_by(700)
        .chain([5030, 5040, 8190, 8200])
    {
        let mut s = server.connect();
        s.write_all(&input[..cut]).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        // The server may already have answered and half-closed: the rest may be refused.
        let _ = s.write_all(&input[cut..]);
        let resp = Reader::new().read(&mut s, false);
        assert_eq!(resp.status, 414, "cut at {cut}");
    }
}

#[test]
fn head_gets_no_body_with_a_413() {
    let harness = Harness::new();
    let req = "/ HTTP/1.1\r\nHost: t\r\nContent-Length: 70000\r\n\r\n";
    let get = harness.run([format!("GET {req}").as_bytes()]).output;
    let head = harness.run([format!("HEAD {req}").as_bytes()]).output;
    let (g, _) = parse_response(&get, false).unwrap();
    let (h, hlen) = parse_response(&head, true).unwrap();
    assert_eq!(h.status, 413);
    assert_eq!(g.headers, h.headers, "HEAD must keep GET's Content-Length");
    assert_eq!(hlen, head.len(), "HEAD got a body with its 413");
}

#[test]
fn pipelined_batch_larger_than_the_output_limit_to_a_slow_reader() {
    // 200 SVGs are ~250 KiB of responses: several output-limit batches, held while the
    // client reads slowly through a small window.
    let server = Avatar::start(&[]);
    let mut s = crate::common::connect_with_rcvbuf(server.addr, 4096);
    let colors: Vec<String> = (0..200u32).map(|i| format!("{:06x}", i * 83_000)).collect();
    let batch: Vec<u8> = colors
        .iter()
        .flat_map(|c| format!("GET /{c}.svg HTTP/1.1\r\nHost: t\r\n\r\n").into_bytes())
        .collect();
    s.write_all(&batch).unwrap();
    let mut reader = Reader::new();
    let mut total = 0;
    let mut chunk = [0u8; 1024];
    let mut answered = 0;
    while answered < colors.len() {
        std::thread::sleep(Duration::from_millis(1));
        let n = std::io::Read::read(&mut s, &mut chunk).expect("read");
        assert!(n > 0, "closed after {answered} responses");
        total += n;
        reader.buf.extend_from_slice(&chunk[..n]);
        while let Some((resp, used)) = parse_response(&reader.buf, false) {
            reader.buf.drain(..used);
            assert_eq!(resp.status, 200, "response {answered}");
            let want = format!("#{}", colors[answered]);
            assert!(
                String::from_utf8_lossy(&resp.body).contains(&want),
                "response {answered} is not {want}"
            );
            answered += 1;
        }
    }
    assert!(total > 64 * 1024, "only {total} bytes of responses");
}
