//! HTTP/2 against real servers (nginx over TLS and h2c, nghttpd, Go's net/http) and against small
//! in-test servers that misbehave on purpose (`hostile`).

mod go;
mod hostile;
mod malformed;

use std::time::Duration;

use load::{H2Options, Plan, Protocol, RequestSpec, Stop, Target, TlsOptions, Verify};

use super::run;
use crate::support::tls::{nginx_binary, Certs, Nginx};

/// A plan speaking HTTP/2 with `streams` per connection.
fn h2_plan(url: &str, streams: u32) -> Plan {
    let mut p = Plan::new(Target::parse(url).unwrap());
    p.threads = 2;
    p.connections = 4;
    p.timeout = Duration::from_secs(5);
    p.connect_timeout = Duration::from_secs(2);
    p.stop = Stop::Requests(200);
    p.protocol = Protocol::Http2(H2Options {
        streams,
        ..H2Options::default()
    });
    p
}

fn h2_counts(r: &load::RunResult) -> &load::H2Counts {
    r.h2.as_ref().expect("an --http2 run reports HTTP/2 counts")
}

/// The requests nginx logged over HTTP/2, once it logged `n` lines.
fn logged_h2(n: &Nginx, want: usize) -> usize {
    let lines = n.log_lines(want);
    assert!(
        lines.iter().all(|l| l.starts_with("HTTP/2.0 ")),
        "every request arrived over HTTP/2: {:?}",
        lines.iter().find(|l| !l.starts_with("HTTP/2.0 "))
    );
    lines.len()
}

#[test]
fn nginx_h2c_counts_exactly_n() {
    let Some(bin) = nginx_binary() else { return };
    let nginx = Nginx::h2(&bin, None, 128);
    let mut total = 0;
    for (n, conns, threads, streams) in [
        (1, 1, 1, 1),
        (7, 3, 2, 1),
        (1000, 4, 2, 10),
        (999, 2, 1, 64),
    ] {
        let mut p = h2_plan(&format!("http://{}/", nginx.addr), streams);
        p.stop = Stop::Requests(n);
        p.connections = conns;
        p.threads = threads;
        load::preflight(&p).expect("nginx speaks h2c");
        let r = run(&p);
        assert_eq!((r.counts.sent, r.counts.ok), (n, n), "{:?}", r.counts);
        assert_eq!(r.status, vec![(302, n)]);
        let h = h2_counts(&r);
        assert_eq!(h.server_max_streams, Some(128));
        assert!(h.streams_used_max <= u64::from(streams));
        assert_eq!(h.retries, 0);
        assert!(
            h.header_bytes_received > 0 && h.header_bytes_received_raw > h.header_bytes_received
        );
        total += n as usize;
        assert_eq!(
            logged_h2(&nginx, total),
            total,
            "n={n} c={conns} m={streams}"
        );
    }
}

#[test]
fn nginx_h2_over_tls_by_alpn_counts_exactly_n() {
    let Some(bin) = nginx_binary() else { return };
    let certs = Certs::for_names(&["localhost"]);
    let nginx = Nginx::h2(&bin, Some(&certs), 128);
    let mut p = h2_plan(&format!("https://localhost:{}/", nginx.addr.port()), 10);
    p.tls = TlsOptions {
        verify: Verify::CaFile(certs.ca.clone()),
        ..TlsOptions::default()
    };
    p.stop = Stop::Requests(2000);
    load::preflight(&p).expect("nginx selects h2");
    let r = run(&p);
    assert_eq!(r.counts.ok, 2000, "{:?}", r.counts);
    assert_eq!(r.tls.as_ref().and_then(|t| t.alpn.as_deref()), Some("h2"));
    assert_eq!(h2_counts(&r).streams_used_max, 10);
    assert_eq!(logged_h2(&nginx, 2000), 2000);
}

/// The server allows 5 streams; 100 are asked for: none is refused, and no connection
/// ever has more than 5 in flight, even before the server's SETTINGS arrive.
#[test]
fn streams_stay_within_max_concurrent_streams() {
    let Some(bin) = nginx_binary() else { return };
    let nginx = Nginx::h2(&bin, None, 5);
    let mut p = h2_plan(&format!("http://{}/", nginx.addr), 100);
    p.stop = Stop::Requests(3000);
    let r = run(&p);
    assert_eq!(r.counts.ok, 3000, "{:?}", r.counts);
    let h = h2_counts(&r);
    assert_eq!(h.server_max_streams, Some(5));
    assert_eq!(h.streams_used_max, 5);
    assert_eq!(h.rst_received.iter().sum::<u64>(), 0, "no stream refused");
    assert_eq!(h.retries, 0);
    assert_eq!(logged_h2(&nginx, 3000), 3000);
}

