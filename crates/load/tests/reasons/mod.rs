//! Every failure carries its reason: each is caused by an in-test server and checked for
//! its kind, its cause and the conservation law (`run` checks both laws).
//!
//! Connect and write failures are in `connect`, the TLS handshake's and the certificate's in
//! `handshake`.

mod connect;
mod handshake;

use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use rustls::pki_types::pem::PemObject as _;
use std::sync::Arc;
use std::time::Duration;

use load::{Stop, Verify};
use stats::reason::{At, Cause, Kind, Reason, Rule};

use super::support::tls::{nginx_binary, openssl_self_signed, Certs, Nginx, TempDir};
use super::support::{Conn, Server};
use super::{plan, run};

/// What the server does after reading a request.
type Then = fn(Conn);

/// Runs `n` requests against a server that does `then` with each connection, and checks
/// that every one of them failed with `want`.
#[track_caller]
fn every_request_fails_with(then: Then, n: u64, want: Reason) {
    let s = Server::spawn(then);
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(n);
    p.timeout = Duration::from_millis(300);
    runs_failing_with(&p, want);
}

/// Runs `p` (which stops after a number of requests), checks both conservation laws, and
/// that every request sent failed with `want`, counted in its kind's counter.
#[track_caller]
fn runs_failing_with(p: &load::Plan, want: Reason) -> load::RunResult {
    let Stop::Requests(n) = p.stop else {
        panic!("a plan that stops after a number of requests")
    };
    let r = run(p);
    assert_eq!(r.counts.sent, n, "{want:?}: {:?}", r.counts);
    assert_eq!(r.counts.of_kind(want.kind), n, "{want:?}: {:?}", r.counts);
    assert_eq!(
        r.counts.reasons.count(want),
        Some(n),
        "{want:?}: {:?}",
        r.counts.reasons
    );
    r
}

fn answer(mut c: Conn, bytes: &'static [u8]) {
    while c.next_request().is_some() {
        if !c.send(bytes) {
            return;
        }
    }
}

fn answer_then_close(mut c: Conn, bytes: &'static [u8]) {
    if c.next_request().is_some() {
        c.send(bytes);
        let _ = c.stream.flush();
        // Long enough for the client to read the bytes before the close.
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn each_framing_rule_broken_is_its_own_parse_reason() {
    let parse = |r| Reason::new(Kind::Parse, Cause::Parse(r));
    every_request_fails_with(
        |c| answer(c, b"HTTP/1.1 OK 200 whatever\r\n\r\n"),
        10,
        parse(Rule::Head),
    );
    every_request_fails_with(
        |c| {
            answer(
                c,
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
            )
        },
        10,
        parse(Rule::ContentLength),
    );
    every_request_fails_with(
        |c| {
            answer(
                c,
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n",
            )
        },
        10,
        parse(Rule::ChunkSize),
    );
    every_request_fails_with(
        |c| {
            answer(
                c,
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
            )
        },
        10,
        parse(Rule::Upgrade),
    );
    // A head past load::MAX_HEAD (64 KiB) that has not ended.
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\nX-Pad: ");
                c.send(&[b'a'; load::MAX_HEAD + 1024]);
                c.hold();
            }
        },
        4,
        parse(Rule::HeadTooLarge),
    );
}

#[test]
fn each_way_a_server_closes_early_is_its_own_read_reason() {
    let read = |c| Reason::new(Kind::Read, c);
    every_request_fails_with(
        |mut c| {
            let _ = c.next_request();
        },
        10,
        read(Cause::Closed(At::BeforeResponse)),
    );
    every_request_fails_with(
        |c| answer_then_close(c, b"HTTP/1.1 200 OK\r\nContent-Le"),
        10,
        read(Cause::Closed(At::MidHead)),
    );
    every_request_fails_with(
        |c| answer_then_close(c, b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial"),
        10,
        read(Cause::Closed(At::MidBody)),
    );
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
                std::thread::sleep(Duration::from_millis(20));
                c.reset();
            }
        },
        10,
        read(Cause::Reset(At::MidBody)),
    );
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\nContent-Le");
                std::thread::sleep(Duration::from_millis(20));
                c.reset();
            }
        },
        10,
        read(Cause::Reset(At::MidHead)),
    );
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.reset();
            }
        },
        10,
        read(Cause::Reset(At::BeforeResponse)),
    );
}

