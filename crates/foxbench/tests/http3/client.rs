//! `load::H3Client`, the blocking HTTP/3 client the shootout verifies with, against caddy:
//! whole responses (status, fields, body) over one connection, a certificate checked as
//! over TCP, a UDP port where nothing answers named as no HTTP/3, and one that opens late
//! waited for.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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

/// The kernel's count of UDP datagrams that came to a closed port (`NoPorts`).
fn udp_no_ports() -> u64 {
    let snmp = std::fs::read_to_string("/proc/net/snmp").unwrap();
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (names, values) = (udp.next().unwrap(), udp.next().unwrap());
    let at = names
        .split_whitespace()
        .position(|n| n == "NoPorts")
        .unwrap();
    values.split_whitespace().nth(at).unwrap().parse().unwrap()
}

/// Relays datagrams between a client on `front` and the server `back` is connected to,
/// until `stop`.
fn relay(front: UdpSocket, back: UdpSocket, stop: Arc<AtomicBool>) {
    let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
    let tick = Some(Duration::from_millis(20));
    front.set_read_timeout(tick).unwrap();
    back.set_read_timeout(tick).unwrap();
    let (front2, back2, client2, stop2) = (
        front.try_clone().unwrap(),
        back.try_clone().unwrap(),
        client.clone(),
        stop.clone(),
    );
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_535];
        while !stop2.load(Ordering::Relaxed) {
            if let Ok(n) = back2.recv(&mut buf) {
                if let Some(c) = *client2.lock().unwrap() {
                    let _ = front2.send_to(&buf[..n], c);
                }
            }
        }
    });
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_535];
        while !stop.load(Ordering::Relaxed) {
            if let Ok((n, from)) = front.recv_from(&mut buf) {
                *client.lock().unwrap() = Some(from);
                let _ = back.send(&buf[..n]);
            }
        }
    });
}

/// A server that binds its UDP port after its TCP one (the shootout verifies right after
/// its TCP readiness check) was refused at the first ICMP port unreachable: the client
/// waits for the port within its timeout, QUIC sending its Initial again.
#[test]
fn h3_client_waits_for_a_udp_port_that_opens_within_its_timeout() {
    let Some(caddy) = Caddy::start() else { return };
    // Closed now: bound and freed (another test may take it meanwhile: then the relay's
    // bind fails, loudly).
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let before = udp_no_ports();
    let target = Target::parse(&format!("https://127.0.0.1:{port}/")).unwrap();
    let tls = TlsOptions {
        verify: Verify::CaFile(caddy.cert.clone()),
        ..TlsOptions::default()
    };
    let client = std::thread::spawn(move || {
        let mut c = H3Client::connect(&target, &tls, Duration::from_secs(10))?;
        c.send(&get("/"))
    });
    // Once a datagram met a closed port (the client's Initial, or another test's), the
    // port opens: a relay to caddy.
    testkit::wait_until(
        Duration::from_secs(10),
        "a datagram at a closed port",
        || udp_no_ports() != before,
    );
    let front = UdpSocket::bind(("127.0.0.1", port)).expect("the freed port");
    let back = UdpSocket::bind("127.0.0.1:0").unwrap();
    back.connect(caddy.addr).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    relay(front, back, stop.clone());
    let r = client.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    let r = r.unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"ok"[..]), "{r:?}");
}
