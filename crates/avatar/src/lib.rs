//! The avatar service: an HTTP/1.1 server that answers with a 302 to a random image, and SVG
//! foxes in any colour.
//!
//! This crate owns the whole service: settings ([`config`]), content ([`site`], [`svg`],
//! [`images`]), the protocol ([`request`], [`responder`]), the event loops ([`server`]) and the
//! access log's writer ([`access_log`]). HTTP/2 (h2c) is [`h2`], sans I/O, answered by the
//! same responder, as is HTTP/3 ([`h3`], QUIC by `quinn-proto`). It depends on no other crate
//! of the workspace but `h2wire` and `h3wire` (HTTP/2's and HTTP/3's wire formats, shared
//! with the load engine's client) and `udp` (GSO sends and GRO reads, shared likewise), and
//! nothing here
//! touches a file or a socket except [`images`], [`site`] (at start), [`server`] and
//! [`access_log`] (stdout).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod access_log;
pub mod config;
pub mod date;
pub mod etag;
pub mod h2;
pub mod h3;
pub mod harness;
pub mod images;
pub mod metrics;
pub mod request;
pub mod responder;
pub mod rng;
pub mod server;
pub mod site;
mod slab;
pub mod svg;

pub use config::{Config, ConfigError, Limits};
pub use server::{Server, ShutdownHandle};
pub use site::Site;
