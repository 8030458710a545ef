//! HTTP/3's wire format, for the load engine's client and, later, the avatar service's
//! server, as `h2wire` is for HTTP/2: QUIC variable-length integers ([`varint`]), the
//! frames, settings and unidirectional stream types and the frames each side writes
//! ([`frame`]), the error codes and their names ([`error`]), and QPACK with the static
//! table only ([`qpack`]): we advertise a dynamic table capacity of 0 and no blocked
//! streams, so a field section is static references and literals, and a peer's encoder
//! stream may carry nothing but a capacity of 0.
//!
//! It owns the frame walker ([`walk`]), the one reader of a stream's frames across reads
//! that the avatar server's request and control streams and the load client's response
//! and control streams all use: a frame split anywhere is held until whole (up to the
//! caller's limit), DATA is handed through, unknown types are skipped.
//!
//! It owns no other state and does no I/O: no connection or stream state machine (which
//! frame may come when, a DATA frame before HEADERS, a second SETTINGS: each caller tells
//! the walker, frame by frame), no QUIC transport (each side drives its own), no dynamic
//! table. It depends on no other crate of the workspace but
//! `h2wire`, whose Huffman code, prefix integers and string literals QPACK shares with
//! HPACK (RFC 9204 4.1.1, 4.1.2).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod error;
pub mod frame;
pub mod qpack;
pub mod varint;
pub mod walk;
