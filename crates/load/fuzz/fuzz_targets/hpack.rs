//! Fuzzes the HPACK response decoder: any header block decodes or fails cleanly, never
//! panics, and a status it reports has three digits.
//! Run: `cargo +nightly fuzz run hpack` in crates/load.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(status) = load::h2::fuzz_hpack(data) {
        assert!(status <= 999);
    }
});
