use super::*;

/// (connections, req/s, p50 µs) by level → flagged. The first is the post's CouchDB
/// servlet (42 req/s at 10 and 150 users, 233 ms to 3.5 s).
#[test]
fn flat_throughput_with_rising_latency() {
    type Levels = &'static [(u64, f64, f64)];
    let table: &[(Levels, bool)] = &[
        (&[(10, 42.0, 233_000.0), (150, 42.0, 3_500_000.0)], true),
        (
            &[
                (10, 200.0, 50_000.0),
                (50, 196.0, 250_000.0),
                (100, 205.0, 480_000.0),
            ],
            true,
        ),
        // Throughput grew with the connections: not flat.
        (&[(10, 100.0, 1_000.0), (100, 150.0, 5_000.0)], false),
        // Flat within 10% but latency did not rise by half.
        (&[(10, 100.0, 1_000.0), (100, 105.0, 1_400.0)], false),
        // Latency fell at one step.
        (
            &[
                (10, 100.0, 1_000.0),
                (50, 100.0, 9_000.0),
                (100, 100.0, 8_000.0),
            ],
            false,
        ),
        // 11% apart is not flat.
        (&[(10, 100.0, 1_000.0), (100, 111.0, 9_000.0)], false),
        // One level, or none: nothing to compare.
        (&[(10, 100.0, 1_000.0)], false),
        (&[], false),
        // Nothing completed.
        (&[(10, 0.0, 1_000.0), (100, 0.0, 9_000.0)], false),
    ];
    for (levels, want) in table {
        assert_eq!(flat_and_rising(levels), *want, "{levels:?}");
    }
}

/// Regression: the database suite's open-model level (`r400`: 150 connections at most,
/// 400 req/s) sorted beside c150 and hid every pool-2 row's signature.
#[test]
fn an_open_model_level_beside_the_closed_ones_leaves_the_signature_to_them() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/results.json"
    ))
    .unwrap();
    let mut r = ShootoutResults::from_json(&text).unwrap();
    let mut t = r.targets[0].clone();
    t.name = "pool-of-2".into();
    let cell = |level: &str, connections: u64, rps: f64, p50_us: f64| {
        let mut c = t.cells[0].clone();
        (c.level, c.connections, c.keepalive) = (level.into(), connections, true);
        let s = c.summary.as_mut().unwrap();
        s.rps_median = rps;
        s.latency.percentiles = vec![stats::Percentile {
            percentile: 50.0,
            value_us: p50_us,
        }];
        c.diagnosis.as_mut().unwrap().bottleneck = Bottleneck::PoolBound;
        c
    };
    t.cells = vec![
        cell("c10", 10, 1400.0, 7_000.0),
        cell("c150", 150, 1390.0, 100_000.0),
        cell("r400", 150, 399.0, 2_500.0),
    ];
    r.targets = vec![t];
    let mut level = r.protocol.plan.levels[0].clone();
    (level.name, level.connections, level.rate) = ("r400".into(), 150, Some("400".into()));
    r.protocol.plan.levels.push(level);
    let found = signatures(&r);
    assert_eq!(found.len(), 1, "{found:?}");
    let names: Vec<&str> = found[0].levels.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(names, ["c10", "c150"]);
}

#[test]
fn a_signature_reads_as_one_line_with_the_lesson() {
    let s = Signature {
        target: "lock-bound".into(),
        scenario: "plain".into(),
        levels: vec![
            ("c10".into(), 10, 201.0, 50_100.0),
            ("c50".into(), 50, 198.0, 248_000.0),
        ],
    };
    let line = s.line();
    assert!(
            line.starts_with("lock-bound plain: 198-201 req/s from 10 to 50 connections while p50 rose from 50.10ms to 248.00ms"),
            "{line}"
        );
    assert!(line.contains("test what you think you test"), "{line}");
}
