use super::*;

fn int(v: f64) -> String {
    format!("{v:.0}")
}

fn tenths(v: f64) -> String {
    format!("{v:.1}")
}

/// The labelled ticks' labels.
fn labels(ticks: &[(f64, String, bool)]) -> Vec<&str> {
    ticks.iter().filter(|t| t.2).map(|t| t.1.as_str()).collect()
}

#[test]
fn nice_steps_are_one_two_or_five_times_a_power_of_ten() {
    for (span, target, want) in [
        (0.0, 5.0, 1.0),
        (-3.0, 5.0, 1.0),
        (f64::NAN, 5.0, 1.0),
        (f64::INFINITY, 5.0, 1.0),
        (10.0, 0.0, 1.0),
        (10.0, 7.0, 1.0),
        (87.0, 5.0, 20.0),
        (100.0, 5.0, 20.0),
        (30.0, 5.0, 5.0),
        (45.0, 5.0, 10.0),
        (1e6, 5.0, 2e5),
    ] {
        assert_eq!(nice_step(span, target), want, "nice_step({span}, {target})");
    }
}

#[test]
fn transform_rejects_what_a_scale_cannot_draw() {
    for (scale, v, want) in [
        (Scale::Linear, 5.0, Some(5.0)),
        (Scale::Linear, -5.0, Some(-5.0)),
        (Scale::Linear, 0.0, Some(0.0)),
        (Scale::Linear, f64::NAN, None),
        (Scale::Linear, f64::INFINITY, None),
        (Scale::Log, 100.0, Some(2.0)),
        (Scale::Log, 1.0, Some(0.0)),
        (Scale::Log, 0.0, None),
        (Scale::Log, -1.0, None),
        (Scale::Log, f64::INFINITY, None),
    ] {
        assert_eq!(Map::t(scale, v), want, "{scale:?} {v}");
    }
}

#[test]
fn maps_data_to_pixels() {
    let x = Map {
        scale: Scale::Linear,
        lo: 0.0,
        hi: 10.0,
        a: 100.0,
        b: 200.0,
    };
    // A y axis runs upwards: `lo` lands at the bottom pixel.
    let y = Map {
        a: 300.0,
        b: 100.0,
        ..x
    };
    let flat = Map {
        lo: 5.0,
        hi: 5.0,
        ..x
    };
    let log = Map {
        scale: Scale::Log,
        lo: 1.0,
        hi: 3.0,
        a: 0.0,
        b: 200.0,
    };
    for (m, v, px, clamped) in [
        (x, 5.0, Some(150.0), Some(150.0)),
        (x, -5.0, Some(50.0), Some(100.0)),
        (x, 20.0, Some(300.0), Some(200.0)),
        (x, f64::NAN, None, None),
        (y, 10.0, Some(100.0), Some(100.0)),
        (y, 0.0, Some(300.0), Some(300.0)),
        (y, 20.0, Some(-100.0), Some(100.0)),
        (flat, 7.0, Some(150.0), Some(150.0)),
        (log, 100.0, Some(100.0), Some(100.0)),
        (log, 1.0, Some(-100.0), Some(0.0)),
        (log, 0.0, None, None),
    ] {
        assert_eq!(m.px(v), px, "{m:?} px({v})");
        assert_eq!(m.px_clamped(v), clamped, "{m:?} px_clamped({v})");
    }
}

#[test]
fn log_ticks_are_decades_and_linear_ticks_are_round() {
    let axis = Axis::new("y", Scale::Log, int);
    let (lo, hi, ticks) = fit(&axis, &[15.0, 4000.0], 5.0);
    assert_eq!((lo, hi), (1.0, 4.0));
    assert_eq!(labels(&ticks), ["10", "100", "1000", "10000"]);
    let axis = Axis::new("y", Scale::Linear, int);
    let (lo, hi, ticks) = fit(&axis, &[3.0, 87.0], 5.0);
    assert_eq!((lo, hi), (0.0, 100.0));
    assert_eq!(ticks.len(), 6);
}

#[test]
fn fitted_domains_and_ticks() {
    let linear = Axis::new("y", Scale::Linear, int);
    let floating = Axis {
        zero: false,
        ..Axis::new("y", Scale::Linear, int)
    };
    let fine = Axis::new("y", Scale::Linear, tenths);
    let log = Axis::new("y", Scale::Log, int);
    let fixed = Axis::new("y", Scale::Linear, int).with_domain(0.0, 9.0);
    for (axis, values, lo, hi, want) in [
        (
            &linear,
            vec![3.0, 87.0],
            0.0,
            100.0,
            vec!["0", "20", "40", "60", "80", "100"],
        ),
        (
            &linear,
            vec![5.0, 5.0],
            0.0,
            5.0,
            vec!["0", "1", "2", "3", "4", "5"],
        ),
        (
            &fine,
            vec![f64::NAN],
            0.0,
            1.0,
            vec!["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"],
        ),
        (
            &fine,
            vec![0.0],
            0.0,
            2.0,
            vec!["0.0", "0.5", "1.0", "1.5", "2.0"],
        ),
        (
            &floating,
            vec![10.0],
            4.0,
            16.0,
            vec!["4", "6", "8", "10", "12", "14", "16"],
        ),
        (&fixed, vec![100.0], 0.0, 9.0, vec!["0", "2", "4", "6", "8"]),
        (
            &log,
            vec![15.0, 4000.0],
            1.0,
            4.0,
            vec!["10", "100", "1000", "10000"],
        ),
        (&log, vec![], 0.0, 1.0, vec!["1", "2", "5", "10"]),
        (&log, vec![0.0, -1.0], 0.0, 1.0, vec!["1", "2", "5", "10"]),
        (&log, vec![50.0], 1.0, 2.0, vec!["10", "20", "50", "100"]),
    ] {
        let (l, h, ticks) = fit(axis, &values, 5.0);
        assert_eq!((l, h), (lo, hi), "{values:?}");
        assert_eq!(labels(&ticks), want, "{values:?}");
    }
}

#[test]
fn fixed_ticks_outside_the_domain_are_dropped() {
    let axis = Axis::new("x", Scale::Log, int)
        .with_ticks(vec![
            (1.0, "one".into()),
            (10.0, "ten".into()),
            (1000.0, "thousand".into()),
            (0.0, "zero".into()),
        ])
        .with_domain(0.5, 20.0);
    let (lo, hi, ticks) = fit(&axis, &[1e6], 7.0);
    assert_eq!((lo, hi), (0.5f64.log10(), 20f64.log10()));
    assert_eq!(labels(&ticks), ["one", "ten"]);
}
