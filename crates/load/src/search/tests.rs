use super::*;

fn config() -> SearchConfig {
    SearchConfig {
        start_per_sec: 1000.0,
        floor_per_sec: 10.0,
        ceiling_per_sec: 10_000_000.0,
        precision: 0.02,
        window: Duration::from_secs(2),
        budget: Duration::from_secs(600),
        reserve: Duration::from_secs(6),
    }
}

/// Runs a search through [`super::drive`] whose window verdicts come from `verdict`,
/// each window costing its length; returns the windows tried and why it stopped.
fn drive(
    cfg: SearchConfig,
    mut verdict: impl FnMut(f64) -> bool,
) -> (Vec<(f64, bool)>, Stopped, Search) {
    let mut s = Search::new(cfg.clone()).unwrap();
    let elapsed = std::cell::Cell::new(Duration::ZERO);
    let mut tried = Vec::new();
    let ended = super::drive(
        &mut s,
        || elapsed.get(),
        || false,
        |rate, _| {
            let ok = verdict(rate);
            tried.push((rate, ok));
            elapsed.set(elapsed.get() + cfg.window);
            assert!(tried.len() < 200, "runs away: {tried:?}");
            Ok::<_, ()>(Some(ok))
        },
    )
    .unwrap();
    let Ended::Search(why) = ended else {
        panic!("not interrupted: {ended:?}")
    };
    (tried, why, s)
}

#[test]
fn an_interrupt_a_window_that_ends_it_and_an_error_each_end_the_drive() {
    // An interrupt during a window: its verdict is not recorded, and no window follows.
    let mut s = Search::new(config()).unwrap();
    let stop = std::cell::Cell::new(false);
    let mut windows = 0;
    let ended = super::drive(
        &mut s,
        || Duration::ZERO,
        || stop.get(),
        |_, _| {
            windows += 1;
            stop.set(true);
            Ok::<_, ()>(Some(true))
        },
    );
    assert_eq!((ended, windows), (Ok(Ended::Interrupted), 1));
    assert_eq!(
        s.bracket(),
        (None, None),
        "the interrupted window is not recorded"
    );
    // A window that answers None ends the search at once.
    let mut s = Search::new(config()).unwrap();
    let ended = super::drive(
        &mut s,
        || Duration::ZERO,
        || false,
        |_, _| Ok::<_, ()>(None),
    );
    assert_eq!(ended, Ok(Ended::Interrupted));
    // An error is the drive's.
    let mut s = Search::new(config()).unwrap();
    let ended = super::drive(
        &mut s,
        || Duration::ZERO,
        || false,
        |_, _| Err::<Option<bool>, _>("probe"),
    );
    assert_eq!(ended, Err("probe"));
}

#[test]
fn the_body_is_the_searchs_window_at_the_rate_found_else_the_lowest_rate() {
    let windows = [
        (1000.0, false),
        (2000.0, false),
        (1500.0, false),
        (1500.0, true),
        (750.0, true),
    ];
    assert_eq!(
        body_window(&windows, Some(1500.0)),
        Some(2),
        "not the spectrum's 100%"
    );
    assert_eq!(body_window(&windows, None), Some(4));
    assert_eq!(body_window(&[], None), None);
}

#[test]
fn finds_a_knee_within_its_precision() {
    for knee in [15.0, 333.0, 1000.0, 4321.0, 987_654.0] {
        let (tried, why, s) = drive(config(), |r| r <= knee);
        assert_eq!(why, Stopped::Converged, "{knee}: {tried:?}");
        let (held, failed) = s.bracket();
        let (held, failed) = (held.unwrap(), failed.unwrap());
        assert!(held <= knee && knee < failed, "{knee}: {held}..{failed}");
        assert!(failed / held - 1.0 <= 0.02, "{knee}: {held}..{failed}");
    }
}

