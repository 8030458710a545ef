use super::*;

fn at(unix_s: u64, nanos: u32) -> SystemTime {
    UNIX_EPOCH + Duration::new(unix_s, nanos)
}

#[test]
fn rfc3339_instants() {
    for (text, want) in [
        ("1970-01-01T00:00:00Z", Some(at(0, 0))),
        ("2026-11-24T23:30:00Z", Some(at(1_795_563_000, 0))),
        ("2026-11-24t23:30:00z", Some(at(1_795_563_000, 0))),
        ("2026-11-24 23:30:00Z", Some(at(1_795_563_000, 0))),
        ("2026-11-25T00:30:00+01:00", Some(at(1_795_563_000, 0))),
        ("2026-11-24T22:30:00-01:00", Some(at(1_795_563_000, 0))),
        (
            "2026-11-24T23:30:00.25Z",
            Some(at(1_795_563_000, 250_000_000)),
        ),
        (
            "2026-11-24T23:30:00.1234567891Z",
            Some(at(1_795_563_000, 123_456_789)),
        ),
        ("2000-02-29T00:00:00Z", Some(at(951_782_400, 0))),
        ("2100-02-29T00:00:00Z", None),
        ("2026-13-01T00:00:00Z", None),
        ("2026-11-24T24:00:00Z", None),
        ("2026-11-24T23:30:00", None),
        ("2026-11-24T23:30:00.Z", None),
        ("2026-11-24T23:30:00+1:00", None),
        ("1969-12-31T23:59:59Z", None),
        ("2026-11-24", None),
        ("", None),
        ("now", None),
        ("2026-11-24T23:30:00Zjunk", None),
    ] {
        assert_eq!(parse_rfc3339(text).ok(), want, "{text:?}");
    }
}

#[test]
fn formats_what_it_parses() {
    for t in [
        at(0, 0),
        at(1_795_563_000, 250_000_000),
        at(4_107_542_400, 1_000),
    ] {
        assert_eq!(parse_rfc3339(&format_rfc3339(t)).unwrap(), t);
    }
}

#[test]
fn relative_instants_count_from_the_base() {
    let now = at(1_000, 0);
    assert_eq!(resolve("+30s", None, now).unwrap(), at(1_030, 0));
    assert_eq!(
        resolve("+1.5s", Some("1970-01-01T00:01:40Z"), now).unwrap(),
        at(101, 500_000_000)
    );
    assert_eq!(
        resolve("1970-01-01T00:00:05Z", Some("garbage"), now),
        Err(StartError::Base {
            text: "garbage".into(),
            why: "too short".into()
        }),
        "a bad base is an error even when unused: the orchestrator passed it for a reason"
    );
    for bad in ["+", "+0s", "+-3s", "+3x", "30s"] {
        assert!(
            matches!(resolve(bad, None, now), Err(StartError::Syntax { .. })),
            "{bad}"
        );
    }
}

#[test]
fn a_late_agent_fails_unless_late_is_fine() {
    let past = SystemTime::now() - Duration::from_secs(2);
    let e = wait_until(past, false, &|| false).unwrap_err();
    assert!(matches!(e, StartError::Late { .. }), "{e}");
    assert!(e.to_string().contains("allow a late start"), "{e}");
    assert!(wait_until(past, true, &|| false).is_ok());
}

#[test]
fn waits_until_the_instant() {
    let target = SystemTime::now() + Duration::from_millis(30);
    let woke = wait_until(target, false, &|| false).unwrap();
    assert!(woke >= target, "woke before the instant");
    assert!(SystemTime::now() >= target);
}

#[test]
fn a_cancelled_wait_ends_before_the_instant() {
    let target = SystemTime::now() + Duration::from_secs(600);
    let e = wait_until(target, false, &|| true).unwrap_err();
    assert!(matches!(e, StartError::Cancelled { .. }), "{e}");
}
