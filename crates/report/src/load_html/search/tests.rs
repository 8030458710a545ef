use super::*;
use crate::load_html::to_html;
use crate::search::{Bracket, SpectrumRow, Stopped, WindowPhase};
use crate::slo::{ClauseVerdict, Op};

fn spectrum(p99_us: f64) -> Spectrum {
    Spectrum {
        p50_us: p99_us / 4.0,
        p90_us: p99_us / 2.0,
        p99_us,
        p99_9_us: p99_us * 2.0,
        p99_99_us: p99_us * 3.0,
        max_us: p99_us * 4.0,
    }
}

/// A window at `rate` whose corrected p99 is `p99_us`, judged by `p99<10ms`.
fn window(rate: f64, phase: WindowPhase, p99_us: f64) -> CapacityWindow {
    let passed = p99_us < 10_000.0;
    CapacityWindow {
        rate_per_sec: rate,
        phase,
        passed,
        achieved_per_sec: rate * 0.99,
        sent: rate as u64,
        failed: 0,
        late: Some(0),
        corrected: Some(spectrum(p99_us)),
        service: Some(spectrum(p99_us / 2.0)),
        p50_us: Some(spectrum(p99_us).p50_us),
        p99_us: Some(p99_us),
        client_cpu_percent: 12.0,
        client_spin_percent: 0.0,
        client_cpu_us_per_request: None,
        client_work_us_per_request: None,
        client_saturated: false,
        client_delay: None,
        server_cpu_percent: None,
        server_cpu_us_per_request: None,
        clauses: vec![ClauseVerdict {
            clause: "p99<10ms".into(),
            metric: "p99".into(),
            op: Op::Lt,
            threshold: 10_000.0,
            unit: Unit::Us,
            observed: Some(p99_us),
            passed,
        }],
        tcp: None,
    }
}

/// A search that found 800 req/s in four windows, then its spectrum's 110% window.
fn search() -> CapacityReport {
    CapacityReport {
        objective: "p99<10ms".into(),
        rate_per_sec: Some(800.0),
        bracket: Bracket {
            held_per_sec: Some(800.0),
            failed_per_sec: Some(1600.0),
        },
        stopped: Stopped::Converged,
        client_bound: false,
        window_s: 1.5,
        budget_s: 30.0,
        elapsed_s: 9.0,
        windows: vec![
            window(200.0, WindowPhase::Bracket, 900.0),
            window(400.0, WindowPhase::Bracket, 1_100.0),
            window(800.0, WindowPhase::Bracket, 2_000.0),
            window(1600.0, WindowPhase::Bracket, 250_000.0),
            window(880.0, WindowPhase::Spectrum, 40_000.0),
        ],
        spectra: vec![
            SpectrumRow {
                share_percent: 100.0,
                window: 2,
            },
            SpectrumRow {
                share_percent: 110.0,
                window: 4,
            },
        ],
    }
}

/// The stroke or fill colours of the markers of the series named `name`.
fn marker_colours<'a>(html: &'a str, name: &str) -> Vec<&'a str> {
    let at = html
        .find(&format!("<g class=\"series\"><title>{name}</title>"))
        .unwrap_or_else(|| panic!("no series {name}"));
    let group = &html[at..at + html[at..].find("</g>").unwrap()];
    group
        .match_indices("<circle ")
        .map(|(i, _)| {
            let c = &group[i..];
            let f = c.find("fill=\"").unwrap() + "fill=\"".len();
            &c[f..f + 7]
        })
        .collect()
}

/// The dashboard's last page after `--find-max` is this page of the result, which drew only
/// the body window: the search (its windows, the rate found) was the text report's alone.
#[test]
fn the_load_page_left_out_the_capacity_search() {
    let mut r = crate::tests::sample();
    r.capacity = Some(search());
    let html = to_html(&r);
    for needle in [
        "id=\"capacity\"",
        "id=\"chart-windows\"",
        "<b>800 req/s</b>",
        "The bracket: held at 800 req/s, failed at 1600 req/s; converged.",
        "5 windows of 1.5 s in 9.0 s (budget 30 s)",
    ] {
        assert!(html.contains(needle), "{needle}");
    }
    // One row per window, with its verdict.
    let table = &html[html.find("id=\"windows\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr><td class=\"n\">").count(), 5);
    assert_eq!(table.matches(">held</span>").count(), 3);
    assert_eq!(table.matches(">failed</span>").count(), 2);
    // Held windows green and failed ones red, as the dashboard draws them; the objective
    // a dashed line.
    assert_eq!(marker_colours(&html, "held"), [Line::Held.colour(); 3]);
    assert_eq!(marker_colours(&html, "failed"), [Line::Failed.colour(); 2]);
    assert!(html.contains("<g class=\"series\"><title>p99&lt;10ms</title>"));
    // The spectrum: corrected and service time at each share.
    let spectrum = &html[html.find("id=\"spectrum\"").unwrap()..];
    assert_eq!(spectrum.matches("<td>corrected</td>").count(), 2);
    assert_eq!(spectrum.matches("<td>service</td>").count(), 2);
    svg::assert_finite(&html);
}

#[test]
fn a_search_that_found_nothing_says_so() {
    let mut c = search();
    c.rate_per_sec = None;
    c.bracket.held_per_sec = None;
    c.stopped = Stopped::Floor;
    c.spectra.clear();
    c.windows.retain(|w| !w.passed);
    let mut r = crate::tests::sample();
    r.capacity = Some(c);
    let html = to_html(&r);
    assert!(html.contains("<span class=\"badge b-bad\">none</span>"));
    assert!(html.contains("is not met at any rate tried"));
    assert!(html.contains("The bracket: none held, failed at 1600 req/s; the objective failed"));
    assert!(!html.contains("id=\"spectrum\""));
    svg::assert_finite(&html);
}

/// A result without a search has no such section.
#[test]
fn a_load_run_has_no_search() {
    let html = to_html(&crate::tests::sample());
    assert!(!html.contains("id=\"capacity\""));
}
