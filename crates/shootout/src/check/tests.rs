use super::*;

/// The names are the report's text: JSON and Markdown readers depend on them.
#[test]
fn names_are_the_reports_text() {
    let cases = [
        (CheckKind::Response, "response"),
        (CheckKind::KeepAlive, "keep-alive"),
        (CheckKind::AllImages, "all images"),
    ];
    for (kind, name) in cases {
        assert_eq!(kind.name(), name);
    }
}

#[test]
fn only_answer_checks_decide_whether_the_answers_are_right() {
    use CheckKind::*;
    let cases: &[(&[(CheckKind, bool)], bool)] = &[
        (&[], true),
        (&[(Response, true)], true),
        (&[(Response, false)], false),
        (&[(Response, true), (KeepAlive, false)], true),
        (
            &[(Response, true), (KeepAlive, false), (AllImages, true)],
            true,
        ),
        (
            &[(Response, true), (KeepAlive, true), (AllImages, false)],
            false,
        ),
    ];
    for (checks, want) in cases {
        let mut c = Checks::default();
        for &(kind, passed) in *checks {
            c.record(kind, if passed { Ok(()) } else { Err("no".into()) });
        }
        assert_eq!(c.answers_ok(), *want, "{checks:?}");
    }
}

#[test]
fn the_report_keeps_order_names_and_details() {
    let mut c = Checks::default();
    assert!(c.record(CheckKind::Response, Ok(())));
    assert!(!c.record(CheckKind::KeepAlive, Err("closed".into())));
    if let Some(last) = c.last_mut() {
        last.passed = true;
    }
    let want = vec![
        Check {
            name: "response".into(),
            passed: true,
            detail: None,
        },
        Check {
            name: "keep-alive".into(),
            passed: true,
            detail: Some("closed".into()),
        },
    ];
    assert_eq!(c.into_report(), want);
}
