//! One measured window, in one place, for `foxbench load` (and `--find-max`) and the
//! shootout alike.
//!
//! It owns:
//! - running one window ([`window`]): the process's own usage, the kernel's TCP counters
//!   and foxbench's own sockets read around `load::run_with_intervals`, with the CPU of
//!   the threads beside the load (a dashboard, a probe) told apart from the load
//!   generator's;
//! - turning a result into the one record ([`record`]): the client's cost
//!   ([`report::Client`], the same struct in a load result and a shootout repeat), the
//!   load result, the HTTP/2 section, the TCP links and counters;
//! - the decisions a run's record depends on, each made once ([`rules`]): the protocol's
//!   name, the latency the TCP rules read in the open model, the coalescing of a window
//!   whose arrival is changed;
//! - the capacity search's driver ([`search`]): its constants, configuration, error texts
//!   and window rows, for `foxbench load --find-max` and the shootout's capacity levels.
//!   The search itself (which rate next) is `load::search::Search`.
//!
//! It does not word flags or suite keys (each edge passes its wording), prints nothing,
//! and reads `/proc` only through `probe`. The shootout's server-side probing (the target
//! tree, the services, `/proc/stat`) stays in the shootout.

#![forbid(unsafe_code)]

pub mod record;
pub mod rules;
pub mod search;
pub mod window;
