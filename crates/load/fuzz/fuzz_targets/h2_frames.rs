//! Fuzzes the HTTP/2 connection's read side: any bytes a server might send, delivered in
//! two pieces split where the first byte says, to a connection with eight streams open,
//! must be handled or end in a connection error, never panic.
//! Run: `cargo +nightly fuzz run h2_frames` in crates/load.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&split, data)) = data.split_first() else { return };
    // Half the inputs start with a valid server SETTINGS frame, so the fuzzer reaches
    // the frames after it without having to find it first.
    let mut input = Vec::with_capacity(data.len() + 9);
    if split & 0x80 != 0 {
        input.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
    }
    input.extend_from_slice(data);
    let events = load::h2::fuzz_feed(&input, usize::from(split & 0x7f));
    assert!(events <= 8 + input.len(), "more events than streams and frames");
});
