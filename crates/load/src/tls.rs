//! TLS for `https://` targets: the one client configuration of a run, how certificates are
//! verified, and what a handshake negotiated.
//!
//! rustls with the aws-lc-rs provider. The configuration is built once per run and shared
//! by every worker (`Arc<ClientConfig>`); its in-memory session store is the only state the
//! connections share, touched once per handshake, never per request.
//!
//! Roots: the system's store (`/etc/ssl/certs`, through `rustls-native-certs`), as curl and
//! wget use it, so a private CA the administrator installed is trusted without a flag;
//! `webpki-roots` would compile Mozilla's list in and ignore the machine's configuration.
//! A private CA can also be given per run (`--cacert`), and `--insecure` skips verifying
//! the chain and the name, though never the handshake's signature, so a handshake costs what
//! a verified one does, less the chain walk.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, Resumption, WebPkiServerVerifier};
use rustls::crypto::{self, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore};
use rustls::{HandshakeKind, SignatureScheme};

use crate::setting::{Setting, Text};

mod error;
pub use error::TlsError;

mod quic;

/// How the server's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Verify {
    /// Against the system's trusted roots.
    #[default]
    System,
    /// Against the CA certificates in this PEM file (`--cacert`).
    CaFile(PathBuf),
    /// Not at all: any certificate, for any name (`--insecure`).
    Insecure,
}

impl Verify {
    /// How the certificate is checked, in words, naming the setting that turned it off:
    /// `system roots`, `CA file PATH`, `none (--insecure)` as the CLI words it.
    pub fn text(&self) -> Text {
        match self {
            Verify::System => Text::plain("system roots"),
            Verify::CaFile(p) => Text::plain(format!("CA file {}", p.display())),
            Verify::Insecure => Text::plain("none (").name(Setting::Insecure).then(")"),
        }
    }
}

/// In the plan's words: `none (the insecure setting)`.
impl fmt::Display for Verify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.text().fmt(f)
    }
}

/// A client certificate and its private key, as PEM files (`--cert`, `--key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCert {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// Its private key: PKCS#8, PKCS#1 (RSA) or SEC1 (EC); RSA, ECDSA or Ed25519.
    pub key: PathBuf,
}

/// The TLS settings of a plan; used only for `https://` targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    /// How the certificate is verified.
    pub verify: Verify,
    /// Resume sessions on reconnect (tickets or session IDs, whatever the server offers).
    pub resume: bool,
    /// The certificate to present when the server asks for one (mutual TLS).
    pub client: Option<ClientCert>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        Self {
            verify: Verify::System,
            resume: true,
            client: None,
        }
    }
}

/// The kind of a completed handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    /// A full handshake: key exchange and certificate verification.
    Full,
    /// A resumed session (ticket or session ID).
    Resumed,
}

/// What a handshake negotiated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsInfo {
    /// e.g. `TLSv1.3`.
    pub version: String,
    /// e.g. `TLS13_AES_256_GCM_SHA384`.
    pub cipher: String,
    /// The key exchange group, e.g. `X25519` (absent on a TLS 1.2 resumption).
    pub group: Option<String>,
    /// The ALPN protocol the server chose, if any.
    pub alpn: Option<String>,
}

impl TlsInfo {
    /// Reads what `conn` negotiated; `None` before the handshake is done.
    pub(crate) fn of(conn: &ClientConnection) -> Option<TlsInfo> {
        let version = conn.protocol_version()?;
        let suite = conn.negotiated_cipher_suite()?;
        Some(TlsInfo {
            version: version
                .as_str()
                .unwrap_or("unknown")
                .replace("TLSv1_", "TLSv1."),
            cipher: suite.suite().as_str().unwrap_or("unknown").to_string(),
            group: conn
                .negotiated_key_exchange_group()
                .map(|g| format!("{:?}", g.name())),
            alpn: conn
                .alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
        })
    }
}

