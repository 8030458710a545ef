//! The QUIC server configuration: the certificate and key from PEM files, ALPN `h3`, TLS 1.3
//! on aws-lc-rs, and the transport's limits.
//!
//! Address validation: quinn-proto enforces QUIC's anti-amplification limit (RFC 9000 8.1):
//! before a client's address is validated the server sends at most three times the bytes
//! it received. It stays on; a Retry round trip (a stateless address check) is not asked
//! for, so a handshake takes one round trip.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use quinn_proto::crypto::rustls::QuicServerConfig;
use quinn_proto::{IdleTimeout, ServerConfig, TransportConfig, VarInt};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::{ConfigError, Limits};

/// Unidirectional streams a client may have open: its control stream and QPACK's two.
pub const MAX_UNI_STREAMS: u32 = 3;
/// Bytes a client may send on one stream ahead of our reading: a request head at its
/// limit and a body at its limit fit, with room to spare.
pub const STREAM_RECEIVE_WINDOW: u32 = 128 * 1024;
/// Bytes a client may send on a connection ahead of our reading.
pub const RECEIVE_WINDOW: u32 = 1024 * 1024;

/// Bytes a connection may have sent and not yet acknowledged, which quinn keeps for
/// retransmission. Response bytes the client's flow control holds back are a separate
/// amount, capped by `h3::conn::MAX_HELD_BYTES`.
pub const SEND_WINDOW: u64 = 1024 * 1024;

/// The QUIC server configuration for `cert` and `key` (PEM files) under `limits`.
pub fn server_config(
    cert: &Path,
    key: &Path,
    limits: &Limits,
    idle_timeout: Duration,
) -> Result<Arc<ServerConfig>, ConfigError> {
    let bad = |what: &'static str, path: &Path, reason: String| ConfigError::Tls {
        what,
        path: path.to_owned(),
        reason,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad("--cert", cert, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad("--cert", cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(bad(
            "--cert",
            cert,
            "no CERTIFICATE block in it (give a PEM certificate chain)".into(),
        ));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        bad(
            "--key",
            key,
            format!("{e} (give a PEM private key: PKCS#8, SEC1 or PKCS#1)"),
        )
    })?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| bad("--cert", cert, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| {
            bad(
                "--key",
                key,
                format!("{e} (is it the key of the certificate in --cert?)"),
            )
        })?;
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let crypto = QuicServerConfig::try_from(Arc::new(tls))
        .map_err(|e| bad("--cert", cert, e.to_string()))?;
    let mut config = ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(Arc::new(transport(limits, idle_timeout)));
    // Each worker knows only its own connections: a client on a new address may reach
    // another worker, so migration is refused rather than half-supported.
    config.migration(false);
    Ok(Arc::new(config))
}

/// The transport's limits.
pub fn transport(limits: &Limits, idle_timeout: Duration) -> TransportConfig {
    let mut t = TransportConfig::default();
    t.max_concurrent_bidi_streams(VarInt::from_u32(limits.max_concurrent_streams))
        .max_concurrent_uni_streams(VarInt::from_u32(MAX_UNI_STREAMS))
        .stream_receive_window(VarInt::from_u32(STREAM_RECEIVE_WINDOW))
        .receive_window(VarInt::from_u32(RECEIVE_WINDOW))
        .send_window(SEND_WINDOW)
        .max_idle_timeout(IdleTimeout::try_from(idle_timeout).ok())
        // GSO on (quinn's default): up to `udp::MAX_SEGMENTS` datagrams a transmit, sent in
        // one `sendmsg` by the worker.
        .enable_segmentation_offload(true);
    t
}

#[cfg(test)]
mod tests;
