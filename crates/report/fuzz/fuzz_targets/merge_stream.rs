//! Fuzzes `foxbench merge -`'s input: the stream splitter (`kubectl logs` output, prefixed
//! or not, noise between documents) and the merge of whatever results it finds. Nothing
//! may panic: every document is found or reported unfinished, and a merge either succeeds
//! with conserved counts or fails with a one-line error.
//! Run: `cargo +nightly fuzz run merge_stream` in crates/report.
#![no_main]

use libfuzzer_sys::fuzz_target;
use report::merge::{self, input, Options, Source};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let split = input::split_stream(&text, "stdin");
    let lines = text.lines().count() as u64;
    assert!(split.skipped_lines <= lines);
    let sources: Vec<Source> = split
        .documents
        .iter()
        .filter_map(|d| {
            serde_json::from_str(&d.text).ok().map(|report| Source {
                name: d.source.clone(),
                report,
            })
        })
        .collect();
    for partial_ok in [false, true] {
        match merge::merge(&sources, Options { partial_ok }) {
            Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
            Ok(m) => {
                let r = &m.requests;
                assert_eq!(
                    u128::from(r.sent),
                    u128::from(r.ok) + u128::from(r.failed_status) + u128::from(r.errors) + u128::from(r.in_flight)
                );
                let _ = m.to_text(&stats::setting::PlanWording);
            }
        }
    }
});
