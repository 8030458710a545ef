//! Fuzzes the request parser and responder: any bytes, split anywhere, must give the same
//! answers as unsplit, start every answer with a status line, and never hold more than the
//! head limit. `crates/avatar/tests/suite/parser_property.rs` runs the same check on seeded
//! inputs in ordinary `cargo test`.
#![no_main]

use std::sync::OnceLock;

use avatar::harness::Harness;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    let harness = HARNESS.get_or_init(Harness::new);
    // The first byte picks the split point, the rest is the connection's input.
    let Some((&cut, input)) = data.split_first() else { return };
    let cut = usize::from(cut) * input.len() / 256;
    harness.check(input, cut);
});
