//! Helpers shared by foxbench's tests: a loud skip that fails under CI, a wait on a
//! condition with a deadline, and a network namespace of a test's own ([`Netns`]).
//!
//! This crate owns how a test decides that it cannot run, and how it waits. It is a
//! dev-dependency only: nothing in a shipped binary links it. It must not start servers or
//! know about HTTP; suites keep their own fixtures.
#![forbid(unsafe_code)]

mod netns;

pub use netns::{Netns, NETNS_ENV};

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The switch that turns a skip into a failure: `FOXBENCH_REQUIRE=all`, or a comma-separated
/// list of the names given to [`require`] (`FOXBENCH_REQUIRE=nginx,h2load`). CI sets `all`.
pub const REQUIRE_ENV: &str = "FOXBENCH_REQUIRE";

/// True when `what` is required by `FOXBENCH_REQUIRE`.
pub fn required(what: &str) -> bool {
    std::env::var(REQUIRE_ENV)
        .is_ok_and(|v| v.split(',').map(str::trim).any(|w| w == "all" || w == what))
}

/// Says, loudly, that a test cannot run because `what` is missing (`why` names how to get
/// it), and returns false; panics instead when `what` is required (see [`REQUIRE_ENV`]).
///
/// Use it as `if !testkit::skip_unless(found, "nginx", "apt-get install nginx-light") { return; }`.
#[track_caller]
pub fn skip_unless(found: bool, what: &str, why: &str) -> bool {
    if found {
        return true;
    }
    if required(what) {
        panic!("{REQUIRE_ENV} requires {what}, but it is missing: {why}");
    }
    eprintln!(
        "SKIPPED at {}: {what} is missing: {why}",
        std::panic::Location::caller()
    );
    false
}

/// The first of `candidates` that exists, then `name` on `PATH`; `None` when neither does.
pub fn find_program(name: &str, candidates: &[&str]) -> Option<PathBuf> {
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .or_else(|| {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

/// A program the test needs: its path, or `None` after a loud skip (a panic when required).
#[track_caller]
pub fn require(name: &str, candidates: &[&str], install: &str) -> Option<PathBuf> {
    let found = find_program(name, candidates);
    if skip_unless(found.is_some(), name, install) {
        found
    } else {
        None
    }
}

/// Polls `condition` every few milliseconds until it holds, and panics naming `what` when
/// it has not held within `deadline`. A loaded 2-core machine makes fixed sleeps race;
/// this waits for the fact instead.
#[track_caller]
pub fn wait_until(deadline: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let end = Instant::now() + deadline;
    let mut nap = Duration::from_millis(1);
    loop {
        if condition() {
            return;
        }
        if Instant::now() >= end {
            panic!("waited {deadline:?} for {what}, and it did not happen");
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests;
