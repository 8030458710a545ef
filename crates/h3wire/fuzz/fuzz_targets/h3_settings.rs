//! Fuzzes the SETTINGS payload reader: any payload reads or fails cleanly, and settings
//! read back the same once written. Run: `cargo +nightly fuzz run h3_settings` in
//! crates/h3wire.
#![no_main]

use h3wire::frame::{self, Settings};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = Settings::parse(data) {
        let mut out = Vec::new();
        s.put(&mut out);
        let h = frame::parse_header(&out, u64::MAX).unwrap().unwrap();
        assert_eq!(Settings::parse(&out[h.header_len..]), Ok(s));
    }
});