#[test]
fn a_timeout_says_where_the_response_stood() {
    let timeout = |at| Reason::new(Kind::Timeout, Cause::Timeout(at));
    every_request_fails_with(|c| c.hold(), 4, timeout(At::BeforeResponse));
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\n");
                c.hold();
            }
        },
        4,
        timeout(At::MidHead),
    );
    every_request_fails_with(
        |mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort");
                c.hold();
            }
        },
        4,
        timeout(At::MidBody),
    );
}

#[test]
fn a_refused_connect_is_econnrefused() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut p = plan(&format!("http://{addr}/"));
    p.stop = Stop::Requests(20);
    let r = run(&p);
    let want = Reason::new(Kind::Connect, Cause::Errno(111));
    assert_eq!(r.counts.reasons.count(want), Some(20), "{:?}", r.counts);
    assert_eq!(r.counts.connect_refused, 20);
}

/// A rustls server that answers each request with `respond`'s bytes, then, after
/// `answers` responses, sends close_notify and holds the connection open: no TCP close.
fn close_notify_server(certs: &Certs, respond: &'static [u8], answers: usize) -> Server {
    let config = certs.server_config();
    Server::spawn(move |conn: Conn| {
        let Ok(session) = rustls::ServerConnection::new(Arc::clone(&config)) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(session, conn.stream);
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let mut answered = 0;
        while answered < answers {
            match tls.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                buf.drain(..end + 4);
                answered += 1;
                if answered == answers {
                    // Queued, to leave in one write with the close_notify: the close
                    // comes between responses, not racing the client's next request.
                    let _ = tls.conn.writer().write_all(respond);
                    break;
                }
                if tls.write_all(respond).is_err() {
                    return;
                }
            }
        }
        tls.conn.send_close_notify();
        let _ = tls.flush();
        // Waits for the client to go; a bounded wait, so a test that fails ends.
        let _ = tls.sock.set_read_timeout(Some(Duration::from_secs(10)));
        let mut sink = [0u8; 4096];
        while let Ok(n) = tls.sock.read(&mut sink) {
            if n == 0 {
                break;
            }
        }
    })
}

#[test]
fn issue_23_close_notify_mid_body_is_a_truncation_at_once() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let s = close_notify_server(
        &certs,
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789",
        1,
    );
    let mut p = plan(&format!("https://127.0.0.1:{}/", s.addr.port()));
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    p.stop = Stop::Requests(30);
    // Far longer than the run may take: a truncation seen only at the timeout fails it.
    p.timeout = Duration::from_secs(30);
    let started = std::time::Instant::now();
    let r = run(&p);
    let want = Reason::new(Kind::Read, Cause::CloseNotify(At::MidBody));
    assert_eq!(r.counts.read, 30, "{:?}", r.counts);
    assert_eq!(r.counts.reasons.count(want), Some(30), "{:?}", r.counts);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited for the timeout"
    );
}

/// A close_notify before the response, or within its head, ends it as at once as one
/// mid-body does, each with its stage.
#[test]
fn close_notify_before_the_body_says_where_the_response_stood() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let cases: [(&'static [u8], At); 2] = [
        (b"", At::BeforeResponse),
        (b"HTTP/1.1 200 OK\r\nContent-Le", At::MidHead),
    ];
    for (respond, at) in cases {
        let s = close_notify_server(&certs, respond, 1);
        let mut p = plan(&format!("https://127.0.0.1:{}/", s.addr.port()));
        p.tls.verify = Verify::CaFile(certs.ca.clone());
        p.stop = Stop::Requests(10);
        // Far longer than the run may take: a close seen only at the timeout fails it.
        p.timeout = Duration::from_secs(30);
        let started = std::time::Instant::now();
        runs_failing_with(&p, Reason::new(Kind::Read, Cause::CloseNotify(at)));
        assert!(started.elapsed() < Duration::from_secs(10), "{at:?}");
    }
}

