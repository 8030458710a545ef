//! Fuzzes the `--fail-on` parser: any text parses or fails with one line, never panics,
//! and a limit that parses reads back the same from its own text.
//! Run: `cargo +nightly fuzz run fail_on` in crates/report.
#![no_main]

use libfuzzer_sys::fuzz_target;
use report::compare::FailOn;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match text.parse::<FailOn>() {
        Ok(gate) => {
            for l in &gate.limits {
                assert!(l.percent.is_finite() && l.percent > -100.0);
                let again: FailOn = l.text.parse().expect("a limit's own text parses");
                assert_eq!(again.limits.len(), 1);
                assert_eq!(again.limits[0], *l);
            }
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
});
