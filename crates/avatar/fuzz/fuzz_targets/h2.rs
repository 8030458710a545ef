//! Fuzzes the HTTP/2 request path: frames, HPACK decoding (Huffman, the dynamic table),
//! streams, windows, limits, and the responder behind them. Any bytes after the preface,
//! split anywhere, must give the same output as unsplit, never panic, and never hold more
//! than one frame.
#![no_main]

use std::sync::OnceLock;

use avatar::harness::Harness;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    let harness = HARNESS.get_or_init(Harness::new);
    // The first byte picks the split point, the rest follows the preface.
    let Some((&cut, input)) = data.split_first() else { return };
    let cut = usize::from(cut) * (input.len() + 24) / 256;
    harness.check_h2(input, cut);
});
