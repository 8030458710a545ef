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
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{self, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore};
use rustls::{HandshakeKind, SignatureScheme};

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

impl fmt::Display for Verify {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verify::System => f.write_str("system roots"),
            Verify::CaFile(p) => write!(f, "CA file {}", p.display()),
            Verify::Insecure => f.write_str("none (--insecure)"),
        }
    }
}

/// The TLS settings of a plan; used only for `https://` targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    /// How the certificate is verified.
    pub verify: Verify,
    /// Resume sessions on reconnect (tickets or session IDs, whatever the server offers).
    pub resume: bool,
}

impl Default for TlsOptions {
    fn default() -> Self {
        Self {
            verify: Verify::System,
            resume: true,
        }
    }
}

/// Why the TLS configuration could not be built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The CA file could not be read or parsed.
    #[error("cannot read CA certificates from {path}: {reason}: give a PEM file with --cacert")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The CA file holds no certificate.
    #[error("{path} holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the CA's certificate with --cacert")]
    NoCertificates {
        /// The file.
        path: PathBuf,
    },
    /// The system has no trusted roots.
    #[error("no trusted root certificates found on this system ({reason}): install ca-certificates, or pass --cacert FILE or --insecure")]
    NoSystemRoots {
        /// What the loader said.
        reason: String,
    },
    /// The host cannot be a TLS server name.
    #[error("{host:?} cannot be used as a TLS server name")]
    ServerName {
        /// The host.
        host: String,
    },
    /// The provider refused the protocol versions.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
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
}

impl Connector {
    /// Builds the run's configuration for `host` (SNI, unless it is an IP address),
    /// offering `h2` alone by ALPN with `http2`, else `http/1.1`.
    pub fn new(host: &str, opts: &TlsOptions, http2: bool) -> Result<Self, TlsError> {
        let name = ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']'))
            .map_err(|_| TlsError::ServerName {
                host: host.to_string(),
            })?
            .to_owned();
        Ok(Self {
            config: Arc::new(config(opts, http2)?),
            name,
        })
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
        Verify::CaFile(path) => add_pem(&mut store, path)?,
        Verify::Insecure => {}
    }
    Ok(store)
}

fn add_pem(store: &mut RootCertStore, path: &Path) -> Result<(), TlsError> {
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
    for cert in certs {
        store.add(cert).map_err(|e| bad(e.to_string()))?;
    }
    Ok(())
}

/// The client configuration: TLS 1.2 and 1.3, ALPN `http/1.1` (or `h2` alone with
/// `http2`: a server that cannot speak it must say so in the handshake), resumption as
/// asked.
fn config(opts: &TlsOptions, http2: bool) -> Result<ClientConfig, TlsError> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let mut config = match opts.verify {
        Verify::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
            .with_no_client_auth(),
        ref verify => builder
            .with_root_certificates(roots(verify)?)
            .with_no_client_auth(),
    };
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    config.resumption = if opts.resume {
        // Room for every connection of a large run to keep a ticket.
        Resumption::in_memory_sessions(4096)
    } else {
        Resumption::disabled()
    };
    Ok(config)
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

/// One line for a handshake that failed, saying what to do about it. `host` is the name
/// the certificate was checked against.
pub fn explain(err: &rustls::Error, host: &str) -> String {
    use rustls::{AlertDescription, CertificateError, Error, InvalidMessage};
    match err {
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => format!(
            "certificate for {host} is self-signed or from an unknown authority: pass --cacert FILE or --insecure"
        ),
        Error::InvalidCertificate(CertificateError::NotValidForName)
        | Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. }) => format!(
            "certificate is not valid for {host}: connect by a name it was issued for, or pass --insecure"
        ),
        Error::InvalidCertificate(
            CertificateError::Expired | CertificateError::ExpiredContext { .. },
        ) => format!("certificate for {host} has expired: renew it, or pass --insecure"),
        Error::InvalidCertificate(e) => {
            format!("certificate for {host} was rejected ({e:?}): pass --cacert FILE or --insecure")
        }
        Error::AlertReceived(AlertDescription::NoApplicationProtocol) => format!(
            "{host} offers no HTTP/1.1 over TLS (ALPN): it speaks only h2: pass --http2"
        ),
        Error::AlertReceived(AlertDescription::ProtocolVersion) => format!(
            "{host} accepts none of TLS 1.2 and 1.3, the versions foxbench speaks"
        ),
        Error::AlertReceived(alert) => format!("{host} ended the TLS handshake with the alert {alert:?}"),
        Error::InvalidMessage(InvalidMessage::InvalidContentType) | Error::InvalidMessage(_) => format!(
            "{host} did not answer with TLS ({err}): is it a plain HTTP server? use http://"
        ),
        other => format!("TLS handshake with {host} failed: {other}"),
    }
}
