//! HTTP/3 (RFC 9114) over QUIC v1, beside the TCP listener: `--h3-listen ADDR --cert FILE
//! --key FILE`.
//!
//! QUIC is `quinn-proto`, sans I/O, driven by each worker's own mio loop from its own UDP
//! socket bound with `SO_REUSEPORT` ([`crate::server`]), so the kernel spreads flows over the
//! workers by their 4-tuple; there is no async runtime. HTTP/3's wire format is `h3wire`'s.
//!
//! - [`tls`]: the certificate and key loaded, and the QUIC server configuration with its
//!   limits.
//! - [`request`]: a request stream's frames, its head decoded with QPACK (static table and
//!   literals only) into the same field list HTTP/2 decodes into, checked and answered by the
//!   same code as HTTP/2 ([`crate::h2::request`]), and the responder's head re-encoded.
//! - [`conn`]: one connection's HTTP/3 state: the control streams, QPACK's streams, the
//!   request streams, GOAWAY.
//!
//! Limits, each bounded: concurrent request streams (`--h2-max-streams`, as QUIC stream
//! credit: a client's requests past it wait for MAX_STREAMS), unidirectional streams
//! ([`tls::MAX_UNI_STREAMS`]), connections (`--max-connections`, shared with TCP), a field
//! section's size (the HTTP/2 header list limit, advertised as
//! SETTINGS_MAX_FIELD_SECTION_SIZE), the idle timeout (`--idle-timeout`), and the receive
//! windows ([`tls::STREAM_RECEIVE_WINDOW`], [`tls::RECEIVE_WINDOW`]).

pub mod conn;
pub mod request;
pub mod tls;

pub use conn::{Conn, Scratch};
