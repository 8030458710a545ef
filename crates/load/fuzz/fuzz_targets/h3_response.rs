//! Fuzzes the HTTP/3 response path: any bytes a server might send on a request stream,
//! framed (HEADERS decoded with QPACK for the status, 1xx passed over, DATA and unknown
//! frames passed over) in one read and in two pieces split where the first byte says, then
//! the stream's end, must give the same status or the same failure, never panic, and never
//! hold more than a HEADERS frame. Half the inputs start with a HEADERS frame of status
//! 200, so the fuzzer reaches the frames after it without having to find it first.
//! Run: `cargo +nightly fuzz run h3_response` in crates/load.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// HEADERS carrying a QPACK field section: no dynamic table, `:status: 200` (static
/// index 25).
const HEADERS_200: [u8; 5] = [0x01, 0x03, 0x00, 0x00, 0xd9];

fuzz_target!(|data: &[u8]| {
    let Some((&split, data)) = data.split_first() else {
        return;
    };
    let mut input = Vec::with_capacity(data.len() + HEADERS_200.len());
    if split & 0x80 != 0 {
        input.extend_from_slice(&HEADERS_200);
    }
    input.extend_from_slice(data);
    let cut = usize::from(split & 0x7f) * (input.len() + 1) / 128;
    let whole = load::fuzz_h3_response(&input, input.len());
    let split = load::fuzz_h3_response(&input, cut);
    assert_eq!(whole, split, "splitting at {cut} changed the result");
});
