//! TLS: against a real nginx (counts and resumption checked by the server's own log), a
//! small rustls server, and hostile servers that are not what an https:// URL promises.

use std::io::{Read, Write};
use std::time::Duration;

use load::{Plan, SetupError, Stop, Target, TlsOptions, Verify};

use super::support::tls::{
    nginx_binary, openssl_self_signed, tls_redirect_server, Certs, Nginx, TempDir,
};
use super::support::Server;
use super::{plan, run};

mod large_body;

fn https_plan(url: &str, certs: &Certs) -> Plan {
    let mut p = plan(url);
    p.tls = TlsOptions {
        verify: Verify::CaFile(certs.ca.clone()),
        resume: true,
        client: None,
    };
    p
}

/// nginx, or None after a loud skip (CI requires nginx, so it runs there).
#[track_caller]
fn nginx(certs: &Certs, protocols: &str) -> Option<Nginx> {
    nginx_binary().map(|bin| Nginx::start(&bin, certs, protocols))
}

/// (protocol, reused, connection) of each access-log line.
fn parse_log(lines: &[String]) -> Vec<(String, bool, u64)> {
    lines
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].to_string(), f[1] == "r", f[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn keepalive_counts_match_nginx_access_log() {
    let certs = Certs::for_names(&["localhost", "127.0.0.1"]);
    let Some(ng) = nginx(&certs, "TLSv1.2 TLSv1.3") else {
        return;
    };
    let mut p = https_plan(&format!("https://127.0.0.1:{}/", ng.addr.port()), &certs);
    p.connections = 10;
    p.stop = Stop::Requests(500);
    let r = run(&p);
    assert_eq!(r.counts.ok, 500, "{:?}", r.counts);
    assert_eq!(r.counts.errors(), 0);
    let log = parse_log(&ng.log_lines(500));
    assert_eq!(log.len(), 500, "nginx logged every request, once");
    let conns: std::collections::BTreeSet<u64> = log.iter().map(|l| l.2).collect();
    assert_eq!(conns.len() as u64, r.counts.connections_opened);
    assert_eq!(
        r.counts.handshakes_full + r.counts.handshakes_resumed,
        r.counts.connections_opened
    );
    let info = r.tls.expect("a handshake completed");
    assert_eq!(info.version, "TLSv1.3");
    assert_eq!(info.alpn.as_deref(), Some("http/1.1"));
    assert!(info.cipher.starts_with("TLS13_"), "{info:?}");
    assert!(info.group.is_some());
    assert_eq!(
        r.handshake_full.len() + r.handshake_resumed.len(),
        r.counts.connections_opened
    );
}

/// Without keep-alive every request opens a connection: foxbench's full and resumed
/// handshake counts must equal what nginx logged as `$ssl_session_reused`.
#[test]
fn resumption_claims_match_nginx_ssl_session_reused() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    for protocols in ["TLSv1.3", "TLSv1.2"] {
        let Some(ng) = nginx(&certs, protocols) else {
            return;
        };
        for resume in [true, false] {
            let before = ng.log_lines(0).len();
            let mut p = https_plan(&format!("https://127.0.0.1:{}/", ng.addr.port()), &certs);
            p.keepalive = false;
            p.connections = 4;
            p.stop = Stop::Requests(200);
            p.tls.resume = resume;
            let r = run(&p);
            assert_eq!(
                r.counts.ok, 200,
                "{protocols} resume={resume}: {:?}",
                r.counts
            );
            let log = parse_log(&ng.log_lines(before + 200)[before..]);
            assert_eq!(log.len(), 200);
            let reused = log.iter().filter(|l| l.1).count() as u64;
            assert_eq!(
                (r.counts.handshakes_full, r.counts.handshakes_resumed),
                (200 - reused, reused),
                "{protocols} resume={resume}: foxbench's counts against nginx's"
            );
            let version = r.tls.as_ref().unwrap().version.clone();
            assert_eq!(version, protocols);
            assert!(log.iter().all(|l| l.0 == protocols));
            if resume {
                assert!(
                    reused >= 150,
                    "{protocols}: only {reused} of 200 connections resumed"
                );
                assert_eq!(r.handshake_resumed.len(), reused);
            } else {
                assert_eq!(reused, 0, "{protocols}: resumed with --tls-resume off");
            }
        }
    }
}

#[test]
fn rustls_server_keepalive_and_close() {
    let certs = Certs::for_names(&["localhost"]);
    let s = tls_redirect_server(certs.server_config());
    for keepalive in [true, false] {
        let before = s.requests();
        let mut p = https_plan(&format!("https://localhost:{}/", s.addr.port()), &certs);
        p.keepalive = keepalive;
        p.stop = Stop::Requests(100);
        let r = run(&p);
        assert_eq!(r.counts.ok, 100, "keepalive={keepalive}: {:?}", r.counts);
        assert_eq!(s.requests() - before, 100);
    }
}