#[test]
fn a_floor_that_fails_ends_the_search() {
    let (tried, why, s) = drive(config(), |_| false);
    assert_eq!(why, Stopped::Floor);
    assert_eq!(s.bracket(), (None, Some(10.0)));
    // Halving from 1000: 1000, 500, 250, 125, 62.5, 31.25, 15.625, then the floor.
    assert_eq!(tried.len(), 8, "{tried:?}");
}

#[test]
fn a_ceiling_that_holds_ends_the_search() {
    let cfg = SearchConfig {
        ceiling_per_sec: 5000.0,
        ..config()
    };
    let (tried, why, s) = drive(cfg, |_| true);
    assert_eq!(why, Stopped::Ceiling);
    assert_eq!(s.bracket(), (Some(5000.0), None));
    assert_eq!(tried.last().unwrap().0, 5000.0);
}

#[test]
fn the_budget_stops_it_with_the_best_bracket() {
    let cfg = SearchConfig {
        budget: Duration::from_secs(20),
        ..config()
    };
    // 20 s less 6 s of reserve hold 7 windows of 2 s.
    let (tried, why, s) = drive(cfg, |r| r <= 50_000.0);
    assert_eq!(why, Stopped::Budget);
    assert_eq!(tried.len(), 7, "{tried:?}");
    // 1000 .. 32000 held, 64000 failed, and 48000 did not fit.
    assert_eq!(s.bracket(), (Some(32_000.0), Some(64_000.0)));
}

#[test]
fn noisy_verdicts_never_break_the_order_of_the_bracket() {
    // A server whose verdict near the knee is a coin toss, from a fixed sequence.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut coin = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x & 1 == 0
    };
    for knee in [700.0, 5000.0, 40_000.0] {
        let (tried, why, s) = drive(config(), |r| {
            if (r - knee).abs() < 0.3 * knee {
                coin()
            } else {
                r < knee
            }
        });
        assert_eq!(why, Stopped::Converged);
        let (held, failed) = s.bracket();
        let (held, failed) = (held.unwrap(), failed.unwrap());
        assert!(held < failed);
        let top_pass = tried
            .iter()
            .filter(|t| t.1)
            .map(|t| t.0)
            .fold(0.0, f64::max);
        assert_eq!(held, top_pass, "the rate found is the highest that held");
        // Every rate that held is below every rate that failed at or after the bracket
        // closed, so the rate found is never above a failure.
        let lowest_fail = tried
            .iter()
            .filter(|t| !t.1)
            .map(|t| t.0)
            .fold(f64::INFINITY, f64::min);
        assert!(held < lowest_fail, "{tried:?}");
        // Below the noisy band everything held, above it everything failed.
        assert!(held >= 0.68 * knee && held < 1.3 * knee, "{knee}: {held}");
    }
}

#[test]
fn a_verdict_for_a_rate_not_asked_is_ignored() {
    let mut s = Search::new(config()).unwrap();
    let Next::Window { rate_per_sec, .. } = s.next(Duration::ZERO) else {
        panic!()
    };
    s.record(rate_per_sec * 3.0, true);
    assert_eq!(s.bracket(), (None, None));
    s.record(rate_per_sec, true);
    assert_eq!(s.bracket(), (Some(1000.0), None));
    s.record(rate_per_sec, false);
    assert_eq!(s.bracket(), (Some(1000.0), None), "recorded once only");
}

#[test]
fn bad_configurations_are_refused() {
    let bad = [
        SearchConfig {
            floor_per_sec: 0.0,
            ..config()
        },
        SearchConfig {
            start_per_sec: 5.0,
            ..config()
        },
        SearchConfig {
            precision: 0.0,
            ..config()
        },
        SearchConfig {
            window: Duration::ZERO,
            ..config()
        },
        SearchConfig {
            budget: Duration::from_secs(7),
            ..config()
        },
    ];
    for c in bad {
        assert!(Search::new(c.clone()).is_err(), "{c:?}");
    }
}