/// Streams in flight per connection are `Plan::per_connection`, the one decision: a server
/// that allows any number holds the HEADERS it reads until no more come for a while, then
/// answers them all, so the most it ever held is what the client put in flight at once.
#[test]
fn streams_in_flight_are_the_plans_per_connection() {
    use std::io::Read as _;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use hostile::{frame, settings, Peer, END_HEADERS, END_STREAM, HEADERS};

    for streams in [1, 4, 10] {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let most = Arc::new(AtomicU64::new(0));
        let held = most.clone();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let held = held.clone();
                std::thread::spawn(move || {
                    let mut peer = Peer::new(s);
                    let mut magic = [0u8; 24];
                    if peer.stream().read_exact(&mut magic).is_err() || !peer.send(&settings(&[])) {
                        return;
                    }
                    loop {
                        let _ = peer.stream().set_read_timeout(None);
                        let mut open = Vec::new();
                        while open.is_empty() {
                            match peer.next_frame() {
                                Some((HEADERS, _, id)) => open.push(id),
                                Some(_) => {}
                                None => return,
                            }
                        }
                        // Quiet for 100 ms: the client sent all it will before an answer.
                        let quiet = Some(Duration::from_millis(100));
                        let _ = peer.stream().set_read_timeout(quiet);
                        while let Some((kind, _, id)) = peer.next_frame() {
                            if kind == HEADERS {
                                open.push(id);
                            }
                        }
                        held.fetch_max(open.len() as u64, Ordering::Relaxed);
                        let answers: Vec<u8> = open
                            .iter()
                            .flat_map(|&id| frame(HEADERS, END_HEADERS | END_STREAM, id, &[0x88]))
                            .collect();
                        if !peer.send(&answers) {
                            return;
                        }
                    }
                });
            }
        });
        let mut p = h2_plan(&format!("http://{addr}/"), streams);
        p.connections = 2;
        p.threads = 1;
        p.stop = Stop::Requests(8 * u64::from(streams));
        let r = run(&p);
        assert_eq!(r.counts.ok, r.counts.sent, "{:?}", r.counts);
        assert_eq!(
            most.load(Ordering::Relaxed),
            p.per_connection() as u64,
            "--streams {streams}: the most streams a connection had open"
        );
        assert_eq!(h2_counts(&r).streams_used_max, p.per_connection() as u64);
    }
}

#[test]
fn stream_ids_running_out_open_a_new_connection() {
    let Some(bin) = nginx_binary() else { return };
    let nginx = Nginx::h2(&bin, None, 128);
    let mut p = h2_plan(&format!("http://{}/", nginx.addr), 4);
    p.connections = 1;
    p.threads = 1;
    p.stop = Stop::Requests(90);
    // 20 IDs left on each connection: 90 requests need five connections.
    p.protocol = Protocol::Http2(H2Options {
        streams: 4,
        first_stream_id: (1 << 31) - 40,
        ..H2Options::default()
    });
    let r = run(&p);
    let h = h2_counts(&r);
    assert_eq!(r.counts.ok, 90, "{:?} {h:?}", r.counts);
    assert_eq!(h.id_rollovers, 4, "{h:?}");
    assert_eq!(r.counts.connections_opened, 5);
    assert_eq!(logged_h2(&nginx, 90), 90);
}

/// `--no-keepalive` under h2: one stream per connection, and the connection closes once
/// it is answered (nothing closed it, and the refill waits on keepalive: the run hung at
/// one request sent).
#[test]
fn no_keepalive_drains_each_connection_after_its_one_stream() {
    let Some(bin) = nginx_binary() else { return };
    let nginx = Nginx::h2(&bin, None, 128);
    let mut p = h2_plan(&format!("http://{}/", nginx.addr), 1);
    p.keepalive = false;
    p.connections = 2;
    p.threads = 1;
    p.stop = Stop::Requests(25);
    let r = run(&p);
    assert_eq!((r.counts.sent, r.counts.ok), (25, 25), "{:?}", r.counts);
    assert_eq!(r.counts.connections_opened, 25, "{:?}", r.counts);
    assert_eq!(h2_counts(&r).streams_used_max, 1);
    assert_eq!(logged_h2(&nginx, 25), 25);
}

