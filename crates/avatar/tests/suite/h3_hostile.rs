//! HTTP/3 clients that break the rules on purpose, written with quinn-proto's client side
//! over a plain UDP socket: each gets the connection error RFC 9114 and RFC 9204 name, and
//! `/metrics` counts it by its name.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{
    ClientConfig, Connection, ConnectionError, DatagramEvent, Dir, Endpoint, EndpointConfig, Event,
};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::common::IO_TIMEOUT;
use crate::h3::H3Avatar;

/// Trusts exactly the test's self-signed certificate (webpki refuses a CA certificate as the
/// server's own), checking the handshake's signatures as usual.
#[derive(Debug)]
struct Pinned(CertificateDer<'static>, Arc<CryptoProvider>);

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.0.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General("not the test's certificate".into()))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.1.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.1.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.1.signature_verification_algorithms.supported_schemes()
    }
}

/// Connects to `server` and runs `step` on the connection after each turn of I/O (once
/// connected) until it returns a value; the server's application close is `Err(code)`.
/// A client configuration that trusts `server`'s certificate and speaks h3.
fn client_config(server: &H3Avatar) -> ClientConfig {
    let cert = CertificateDer::from_pem_file(&server.cert).expect("read the test certificate");
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Pinned(cert, provider)))
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let crypto = QuicClientConfig::try_from(tls).unwrap();
    ClientConfig::new(Arc::new(crypto))
}

#[track_caller]
fn drive<T>(
    server: &H3Avatar,
    mut step: impl FnMut(&mut Connection) -> Option<T>,
) -> Result<T, u64> {
    let config = client_config(server);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    // Blocks at most this long per turn, so timers run: a poll, not a sleep.
    socket
        .set_read_timeout(Some(Duration::from_millis(5)))
        .unwrap();
    let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
    let to: SocketAddr = server.h3;
    let (handle, mut conn) = endpoint
        .connect(Instant::now(), config, to, "127.0.0.1")
        .unwrap();
    let mut tx = Vec::new();
    let mut rx = vec![0u8; 65536];
    let mut connected = false;
    let deadline = Instant::now() + IO_TIMEOUT;
    while Instant::now() < deadline {
        let now = Instant::now();
        if conn.poll_timeout().is_some_and(|t| t <= now) {
            conn.handle_timeout(now);
        }
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Connected => connected = true,
                Event::ConnectionLost {
                    reason: ConnectionError::ApplicationClosed(close),
                } => return Err(close.error_code.into_inner()),
                Event::ConnectionLost { reason } => panic!("connection lost: {reason}"),
                _ => {}
            }
        }
        if connected {
            if let Some(out) = step(&mut conn) {
                return Ok(out);
            }
        }
        while let Some(ev) = conn.poll_endpoint_events() {
            if let Some(back) = endpoint.handle_event(handle, ev) {
                conn.handle_event(back);
            }
        }
        loop {
            tx.clear();
            let Some(t) = conn.poll_transmit(now, 1, &mut tx) else {
                break;
            };
            socket.send_to(&tx[..t.size], t.destination).unwrap();
        }
        while let Ok((n, from)) = socket.recv_from(&mut rx) {
            tx.clear();
            let data = BytesMut::from(&rx[..n]);
            if let Some(DatagramEvent::ConnectionEvent(_, ev)) =
                endpoint.handle(Instant::now(), from, None, None, data, &mut tx)
            {
                conn.handle_event(ev);
            }
            socket.set_nonblocking(true).unwrap();
        }
        socket.set_nonblocking(false).unwrap();
    }
    panic!("the client did not finish within {IO_TIMEOUT:?}");
}

/// Connects to `server`, opens one unidirectional stream for each of `unis` once connected,
/// and returns the error code the server closed the connection with.
#[track_caller]
fn closed_with_streams(server: &H3Avatar, unis: &[&[u8]]) -> u64 {
    let mut sent = false;
    let out = drive(server, |conn| {
        if !sent {
            sent = true;
            for uni in unis {
                let id = conn.streams().open(Dir::Uni).unwrap();
                conn.send_stream(id).write(uni).unwrap();
            }
        }
        None::<()>
    });
    out.expect_err("the server closed the connection")
}

/// [`closed_with_streams`] with one stream.
#[track_caller]
fn closed_with(server: &H3Avatar, uni: &[u8]) -> u64 {
    closed_with_streams(server, &[uni])
}

