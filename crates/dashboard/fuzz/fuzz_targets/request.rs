//! Fuzzes what the dashboard does with a client's bytes: any request head parses or is
//! refused, never panics, and only a path that starts with the token leads anywhere.
//! Run: `cargo +nightly fuzz run request` in crates/dashboard.
#![no_main]

use dashboard::http::{parse_path, route, Route};
use libfuzzer_sys::fuzz_target;

const TOKEN: &str = "00112233445566778899aabbccddeeff";

fuzz_target!(|data: &[u8]| {
    if let Some(path) = parse_path(data) {
        let r = route(&path, TOKEN);
        if r != Route::NotFound {
            assert!(path.starts_with(&format!("/{TOKEN}/")), "{path:?} led to {r:?}");
        }
    }
});
