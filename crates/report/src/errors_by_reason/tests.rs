use super::*;
use stats::setting::PlanWording;

/// Which variant a cause is. A match without a wildcard: a new `Cause` variant does
/// not compile here until it is given a number, and `every_reason` must then list it.
fn variant(c: Cause) -> usize {
    match c {
        Cause::Errno(_) => 0,
        Cause::Closed(_) => 1,
        Cause::Reset(_) => 2,
        Cause::CloseNotify(_) => 3,
        Cause::Timeout(_) => 4,
        Cause::Parse(_) => 5,
        Cause::AlertReceived(_) => 6,
        Cause::AlertSent(_) => 7,
        Cause::Cert(_) => 8,
        Cause::NotTls => 9,
        Cause::PeerIncompatible => 10,
        Cause::PeerMisbehaved => 11,
        Cause::BadRecord => 12,
        Cause::TlsOther => 13,
        Cause::H2Received(_) => 14,
        Cause::H2Sent(_) => 15,
        Cause::NoH2 => 16,
        Cause::Unknown => 17,
        Cause::Malformed(_) => 18,
        Cause::H3Received(_) => 19,
        Cause::H3Sent(_) => 20,
        Cause::Quic(_) => 21,
        Cause::NoH3 => 22,
    }
}

#[test]
fn every_reason_covers_every_cause_and_kind() {
    let all = every_reason();
    let variants: std::collections::BTreeSet<usize> =
        all.iter().map(|r| variant(r.cause)).collect();
    assert_eq!(
        variants.len(),
        23,
        "a Cause variant is missing from every_reason"
    );
    for k in Kind::ALL {
        assert!(all.iter().any(|r| r.kind == k), "{k:?}");
    }
}

/// Every reason's wording is one line, in words: no Debug text of any kind, neither
/// rustls's nor our own enums'. The "other" row too.
#[test]
fn every_wording_is_one_plain_line() {
    let rows = every_reason()
        .into_iter()
        .map(|r| (format!("{r:?}"), ReasonRow::new(r, 3)))
        .chain(Kind::ALL.map(|k| (format!("other {k:?}"), ReasonRow::other(k, 3))));
    for (what, row) in rows {
        let line = row.line(10, &PlanWording);
        assert!(!line.contains('\n'), "{line}");
        for debug in [
            "{", "}", "(Other", "UnixTime", "Context", "Some(", "None", "Errno(", "Closed(",
            "Reset(", "Timeout(", "Cert(", "At::", "Kind::", "Rule::", "\"",
        ] {
            assert!(!line.contains(debug), "{what} reads {line:?}");
        }
        // The plan's words are the longest an edge has ("set the HTTP/2 setting").
        assert!(line.len() < 260, "{line}");
        assert!(
            !row.reason.is_empty() && !row.reason.ends_with('.'),
            "{line}"
        );
    }
}

/// Two causes that a reader must tell apart are worded apart: within each kind, no
/// two reasons read the same.
#[test]
fn each_reason_of_a_kind_reads_differently() {
    let mut seen: BTreeMap<(Kind, String), Reason> = BTreeMap::new();
    for r in every_reason() {
        let row = ReasonRow::new(r, 1);
        let text = format!("{} {:?}", row.reason, row.hint);
        if let Some(before) = seen.insert((r.kind, text.clone()), r) {
            panic!("{before:?} and {r:?} both read {text:?}");
        }
    }
}

/// The plan's words, for a row read with no edge (the JSON's `hint`); the CLI's and
/// the shootout's are in the binary's `tests::hints`.
#[test]
fn a_hint_names_settings_in_the_plan_words_by_default() {
    let tls = ReasonRow::new(Reason::new(Kind::Tls, Cause::AlertReceived(116)), 100);
    assert_eq!(
            tls.line(100, &PlanWording),
            "tls 100 (100%): the server asked for a client certificate (alert certificate_required): set the client certificate setting"
        );
    assert_eq!(
        tls.hint.as_deref(),
        Some("set the client certificate setting")
    );
    let read = ReasonRow::new(Reason::new(Kind::Read, Cause::Reset(At::MidBody)), 12);
    assert_eq!(
        read.line(12_000, &PlanWording),
        "read 12 (0.1%): connection reset by the server mid-body (ECONNRESET)"
    );
}

/// A row from another foxbench, whose code this one does not know, keeps its stored hint.
#[test]
fn an_unknown_code_keeps_its_stored_hint() {
    let row = ReasonRow {
        kind: "tls".into(),
        code: "from_the_future".into(),
        count: 1,
        reason: "a reason".into(),
        hint: Some("a stored hint".into()),
    };
    assert_eq!(row.advice(), None);
    assert_eq!(
        row.line(1, &PlanWording),
        "tls 1 (100%): a reason: a stored hint"
    );
}

#[test]
fn rows_read_back_into_the_table_and_merge_exactly() {
    let mut t = Reasons::default();
    for (i, r) in every_reason().into_iter().enumerate().take(40) {
        t.add(r, i as u64 + 1);
    }
    let rows = rows(&t);
    assert_eq!(table(&rows), t);
    let json = serde_json::to_string(&rows).unwrap();
    let back: Vec<ReasonRow> = serde_json::from_str(&json).unwrap();
    assert_eq!(table(&back), t);
    let merged = merge(&[&rows, &rows]);
    let mut twice = t;
    twice.merge(&t);
    assert_eq!(table(&merged), twice);
    assert_eq!(merged.iter().map(|r| r.count).sum::<u64>(), 2 * t.total());
}
