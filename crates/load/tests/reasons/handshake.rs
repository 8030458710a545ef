//! The TLS layer's reasons, each caused by a server that behaves so: a stall, a close or a
//! reset after the ClientHello, bytes that are not TLS, a ServerHello with a cipher suite
//! foxbench never offered, the alerts a real OpenSSL server sends when it accepts none of
//! our versions or ciphers, a record that does not decrypt after the handshake, and each
//! certificate problem that webpki names.

use std::io::{BufRead as _, Read as _, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use load::{Plan, Stop, Verify};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use stats::reason::{At, Cause, CertProblem, Kind, Reason};

use super::super::plan;
use super::super::support::tls::{Certs, TempDir};
use super::super::support::{Conn, Server};
use super::runs_failing_with;

fn tls(cause: Cause) -> Reason {
    Reason::new(Kind::Tls, cause)
}

/// `n` requests to `https://127.0.0.1:port/`, trusting any certificate.
fn insecure(port: u16, n: u64) -> Plan {
    let mut p = plan(&format!("https://127.0.0.1:{port}/"));
    p.tls.verify = Verify::Insecure;
    p.timeout = Duration::from_millis(300);
    p.stop = Stop::Requests(n);
    p
}

/// A server that reads one whole ClientHello record (a close with bytes unread would be a
/// reset, not a close), then does `then`.
fn after_client_hello(then: fn(Conn)) -> Server {
    Server::spawn(move |mut c| {
        let _ = c.stream.set_read_timeout(Some(Duration::from_secs(10)));
        let mut header = [0u8; 5];
        if c.stream.read_exact(&mut header).is_err() {
            return;
        }
        let mut body = vec![0u8; usize::from(u16::from_be_bytes([header[3], header[4]]))];
        if c.stream.read_exact(&mut body).is_err() {
            return;
        }
        then(c);
    })
}

/// A TLS 1.2 ServerHello choosing TLS_RSA_WITH_AES_128_CBC_SHA (0x002f), which rustls
/// never offers.
fn server_hello_with_an_unoffered_suite() -> Vec<u8> {
    server_hello(0x0303, 0x002f)
}

/// A ServerHello of `version` (no supported_versions extension) choosing `suite`.
fn server_hello(version: u16, suite: u16) -> Vec<u8> {
    let mut hello = version.to_be_bytes().to_vec();
    hello.extend([0x11; 32]); // random
    hello.push(0); // no session id
    hello.extend(suite.to_be_bytes());
    hello.push(0); // no compression
    let mut handshake = vec![0x02, 0, 0, hello.len() as u8];
    handshake.extend(hello);
    let mut record = vec![0x16, 0x03, 0x03, 0, handshake.len() as u8];
    record.extend(handshake);
    record
}

/// Each way a server can fail the handshake without an alert is its own reason, of kind
/// `tls`, for every request.
#[test]
fn each_way_a_handshake_fails_is_its_own_tls_reason() {
    type Case = (&'static str, fn(Conn), Cause);
    let cases: [Case; 7] = [
        ("stall", |c| c.hold(), Cause::Timeout(At::Handshake)),
        ("close", drop, Cause::Closed(At::Handshake)),
        ("reset", |c| c.reset(), Cause::Reset(At::Handshake)),
        (
            "garbage",
            |mut c| {
                c.send(&[0x16, 0x03, 0x03, 0x00, 0x05, 1, 2, 3, 4, 5, 0xff, 0xee]);
                c.hold();
            },
            Cause::NotTls,
        ),
        (
            "plain HTTP",
            |mut c| {
                c.send(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                c.hold();
            },
            Cause::NotTls,
        ),
        (
            "unoffered cipher suite",
            |mut c| {
                c.send(&server_hello_with_an_unoffered_suite());
                c.hold();
            },
            Cause::PeerMisbehaved,
        ),
        (
            // TLS 1.1 with a suite foxbench offers: the version is what it refuses.
            "TLS 1.1",
            |mut c| {
                c.send(&server_hello(0x0302, 0xc02b));
                c.hold();
            },
            Cause::PeerIncompatible,
        ),
    ];
    for (name, then, cause) in cases {
        eprintln!("case: {name}");
        let s = after_client_hello(then);
        let r = runs_failing_with(&insecure(s.addr.port(), 6), tls(cause));
        assert_eq!(r.counts.ok, 0, "{name}");
        assert!(r.tls.is_none(), "{name}: no handshake completed");
    }
}

/// `openssl s_server` on a free loopback port, serving `certs` with `args`; stopped when
/// dropped. s_server quits when its stdin closes, so the pipe is held open.
struct SServer {
    child: Child,
    _stdin: ChildStdin,
    port: u16,
}

impl SServer {
    fn start(certs: &Certs, args: &[&str]) -> Option<SServer> {
        let openssl =
            testkit::require("openssl", &["/usr/bin/openssl"], "apt-get install openssl")?;
        let mut child = Command::new(openssl)
            .args(["s_server", "-accept", "127.0.0.1:0", "-cert"])
            .arg(&certs.cert)
            .arg("-key")
            .arg(&certs.key)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("openssl s_server starts");
        let stdin = child.stdin.take().unwrap();
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        // "ACCEPT 127.0.0.1:PORT" once it listens; EOF if it refused its arguments.
        let port = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("ACCEPT 127.0.0.1:")?.trim().parse().ok());
        // Drained, so that s_server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let mut s = SServer {
            child,
            _stdin: stdin,
            port: 0,
        };
        match port {
            Some(port) => s.port = port,
            None => panic!("openssl s_server {args:?} did not listen"),
        }
        Some(s)
    }
}

impl Drop for SServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A real OpenSSL server that accepts none of TLS 1.2 and 1.3 answers with the alert
/// protocol_version; one with no cipher suite foxbench offers, with handshake_failure.
#[test]
fn alerts_from_openssl_name_the_alert() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    type Case = (&'static [&'static str], u8);
    let cases: [Case; 2] = [
        // TLS 1.0 only: OpenSSL 3 needs security level 0 to allow it at all.
        (&["-tls1", "-cipher", "ALL:@SECLEVEL=0"], 70),
        // TLS 1.2 with a CBC suite only: rustls offers AEAD suites alone.
        (&["-no_tls1_3", "-cipher", "ECDHE-ECDSA-AES128-SHA"], 40),
    ];
    for (args, alert) in cases {
        let Some(s) = SServer::start(&certs, args) else {
            return;
        };
        let mut p = insecure(s.port, 6);
        p.connections = 1;
        p.threads = 1;
        // Each handshake is refused at once; the bound only stops a hang.
        p.timeout = Duration::from_secs(5);
        runs_failing_with(&p, tls(Cause::AlertReceived(alert)));
    }
}

