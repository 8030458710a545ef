//! Every hint of an error reason that names a setting, as `foxbench load`'s text report
//! prints it (its flags, [`crate::cli::Flags`]) and as a shootout cell's diagnosis shows it
//! (its keys, [`shootout::wording::SuiteKeys`]): the two edges word the same typed hint.

use report::errors_by_reason::{every_reason, ReasonRow};
use shootout::wording::SuiteKeys;
use stats::reason::{At, Cause, CertProblem, Kind, Reason};

use crate::cli::Flags;

/// (the reason, its hint as the CLI prints it, as a diagnosis shows it).
fn table() -> Vec<(Cause, &'static str, &'static str)> {
    vec![
        (
            Cause::NoH2,
            "enable HTTP/2 on the server, or drop --http2",
            "enable HTTP/2 on the server, or drop the scenario's http2 = true from the suite",
        ),
        (
            Cause::NoH3,
            "enable HTTP/3 on the server, or drop --http3",
            "enable HTTP/3 on the server, or drop http3 = true, or the HTTP/3 level from levels",
        ),
        (
            Cause::Timeout(At::Connect),
            "is the address reachable? raise --connect-timeout",
            "is the address reachable? raise the plan's timeout",
        ),
        (
            Cause::Timeout(At::Handshake),
            "is it a TLS server? raise --timeout",
            "is it a TLS server? raise the plan's timeout",
        ),
        (
            Cause::Timeout(At::MidBody),
            "the server stalled; raise --timeout if it is just slow",
            "the server stalled; raise the plan's timeout if it is just slow",
        ),
        (
            Cause::Cert(CertProblem::Expired),
            "renew it, or pass --insecure",
            "renew it, or set the scenario's insecure = true in the suite",
        ),
        (
            Cause::Cert(CertProblem::NotValidYet),
            "check the clocks, or pass --insecure",
            "check the clocks, or set the scenario's insecure = true in the suite",
        ),
        (
            Cause::Cert(CertProblem::WrongName),
            "connect by a name it was issued for, or pass --insecure",
            "connect by a name it was issued for, or set the scenario's insecure = true in the suite",
        ),
        (
            Cause::Cert(CertProblem::UnknownIssuer),
            "pass --cacert FILE or --insecure",
            "set the scenario's cacert = \"FILE\" or insecure = true in the suite",
        ),
        (
            Cause::Cert(CertProblem::Invalid),
            "pass --cacert FILE or --insecure",
            "set the scenario's cacert = \"FILE\" or insecure = true in the suite",
        ),
        (
            Cause::Cert(CertProblem::CaUsedAsServer),
            "pass that very certificate with --cacert, or make one with -addext basicConstraints=critical,CA:FALSE",
            "pass that very certificate with the scenario's cacert, or make one with -addext basicConstraints=critical,CA:FALSE",
        ),
        (
            Cause::Cert(CertProblem::BadSignature),
            "pass --insecure to skip verification",
            "set the scenario's insecure = true in the suite to skip verification",
        ),
        (
            Cause::AlertReceived(40),
            "it may require a client certificate (--cert FILE --key FILE) or a cipher foxbench lacks",
            "it may require a client certificate (the scenario's cert and key) or a cipher foxbench lacks",
        ),
        (
            Cause::AlertReceived(42),
            "check --cert against the CA the server trusts (and its dates)",
            "check the scenario's cert and key against the CA the server trusts (and its dates)",
        ),
        (
            Cause::AlertReceived(116),
            "pass --cert FILE --key FILE",
            "set the scenario's cert = \"FILE\" and key = \"FILE\" in the suite",
        ),
        (
            Cause::AlertReceived(120),
            "without --http2 it may speak only h2: pass --http2; with it, it does not speak h2: drop --http2",
            "without the scenario's http2 it may speak only h2: set the scenario's http2 = true in the suite; with it, it does not speak h2: drop the scenario's http2 = true from the suite",
        ),
    ]
}

fn row(reason: Reason) -> ReasonRow {
    ReasonRow::new(reason, 3)
}

