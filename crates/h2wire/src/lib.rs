//! HTTP/2's wire format, shared by the load engine's client (`crates/load/src/h2`) and the
//! avatar service's server (`crates/avatar/src/h2`): the frame header, the frame types,
//! flags, settings and error codes, the frames both sides write ([`frame`]); and HPACK's
//! primitives: integers, the Huffman code and the static table ([`hpack`]).
//!
//! It owns no state and does no I/O: each side keeps its own connection state machine and
//! its own HPACK decoder (the client keeps only `:status` and entry sizes, the server whole
//! fields), built on these pieces. Hand-written, as the HTTP/1 framer is: the frame layer is
//! three fields at fixed offsets, and both sides write frames straight into the buffer they
//! hand the socket. It must not depend on any other crate of the workspace.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod frame;
pub mod hpack;
mod huffman_table;