#[test]
fn a_control_stream_that_does_not_start_with_settings_is_h3_missing_settings() {
    let Some(server) = H3Avatar::start(&[]) else {
        return;
    };
    let mut uni = vec![h3wire::frame::stream_type::CONTROL as u8];
    h3wire::frame::put_goaway(&mut uni, 0);
    assert_eq!(
        closed_with(&server, &uni),
        h3wire::error::H3_MISSING_SETTINGS
    );
    assert_eq!(
        server
            .avatar
            .metric("avatar_h3_connection_errors_total{code=\"H3_MISSING_SETTINGS\"}"),
        1
    );
}

#[test]
fn an_insert_into_the_refused_dynamic_table_is_qpack_encoder_stream_error() {
    let Some(server) = H3Avatar::start(&[]) else {
        return;
    };
    // The encoder stream's type, then Insert with Literal Name "a: b".
    let uni = [
        h3wire::frame::stream_type::QPACK_ENCODER as u8,
        0x41,
        b'a',
        0x01,
        b'b',
    ];
    assert_eq!(
        closed_with(&server, &uni),
        h3wire::error::QPACK_ENCODER_STREAM_ERROR
    );
    assert_eq!(
        server
            .avatar
            .metric("avatar_h3_connection_errors_total{code=\"QPACK_ENCODER_STREAM_ERROR\"}"),
        1
    );
}

#[test]
fn uni_streams_that_end_are_forgotten_so_churning_them_holds_nothing() {
    let Some(server) = H3Avatar::start(&["--workers", "1"]) else {
        return;
    };
    // A thousand unidirectional streams, each ended before its type: QUIC's credit comes
    // back as the server reads each to its end, so the client can keep opening them.
    let mut opened = 0;
    let churned = drive(&server, |conn| {
        while opened < 1000 {
            let Some(id) = conn.streams().open(Dir::Uni) else {
                break;
            };
            conn.send_stream(id).finish().unwrap();
            opened += 1;
        }
        // The thousandth opened: the server has read at least 997 to their end.
        (opened == 1000).then_some(())
    });
    assert_eq!(churned, Ok(()), "the connection was closed while churning");
    let held = server.avatar.metric("avatar_h3_uni_streams_max");
    assert!(
        held <= 6,
        "{held} unidirectional streams held on one connection"
    );
}

#[test]
fn a_second_qpack_encoder_stream_is_h3_stream_creation_error() {
    let Some(server) = H3Avatar::start(&[]) else {
        return;
    };
    let encoder = [h3wire::frame::stream_type::QPACK_ENCODER as u8];
    assert_eq!(
        closed_with_streams(&server, &[&encoder, &encoder]),
        h3wire::error::H3_STREAM_CREATION_ERROR
    );
}

#[test]
fn an_ended_qpack_decoder_stream_is_h3_closed_critical_stream() {
    let Some(server) = H3Avatar::start(&[]) else {
        return;
    };
    let mut sent = false;
    let out = drive(&server, |conn| {
        if !sent {
            sent = true;
            let id = conn.streams().open(Dir::Uni).unwrap();
            let decoder = [h3wire::frame::stream_type::QPACK_DECODER as u8];
            conn.send_stream(id).write(&decoder).unwrap();
            conn.send_stream(id).finish().unwrap();
        }
        None::<()>
    });
    assert_eq!(out, Err(h3wire::error::H3_CLOSED_CRITICAL_STREAM));
}

#[test]
fn a_push_stream_opened_by_a_client_is_h3_stream_creation_error() {
    let Some(server) = H3Avatar::start(&[]) else {
        return;
    };
    // Only a server may open a push stream (RFC 9114 6.2.2).
    let push = [h3wire::frame::stream_type::PUSH as u8, 0];
    assert_eq!(
        closed_with(&server, &push),
        h3wire::error::H3_STREAM_CREATION_ERROR
    );
}

/// Sends `request` (frames) on a request stream with FIN; returns the code the server
/// reset the stream's response with, or `None` if the response ended cleanly.
#[track_caller]
fn request_reset_with(server: &H3Avatar, request: &[u8]) -> Option<u64> {
    let mut id = None;
    let out = drive(server, |conn| {
        let id = *id.get_or_insert_with(|| {
            let id = conn.streams().open(Dir::Bi).unwrap();
            conn.send_stream(id).write(request).unwrap();
            conn.send_stream(id).finish().unwrap();
            id
        });
        let mut stream = conn.recv_stream(id);
        let mut chunks = stream.read(true).ok()?;
        let end = loop {
            match chunks.next(usize::MAX) {
                Ok(Some(_)) => continue,
                Ok(None) => break Some(None),
                Err(quinn_proto::ReadError::Reset(c)) => break Some(Some(c.into_inner())),
                Err(quinn_proto::ReadError::Blocked) => break None,
            }
        };
        let _ = chunks.finalize();
        end
    });
    out.expect("the connection stays open")
}

