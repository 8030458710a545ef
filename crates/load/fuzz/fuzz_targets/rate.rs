//! Fuzzes `-R`'s parser (constant rates, ramps, stages, steps). Any text must parse or fail
//! with a one-line error, never panic; a rate that parses has due instants that never go
//! back in time and that its own integral maps back to their request numbers.
//! Run: `cargo +nightly fuzz run rate` in crates/load.
#![no_main]

use libfuzzer_sys::fuzz_target;
use load::Rate;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Rate::parse(text) {
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
        Ok(rate) => {
            let mut last = 0.0f64;
            for j in [0u64, 1, 2, 10, 1000, 123_456, 10_000_000] {
                let Some(t) = rate.due_ns(j as f64) else {
                    break; // the schedule ends at rate 0 before request j
                };
                assert!(t.is_finite() && t >= last, "{text:?}: #{j} at {t} before {last}");
                last = t;
                let back = rate.due_by(t);
                assert!(
                    (back - j as f64).abs() <= 1e-6 * (j as f64).max(1.0) + 1e-3,
                    "{text:?}: N(due(#{j})) = {back}"
                );
            }
        }
    }
});