/// h2 over TLS with a new connection per request: each costs a handshake, resumed when
/// asked (session tickets, as nginx offers them), and foxbench's full and resumed counts
/// are what nginx logged as `$ssl_session_reused`.
#[test]
fn h2_over_tls_without_keepalive_resumes_as_nginx_logs_it() {
    let Some(bin) = nginx_binary() else { return };
    let certs = Certs::for_names(&["localhost"]);
    let nginx = Nginx::h2(&bin, Some(&certs), 128);
    let mut logged = 0;
    for resume in [true, false] {
        let mut p = h2_plan(&format!("https://localhost:{}/", nginx.addr.port()), 1);
        p.tls = TlsOptions {
            verify: Verify::CaFile(certs.ca.clone()),
            resume,
            ..TlsOptions::default()
        };
        p.keepalive = false;
        p.connections = 2;
        p.threads = 1;
        p.stop = Stop::Requests(60);
        let r = run(&p);
        assert_eq!(r.counts.ok, 60, "resume={resume}: {:?}", r.counts);
        assert_eq!(r.counts.connections_opened, 60);
        let lines = nginx.log_lines(logged + 60);
        let ours = &lines[logged..];
        logged += 60;
        assert!(
            ours.iter().all(|l| l.starts_with("HTTP/2.0 302 ")),
            "{ours:?}"
        );
        let reused = ours.iter().filter(|l| l.ends_with(" r")).count() as u64;
        assert_eq!(
            (r.counts.handshakes_full, r.counts.handshakes_resumed),
            (60 - reused, reused),
            "resume={resume}: foxbench's counts against nginx's"
        );
        if resume {
            assert!(reused >= 50, "only {reused} of 60 resumed");
        } else {
            assert_eq!(reused, 0);
        }
    }
}

#[test]
fn tls_server_without_h2_is_one_line_at_preflight() {
    let Some(bin) = nginx_binary() else { return };
    let certs = Certs::for_names(&["localhost"]);
    let nginx = Nginx::start(&bin, &certs, "TLSv1.2 TLSv1.3");
    let mut p = h2_plan(&format!("https://localhost:{}/", nginx.addr.port()), 1);
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    let e = load::preflight(&p).unwrap_err().to_string();
    assert!(
        e.contains("does not speak HTTP/2") && e.contains("did not select h2") && !e.contains('\n'),
        "{e}"
    );
    // A run past the preflight: nginx refuses an ALPN offer of h2 alone with an alert.
    use stats::reason::{Cause, Kind, Reason};
    p.stop = Stop::Requests(6);
    let r = run(&p);
    let want = Reason::new(Kind::Tls, Cause::AlertReceived(120));
    assert_eq!(r.counts.tls, 6, "{:?}", r.counts);
    assert_eq!(r.counts.reasons.count(want), Some(6), "{:?}", r.counts);
    // A server that ignores ALPN completes the handshake, and each request fails as
    // `protocol`, for want of h2.
    let mut config = (*certs.server_config()).clone();
    config.alpn_protocols.clear();
    let s = crate::support::tls::tls_redirect_server(std::sync::Arc::new(config));
    p.target = Target::parse(&format!("https://localhost:{}/", s.addr.port())).unwrap();
    let r = run(&p);
    let want = Reason::new(Kind::Protocol, Cause::NoH2);
    assert_eq!(r.counts.protocol, 6, "{:?}", r.counts);
    assert_eq!(r.counts.reasons.count(want), Some(6), "{:?}", r.counts);
}

#[test]
fn http1_server_under_h2c_is_one_line_at_preflight() {
    let s = crate::support::redirect_server();
    let p = h2_plan(&s.url(), 1);
    let e = load::preflight(&p).unwrap_err().to_string();
    assert!(e.contains("answered the h2c preface with HTTP/1"), "{e}");
}

/// A child process killed and reaped when dropped, a panicking test's included.
pub(super) struct KillOnDrop(pub(super) std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn nghttpd_serves_every_stream() {
    let Some(bin) = testkit::require(
        "nghttpd",
        &["/usr/bin/nghttpd"],
        "apt-get install nghttp2-server",
    ) else {
        return;
    };
    let dir = crate::support::tls::TempDir::new("nghttpd");
    std::fs::write(dir.0.join("index.html"), "hello").unwrap();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = std::process::Command::new(bin)
        // Trailers on every response with a body: well formed, never counted malformed.
        .args(["--no-tls", "--trailer", "x-trailer: yes", "-d"])
        .arg(&dir.0)
        .args(["--address", "127.0.0.1", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start nghttpd");
    // Killed on drop, so that a failing assertion does not leak it.
    let _nghttpd = KillOnDrop(child);
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    testkit::wait_until(Duration::from_secs(10), "nghttpd listening", || {
        std::net::TcpStream::connect(addr).is_ok()
    });
    let mut p = h2_plan(&format!("http://{addr}/index.html"), 10);
    p.stop = Stop::Requests(500);
    // A POST body rides in DATA frames within nghttpd's windows.
    p.requests.push(RequestSpec {
        method: "POST".into(),
        path: "/index.html".into(),
        body: vec![b'b'; 100_000],
        ..RequestSpec::default()
    });
    // HEAD: a content-length with no DATA, which is no malformed response.
    p.requests.push(RequestSpec {
        method: "HEAD".into(),
        path: "/index.html".into(),
        ..RequestSpec::default()
    });
    let r = run(&p);
    assert_eq!(r.counts.sent, 500);
    assert_eq!(r.counts.completed(), 500, "{:?}", r.counts);
    assert_eq!(r.counts.errors(), 0);
    assert!(r.status.iter().any(|&(s, _)| s == 200), "{:?}", r.status);
}
