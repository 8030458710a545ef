//! The verification verdicts and the gates they set: which targets are loaded, which cells
//! are measured.

use report::shootout::{CellStatus, Check, Verification};

use super::levels::{answers, excluded};
use super::lines::verdict;
use crate::suite::Multiplexed;

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
        http3: None,
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
        (
            Verification {
                http3: Some(false),
                ..verification(true, Some(true), vec![check("http/3", false)])
            },
            "ok over HTTP/1.1, but http/3 broke: HTTP/3 levels excluded",
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
    let h3_wrong_h2_right = Verification {
        http3: Some(false),
        ..h2_right.clone()
    };
    let (h1, h2, h3) = (None, Some(Multiplexed::Http2), Some(Multiplexed::Http3));
    let cases = [
        // (verification, level keep-alive, level protocol, interrupted) → status
        ((&right, true, h1, false), None),
        ((&wrong, false, h1, true), Some(CellStatus::Excluded)),
        ((&closes, true, h1, true), Some(CellStatus::Excluded)),
        ((&closes, false, h1, false), None),
        ((&right, true, h1, true), Some(CellStatus::Interrupted)),
        // An HTTP/2 level runs only where HTTP/2 was verified.
        ((&right, true, h2, false), Some(CellStatus::Excluded)),
        ((&h2_wrong, true, h2, false), Some(CellStatus::Excluded)),
        ((&h2_wrong, true, h1, false), None),
        ((&h2_right, true, h2, false), None),
        // HTTP/3 likewise, and a target without it keeps its other cells.
        ((&h2_right, true, h3, false), Some(CellStatus::Excluded)),
        (
            (&h3_wrong_h2_right, true, h3, false),
            Some(CellStatus::Excluded),
        ),
        ((&h3_wrong_h2_right, true, h2, false), None),
        ((&h3_wrong_h2_right, true, h1, false), None),
    ];
    for ((v, keepalive, version, interrupted), want) in cases {
        assert_eq!(
            excluded(v, (keepalive, version), None, interrupted).map(|(s, _)| s),
            want,
            "{v:?} {keepalive} {version:?} {interrupted}"
        );
    }
    // A level the suite excludes for this target is excluded with its reason, before
    // Ctrl-C's mark; a wrong answer still comes first.
    let why = Some("it runs out of heap");
    assert_eq!(
        excluded(&right, (true, None), why, true),
        Some((
            CellStatus::Excluded,
            "excluded by the suite: it runs out of heap".into()
        ))
    );
    assert_eq!(
        excluded(&wrong, (true, None), why, false),
        Some((
            CellStatus::Excluded,
            "verification failed: not measured".into()
        ))
    );
}

/// An HTTP/3 cell of a target that does not speak HTTP/3 says why, in the verification's
/// own line, so the report tells a missing UDP listener from a wrong answer.
#[test]
fn an_http3_cell_of_a_target_without_http3_is_excluded_with_the_reason() {
    let reason = "target caddy does not speak HTTP/3 (h3 over QUIC: nothing answered)";
    let v = Verification {
        http3: Some(false),
        ..verification(
            true,
            Some(true),
            vec![Check {
                name: "http/3".into(),
                passed: false,
                detail: Some(reason.into()),
            }],
        )
    };
    let (status, why) = excluded(&v, (true, Some(Multiplexed::Http3)), None, false).unwrap();
    assert_eq!(status, CellStatus::Excluded);
    assert_eq!(
        why,
        format!("verification over HTTP/3 failed ({reason}): this HTTP/3 level is not measured")
    );
}
