//! Request bodies larger than rustls's queue of unsent ciphertext (64 KiB,
//! `DEFAULT_BUFFER_LIMIT`) over TLS, under HTTP/1.1 and HTTP/2: rustls takes such a write in
//! part even when the socket has room, so a short write there does not mean a full socket,
//! and no writable edge follows it. Both places such a write was left waiting for an edge
//! are covered: a kept-alive connection's write, and the write that finishes the
//! handshake (it returns once the connection is up, with the rest unwritten).

use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use load::{H2Options, Protocol, RequestSpec, RunResult, Stop};

use super::super::support::tls::Certs;
use super::super::support::{Conn, Server};
use super::{https_plan, run};

/// Larger than rustls's 64 KiB limit on queued ciphertext, three times over.
const BODY: usize = 200 * 1024;

/// A TLS server answering HTTP/1.1 requests with a 200 once it has read their whole body
/// (Content-Length), and only then: a client that stops writing mid-body gets no answer.
fn h1_body_server(config: Arc<rustls::ServerConfig>) -> Server {
    Server::spawn(move |conn: Conn| {
        let counters = conn.counters.clone();
        let Ok(session) = rustls::ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(session, conn.stream);
        let mut buf = Vec::new();
        let mut chunk = [0u8; 16384];
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if buf.len() >= end + 4 + length {
                    buf.drain(..end + 4 + length);
                    counters.requests.fetch_add(1, Ordering::Relaxed);
                    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                    if tls.write_all(ok).is_err() {
                        return;
                    }
                    continue;
                }
            }
            match tls.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
}

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// A TLS server speaking HTTP/2 that grants large windows up front (1 MiB per stream and
/// for the connection, topped up after each request) and answers a stream with a 200 once
/// its body has ended, writing nothing before: the client's body must go out without the
/// server's help.
fn h2_body_server(config: Arc<rustls::ServerConfig>) -> Server {
    const WINDOW: u32 = 1 << 20;
    const DATA: u8 = 0;
    const HEADERS: u8 = 1;
    const SETTINGS: u8 = 4;
    const WINDOW_UPDATE: u8 = 8;
    const END_STREAM: u8 = 1;
    Server::spawn(move |conn: Conn| {
        let counters = conn.counters.clone();
        let Ok(session) = rustls::ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(session, conn.stream);
        let mut preface = [0u8; 24];
        if tls.read_exact(&mut preface).is_err() {
            return;
        }
        let mut out = Vec::new();
        // SETTINGS_INITIAL_WINDOW_SIZE, and the connection's window raised to match.
        let mut settings = vec![0, 4];
        settings.extend_from_slice(&WINDOW.to_be_bytes());
        frame(&mut out, SETTINGS, 0, 0, &settings);
        frame(
            &mut out,
            WINDOW_UPDATE,
            0,
            0,
            &(WINDOW - 65_535).to_be_bytes(),
        );
        if tls.write_all(&out).is_err() {
            return;
        }
        let mut received = 0u32;
        loop {
            let mut head = [0u8; 9];
            if tls.read_exact(&mut head).is_err() {
                return;
            }
            let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
            let (kind, flags) = (head[3], head[4]);
            let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
            let mut payload = vec![0u8; len];
            if tls.read_exact(&mut payload).is_err() {
                return;
            }
            out.clear();
            match kind {
                SETTINGS if flags & 1 == 0 => frame(&mut out, SETTINGS, 1, 0, &[]),
                DATA => received += len as u32,
                _ => {}
            }
            if matches!(kind, DATA | HEADERS) && flags & END_STREAM != 0 {
                counters.requests.fetch_add(1, Ordering::Relaxed);
                // The connection's window back for the next request: the stream's own is
                // fresh with each stream.
                if received > 0 {
                    frame(&mut out, WINDOW_UPDATE, 0, 0, &received.to_be_bytes());
                    received = 0;
                }
                // :status 200 (static table index 8), and the stream ends.
                frame(&mut out, HEADERS, END_STREAM | 4, stream, &[0x88]);
            }
            if !out.is_empty() && tls.write_all(&out).is_err() {
                return;
            }
        }
    })
}

fn post_run(server: &Server, certs: &Certs, protocol: Protocol) -> RunResult {
    let mut p = https_plan(&format!("https://localhost:{}/", server.addr.port()), certs);
    p.protocol = protocol;
    p.threads = 1;
    p.connections = 2;
    p.stop = Stop::Requests(20);
    // A stalled write is answered by nothing: the request would wait out this timeout.
    p.timeout = Duration::from_secs(5);
    p.requests = vec![RequestSpec {
        method: "POST".into(),
        body: vec![b'x'; BODY],
        ..RequestSpec::get(&p.target)
    }];
    run(&p)
}

#[track_caller]
fn assert_all_ok_quickly(r: &RunResult, server: &Server, what: &str) {
    assert_eq!(r.counts.ok, 20, "{what}: {:?}", r.counts);
    assert_eq!(r.counts.errors(), 0, "{what}: {:?}", r.counts);
    assert_eq!(
        server.counters.requests.load(Ordering::Relaxed),
        20,
        "{what}"
    );
    // Milliseconds of work; a stalled request shows as a timeout above, and a run that
    // waited on one takes the whole timeout.
    assert!(
        r.elapsed < Duration::from_secs(4),
        "{what}: took {:?}",
        r.elapsed
    );
}

/// TLS 1.3 and 1.2: after a 1.3 handshake the server's session tickets arrive, and the
/// readable event they raise reports the socket writable too, which sent what a stalled
/// write left; after a 1.2 handshake nothing arrives.
const VERSIONS: [(&str, &rustls::SupportedProtocolVersion); 2] = [
    ("TLSv1.3", &rustls::version::TLS13),
    ("TLSv1.2", &rustls::version::TLS12),
];

#[test]
fn tls_write_past_rustls_buffer_limit_h1() {
    let certs = Certs::for_names(&["localhost"]);
    for (name, version) in VERSIONS {
        let s = h1_body_server(certs.server_config_versions(&[version]));
        let r = post_run(&s, &certs, Protocol::Http1);
        assert_all_ok_quickly(&r, &s, &format!("HTTP/1.1 over {name}"));
    }
}

#[test]
fn tls_write_past_rustls_buffer_limit_h2() {
    let certs = Certs::for_names(&["localhost"]);
    for (name, version) in VERSIONS {
        let mut config = Arc::unwrap_or_clone(certs.server_config_versions(&[version]));
        config.alpn_protocols = vec![b"h2".to_vec()];
        let s = h2_body_server(Arc::new(config));
        let r = post_run(&s, &certs, Protocol::Http2(H2Options::default()));
        let what = format!("HTTP/2 over {name}");
        assert_all_ok_quickly(&r, &s, &what);
        let h2 = r.h2.expect("HTTP/2 counts");
        assert_eq!(h2.connections, r.counts.connections_opened, "{what}");
    }
}