/// A server that completes the handshake, reads one request, and answers with a record
/// that does not decrypt: after the handshake, that is a bad record, not "not TLS".
#[test]
fn a_record_that_does_not_decrypt_is_a_bad_record() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let config = certs.server_config();
    let s = Server::spawn(move |conn: Conn| {
        let Ok(session) = rustls::ServerConnection::new(Arc::clone(&config)) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(session, conn.stream);
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match tls.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        // Application data under no key this session knows.
        let mut record = vec![0x17, 0x03, 0x03, 0x00, 0x20];
        record.extend([0x5a; 0x20]);
        let _ = tls.sock.write_all(&record);
        let _ = tls.sock.set_read_timeout(Some(Duration::from_secs(10)));
        let _ = tls.sock.read(&mut chunk);
    });
    let mut p = insecure(s.addr.port(), 6);
    p.timeout = Duration::from_secs(5);
    runs_failing_with(&p, tls(Cause::BadRecord));
}

/// A CA and a leaf for 127.0.0.1 that it signed, with `leaf` applied to the leaf's
/// parameters; `forged`: signed instead by another key under the same CA name.
fn issued(leaf: fn(&mut CertificateParams), forged: bool) -> Certs {
    let dir = TempDir::new("reason-certs");
    let ca = |key: KeyPair| {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "foxbench reasons CA");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        (cert, Issuer::new(params, key))
    };
    let (trusted, issuer) = ca(KeyPair::generate().unwrap());
    let issuer = if forged {
        ca(KeyPair::generate().unwrap()).1
    } else {
        issuer
    };
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    leaf(&mut params);
    let cert = params.signed_by(&key, &issuer).unwrap();
    let (ca_file, cert_file, key_file) = (
        dir.0.join("ca.pem"),
        dir.0.join("cert.pem"),
        dir.0.join("key.pem"),
    );
    std::fs::write(&ca_file, trusted.pem()).unwrap();
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    Certs {
        dir,
        ca: ca_file,
        cert: cert_file,
        key: key_file,
    }
}

