//! The verification verdicts and the gates they set: which targets are loaded, which cells
//! are measured.

use report::shootout::{CellStatus, Check, Verification};

use super::levels::{answers, excluded};
use super::lines::verdict;

fn check(name: &str, passed: bool) -> Check {
    Check {
        name: name.into(),
        passed,
        detail: (!passed).then(|| format!("{name} broke")),
    }
}

fn verification(passed: bool, keepalive: Option<bool>, checks: Vec<Check>) -> Verification {
    Verification {
        scenario: "s".into(),
        passed,
        checks,
        images_seen: None,
        images_expected: None,
        keepalive,
        http2: None,
    }
}

#[test]
fn verdicts() {
    let cases = [
        (verification(true, Some(true), vec![]), "ok"),
        (
            verification(true, Some(false), vec![check("keep-alive", false)]),
            "ok, but it closes every connection: keep-alive levels excluded",
        ),
        (
            verification(
                false,
                None,
                vec![check("response", false), check("all images", false)],
            ),
            "response: response broke; all images: all images broke",
        ),
        (
            Verification {
                http2: Some(false),
                ..verification(true, Some(true), vec![check("http/2", false)])
            },
            "ok over HTTP/1.1, but http/2 broke: HTTP/2 levels excluded",
        ),
    ];
    for (v, want) in cases {
        assert_eq!(verdict(&v), want);
    }
}

#[test]
fn a_target_is_loaded_when_any_scenario_is_answered_right() {
    let right = verification(true, Some(false), vec![check("keep-alive", false)]);
    let wrong = verification(false, None, vec![check("response", false)]);
    assert_eq!(answers(&[wrong.clone(), right]), Ok(()));
    assert_eq!(
        answers(&[wrong.clone(), wrong]),
        Err(Some(check("response", false)))
    );
    assert_eq!(answers(&[]), Err(None));
}

#[test]
fn cells_are_excluded_for_wrong_answers_closed_connections_http1_only_the_suite_or_ctrl_c() {
    let right = verification(true, Some(true), vec![]);
    let closes = verification(true, Some(false), vec![]);
    let wrong = verification(false, Some(true), vec![]);
    let h2 = |passed| Verification {
        http2: Some(passed),
        ..right.clone()
    };
    let (h2_right, h2_wrong) = (h2(true), h2(false));
    let cases = [
        // (verification, level keep-alive, HTTP/2 level, interrupted) → status
        ((&right, true, false, false), None),
        ((&wrong, false, false, true), Some(CellStatus::Excluded)),
        ((&closes, true, false, true), Some(CellStatus::Excluded)),
        ((&closes, false, false, false), None),
        ((&right, true, false, true), Some(CellStatus::Interrupted)),
        // An HTTP/2 level runs only where HTTP/2 was verified.
        ((&right, true, true, false), Some(CellStatus::Excluded)),
        ((&h2_wrong, true, true, false), Some(CellStatus::Excluded)),
        ((&h2_wrong, true, false, false), None),
        ((&h2_right, true, true, false), None),
    ];
    for ((v, keepalive, http2, interrupted), want) in cases {
        assert_eq!(
            excluded(v, (keepalive, http2), None, interrupted).map(|(s, _)| s),
            want,
            "{v:?} {keepalive} {http2} {interrupted}"
        );
    }
    // A level the suite excludes for this target is excluded with its reason, before
    // Ctrl-C's mark; a wrong answer still comes first.
    let why = Some("it runs out of heap");
    assert_eq!(
        excluded(&right, (true, false), why, true),
        Some((
            CellStatus::Excluded,
            "excluded by the suite: it runs out of heap".into()
        ))
    );
    assert_eq!(
        excluded(&wrong, (true, false), why, false),
        Some((
            CellStatus::Excluded,
            "verification failed: not measured".into()
        ))
    );
}
