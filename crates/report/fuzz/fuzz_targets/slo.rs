//! Fuzzes the `--slo` parser: any text parses or fails with one line, never panics, and a
//! clause that parses reads back the same from its own text, with a finite threshold.
//! Run: `cargo +nightly fuzz run slo` in crates/report.
#![no_main]

use libfuzzer_sys::fuzz_target;
use report::slo::{Clause, Slo};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match text.parse::<Slo>() {
        Ok(slo) => {
            assert!(!slo.clauses.is_empty());
            for c in &slo.clauses {
                assert!(c.threshold.is_finite() && c.threshold >= 0.0, "{c:?}");
                let again: Clause = c.text.parse().expect("a clause's own text parses");
                assert_eq!(again, *c);
                let _ = slo.check_measurable(false);
            }
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
});