/// Each certificate problem webpki reports is its own reason (the expired, not yet valid
/// and CA:TRUE ones are in `super`): every request fails as `tls` with it.
#[test]
fn each_certificate_problem_is_its_own_tls_reason() {
    let other_name = Certs::for_names(&["other.example"]);
    let plain = issued(|_| {}, false);
    let forged = issued(|_| {}, true);
    let client_only = issued(
        |p| p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth],
        false,
    );
    let cases: [(&str, &Certs, Verify, CertProblem); 4] = [
        (
            "wrong name",
            &other_name,
            Verify::CaFile(other_name.ca.clone()),
            CertProblem::WrongName,
        ),
        (
            "unknown issuer",
            &plain,
            Verify::System,
            CertProblem::UnknownIssuer,
        ),
        (
            "signed by another key under the CA's name",
            &forged,
            Verify::CaFile(forged.ca.clone()),
            CertProblem::BadSignature,
        ),
        (
            "for client authentication only",
            &client_only,
            Verify::CaFile(client_only.ca.clone()),
            CertProblem::Invalid,
        ),
    ];
    for (name, certs, verify, problem) in cases {
        eprintln!("case: {name}");
        let s = super::super::support::tls::tls_redirect_server(certs.server_config());
        let mut p = insecure(s.addr.port(), 6);
        p.tls.verify = verify;
        runs_failing_with(&p, tls(Cause::Cert(problem)));
    }
}

/// Judges client certificates as `inner` does, `delay` later: a server slow to refuse.
#[derive(Debug)]
struct Slow {
    inner: Arc<dyn rustls::server::danger::ClientCertVerifier>,
    delay: Duration,
}

impl rustls::server::danger::ClientCertVerifier for Slow {
    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        // The slowness under test: a server that takes this long to judge.
        std::thread::sleep(self.delay);
        self.inner
            .verify_client_cert(end_entity, intermediates, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// A TLS 1.3 server serving `certs` that requires a client certificate from `client_ca`,
/// and takes `delay` to judge one.
fn mutual_tls_server(certs: &Certs, client_ca: &Certs, delay: Duration) -> Server {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&client_ca.ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let inner = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let chain = CertificateDer::pem_file_iter(&certs.cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(&certs.key).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_client_cert_verifier(Arc::new(Slow { inner, delay }))
        .with_single_cert(chain, key)
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    super::super::support::tls::tls_redirect_server(Arc::new(config))
}

/// TLS 1.3 judges a client certificate after the client's handshake is done. The preflight
/// waited one fixed second for a refusal, every time: a server slower than that to refuse
/// passed it, and one that accepted cost the whole second. It now waits for the server's
/// first record (its alert, or the session tickets of a server that accepted), bounded by
/// --timeout.
#[test]
fn mutual_tls_preflight_waits_for_the_verdict_not_a_fixed_time() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let client_ca = Certs::for_names(&["client"]);
    // Issued by a CA of another name: refused as unknown (a CA of the same name would be
    // refused as a bad signature, decrypt_error).
    let stranger = issued(|_| {}, false);
    let s = mutual_tls_server(&certs, &client_ca, Duration::from_millis(1500));
    let mut p = plan(&format!("https://127.0.0.1:{}/", s.addr.port()));
    p.tls.verify = Verify::CaFile(certs.ca.clone());
    p.timeout = Duration::from_secs(20);
    // A certificate from a CA the server does not trust, refused after 1.5 s.
    p.tls.client = Some(load::ClientCert {
        cert: stranger.cert.clone(),
        key: stranger.key.clone(),
    });
    let e = load::preflight(&p).unwrap_err().to_string();
    assert!(e.contains("refused the client certificate"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    // Its own certificate is accepted: the session tickets end the wait, not the timeout.
    p.tls.client = Some(load::ClientCert {
        cert: client_ca.cert.clone(),
        key: client_ca.key.clone(),
    });
    let started = std::time::Instant::now();
    load::preflight(&p).unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?}, near the 20 s timeout",
        started.elapsed()
    );
}