/// The blocking connection the shootout verifies over: a request and its answer over TLS
/// with the run's settings, and a certificate it does not trust as the preflight's line.
#[test]
fn connect_blocking_speaks_tls_and_fails_like_the_preflight() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let s = tls_redirect_server(certs.server_config());
    let target = Target::parse(&format!("https://127.0.0.1:{}/", s.addr.port())).unwrap();
    let tls = TlsOptions {
        verify: Verify::CaFile(certs.ca.clone()),
        resume: true,
        client: None,
    };
    let mut c = load::connect_blocking(&target, &tls, Duration::from_secs(10)).unwrap();
    c.tcp()
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    // The server may close without close_notify: what was read before counts.
    let _ = c.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 302"), "{answer}");
    let system = TlsOptions {
        verify: Verify::System,
        ..tls
    };
    let e = match load::connect_blocking(&target, &system, Duration::from_secs(10)) {
        Err(e @ SetupError::Tls { .. }) => e.to_string(),
        other => panic!("expected a TLS setup error, got {:?}", other.err()),
    };
    assert!(
        e.contains("certificate for 127.0.0.1")
            && e.contains("set the CA file or the insecure setting"),
        "{e}"
    );
    // Plain http:// through the same call is a plain connection.
    let plain = Target::parse(&format!("http://{}/", s.addr)).unwrap();
    load::connect_blocking(&plain, &system, Duration::from_secs(10)).unwrap();
}

fn preflight_error(url: &str, verify: Verify) -> String {
    let mut p = Plan::new(Target::parse(url).unwrap());
    p.timeout = Duration::from_millis(500);
    p.tls.verify = verify;
    match load::preflight(&p) {
        Err(e @ SetupError::Tls { .. }) => e.to_string(),
        other => panic!("{url}: expected a TLS setup error, got {other:?}"),
    }
}

#[test]
fn certificate_failures_are_one_line_setup_errors() {
    let certs = Certs::for_names(&["other.example"]);
    let s = tls_redirect_server(certs.server_config());
    let url = format!("https://127.0.0.1:{}/", s.addr.port());
    let e = preflight_error(&url, Verify::System);
    assert!(
        e.contains("certificate for 127.0.0.1")
            && e.contains("set the CA file or the insecure setting"),
        "{e}"
    );
    // The unknown issuer is named.
    assert!(e.contains("its issuer is CN=foxbench test CA"), "{e}");
    let e = preflight_error(&url, Verify::CaFile(certs.ca.clone()));
    assert!(e.contains("not valid for 127.0.0.1"), "{e}");
    // The names the certificate holds are listed.
    assert!(e.contains("it holds other.example"), "{e}");
    // --insecure passes the preflight, and the run completes.
    let mut p = plan(&url);
    p.tls.verify = Verify::Insecure;
    load::preflight(&p).unwrap();
    let r = run(&p);
    assert_eq!(r.counts.ok, 200);
    // In a run without the preflight, a certificate that fails counts as tls errors.
    let mut p = plan(&url);
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    let r = run(&p);
    assert_eq!(r.counts.ok, 0);
    assert_eq!(r.counts.tls, r.counts.sent, "{:?}", r.counts);
    for e in [
        preflight_error(&url, Verify::System),
        preflight_error(&url, Verify::CaFile(certs.ca.clone())),
    ] {
        assert!(!e.contains('\n'), "{e}");
    }
}

/// A self-signed leaf (`CA:FALSE`) without --cacert was "self-signed or from an unknown
/// authority ... (its issuer is CN=127.0.0.1; FILE may be that CA's certificate...)"; when
/// a root of its name held another key, "has a signature that does not verify ... (FILE
/// with its real issuer)", or "rejected (an unsupported algorithm...)" for another type of
/// key. Without --cacert that happens on Debian to a leaf named CN=localhost: ssl-cert's
/// snakeoil certificate (CN=localhost, RSA) is in the system's store. Here the root is a
/// --cacert of the same name. It is self-signed, as curl says, and the fix is the
/// certificate itself. A run without the preflight counts it as an untrusted issuer.
#[test]
fn self_signed_leaf_named_self_signed() {
    let dir = TempDir::new("self-signed-leaf");
    let leaf = ["basicConstraints=critical,CA:FALSE"];
    let Some((cert, key)) = openssl_self_signed(&dir.0, "leaf", "ec", &leaf) else {
        return;
    };
    // Other certificates of the same name (the one before the server's was made again):
    // of the same type of key, and of another.
    let Some((before, _)) = openssl_self_signed(&dir.0, "before", "ec", &leaf) else {
        return;
    };
    let Some((before_rsa, _)) = openssl_self_signed(&dir.0, "before-rsa", "rsa:2048", &leaf) else {
        return;
    };
    let certs = Certs {
        ca: cert.clone(),
        cert: cert.clone(),
        key,
        dir,
    };
    let s = tls_redirect_server(certs.server_config());
    let url = format!("https://127.0.0.1:{}/", s.addr.port());
    let prefix = format!("TLS to 127.0.0.1:{}: ", s.addr.port());
    assert_eq!(
        preflight_error(&url, Verify::System),
        format!("{prefix}certificate for 127.0.0.1 is self-signed: set the CA file or the insecure setting (FILE: the server's certificate itself)")
    );
    for other in [before, before_rsa] {
        assert_eq!(
            preflight_error(&url, Verify::CaFile(other)),
            format!("{prefix}certificate for 127.0.0.1 is self-signed and not the one in the CA file setting: set the CA file or the insecure setting (FILE: the server's certificate itself)")
        );
    }
    let mut p = plan(&url);
    p.stop = Stop::Requests(10);
    let r = run(&p);
    let untrusted = stats::reason::Reason::new(
        stats::reason::Kind::Tls,
        stats::reason::Cause::Cert(stats::reason::CertProblem::UnknownIssuer),
    );
    assert_eq!(
        r.counts.reasons.count(untrusted),
        Some(10),
        "{:?}",
        r.counts
    );
    // The fix it names: that certificate itself.
    p.tls.verify = Verify::CaFile(cert);
    load::preflight(&p).unwrap();
    assert_eq!(run(&p).counts.ok, 10);
}

