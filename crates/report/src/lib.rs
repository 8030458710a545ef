//! Result data and its renderings: what `foxbench load` prints and writes as JSON.
//!
//! This crate owns the shape of results ([`LoadReport`], whose JSON schema is committed
//! at `schemas/load.schema.json`) and how they read as text, and the comparison of runs
//! ([`compare`], with its schema at `schemas/compare.schema.json`), a load result's HTML page
//! ([`load_html`]) and its series' colours, the live dashboard's too ([`palette`]), its
//! `--slo` verdicts ([`slo`]), a capacity search's result and window rows, `--find-max`'s and the shootout's ([`search`]),
//! the errors by reason in plain words ([`errors_by_reason`]),
//! and the exact merge of several agents' results into one ([`merge`], with the `agents`,
//! `shard` and `start` sections of [`agents`]). It renders from result data
//! only: it runs nothing and measures nothing, and depends on no internal crate but
//! `stats`. Its errors and hints name settings (`stats::setting`), never a flag: the CLI
//! words them as its flags, the shootout as suite keys.
#![forbid(unsafe_code)]

pub mod agents;
mod client;
mod client_delay;
pub mod compare;
pub mod errors_by_reason;
pub mod http2;
pub mod listing;
pub mod load_html;
mod load_report;
mod load_text;
pub mod merge;
mod open;
pub mod palette;
pub mod quic;
pub mod search;
mod send_stamps;
pub mod series;
pub mod shootout;
pub mod slo;
pub mod tcp;
pub mod time;
mod tls;
pub mod udp;
mod units;
pub use client::{client_saturated, spin_percent, Client};
pub use client_delay::{ClientDelay, LatencyClock, CLIENT_DELAY_SHARE_PERCENT};
pub use http2::Http2Report;
pub use load_report::*;
pub use open::{OpenMeasured, OpenReport};
pub use quic::QuicReport;
pub use send_stamps::{Brief, SendStamps};
pub use stats::{Percentile, Summary};
pub use tls::{ClientCertificate, TlsMeasured, TlsReport};
pub use units::human_us;

/// For `skip_serializing_if`: a figure added to a schema that is 0 where it does not
/// apply, left out then so that results without it stay as they were.
pub(crate) fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

#[cfg(test)]
mod tests;
