//! Fuzzes `--shard`'s and `--start-at`'s parsers. Any text must parse or fail with a
//! one-line error, never panic; a shard that parses has `index < count` and prints back as
//! its text; an RFC 3339 instant that parses formats back to itself (as UTC).
//! Run: `cargo +nightly fuzz run agent_flags` in crates/load.
#![no_main]

use std::time::{Duration, UNIX_EPOCH};

use libfuzzer_sys::fuzz_target;
use load::{start, Shard};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Shard::parse(text) {
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
        Ok(s) => {
            assert!(s.index < s.count && s.count <= load::shard::MAX_SHARDS);
            assert_eq!(Shard::parse(&s.to_string()), Ok(s));
            let total = text.len() as u64 * 7919;
            let sum: u64 = (0..s.count.min(1000))
                .map(|i| Shard { index: i, count: s.count }.share(total))
                .sum();
            if s.count <= 1000 {
                assert_eq!(sum, total);
            }
        }
    }
    let base = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    match start::resolve(text, None, base) {
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
        Ok(at) => {
            if !text.trim().starts_with('+') {
                let again = start::parse_rfc3339(&start::format_rfc3339(at)).unwrap();
                // format_rfc3339 keeps microseconds.
                let d = again.duration_since(at).unwrap_or_else(|e| e.duration());
                assert!(d < Duration::from_micros(1), "{text:?}");
            }
        }
    }
    let _ = start::resolve("+1s", Some(text), base);
});
