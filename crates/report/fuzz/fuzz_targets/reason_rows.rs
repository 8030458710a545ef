//! Hostile `errors_by_reason` JSON: reading it into a table and merging it never panics,
//! and merging never loses or wraps a count (it saturates).
#![no_main]

use libfuzzer_sys::fuzz_target;
use report::errors_by_reason::{merge, table, ReasonRow};

fuzz_target!(|data: &[u8]| {
    let Ok(rows) = serde_json::from_slice::<Vec<ReasonRow>>(data) else {
        return;
    };
    let _ = table(&rows);
    let merged = merge(&[&rows, &rows]);
    let total = rows
        .iter()
        .fold(0u64, |a, r| a.saturating_add(r.count))
        .saturating_mul(2);
    let sum = merged.iter().fold(0u64, |a, r| a.saturating_add(r.count));
    if total < u64::MAX / 2 {
        assert_eq!(sum, total);
    }
});
