//! The open-model level kind (`rate`): what parses, into which schedule, and the one line
//! each mistake gets.

use super::*;

/// GOOD with its `ab` level replaced by `level`.
fn with_level(level: &str) -> String {
    GOOD.replace(
        "{ name = \"ab\", connections = 10, requests = 1000, keepalive = false }",
        level,
    )
}

#[test]
fn a_rate_level_runs_the_open_model_with_that_schedule() {
    let cases: &[(&str, &str, Option<f64>, f64)] = &[
        // (level, its text as recorded, constant rate, peak rate)
        (
            "{ name = \"r400\", connections = 150, rate = 400 }",
            "400",
            Some(400.0),
            400.0,
        ),
        (
            "{ name = \"r\", connections = 150, rate = 2.5 }",
            "2.5",
            Some(2.5),
            2.5,
        ),
        (
            "{ name = \"r\", connections = 150, rate = \"400\" }",
            "400",
            Some(400.0),
            400.0,
        ),
        (
            "{ name = \"r\", connections = 150, rate = \"100..1000/10s\" }",
            "100..1000/10s",
            None,
            1000.0,
        ),
        (
            "{ name = \"r\", connections = 8, rate = \"100+100/1s..500\" }",
            "100+100/1s..500",
            None,
            500.0,
        ),
    ];
    for (level, text, constant, peak) in cases {
        let s =
            Suite::parse(&with_level(level), "s.toml").unwrap_or_else(|e| panic!("{level}: {e}"));
        let l = &s.plan.levels[1];
        let r = l.rate.as_ref().expect("a rate level");
        assert_eq!(r.text, *text, "{level}");
        assert_eq!(r.rate.constant_per_sec(), *constant, "{level}");
        assert_eq!(r.rate.peak_per_sec(), *peak, "{level}");
        assert_eq!(l.requests, None, "{level}: timed by the plan's duration");
    }
    // Every other level stays closed.
    let s = Suite::parse(GOOD, "s.toml").unwrap();
    assert!(s.plan.levels.iter().all(|l| l.rate.is_none()));
}

#[test]
fn a_bad_rate_names_the_file_line_and_key() {
    let cases: &[(&str, &str)] = &[
        (
            "{ name = \"r\", connections = 10, rate = 0 }",
            "s.toml:6: key `plan.levels[1].rate`: invalid rate \"0\": it never sends a request; write e.g. 20000, 1000..20000/60s, 1000/10s,5000/30s or 1000+1000/10s..10000",
        ),
        (
            "{ name = \"r\", connections = 10, rate = \"fast\" }",
            "s.toml:6: key `plan.levels[1].rate`: invalid rate \"fast\": \"fast\" is not a number of requests per second; write e.g. 20000, 1000..20000/60s, 1000/10s,5000/30s or 1000+1000/10s..10000",
        ),
        (
            "{ name = \"r\", connections = 10, rate = -5 }",
            "s.toml:6: key `plan.levels[1].rate`: invalid rate \"-5\": \"-5\" must be a finite number, 0 or more; write e.g. 20000, 1000..20000/60s, 1000/10s,5000/30s or 1000+1000/10s..10000",
        ),
        (
            "{ name = \"r\", connections = 10, rate = true }",
            "s.toml:6: key `plan.levels[1].rate`: invalid type: boolean `true`, expected requests per second, like 400, or a schedule like \"100..1000/10s\"",
        ),
    ];
    for (level, want) in cases {
        let e = Suite::parse(&with_level(level), "s.toml").unwrap_err();
        assert_eq!(e.to_string(), *want, "{level}");
    }
}
