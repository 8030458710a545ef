//! The page `foxbench report LOAD.json` renders for one load result, in headless Chromium:
//! no console message, and the charts drawn. The fixture `tests/data/load.json` is a real
//! `foxbench load --no-keepalive --slo ... --json` run (open model, 250 ms intervals).

use report::load_html::to_html;
use report::palette::Line;
use report::LoadReport;

use super::{pixels_near, render};

fn fixture() -> LoadReport {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/load.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Two colours of the charts: blue for responses/s and p50 over time ([`Line`]), and the
/// spectrum's request latency; orange for p99 over time, and the spectrum's connect time.
const BLUE: [u8; 3] = [0x1f, 0x77, 0xb4];
const ORANGE: [u8; 3] = [0xff, 0x7f, 0x0e];

#[test]
fn the_counted_colours_are_the_palettes() {
    assert_eq!(Line::P50.rgb(), BLUE);
    assert_eq!(Line::Rate.rgb(), BLUE);
    assert_eq!(Line::P99.rgb(), ORANGE);
}
/// Lines and markers of three charts cover thousands of pixels; the page has no other use
/// of these colours.
const MIN_PIXELS: usize = 2_000;

#[test]
fn the_fixture_has_a_series_a_connect_histogram_and_an_objective() {
    let r = fixture();
    assert!(r.intervals.len() >= 10);
    assert!(r.connect.is_some());
    assert!(r.slo.as_ref().is_some_and(|s| s.clauses.len() == 4));
}

#[test]
fn chromium_shows_the_load_page_with_its_charts_and_no_console_message() {
    let html = to_html(&fixture());
    assert_eq!(html.matches("<svg").count(), 3);
    let img = render(&html, "load");
    assert!(
        img.console.is_empty(),
        "the page logged to the console:\n{}",
        img.console.join("\n")
    );
    let drawn = pixels_near(&img, &[BLUE, ORANGE]);
    assert!(
        drawn.iter().all(|&n| n >= MIN_PIXELS),
        "series colours barely appear: {drawn:?}"
    );
    // The check fails on the same page without its charts.
    let mut bare = html.clone();
    while let (Some(a), Some(b)) = (bare.find("<svg"), bare.find("</svg>")) {
        bare.replace_range(a..b + "</svg>".len(), "");
    }
    let img = render(&bare, "load-bare");
    let drawn = pixels_near(&img, &[BLUE, ORANGE]);
    assert!(
        drawn.iter().all(|&n| n < MIN_PIXELS),
        "without charts the colours should be nearly absent: {drawn:?}"
    );
}
