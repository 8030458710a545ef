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
        assert_eq!(verdict(&v, None), want);
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
    let reason = "target caddy does not speak HTTP/3 (h3 over QUIC): nothing answered";
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

/// An `http2 = true` scenario answered wrong records what it did before HTTP/3 came: its
/// cells' message is the wrong answer's, not the protocol's.
#[test]
fn a_wrong_answer_over_http2_only_is_excluded_as_a_wrong_answer() {
    let v = Verification {
        http2: Some(false),
        ..verification(false, None, vec![check("response", false)])
    };
    assert_eq!(
        excluded(&v, (true, Some(Multiplexed::Http2)), None, false),
        Some((
            CellStatus::Excluded,
            "verification failed: not measured".into()
        ))
    );
}

/// An HTTP/2 level of a scenario answered right over HTTP/1.1 but not over HTTP/2 records
/// what it did before HTTP/3 came, word for word.
#[test]
fn an_http2_exclusion_reads_as_before_http3() {
    let v = Verification {
        http2: Some(false),
        ..verification(true, Some(true), vec![check("http/2", false)])
    };
    assert_eq!(
        excluded(&v, (true, Some(Multiplexed::Http2)), None, false),
        Some((
            CellStatus::Excluded,
            "verification over HTTP/2 failed: this HTTP/2 level is not measured".into()
        ))
    );
}

/// An HTTP/3 exclusion takes its detail from the check `http/3`, not from the first
/// failure (here a keep-alive note).
#[test]
fn an_http3_exclusion_names_the_http3_check_not_the_first_failure() {
    let v = Verification {
        http3: Some(false),
        ..verification(
            true,
            Some(true),
            vec![check("keep-alive", false), check("http/3", false)],
        )
    };
    let (_, why) = excluded(&v, (true, Some(Multiplexed::Http3)), None, false).unwrap();
    assert_eq!(
        why,
        "verification over HTTP/3 failed (http/3 broke): this HTTP/3 level is not measured"
    );
}

/// Every protocol a scenario was verified over is named with its own result, over the
/// protocol the scenario speaks itself.
#[test]
fn a_verdict_names_every_protocol_over_the_scenarios_own() {
    let both = Verification {
        http2: Some(false),
        http3: Some(false),
        ..verification(
            true,
            Some(true),
            vec![check("http/2", false), check("http/3", false)],
        )
    };
    assert_eq!(
        verdict(&both, None),
        "ok over HTTP/1.1, but http/2 broke: HTTP/2 levels excluded; \
         http/3 broke: HTTP/3 levels excluded"
    );
    // `http2 = true` with HTTP/3 levels: ok over HTTP/2, not HTTP/1.1.
    let h2_only = Verification {
        http2: Some(true),
        http3: Some(false),
        ..verification(true, Some(true), vec![check("http/3", false)])
    };
    assert_eq!(
        verdict(&h2_only, Some(Multiplexed::Http2)),
        "ok over HTTP/2, but http/3 broke: HTTP/3 levels excluded"
    );
    // `http3 = true` on a target without HTTP/3: nothing was ok.
    let h3_only = Verification {
        http3: Some(false),
        ..verification(true, None, vec![check("http/3", false)])
    };
    assert_eq!(
        verdict(&h3_only, Some(Multiplexed::Http3)),
        "http/3 broke: HTTP/3 levels excluded"
    );
}