#[test]
fn close_notify_between_responses_is_a_clean_close_and_a_reconnect() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let s = close_notify_server(&certs, super::support::REDIRECT, 3);
    let mut p = plan(&format!("https://127.0.0.1:{}/", s.addr.port()));
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    p.connections = 2;
    p.stop = Stop::Requests(60);
    p.timeout = Duration::from_secs(30);
    let r = run(&p);
    assert_eq!(r.counts.ok, 60, "{:?}", r.counts);
    assert!(r.counts.closed_by_server >= 1, "{:?}", r.counts);
    assert!(r.counts.reconnects >= 1, "{:?}", r.counts);
}

fn nginx_with(cert: &std::path::Path, key: &std::path::Path, extra: &str) -> Option<Nginx> {
    nginx_binary().map(|bin| Nginx::start_with(&bin, cert, key, "TLSv1.2 TLSv1.3", extra))
}

/// Issue 23: the most common self-signed recipe, given as its own --cacert, is trusted as
/// pinned, as curl, wrk, h2load and Go trust it, though webpki refuses CA:TRUE leaves.
#[test]
fn issue_23_openssl_self_signed_cert_is_trusted_as_its_own_cacert() {
    let dir = TempDir::new("selfsigned");
    let Some((cert, key)) = openssl_self_signed(&dir.0, "server", "ec", &[]) else {
        return;
    };
    let Some(nginx) = nginx_with(&cert, &key, "") else {
        return;
    };
    let url = format!("https://127.0.0.1:{}/", nginx.addr.port());
    let mut p = plan(&url);
    p.tls.verify = Verify::CaFile(cert.clone());
    p.stop = Stop::Requests(50);
    load::preflight(&p).expect("the pinned certificate verifies");
    let r = run(&p);
    assert_eq!(r.counts.ok, 50, "{:?}", r.counts);
    // A different CA:TRUE certificate is still refused, with the recipe named.
    let Some((other, _)) = openssl_self_signed(&dir.0, "other", "ec", &[]) else {
        return;
    };
    p.tls.verify = Verify::CaFile(other);
    let e = load::preflight(&p).unwrap_err().to_string();
    // webpki checks the leaf's own constraints before looking for its issuer, so the
    // server's CA:TRUE certificate, not the one in --cacert, is refused as a CA's.
    assert_eq!(
        e,
        format!(
            "TLS to 127.0.0.1:{}: certificate for 127.0.0.1 is a CA certificate (CA:TRUE, as `openssl req -x509` makes by default) and not the one in the CA file setting: pass that very certificate with the CA file setting, or make the server's with -addext basicConstraints=critical,CA:FALSE",
            nginx.addr.port()
        )
    );
    p.stop = Stop::Requests(10);
    let r = run(&p);
    let want = Reason::new(
        Kind::Tls,
        Cause::Cert(stats::reason::CertProblem::CaUsedAsServer),
    );
    assert_eq!(r.counts.reasons.count(want), Some(10), "{:?}", r.counts);
}

