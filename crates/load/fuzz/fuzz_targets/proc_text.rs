//! Fuzzes the readers of `/proc` text behind `foxbench doctor` (`probe::machine`): a
//! `/proc/sys` value's numbers and `/proc/net/sockstat`'s TCP memory. Any text must give a
//! figure or `None`, never panic; numbers read back from their own rendering.
//! Run: `cargo +nightly fuzz run proc_text` in crates/load.
#![no_main]

use libfuzzer_sys::fuzz_target;
use probe::machine::{numbers, sockstat_tcp_pages};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(pages) = sockstat_tcp_pages(text) {
        let line = text.lines().find(|l| l.starts_with("TCP:")).unwrap();
        assert!(line.contains(&pages.to_string()), "{text:?}");
    }
    if let Some(three) = numbers::<3>(text) {
        let again = format!("{} {} {}", three[0], three[1], three[2]);
        assert_eq!(numbers::<3>(&again), Some(three));
        assert_eq!(numbers::<1>(text).map(|[a]| a), Some(three[0]));
    }
});