/// Opens TLS sessions to one server: the run's shared configuration and the server name.
#[derive(Debug, Clone)]
pub(crate) struct Connector {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    /// A server asked this configuration for a client certificate.
    asked: Arc<AtomicBool>,
    /// The last certificate the verifier refused, why: QUIC hands back only an alert.
    refused: quic::Refused,
}

/// What a run offers by ALPN, and so which TLS versions it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alpn {
    /// `http/1.1`, TLS 1.2 and 1.3.
    Http1,
    /// `h2` alone (a server that cannot speak it must say so in the handshake).
    H2,
    /// `h3` alone, TLS 1.3 only, as QUIC requires.
    H3,
}

impl Connector {
    /// Builds the run's configuration for `host` (SNI, unless it is an IP address),
    /// offering `alpn`.
    pub fn new(host: &str, opts: &TlsOptions, alpn: Alpn) -> Result<Self, TlsError> {
        let name = ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']'))
            .map_err(|_| TlsError::ServerName {
                host: host.to_string(),
            })?
            .to_owned();
        let asked = Arc::new(AtomicBool::new(false));
        let refused = quic::Refused::default();
        Ok(Self {
            config: Arc::new(config(opts, alpn, asked.clone(), &refused)?),
            name,
            asked,
            refused,
        })
    }

    /// True once a server asked for a client certificate (sent a CertificateRequest).
    pub fn client_cert_asked(&self) -> bool {
        self.asked.load(Ordering::Relaxed)
    }

    /// A new client session, its ClientHello ready to write.
    pub fn session(&self) -> Result<ClientConnection, rustls::Error> {
        ClientConnection::new(self.config.clone(), self.name.clone())
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(crypto::aws_lc_rs::default_provider())
}

fn roots(verify: &Verify) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore::empty();
    match verify {
        Verify::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let reason = match found.errors.first() {
                    Some(e) => e.to_string(),
                    None => "the store is empty".into(),
                };
                return Err(TlsError::NoSystemRoots { reason });
            }
        }
        Verify::CaFile(path) => {
            for cert in ca_file(path)? {
                store.add(cert).map_err(|e| TlsError::CaFile {
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                })?;
            }
        }
        Verify::Insecure => {}
    }
    Ok(store)
}

fn ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bad = |reason: String| TlsError::CaFile {
        path: path.to_path_buf(),
        reason,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(e.to_string()))?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificates {
            path: path.to_path_buf(),
        });
    }
    Ok(certs)
}

/// Reads `--cert` and `--key` into a signing identity, checking that they belong together.
fn client_key(c: &ClientCert, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
    let chain = CertificateDer::pem_file_iter(&c.cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TlsError::ClientCert {
            path: c.cert.clone(),
            reason: e.to_string(),
        })?;
    if chain.is_empty() {
        return Err(TlsError::ClientCert {
            path: c.cert.clone(),
            reason: "no PEM certificate in it".into(),
        });
    }
    let key = PrivateKeyDer::from_pem_file(&c.key).map_err(|e| TlsError::ClientKey {
        path: c.key.clone(),
        reason: match e {
            rustls::pki_types::pem::Error::NoItemsFound => "no PEM private key in it".into(),
            e => e.to_string(),
        },
    })?;
    CertifiedKey::from_der(chain, key, provider).map_err(|e| match e {
        rustls::Error::InvalidCertificate(_) => TlsError::ClientCert {
            path: c.cert.clone(),
            reason: "not a certificate foxbench can present (X.509 v1, or an unsupported key): make a v3 one (openssl x509 -req with -extfile)".into(),
        },
        rustls::Error::InconsistentKeys(_) => TlsError::ClientKeyMismatch {
            cert: c.cert.clone(),
            key: c.key.clone(),
            reason: "the key's public half is not the certificate's".into(),
        },
        _ => TlsError::ClientKeyMismatch {
            cert: c.cert.clone(),
            key: c.key.clone(),
            reason: "the key is not RSA, ECDSA (P-256, P-384) or Ed25519".into(),
        },
    })
}

