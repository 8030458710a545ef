//! Why a run's TLS configuration could not be built, and its advice as [`Text`].

use std::fmt;
use std::path::PathBuf;

use crate::setting::{Setting, Text};

/// Why the TLS configuration could not be built. Its advice names settings
/// ([`TlsError::text`]), which each caller words.
#[derive(Debug)]
pub enum TlsError {
    /// The CA file could not be read or parsed.
    CaFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The CA file holds no certificate.
    NoCertificates {
        /// The file.
        path: PathBuf,
    },
    /// The system has no trusted roots.
    NoSystemRoots {
        /// What the loader said.
        reason: String,
    },
    /// The client certificate file could not be read or holds no certificate.
    ClientCert {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The client key file could not be read or holds no key foxbench can use.
    ClientKey {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The key does not belong to the certificate, or is of a kind the provider refuses.
    ClientKeyMismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why.
        reason: String,
    },
    /// The host cannot be a TLS server name.
    ServerName {
        /// The host.
        host: String,
    },
    /// The provider refused the protocol versions.
    Config(rustls::Error),
}

impl TlsError {
    /// What went wrong and how to fix it, its settings left for the caller to word.
    pub fn text(&self) -> Text {
        match self {
            TlsError::CaFile { path, reason } => Text::plain(format!(
                "cannot read CA certificates from {}: {reason}: give a PEM file with ",
                path.display()
            ))
            .name(Setting::CaFile),
            TlsError::NoCertificates { path } => Text::plain(format!(
                "{} holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the CA's certificate with ",
                path.display()
            ))
            .name(Setting::CaFile),
            TlsError::NoSystemRoots { reason } => Text::plain(format!(
                "no trusted root certificates found on this system ({reason}): install ca-certificates, or "
            ))
            .give(&[Setting::CaFile, Setting::Insecure]),
            TlsError::ClientCert { path, reason } => format!(
                "cannot read a client certificate from {}: {reason}: give the certificate as PEM (-----BEGIN CERTIFICATE-----)",
                path.display()
            )
            .into(),
            TlsError::ClientKey { path, reason } => format!(
                "cannot read a private key from {}: {reason}: give an unencrypted PEM key (PKCS#8, RSA or EC; RSA, ECDSA or Ed25519)",
                path.display()
            )
            .into(),
            TlsError::ClientKeyMismatch { cert, key, reason } => format!(
                "the private key {} does not fit the certificate {}: {reason}",
                key.display(),
                cert.display()
            )
            .into(),
            TlsError::ServerName { host } => {
                format!("{host:?} cannot be used as a TLS server name").into()
            }
            TlsError::Config(e) => format!("TLS configuration: {e}").into(),
        }
    }
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.text().fmt(f)
    }
}

impl std::error::Error for TlsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TlsError::Config(e) => Some(e),
            _ => None,
        }
    }
}

impl From<rustls::Error> for TlsError {
    fn from(e: rustls::Error) -> TlsError {
        TlsError::Config(e)
    }
}