/// mutual TLS against nginx with `ssl_verify_client on`: without a certificate nginx
/// completes the handshake and answers 400 ("No required SSL certificate was sent"), and
/// the run knows the server asked for one (the report's first line and TLS section say so:
/// foxbench's `issue_23_mutual_tls_without_a_certificate_says_it_was_asked`); with one (RSA, ECDSA or
/// Ed25519), every request is ok and nginx logs SUCCESS for each.
#[test]
fn issue_23_mutual_tls_with_nginx() {
    let dir = TempDir::new("mtls");
    let Some((server_cert, server_key)) = openssl_self_signed(&dir.0, "server", "ec", &[]) else {
        return;
    };
    let Some((client_ca, _)) = openssl_self_signed(&dir.0, "clientca", "ec", &[]) else {
        return;
    };
    let extra = format!(
        "ssl_client_certificate {}; ssl_verify_client on;",
        client_ca.display()
    );
    let Some(nginx) = nginx_with(&server_cert, &server_key, &extra) else {
        return;
    };
    let url = format!("https://127.0.0.1:{}/", nginx.addr.port());
    let mut p = plan(&url);
    p.tls.verify = Verify::CaFile(server_cert.clone());
    p.stop = Stop::Requests(20);

    // No certificate: nginx refuses at the HTTP level, and the run knows it was asked.
    load::preflight(&p).expect("nginx completes the handshake without a certificate");
    let r = run(&p);
    assert_eq!(r.counts.failed_status, 20, "{:?}", r.counts);
    assert_eq!(r.status, vec![(400, 20)]);
    assert!(r.client_cert_asked);
    let lines = nginx.log_lines(20);
    assert!(lines.iter().all(|l| l.ends_with(" NONE")), "{lines:?}");

    // With certificates nginx trusts: each key type, every request ok, SUCCESS logged.
    for key_type in ["ec", "rsa:2048", "ed25519"] {
        let name = format!("client-{}", key_type.replace(':', ""));
        let (cert, key) = signed_client_cert(&dir.0, &name, key_type, &client_ca);
        let before = nginx.log_lines(20).len();
        p.tls.client = Some(load::ClientCert { cert, key });
        load::preflight(&p).unwrap_or_else(|e| panic!("{key_type}: {e}"));
        let r = run(&p);
        assert_eq!(r.counts.ok, 20, "{key_type}: {:?}", r.counts);
        let lines = nginx.log_lines(before + 20);
        let verified: Vec<&String> = lines[before..].iter().collect();
        assert_eq!(verified.len(), 20, "{key_type}: {lines:?}");
        assert!(
            verified.iter().all(|l| l.ends_with(" SUCCESS")),
            "{key_type}: {verified:?}"
        );
    }
}

/// A client certificate of `key_type` signed by the self-signed `ca` (whose key sits
/// beside it), as `openssl x509 -req` makes one.
fn signed_client_cert(
    dir: &std::path::Path,
    name: &str,
    key_type: &str,
    ca: &std::path::Path,
) -> (PathBuf, PathBuf) {
    let key = dir.join(format!("{name}.key"));
    let csr = dir.join(format!("{name}.csr"));
    let cert = dir.join(format!("{name}.pem"));
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let mut req = std::process::Command::new("openssl");
    req.args(["req", "-new", "-newkey", key_type]);
    if key_type == "ec" {
        req.args(["-pkeyopt", "ec_paramgen_curve:prime256v1"]);
    }
    ok(req
        .args(["-nodes", "-subj"])
        .arg(format!("/CN={name}"))
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&csr)
        .output()
        .unwrap());
    let ext = dir.join(format!("{name}.ext"));
    std::fs::write(
        &ext,
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
    )
    .unwrap();
    ok(std::process::Command::new("openssl")
        .args(["x509", "-req", "-days", "2", "-in"])
        .arg(&csr)
        .arg("-extfile")
        .arg(&ext)
        .arg("-CA")
        .arg(ca)
        .arg("-CAkey")
        .arg(ca.with_extension("key"))
        .arg("-CAcreateserial")
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap());
    (cert, key)
}