/// The client configuration: TLS 1.2 and 1.3 (1.3 alone for QUIC), ALPN as `alpn` says,
/// resumption as asked; a client certificate when one is given, and a note when a server
/// asks for one.
fn config(
    opts: &TlsOptions,
    alpn: Alpn,
    asked: Arc<AtomicBool>,
    refused: &quic::Refused,
) -> Result<ClientConfig, TlsError> {
    let provider = provider();
    let identity = ClientIdentity {
        key: match &opts.client {
            Some(c) => Some(Arc::new(client_key(c, &provider)?)),
            None => None,
        },
        asked,
    };
    let builder = ClientConfig::builder_with_provider(provider.clone());
    let builder = match alpn {
        Alpn::H3 => builder.with_protocol_versions(&[&rustls::version::TLS13])?,
        _ => builder.with_safe_default_protocol_versions()?,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match &opts.verify {
        Verify::Insecure => Arc::new(AnyCertificate(provider)),
        verify => {
            let roots = Arc::new(roots(verify)?);
            let algorithms = provider.signature_verification_algorithms;
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| TlsError::Config(rustls::Error::General(e.to_string())))?;
            let pins = match verify {
                Verify::CaFile(path) => ca_file(path)?.into_iter().map(Pin::new).collect(),
                _ => Vec::new(),
            };
            Arc::new(Pinned {
                ca_file: matches!(verify, Verify::CaFile(_)),
                pins,
                webpki,
                algorithms,
            })
        }
    };
    let verifier = refused.noting(verifier);
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_client_cert_resolver(Arc::new(identity));
    config.alpn_protocols = vec![match alpn {
        Alpn::Http1 => b"http/1.1".to_vec(),
        Alpn::H2 => b"h2".to_vec(),
        Alpn::H3 => b"h3".to_vec(),
    }];
    config.resumption = if opts.resume {
        // Room for every connection of a large run to keep a ticket.
        Resumption::in_memory_sessions(4096)
    } else {
        Resumption::disabled()
    };
    Ok(config)
}

/// The client certificate to present, if any, and a note that the server asked for one:
/// a TLS 1.3 server refuses a missing or bad certificate only after the handshake looks
/// done, so the preflight reads on when it was asked.
#[derive(Debug)]
struct ClientIdentity {
    key: Option<Arc<CertifiedKey>>,
    asked: Arc<AtomicBool>,
}

impl ResolvesClientCert for ClientIdentity {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.asked.store(true, Ordering::Relaxed);
        self.key.clone()
    }

    fn has_certs(&self) -> bool {
        self.key.is_some()
    }
}

/// Verification against roots, where a server certificate byte-identical to one in
/// `--cacert` is trusted as pinned, `CA:TRUE` or not, as OpenSSL (curl, wrk, h2load) and Go
/// do: `openssl req -x509` makes `CA:TRUE` certificates by default, and webpki refuses
/// those as a server's. The name and the dates are still checked, as curl checks them.
#[derive(Debug)]
struct Pinned {
    /// The roots are a CA file's (`--cacert`), not the system's.
    ca_file: bool,
    pins: Vec<Pin>,
    webpki: Arc<WebPkiServerVerifier>,
    /// The provider's, to tell whether a refused certificate signed itself.
    algorithms: crypto::WebPkiSupportedAlgorithms,
}

/// A certificate from `--cacert` and its validity (notBefore, notAfter, in seconds since
/// the epoch), read once when the configuration is made, not at each handshake.
#[derive(Debug)]
struct Pin {
    der: CertificateDer<'static>,
    validity: Option<(u64, u64)>,
}

impl Pin {
    fn new(der: CertificateDer<'static>) -> Self {
        let validity = x509_parser::parse_x509_certificate(der.as_ref())
            .ok()
            .map(|(_, c)| {
                let secs =
                    |t: x509_parser::time::ASN1Time| u64::try_from(t.timestamp()).unwrap_or(0);
                (secs(c.validity().not_before), secs(c.validity().not_after))
            });
        Self { der, validity }
    }