/// A POST / HEADERS frame with `content-length: {len}`.
fn post_head(len: &str) -> Vec<u8> {
    let mut section = Vec::new();
    h3wire::qpack::put_prefix(&mut section);
    for (n, v) in [
        (&b":method"[..], &b"POST"[..]),
        (b":scheme", b"https"),
        (b":authority", b"127.0.0.1"),
        (b":path", b"/"),
        (b"content-length", len.as_bytes()),
    ] {
        h3wire::qpack::put_field(&mut section, n, v);
    }
    let mut out = Vec::new();
    h3wire::frame::put_headers(&mut out, &section);
    out
}

#[test]
fn a_body_shorter_or_longer_than_its_content_length_is_h3_message_error() {
    let Some(server) = H3Avatar::start(&[]) else {
        return;
    };
    for (len, body) in [("5", &b"ab"[..]), ("1", b"abc"), ("3", b"abc")] {
        let mut req = post_head(len);
        h3wire::frame::put_data_header(&mut req, body.len() as u64);
        req.extend_from_slice(body);
        let want = (len != "3").then_some(h3wire::error::H3_MESSAGE_ERROR);
        assert_eq!(
            request_reset_with(&server, &req),
            want,
            "content-length {len} with {} body bytes",
            body.len()
        );
    }
}

#[test]
fn a_request_stream_that_ends_inside_a_frame_is_h3_frame_error() {
    let Some(server) = H3Avatar::start(&[]) else {
        return;
    };
    let mut req = post_head("4");
    h3wire::frame::put_data_header(&mut req, 4);
    req.extend_from_slice(b"ab");
    let mut id = None;
    let out = drive(&server, |conn| {
        if id.is_none() {
            let s = conn.streams().open(Dir::Bi).unwrap();
            conn.send_stream(s).write(&req).unwrap();
            conn.send_stream(s).finish().unwrap();
            id = Some(s);
        }
        None::<()>
    });
    assert_eq!(out, Err(h3wire::error::H3_FRAME_ERROR));
}

#[test]
fn a_connection_still_open_at_the_shutdown_deadline_gets_connection_close() {
    let Some(server) = H3Avatar::start(&["--shutdown-timeout", "1", "--idle-timeout", "60"]) else {
        return;
    };
    // A request whose body never ends holds the connection past the deadline.
    let req = post_head("4");
    let (mut opened, mut signalled) = (false, false);
    let out = drive(&server, |conn| {
        if !opened {
            opened = true;
            let s = conn.streams().open(Dir::Bi).unwrap();
            conn.send_stream(s).write(&req).unwrap();
        } else if !signalled
            && server
                .avatar
                .metric("avatar_h3_events_total{kind=\"streams\"}")
                == 1
        {
            // The server has taken the request in: SIGTERM now waits for it.
            signalled = true;
            server.avatar.signal("TERM");
        }
        None::<()>
    });
    assert_eq!(out, Err(h3wire::error::H3_NO_ERROR));
}

#[test]
fn handshakes_that_never_finish_are_capped_and_retried_so_a_real_client_gets_in() {
    let Some(server) = H3Avatar::start(&["--workers", "1", "--max-connections", "8"]) else {
        return;
    };
    // Ten Initials from ten ports that never answer, as spoofed sources would.
    let mut sockets = Vec::new();
    for _ in 0..10 {
        let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
        let (_, mut conn) = endpoint
            .connect(
                Instant::now(),
                client_config(&server),
                server.h3,
                "127.0.0.1",
            )
            .unwrap();
        let mut tx = Vec::new();
        let t = conn.poll_transmit(Instant::now(), 1, &mut tx).unwrap();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.send_to(&tx[..t.size], server.h3).unwrap();
        sockets.push(socket);
    }
    assert_eq!(
        drive(&server, |_| Some(())),
        Ok(()),
        "a real client connects"
    );
    assert_eq!(
        server
            .avatar
            .metric("avatar_h3_events_total{kind=\"connections_refused\"}"),
        0
    );
}