/// `openssl req -x509`'s default, a CA:TRUE certificate, without --cacert is still called
/// a CA's certificate (webpki refuses it as one before looking for its issuer).
#[test]
fn self_signed_ca_true_without_cacert_is_named_a_ca_certificate() {
    let dir = TempDir::new("self-signed-ca");
    let Some((cert, key)) = openssl_self_signed(&dir.0, "server", "ec", &[]) else {
        return;
    };
    let certs = Certs {
        ca: cert.clone(),
        cert,
        key,
        dir,
    };
    let s = tls_redirect_server(certs.server_config());
    let url = format!("https://127.0.0.1:{}/", s.addr.port());
    assert_eq!(
        preflight_error(&url, Verify::System),
        format!("TLS to 127.0.0.1:{}: certificate for 127.0.0.1 is a CA certificate (CA:TRUE, as `openssl req -x509` makes by default) and not the one in the CA file setting: pass that very certificate with the CA file setting, or make the server's with -addext basicConstraints=critical,CA:FALSE", s.addr.port())
    );
}

#[test]
fn a_bad_cacert_file_is_a_setup_error() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let s = tls_redirect_server(certs.server_config());
    let url = format!("https://127.0.0.1:{}/", s.addr.port());
    for (file, want) in [
        (
            certs.dir.0.join("missing.pem"),
            "cannot read CA certificates",
        ),
        (certs.key.clone(), "holds no PEM certificate"),
    ] {
        let mut p = plan(&url);
        p.tls.verify = Verify::CaFile(file);
        let e = load::preflight(&p).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
        assert!(e.contains("the CA file setting"), "{e}");
    }
}

/// A server that reads the ClientHello and then does `then` with the socket.
fn hostile(then: fn(&mut std::net::TcpStream)) -> Server {
    Server::spawn(move |mut conn| {
        let mut buf = [0u8; 2048];
        let _ = conn.stream.read(&mut buf);
        then(&mut conn.stream);
    })
}

/// Each server is not the TLS server the URL promises: the run ends in `tls` errors, in
/// bounded time, with the conservation law (checked by `run`), and the preflight names it.
#[test]
fn hostile_tls_servers_end_in_tls_errors() {
    type Case = (&'static str, fn(&mut std::net::TcpStream), &'static str);
    let cases: [Case; 4] = [
        (
            "plaintext HTTP",
            |s| {
                let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            },
            "plain HTTP",
        ),
        (
            "garbage",
            |s| {
                let _ = s.write_all(&[0x16, 0x03, 0x03, 0x00, 0x05, 1, 2, 3, 4, 5, 0xff, 0xee]);
                // Held open so the client reads the garbage, not an EOF first.
                std::thread::sleep(Duration::from_millis(300));
            },
            "did not answer with TLS",
        ),
        (
            "close mid-handshake",
            |_| {},
            "closed the connection during the TLS handshake",
        ),
        (
            // The stall is the behaviour under test: longer than the 500 ms handshake bound.
            "stall",
            |_| std::thread::sleep(Duration::from_secs(3)),
            "no TLS handshake within",
        ),
    ];
    for (name, then, want) in cases {
        let s = hostile(then);
        let url = format!("https://127.0.0.1:{}/", s.addr.port());
        let e = preflight_error(&url, Verify::Insecure);
        assert!(e.contains(want), "{name}: {e}");
        assert!(!e.contains('\n'), "{name}: {e}");
        let mut p = plan(&url);
        p.tls.verify = Verify::Insecure;
        p.timeout = Duration::from_millis(500);
        p.stop = Stop::Requests(20);
        let r = run(&p);
        assert_eq!(r.counts.ok, 0, "{name}");
        assert_eq!(r.counts.tls, 20, "{name}: {:?}", r.counts);
        assert!(r.tls.is_none(), "{name}");
    }
}