    /// The dates' verdict at `now`: rustls's own errors, so [`explain`] words them with
    /// both dates in UTC. An unreadable certificate fails as badly encoded.
    fn check_dates(&self, now: UnixTime) -> Result<(), rustls::CertificateError> {
        use rustls::CertificateError as C;
        let at = |s: u64| UnixTime::since_unix_epoch(std::time::Duration::from_secs(s));
        let Some((not_before, not_after)) = self.validity else {
            return Err(C::BadEncoding);
        };
        if now.as_secs() < not_before {
            return Err(C::NotValidYetContext {
                time: now,
                not_before: at(not_before),
            });
        }
        if now.as_secs() > not_after {
            return Err(C::ExpiredContext {
                time: now,
                not_after: at(not_after),
            });
        }
        Ok(())
    }
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(pin) = self
            .pins
            .iter()
            .find(|p| p.der.as_ref() == end_entity.as_ref())
        {
            pin.check_dates(now)
                .map_err(rustls::Error::InvalidCertificate)?;
            let cert = webpki::EndEntityCert::try_from(end_entity).map_err(|_| {
                rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding)
            })?;
            cert.verify_is_valid_for_subject_name(server_name)
                .map_err(|_| {
                    rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName)
                })?;
            return Ok(ServerCertVerified::assertion());
        }
        self.webpki
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
            .map_err(|e| match e {
                rustls::Error::InvalidCertificate(c)
                    if refused_issuer(&c) && self_signed(end_entity, self.algorithms, now) =>
                {
                    rustls::Error::InvalidCertificate(rustls::CertificateError::Other(
                        rustls::OtherError(Arc::new(SelfSigned {
                            ca_file: self.ca_file,
                        })),
                    ))
                }
                rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer) => {
                    let issuer = issuer_of(intermediates.last().unwrap_or(end_entity));
                    rustls::Error::InvalidCertificate(rustls::CertificateError::Other(
                        rustls::OtherError(Arc::new(UnknownIssuer(issuer))),
                    ))
                }
                e => e,
            })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// An unknown issuer, named: the issuer of the last certificate the server sent.
#[derive(Debug)]
pub(crate) struct UnknownIssuer(pub String);

impl fmt::Display for UnknownIssuer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown issuer {}", self.0)
    }
}

impl std::error::Error for UnknownIssuer {}

/// A self-signed server certificate the roots do not hold ([`self_signed`]): curl's
/// "self-signed certificate". `ca_file`: the roots were a CA file's (which holds another
/// certificate, perhaps of the same name), not the system's.
#[derive(Debug)]
pub struct SelfSigned {
    /// The roots were a CA file's.
    pub ca_file: bool,
}

impl fmt::Display for SelfSigned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("self-signed certificate")
    }
}

impl std::error::Error for SelfSigned {}

/// True when webpki refused a certificate because it is a CA's (`CA:TRUE`).
pub(crate) fn is_ca_used_as_end_entity(o: &rustls::OtherError) -> bool {
    matches!(
        o.0.downcast_ref::<webpki::Error>(),
        Some(webpki::Error::CaUsedAsEndEntity)
    )
}

/// Whether webpki refused a certificate for want of a trusted issuer: none of its name
/// (`UnknownIssuer`), or one of its name whose key did not verify its signature (a root of
/// the same name with another key: `BadSignature`, or a key of another type).
fn refused_issuer(c: &rustls::CertificateError) -> bool {
    use rustls::CertificateError as C;
    matches!(
        c,
        C::UnknownIssuer
            | C::BadSignature
            | C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. }
    )
}

/// Whether `cert` is self-signed: its issuer is its own subject (the same DER name), and
/// its signature verifies with its own key (webpki, with `cert` as its only root).
pub(crate) fn self_signed(
    cert: &CertificateDer<'_>,
    algorithms: crypto::WebPkiSupportedAlgorithms,
    now: UnixTime,
) -> bool {
    let Ok((_, parsed)) = x509_parser::parse_x509_certificate(cert.as_ref()) else {
        return false;
    };
    if parsed.issuer().as_raw() != parsed.subject().as_raw() {
        return false;
    }
    let (Ok(root), Ok(leaf)) = (
        webpki::anchor_from_trusted_cert(cert),
        webpki::EndEntityCert::try_from(cert),
    ) else {
        return false;
    };
    leaf.verify_for_usage(
        algorithms.all,
        &[root],
        &[],
        now,
        webpki::KeyUsage::server_auth(),
        None,
        None,
    )
    .is_ok()
}

