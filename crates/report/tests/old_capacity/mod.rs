//! A shootout capacity cell as written before one capacity result served `--find-max` and
//! the shootout (`CellCapacity` with `CellWindow`s, schema of 2026-11-27 and before): no
//! committed run has one, so `tests/data/capacity-before-2026-11-28.json` was written by
//! hand in that shape (the run of `results.json`, one target, with a capacity level and
//! cell added) and checked to render with the binary of that time (bdaa979).

use report::search::{Stopped, WindowPhase};
use report::shootout::{to_html, to_markdown, ShootoutResults};

fn old_capacity() -> ShootoutResults {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/capacity-before-2026-11-28.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    ShootoutResults::from_json(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn an_old_capacity_cell_reads_as_the_one_capacity_result() {
    let r = old_capacity();
    let cell = r.targets[0]
        .cells
        .iter()
        .find(|c| c.level == "cap")
        .expect("the capacity cell");
    let c = cell.capacity.as_ref().expect("its search");
    assert_eq!((c.rate_per_sec, c.stopped), (Some(2000.0), Stopped::Budget));
    assert_eq!(c.bracket.failed_per_sec, Some(4000.0));
    assert!(c.spectra.is_empty(), "a cell has no spectrum");
    let w = &c.windows[2];
    assert_eq!((w.phase, w.passed), (WindowPhase::Bracket, false));
    // The old window's server CPU was a number, now an option; its corrected latency was
    // its p50 and p99 alone.
    assert_eq!(w.server_cpu_percent, Some(82.0));
    assert_eq!((w.p99_us, w.corrected), (Some(42000.0), None));
    assert_eq!(w.clauses.len(), 1);
}

#[test]
fn an_old_capacity_cell_renders_as_it_did() {
    let r = old_capacity();
    // The row the binary of that time (bdaa979) wrote for this file.
    let row = "| 1 | avatar | redirect | cap (c10) | 2,000 | 1.40ms | 2,000 – 4,000 | 46,537 | 3 windows, 8 s of 8 s | budget |";
    let md = to_markdown(&r);
    assert!(md.contains("## Capacity under `p99<10ms`"), "{md}");
    assert!(md.contains(row), "{md}");
    let html = to_html(&r);
    assert!(
        html.contains("2,000 – 4,000"),
        "the capacity table is in the page"
    );
}
