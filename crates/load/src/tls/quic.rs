//! TLS for QUIC: the run's client configuration handed to `quinn-proto`, and the verifier's
//! last refusal kept, since QUIC closes a connection whose certificate did not verify with
//! a bare alert code, and the preflight words the refusal as it does over TCP
//! ([`super::explain`]).

use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use super::Connector;

/// The last certificate the run's verifier refused, and why; shared by the configuration's
/// verifier and its [`Connector`]. Touched only when a certificate is refused.
#[derive(Debug, Clone, Default)]
pub(crate) struct Refused(Arc<Mutex<Option<rustls::Error>>>);

impl Refused {
    /// `inner`, noting each refusal here.
    pub(super) fn noting(&self, inner: Arc<dyn ServerCertVerifier>) -> Arc<dyn ServerCertVerifier> {
        Arc::new(Noting {
            inner,
            refused: self.clone(),
        })
    }

    fn note(&self, e: &rustls::Error) {
        if let Ok(mut last) = self.0.lock() {
            *last = Some(e.clone());
        }
    }
}

#[derive(Debug)]
struct Noting {
    inner: Arc<dyn ServerCertVerifier>,
    refused: Refused,
}

impl ServerCertVerifier for Noting {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
            .inspect_err(|e| self.refused.note(e))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner
            .verify_tls12_signature(message, cert, dss)
            .inspect_err(|e| self.refused.note(e))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner
            .verify_tls13_signature(message, cert, dss)
            .inspect_err(|e| self.refused.note(e))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }

    fn requires_raw_public_keys(&self) -> bool {
        self.inner.requires_raw_public_keys()
    }
}

impl Connector {
    /// The run's configuration as QUIC's client configuration. The connector must have
    /// been made for [`super::Alpn::H3`] (TLS 1.3 only, which QUIC requires).
    pub(crate) fn quic(&self) -> Result<quinn_proto::ClientConfig, String> {
        let crypto = quinn_proto::crypto::rustls::QuicClientConfig::try_from(self.config.clone())
            .map_err(|e| format!("the TLS configuration cannot carry QUIC: {e}"))?;
        let mut config = quinn_proto::ClientConfig::new(Arc::new(crypto));
        let mut transport = quinn_proto::TransportConfig::default();
        // GSO stays on (quinn's default): up to `udp::MAX_SEGMENTS` datagrams a send.
        // A server may not open a bidirectional stream to a client (RFC 9114 6.1).
        transport.max_concurrent_bidi_streams(0u32.into());
        // The server's unidirectional streams we keep: its control stream and QPACK encoder
        // and decoder streams, and room for as many of the unknown types it may add (each
        // stopped as it is read, RFC 9114 6.2.3) and for its credit to come back: 8, not
        // quinn's 100, bounds what a server can make us hold.
        transport.max_concurrent_uni_streams(crate::h3::MAX_SERVER_UNI.into());
        config.transport_config(Arc::new(transport));
        Ok(config)
    }

    /// The server name the certificate is checked against, as QUIC's connect takes it.
    pub(crate) fn server_name(&self) -> String {
        match &self.name {
            ServerName::DnsName(d) => d.as_ref().to_string(),
            ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
            _ => String::new(),
        }
    }

    /// Why the verifier last refused the server's certificate, if it did.
    pub(crate) fn refused(&self) -> Option<rustls::Error> {
        self.refused.0.lock().ok()?.clone()
    }
}