/// The issuer's distinguished name of `cert`, e.g. `CN=foxbench test CA`.
fn issuer_of(cert: &CertificateDer<'_>) -> String {
    match x509_parser::parse_x509_certificate(cert.as_ref()) {
        Ok((_, c)) => c.issuer().to_string(),
        Err(_) => "(unreadable)".into(),
    }
}

/// `--insecure`: accepts any certificate for any name, but still checks the handshake's
/// signature with the certificate's key, as curl -k does.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The kind of `conn`'s completed handshake.
pub(crate) fn handshake_kind(conn: &ClientConnection) -> Handshake {
    match conn.handshake_kind() {
        Some(HandshakeKind::Resumed) => Handshake::Resumed,
        _ => Handshake::Full,
    }
}

/// One line for a handshake that failed, saying what to do about it, its settings left
/// for the caller to word. `host` is the name the certificate was checked against. No Rust
/// `Debug` text: dates in UTC, names listed.
pub fn explain(err: &rustls::Error, host: &str) -> Text {
    use rustls::{CertificateError as C, Error};
    use Setting::{CaFile, ClientCert, Http2, Insecure};
    let or_insecure = |s: String| Text::plain(s).then(", or ").give(&[Insecure]);
    match err {
        Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer => Text::plain(format!(
                "certificate for {host} is self-signed or from an unknown authority: "
            ))
            .give(&[CaFile, Insecure])
            .then(" (FILE may be the CA's certificate or the server's own)"),
            C::NotValidForNameContext { presented, .. } if presented.iter().any(|n| plain_name(n).is_some()) => or_insecure(format!(
                "certificate is not valid for {host}: it holds {}: connect by one of those names",
                presented.iter().filter_map(|n| plain_name(n)).collect::<Vec<_>>().join(", ")
            )),
            C::NotValidForName | C::NotValidForNameContext { .. } => or_insecure(format!(
                "certificate is not valid for {host}: connect by a name it was issued for"
            )),
            C::ExpiredContext { time, not_after } => or_insecure(format!(
                "certificate for {host} has expired: valid until {}, now {}: renew it",
                utc(*not_after),
                utc(*time)
            )),
            C::Expired => or_insecure(format!("certificate for {host} has expired: renew it")),
            C::NotValidYetContext { time, not_before } => or_insecure(format!(
                "certificate for {host} is not valid yet: valid from {}, now {}: check both clocks",
                utc(*not_before),
                utc(*time)
            )),
            C::NotValidYet => or_insecure(format!(
                "certificate for {host} is not valid yet: check both clocks"
            )),
            C::Other(o) if o.0.downcast_ref::<UnknownIssuer>().is_some() => Text::plain(format!(
                "certificate for {host} is self-signed or from an unknown authority: "
            ))
            .give(&[CaFile, Insecure])
            .then(format!(
                " (its issuer is {}; FILE may be that CA's certificate or the server's own)",
                o.0.downcast_ref::<UnknownIssuer>().map_or("", |u| u.0.as_str())
            )),
            C::Other(o) if o.0.downcast_ref::<SelfSigned>().is_some_and(|s| s.ca_file) => Text::plain(format!(
                "certificate for {host} is self-signed and not the one in "
            ))
            .name(CaFile)
            .then(": ")
            .give(&[CaFile, Insecure])
            .then(" (FILE: the server's certificate itself)"),
            C::Other(o) if o.0.is::<SelfSigned>() => Text::plain(format!(
                "certificate for {host} is self-signed: "
            ))
            .give(&[CaFile, Insecure])
            .then(" (FILE: the server's certificate itself)"),
            C::Other(o) if is_ca_used_as_end_entity(o) => Text::plain(format!(
                "certificate for {host} is a CA certificate (CA:TRUE, as `openssl req -x509` makes by default) and not the one in "
            ))
            .name(CaFile)
            .then(": pass that very certificate with ")
            .name(CaFile)
            .then(", or make the server's with -addext basicConstraints=critical,CA:FALSE"),
            C::BadSignature => Text::plain(format!(
                "certificate for {host} has a signature that does not verify: "
            ))
            .give(&[CaFile, Insecure])
            .then(" (FILE with its real issuer)"),
            C::Revoked => format!("certificate for {host} was revoked: renew it").into(),
            C::BadEncoding => format!("certificate for {host} is not valid DER: fix the server's certificate file").into(),
            C::InvalidPurpose | C::InvalidPurposeContext { .. } => or_insecure(format!(
                "certificate for {host} is not for a TLS server (extendedKeyUsage lacks serverAuth): make it with -addext extendedKeyUsage=serverAuth"
            )),
            _ => Text::plain(format!(
                "certificate for {host} was rejected (an unsupported algorithm or extension): "
            ))
            .give(&[Insecure])
            .then(" to skip verification"),
        },
        Error::AlertReceived(alert) => {
            let n = u8::from(*alert);
            let name = stats::reason::alert_name(n)
                .map_or_else(|| format!("number {n}"), str::to_string);
            match name.as_str() {
                "certificate_required" => Text::plain(format!(
                    "{host} asked for a client certificate (alert certificate_required): "
                ))
                .give(&[ClientCert]),
                "bad_certificate" | "unsupported_certificate" | "certificate_revoked"
                | "certificate_expired" | "certificate_unknown" | "unknown_ca" | "access_denied" => Text::plain(format!(
                    "{host} refused the client certificate (alert {name}): check "
                ))
                .name(ClientCert)
                .then(" against the CA the server trusts, and its dates"),
                "handshake_failure" => Text::plain(format!(
                    "{host} refused the TLS handshake (alert handshake_failure): it may require a client certificate ("
                ))
                .give(&[ClientCert])
                .then(") or a cipher suite foxbench lacks"),
                "no_application_protocol" => Text::plain(format!(
                    "{host} offers no HTTP/1.1 over TLS (ALPN): it speaks only h2: "
                ))
                .give(&[Http2]),
                "protocol_version" => format!(
                    "{host} accepts none of TLS 1.2 and 1.3, the versions foxbench speaks"
                ).into(),
                "unrecognized_name" => format!(
                    "{host} serves no such name (alert unrecognized_name): connect by a name it serves"
                ).into(),
                _ => format!("{host} ended the TLS handshake with the alert {name}").into(),
            }
        }
        Error::InvalidMessage(_) => format!(
            "{host} did not answer with TLS: is it a plain HTTP server? use http://"
        ).into(),
        Error::PeerIncompatible(_) => format!(
            "{host} offered nothing foxbench accepts (no common TLS version, cipher suite or key exchange)"
        ).into(),
        Error::PeerMisbehaved(_) => format!("{host} broke the TLS protocol").into(),
        Error::NoCertificatesPresented => format!("{host} presented no certificate").into(),
        Error::DecryptError => format!("{host} sent a record that does not decrypt").into(),
        _ => format!("TLS handshake with {host} failed").into(),
    }
}

/// A name webpki presents as `DnsName("a.example")` or `IpAddress(10.0.0.1)`, as the
/// name alone; `None` for other kinds (URIs, directory names).
fn plain_name(presented: &str) -> Option<&str> {
    if let Some(dns) = presented.strip_prefix("DnsName(\"") {
        return dns.strip_suffix("\")");
    }
    presented.strip_prefix("IpAddress(")?.strip_suffix(')')
}

/// A certificate time as RFC 3339 in UTC, to the second.
fn utc(t: UnixTime) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(t.as_secs());
    crate::start::format_rfc3339(at).replace(".000000Z", "Z")
}

#[cfg(test)]
mod tests;