#[test]
fn every_hint_reads_as_each_edge_words_it() {
    for (cause, cli, suite) in table() {
        // The hint depends on the cause alone, but for HTTP/2 resets (below).
        let row = row(Reason::new(Kind::Connect, cause));
        let hint = row.advice().expect("a hint");
        assert_eq!(hint.worded(&Flags), cli, "{cause:?} as the CLI prints it");
        assert_eq!(hint.worded(&SuiteKeys), suite, "{cause:?} in a diagnosis");
        assert!(row.line(10, &Flags).ends_with(&format!(": {cli}")));
        assert!(row.line(10, &SuiteKeys).ends_with(&format!(": {suite}")));
        assert!(!suite.contains("--"), "{suite}");
    }
    // Reset REFUSED_STREAM is a stream's reason, under Kind::Reset.
    let refused = row(Reason::new(Kind::Reset, Cause::H2Received(7)))
        .advice()
        .expect("a hint");
    assert_eq!(
        refused.worded(&Flags),
        "it is past its limit of streams or connections; lower --streams"
    );
    assert_eq!(
        refused.worded(&SuiteKeys),
        "it is past its limit of streams or connections; lower the level's streams"
    );
}

/// A hint that gains a setting must gain a row above: every hint that names a setting,
/// under any kind, reads as one of the rows.
#[test]
fn the_table_holds_every_hint_that_names_a_setting() {
    let mut known: Vec<String> = table().iter().map(|(_, cli, _)| cli.to_string()).collect();
    known.push("it is past its limit of streams or connections; lower --streams".into());
    for reason in every_reason() {
        let Some(hint) = row(reason).advice() else {
            continue;
        };
        if hint.settings().is_empty() {
            assert!(
                !hint.worded(&Flags).contains("--"),
                "{reason:?}: a flag in plain words"
            );
            continue;
        }
        assert!(
            known.contains(&hint.worded(&Flags)),
            "{reason:?}: {} has no row in tests::hints::table",
            hint.worded(&Flags)
        );
    }
}

/// The JSON row keeps the hint in the plan's words: no flag of the CLI, no suite key.
#[test]
fn the_stored_hint_names_no_flag() {
    for reason in every_reason() {
        if let Some(h) = row(reason).hint {
            assert!(!h.contains("--"), "{reason:?}: {h}");
        }
    }
}

#[test]
fn the_issue_examples_read_as_asked_on_the_command_line() {
    let tls = ReasonRow::new(Reason::new(Kind::Tls, Cause::AlertReceived(116)), 100);
    assert_eq!(
        tls.line(100, &Flags),
        "tls 100 (100%): the server asked for a client certificate (alert certificate_required): pass --cert FILE --key FILE"
    );
    let read = ReasonRow::new(Reason::new(Kind::Read, Cause::Reset(At::MidBody)), 12);
    assert_eq!(
        read.line(12_000, &Flags),
        "read 12 (0.1%): connection reset by the server mid-body (ECONNRESET)"
    );
}

/// nginx refuses an ALPN offer of h2 alone (`--http2` against a server without h2)
/// with no_application_protocol, which read "it speaks only h2: pass --http2": the
/// opposite of the fix. The words now fit an offer of either protocol.
#[test]
fn no_application_protocol_is_worded_for_either_alpn_offer() {
    let line = ReasonRow::new(Reason::new(Kind::Tls, Cause::AlertReceived(120)), 6).line(6, &Flags);
    assert_eq!(
        line,
        "tls 6 (100%): the server speaks none of the protocols foxbench offered by ALPN (alert no_application_protocol): without --http2 it may speak only h2: pass --http2; with it, it does not speak h2: drop --http2"
    );
}

/// The TLS lines of the text report name settings too, and print as they did.
#[test]
fn the_tls_lines_read_as_the_cli_prints_them() {
    use report::ClientCertificate;
    assert_eq!(
        ClientCertificate::none_given().worded(&Flags),
        "the server asked for a client certificate and none was given: pass --cert FILE --key FILE"
    );
    assert_eq!(
        ClientCertificate::none_given().worded(&SuiteKeys),
        "the server asked for a client certificate and none was given: set the scenario's cert = \"FILE\" and key = \"FILE\" in the suite"
    );
}
