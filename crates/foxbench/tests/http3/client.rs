//! `load::H3Client`, the blocking HTTP/3 client the shootout verifies with, against caddy:
//! whole responses (status, fields, body) over one connection, a certificate checked as
//! over TCP, and a UDP port where nothing answers named as no HTTP/3.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use load::{H3Client, H3Error, RequestSpec, Target, TlsOptions, Verify};

use super::Caddy;

fn get(path: &str) -> RequestSpec {
    RequestSpec {
        method: "GET".into(),
        path: path.into(),
        ..RequestSpec::default()
    }
}

#[test]
fn h3_client_reads_caddys_responses_whole_on_one_connection() {
    let Some(caddy) = Caddy::start() else { return };
    let target = Target::parse(&caddy.url()).unwrap();
    let tls = TlsOptions {
        verify: Verify::CaFile(caddy.cert.clone()),
        ..TlsOptions::default()
    };
    let mut c = H3Client::connect(&target, &tls, Duration::from_secs(10)).unwrap();
    // Several requests on the one connection, each answered whole.
    for path in ["/", "/a", "/b?x=1"] {
        let r = c.send(&get(path)).unwrap();
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(r.body, b"ok", "{r:?}");
        assert!(
            r.headers.iter().any(|(k, v)| k == "server" && v == "Caddy"),
            "{r:?}"
        );
        assert!(r.headers.iter().all(|(k, _)| !k.starts_with(':')), "{r:?}");
        assert!(!r.goaway, "{r:?}");
    }
}

#[test]
fn h3_client_refuses_a_certificate_it_cannot_verify_as_over_tcp() {
    let Some(caddy) = Caddy::start() else { return };
    let target = Target::parse(&caddy.url()).unwrap();
    let e = H3Client::connect(&target, &TlsOptions::default(), Duration::from_secs(10))
        .err()
        .expect("caddy's private certificate is no system root's");
    assert!(
        matches!(&e, H3Error::Failed(m) if m.to_string().contains("certificate")),
        "{e}"
    );
}

#[test]
fn h3_client_names_a_silent_udp_port_as_no_http3() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let url = format!("https://127.0.0.1:{}/", silent.local_addr().unwrap().port());
    let target = Target::parse(&url).unwrap();
    let start = Instant::now();
    let e = H3Client::connect(
        &target,
        &TlsOptions {
            verify: Verify::Insecure,
            ..TlsOptions::default()
        },
        Duration::from_millis(500),
    )
    .err()
    .expect("nothing answers");
    assert!(
        matches!(&e, H3Error::NotHttp3(m) if m.to_string().contains("nothing answered QUIC's Initial")),
        "{e}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}
