//! Fuzzes the HTTP/3 request path: a request stream's bytes walked into frames (HEADERS
//! held whole, DATA counted, trailers and unknown frames passed over), the head decoded with
//! QPACK, checked and answered by the responder. Any bytes, split anywhere, must give the
//! same answer, error and end as unsplit, never panic, and never hold more than a HEADERS
//! frame. Half the inputs start with a valid request head (`GET /`), so the fuzzer reaches
//! the frames after it without having to find it first.
//! Run: `cargo +nightly fuzz run h3` in crates/avatar.
#![no_main]

use std::sync::OnceLock;

use avatar::harness::Harness;
use libfuzzer_sys::fuzz_target;

/// HEADERS carrying a QPACK field section: no dynamic table, `:method: GET`, `:scheme:
/// https`, `:path: /` (static indexes 17, 23, 1) and `:authority: a` (a literal with the
/// name of static index 0).
const GET: [u8; 10] = [0x01, 0x08, 0x00, 0x00, 0xd1, 0xd7, 0xc1, 0x50, 0x01, b'a'];

fuzz_target!(|data: &[u8]| {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    let harness = HARNESS.get_or_init(Harness::new);
    // The first byte picks the split point and whether a head comes first.
    let Some((&cut, data)) = data.split_first() else {
        return;
    };
    let mut input = Vec::with_capacity(data.len() + GET.len());
    if cut & 0x80 != 0 {
        input.extend_from_slice(&GET);
    }
    input.extend_from_slice(data);
    let cut = usize::from(cut & 0x7f) * (input.len() + 1) / 128;
    harness.check_h3(&input, cut);
});