/// Issue 23, the first finding: a server that requires a client certificate and refuses its
/// absence with a TLS alert (rustls, Go). TLS 1.3 reports it only on the first read after a
/// handshake that looked good: the preflight reads on, and says so in one line; a run
/// without the preflight counts every request as `tls` with the alert as its reason.
#[test]
fn issue_23_a_required_client_certificate_is_named() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let client_ca = Certs::for_names(&["client"]);
    let roots = {
        let mut store = rustls::RootCertStore::empty();
        for c in rustls::pki_types::CertificateDer::pem_file_iter(&client_ca.ca).unwrap() {
            store.add(c.unwrap()).unwrap();
        }
        Arc::new(store)
    };
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .unwrap();
    let chain = rustls::pki_types::CertificateDer::pem_file_iter(&certs.cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::from_pem_file(&certs.key).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let s = super::support::tls::tls_redirect_server(Arc::new(config));
    let mut p = plan(&format!("https://127.0.0.1:{}/", s.addr.port()));
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    p.stop = Stop::Requests(20);

    let e = load::preflight(&p).unwrap_err().to_string();
    assert_eq!(
        e,
        format!("TLS to 127.0.0.1:{}: 127.0.0.1 asked for a client certificate (alert certificate_required): set the client certificate setting", s.addr.port())
    );
    let r = run(&p);
    let required = Reason::new(Kind::Tls, Cause::AlertReceived(116));
    assert_eq!(r.counts.tls, 20, "{:?}", r.counts);
    assert_eq!(r.counts.reasons.count(required), Some(20), "{:?}", r.counts);

    // With the certificate the CA signed, the same server answers every request.
    p.tls.client = Some(load::ClientCert {
        cert: client_ca.cert.clone(),
        key: client_ca.key.clone(),
    });
    load::preflight(&p).unwrap();
    assert_eq!(run(&p).counts.ok, 20);
}

/// A self-signed certificate for 127.0.0.1, `CA:TRUE` as `openssl req -x509` makes one,
/// valid only between the two dates (year, month, day): the server's certificate and
/// the --cacert in one file.
fn pinned_with_dates(from: (i32, u8, u8), until: (i32, u8, u8)) -> super::support::tls::Certs {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let dir = TempDir::new("pinned-dates");
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.not_before = rcgen::date_time_ymd(from.0, from.1, from.2);
    params.not_after = rcgen::date_time_ymd(until.0, until.1, until.2);
    let cert = params.self_signed(&key).unwrap();
    let cert_file = dir.0.join("server.pem");
    let key_file = dir.0.join("server.key");
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    super::support::tls::Certs {
        dir,
        ca: cert_file.clone(),
        cert: cert_file,
        key: key_file,
    }
}

/// Runs 20 requests against a server presenting `certs`' certificate, pinned by --cacert,
/// and returns the preflight's sentence, after checking that every request of the run
/// failed as `tls` with `problem` as its reason.
#[track_caller]
fn pinned_refused(
    certs: &super::support::tls::Certs,
    problem: stats::reason::CertProblem,
) -> String {
    let s = super::support::tls::tls_redirect_server(certs.server_config());
    let mut p = plan(&format!("https://127.0.0.1:{}/", s.addr.port()));
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    p.stop = Stop::Requests(20);
    let e = load::preflight(&p).unwrap_err().to_string();
    let r = run(&p);
    let want = Reason::new(Kind::Tls, Cause::Cert(problem));
    assert_eq!(r.counts.tls, 20, "{:?}", r.counts);
    assert_eq!(r.counts.reasons.count(want), Some(20), "{:?}", r.counts);
    let prefix = format!("TLS to 127.0.0.1:{}: ", s.addr.port());
    e.strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{e}"))
        .to_string()
}

/// The pinned path checked the name only: an expired certificate byte-identical to the
/// one in --cacert gave 20 ok where curl refuses it ("certificate has expired").
#[test]
fn pinned_certificate_dates_are_checked_expired() {
    let certs = pinned_with_dates((2020, 1, 1), (2021, 1, 1));
    let e = pinned_refused(&certs, stats::reason::CertProblem::Expired);
    assert!(
        e.starts_with(
            "certificate for 127.0.0.1 has expired: valid until 2021-01-01T00:00:00Z, now 20"
        ),
        "{e}"
    );
    assert!(
        e.ends_with("Z: renew it, or set the insecure setting"),
        "{e}"
    );
}

#[test]
fn pinned_certificate_dates_are_checked_not_valid_yet() {
    let certs = pinned_with_dates((2090, 1, 1), (2091, 1, 1));
    let e = pinned_refused(&certs, stats::reason::CertProblem::NotValidYet);
    assert!(
        e.starts_with(
            "certificate for 127.0.0.1 is not valid yet: valid from 2090-01-01T00:00:00Z, now 20"
        ),
        "{e}"
    );
    assert!(
        e.ends_with("Z: check both clocks, or set the insecure setting"),
        "{e}"
    );
}
