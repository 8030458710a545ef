//! foxbench shootout: suite files, the target lifecycle (build, start, verify, stop), the
//! services targets call (started, checked and stopped around them) and
//! the run matrix, with the server probed throughout.
//!
//! This crate owns running targets and measuring them; it formats nothing beyond progress
//! lines (reports are `report::shootout`, its `--list` is `report::listing`), it parses no
//! command line, and it reads `/proc` only through `probe`.
#![forbid(unsafe_code)]

mod active;
pub mod cache;
pub mod capacity;
pub mod check;
pub mod client;
pub mod diagnosis;
pub mod dump;
mod failure;
pub mod figures;
pub mod judge;
mod lifecycle;
pub mod listing;
mod measure;
mod meter;
pub mod pools;
pub mod process;
pub mod protocol;
pub mod runner;
mod sampler;
pub mod services;
mod settle;
pub mod suite;
mod summary;
mod tiers;
pub mod verify;
pub mod waiting;
pub mod watch;
mod window;
pub mod wording;
