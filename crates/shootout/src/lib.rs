//! foxbench shootout: suite files, the target lifecycle (build, start, verify, stop) and
//! the run matrix, with the server probed throughout.
//!
//! This crate owns running targets and measuring them; it formats nothing beyond progress
//! lines (reports are `report::shootout`), and it parses no command line.
#![forbid(unsafe_code)]

pub mod cache;
pub mod capacity;
pub mod check;
pub mod client;
pub mod diagnosis;
mod failure;
pub mod judge;
mod lifecycle;
mod limits;
mod measure;
pub mod process;
pub mod protocol;
pub mod runner;
pub mod suite;
mod summary;
pub mod verify;
mod window;
