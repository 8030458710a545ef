use std::cell::RefCell;
use std::time::Duration;

use load::search::Ended;
use report::search::{Stopped, WindowPhase};

use super::*;

#[test]
fn each_engine_reason_is_the_reports_reason_of_the_same_name() {
    use load::search::Stopped as Why;
    for why in [Why::Converged, Why::Budget, Why::Floor, Why::Ceiling] {
        let got = stopped(Ended::Search(why));
        assert_eq!(format!("{got:?}"), format!("{why:?}"));
    }
    assert_eq!(stopped(Ended::Interrupted), Stopped::Interrupted);
}

fn capacity(window_ms: u64, start: f64) -> Capacity {
    Capacity {
        objective: "p99<10ms".into(),
        slo: "p99<10ms".parse().unwrap(),
        window: Duration::from_millis(window_ms),
        start_per_sec: start,
    }
}

const SUITE: Keys = Keys {
    start_rate: "start_rate",
    window: "window",
    budget: "max_duration",
};

const FLAGS: Keys = Keys {
    start_rate: "--start-rate",
    window: "--window",
    budget: "--max-time",
};

#[test]
fn a_search_is_checked_against_its_budget_and_worded_by_its_edge() {
    let ok = capacity(1000, 1000.0)
        .config(Duration::from_secs(10), After::Nothing)
        .unwrap();
    assert_eq!(
        ok.window,
        Duration::from_millis(1250),
        "the slack is budgeted"
    );
    assert_eq!((ok.floor_per_sec, ok.start_per_sec), (10.0, 1000.0));
    assert_eq!(ok.reserve, Duration::ZERO);
    let spectrum = capacity(1000, 1000.0)
        .config(Duration::from_secs(10), After::Spectrum)
        .unwrap();
    assert_eq!(
        spectrum.reserve,
        Duration::from_millis(3 * 1250),
        "50%, 80% and 110%"
    );
    let low = capacity(1000, 5.0)
        .config(Duration::from_secs(10), After::Nothing)
        .unwrap();
    assert_eq!(low.floor_per_sec, 5.0);
    let cases = [
        (capacity(1000, 1000.0), 1000, After::Nothing, SUITE, "max_duration 1s does not hold one window of 1s (and 250ms to set it up): raise max_duration or shorten window"),
        (capacity(1000, 1000.0), 2000, After::Spectrum, FLAGS, "--max-time 2s does not hold one --window of 1s (and 250ms to set it up) and the spectrum after it: raise --max-time or shorten --window"),
        (capacity(0, 1000.0), 10_000, After::Nothing, SUITE, "window must be longer than zero"),
        (capacity(0, 1000.0), 10_000, After::Spectrum, FLAGS, "--window must be longer than zero"),
        (capacity(1000, 0.0), 10_000, After::Nothing, SUITE, "start_rate 0 is not a rate: give a positive number of requests per second"),
        (capacity(1000, f64::NAN), 10_000, After::Spectrum, FLAGS, "--start-rate NaN is not a rate: give a positive number of requests per second"),
    ];
    for (c, budget_ms, after, keys, want) in cases {
        let e = c
            .config(Duration::from_millis(budget_ms), after)
            .unwrap_err();
        assert_eq!(e.worded(&keys), want);
    }
}

/// Drives a search of a server that holds up to `knee` requests per second.
fn drive_to(knee: f64, after: After) -> (Found, Vec<(f64, WindowPhase)>) {
    let search = capacity(1, 1000.0)
        .search(Duration::from_secs(3600), after)
        .unwrap();
    let windows = RefCell::new(Vec::new());
    let found = drive::<()>(search, after, &|| false, &mut |rate, phase| {
        windows.borrow_mut().push((rate, phase));
        Ok(Some(rate <= knee))
    })
    .unwrap();
    (found, windows.into_inner())
}

#[test]
fn the_driver_finds_the_knee_then_runs_the_spectrum_around_it() {
    let (found, windows) = drive_to(5000.0, After::Spectrum);
    assert_eq!(found.stopped, Stopped::Converged);
    let rate = found.rate_per_sec.unwrap();
    assert!(
        (5000.0 * (1.0 - PRECISION)..=5000.0).contains(&rate),
        "{rate}"
    );
    let body = found.body.unwrap();
    assert_eq!(windows[body], (rate, windows[body].1));
    assert_ne!(windows[body].1, WindowPhase::Spectrum);
    let shares: Vec<f64> = found.spectra.iter().map(|s| s.share_percent).collect();
    assert_eq!(shares, SPECTRUM_SHARES);
    for row in &found.spectra {
        let (at, phase) = windows[row.window];
        if row.share_percent == 100.0 {
            assert_eq!(row.window, body);
        } else {
            assert_eq!(phase, WindowPhase::Spectrum);
            assert_eq!(at, (rate * row.share_percent / 100.0).round());
        }
    }
    let (plain, windows) = drive_to(5000.0, After::Nothing);
    assert!(plain.spectra.is_empty());
    assert!(windows.iter().all(|w| w.1 != WindowPhase::Spectrum));
}

#[test]
fn a_window_that_ends_the_search_keeps_what_ran() {
    let search = capacity(1, 1000.0)
        .search(Duration::from_secs(3600), After::Spectrum)
        .unwrap();
    let mut n = 0;
    let found = drive::<()>(search, After::Spectrum, &|| false, &mut |_, _| {
        n += 1;
        Ok((n < 3).then_some(true))
    })
    .unwrap();
    assert_eq!(found.stopped, Stopped::Interrupted);
    assert_eq!(found.bracket.held_per_sec, Some(2000.0));
    assert!(found.spectra.is_empty(), "no spectrum window after the end");
}
