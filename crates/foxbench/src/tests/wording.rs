//! Every library message that names a setting, as the CLI prints it (its flags,
//! [`crate::cli::Flags`]: `foxbench load`'s, and `merge`'s and `doctor`'s own) and as a suite
//! error shows it (its keys, [`shootout::wording::SuiteKeys`]): the two edges word the same
//! typed text.

use std::path::PathBuf;
use std::time::Duration;

use clap::CommandFactory as _;
use load::os_limits::{check, Demand, Finding, Machine};
use load::{explain_tls, PlanError, Setting, SetupError, Text, TlsError, Verify};
use report::merge::{self, input, MergeError, Options, Source};
use rustls::{AlertDescription, CertificateError as C, Error};
use serde_json::{json, Value};
use shootout::wording::SuiteKeys;

use crate::cli::{flag, Flags};

const HOST: &str = "127.0.0.1";

fn addr() -> std::net::SocketAddr {
    "127.0.0.1:8443".parse().unwrap()
}

/// `foxbench doctor`'s finding of `check` for 10 connections on a machine with the
/// default port range and no server threads asked about.
fn finding(name: &str) -> Finding {
    let machine = Machine {
        port_range: Some((32768, 60999)),
        nproc: Some((1000, 1000)),
        ..Machine::default()
    };
    let demand = Demand {
        connections: 10,
        closes_per_s: None,
        threads: None,
        remote: false,
        udp: false,
    };
    check(&machine, &demand)
        .into_iter()
        .find(|f| f.check == name)
        .expect("the check")
}

/// A `foxbench load --json` result (report's fixture), changed at each JSON pointer.
fn result(name: &str, changes: &[(&str, Value)]) -> Source {
    let mut v: Value =
        serde_json::from_str(include_str!("../../../report/tests/data/load.json")).unwrap();
    for (pointer, value) in changes {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        v.pointer_mut(parent).unwrap()[key] = value.clone();
    }
    input::read_result(name, &v.to_string()).expect("a result")
}

/// Why `sources` do not merge.
fn merge_error(sources: &[Source]) -> MergeError {
    merge::merge(sources, Options::default()).expect_err("no merge")
}

/// A plan that differs from the fixture's by `change`: the merge of the two fails on it.
fn other_plan(change: (&str, Value)) -> MergeError {
    merge_error(&[result("a.json", &[]), result("b.json", &[change])])
}

/// Every merge error that names a setting, as `foxbench merge` printed it before the
/// setting was typed (the same bytes now: [`crate::merge_cmd::flagged`]).
fn merge_table() -> Vec<(MergeError, &'static str)> {
    let two = json!({"index": 0, "count": 2, "plan_connections": 16, "plan_requests": null});
    let plan = |field: &str, value: Value| other_plan((field, value));
    let json = serde_json::to_string_pretty(&result("a.json", &[]).report).unwrap();
    let cut = &json[..json.len() / 2];
    vec![
        (
            merge_error(&[result("a.json", &[("/shard", two.clone())])]),
            "missing shard 1 of 2: pass every agent's result, or --partial-ok to merge what there is",
        ),
        (
            merge_error(&[result("partial.json", &[("/interrupted", json!(true))])]),
            "partial.json: shard 0 was interrupted, its result is partial: rerun it, or pass --partial-ok",
        ),
        (
            input::read_stream(cut, "stdin", false).expect_err("cut short"),
            "stdin line 1: the stream ended inside this result (an agent killed while writing?): pass --partial-ok to merge the others",
        ),
        (
            plan("/shard", two),
            "b.json: a different plan than a.json: --shard N is 1 there and 2 here; merge only the agents of one run",
        ),
        (
            plan("/config/rate_per_sec", json!(500.0)),
            "b.json: a different plan than a.json: --rate is Some(400.0) None there and Some(500.0) None here; merge only the agents of one run",
        ),
        (
            plan("/config/connections", json!(9)),
            "b.json: a different plan than a.json: --connections is 8 there and 9 here; merge only the agents of one run",
        ),
        (
            plan("/config/requests", json!(100)),
            "b.json: a different plan than a.json: --requests is None there and Some(100) here; merge only the agents of one run",
        ),
        (
            plan("/config/duration_s", json!(5.0)),
            "b.json: a different plan than a.json: --duration is Some(4.0) there and Some(5.0) here; merge only the agents of one run",
        ),
        (
            plan("/config/pipeline", json!(2)),
            "b.json: a different plan than a.json: --pipeline is 1 there and 2 here; merge only the agents of one run",
        ),
        (
            plan("/config/timeout_s", json!(3.0)),
            "b.json: a different plan than a.json: --timeout is 10 there and 3 here; merge only the agents of one run",
        ),
        (
            plan("/config/interval_s", json!(0.5)),
            "b.json: a different plan than a.json: --interval is 0.25 there and 0.5 here; merge only the agents of one run",
        ),
        (
            plan("/config/selection", json!("random")),
            "b.json: a different plan than a.json: --select is RoundRobin there and Random here; merge only the agents of one run",
        ),
        (
            plan("/config/keepalive", json!(true)),
            "b.json: a different plan than a.json: keep-alive is false there and true here; merge only the agents of one run",
        ),
    ]
}

/// (the message, as the CLI prints it, as a suite error shows it; `None` for a setting
/// no suite gives, whose message the shootout never meets).
fn table() -> Vec<(Text, &'static str, Option<&'static str>)> {
    let cert = |c: C| explain_tls(&Error::InvalidCertificate(c), HOST);
    let alert = |a: AlertDescription| explain_tls(&Error::AlertReceived(a), HOST);
    let merge_rows = merge_table()
        .into_iter()
        .map(|(e, cli)| (e.text(), cli, None));
    let rows = vec![
        (
            cert(C::UnknownIssuer),
            "certificate for 127.0.0.1 is self-signed or from an unknown authority: pass --cacert FILE or --insecure (FILE may be the CA's certificate or the server's own)",
            Some("certificate for 127.0.0.1 is self-signed or from an unknown authority: set the scenario's cacert = \"FILE\" or insecure = true in the suite (FILE may be the CA's certificate or the server's own)"),
        ),
        (
            cert(C::Other(rustls::OtherError(std::sync::Arc::new(
                load::SelfSigned { ca_file: false },
            )))),
            "certificate for 127.0.0.1 is self-signed: pass --cacert FILE or --insecure (FILE: the server's certificate itself)",
            Some("certificate for 127.0.0.1 is self-signed: set the scenario's cacert = \"FILE\" or insecure = true in the suite (FILE: the server's certificate itself)"),
        ),
        (
            cert(C::Other(rustls::OtherError(std::sync::Arc::new(
                load::SelfSigned { ca_file: true },
            )))),
            "certificate for 127.0.0.1 is self-signed and not the one in --cacert: pass --cacert FILE or --insecure (FILE: the server's certificate itself)",
            Some("certificate for 127.0.0.1 is self-signed and not the one in the scenario's cacert: set the scenario's cacert = \"FILE\" or insecure = true in the suite (FILE: the server's certificate itself)"),
        ),
        (
            cert(C::NotValidForName),
            "certificate is not valid for 127.0.0.1: connect by a name it was issued for, or pass --insecure",
            Some("certificate is not valid for 127.0.0.1: connect by a name it was issued for, or set the scenario's insecure = true in the suite"),
        ),
        (
            cert(C::Expired),
            "certificate for 127.0.0.1 has expired: renew it, or pass --insecure",
            Some("certificate for 127.0.0.1 has expired: renew it, or set the scenario's insecure = true in the suite"),
        ),
        (
            cert(C::NotValidYet),
            "certificate for 127.0.0.1 is not valid yet: check both clocks, or pass --insecure",
            Some("certificate for 127.0.0.1 is not valid yet: check both clocks, or set the scenario's insecure = true in the suite"),
        ),
        (
            cert(C::Other(rustls::OtherError(std::sync::Arc::new(
                webpki::Error::CaUsedAsEndEntity,
            )))),
            "certificate for 127.0.0.1 is a CA certificate (CA:TRUE, as `openssl req -x509` makes by default) and not the one in --cacert: pass that very certificate with --cacert, or make the server's with -addext basicConstraints=critical,CA:FALSE",
            Some("certificate for 127.0.0.1 is a CA certificate (CA:TRUE, as `openssl req -x509` makes by default) and not the one in the scenario's cacert: pass that very certificate with the scenario's cacert, or make the server's with -addext basicConstraints=critical,CA:FALSE"),
        ),
        (
            cert(C::BadSignature),
            "certificate for 127.0.0.1 has a signature that does not verify: pass --cacert FILE or --insecure (FILE with its real issuer)",
            Some("certificate for 127.0.0.1 has a signature that does not verify: set the scenario's cacert = \"FILE\" or insecure = true in the suite (FILE with its real issuer)"),
        ),
        (
            cert(C::InvalidPurpose),
            "certificate for 127.0.0.1 is not for a TLS server (extendedKeyUsage lacks serverAuth): make it with -addext extendedKeyUsage=serverAuth, or pass --insecure",
            Some("certificate for 127.0.0.1 is not for a TLS server (extendedKeyUsage lacks serverAuth): make it with -addext extendedKeyUsage=serverAuth, or set the scenario's insecure = true in the suite"),
        ),
        (
            cert(C::UnknownRevocationStatus),
            "certificate for 127.0.0.1 was rejected (an unsupported algorithm or extension): pass --insecure to skip verification",
            Some("certificate for 127.0.0.1 was rejected (an unsupported algorithm or extension): set the scenario's insecure = true in the suite to skip verification"),
        ),
        (
            alert(AlertDescription::CertificateRequired),
            "127.0.0.1 asked for a client certificate (alert certificate_required): pass --cert FILE --key FILE",
            Some("127.0.0.1 asked for a client certificate (alert certificate_required): set the scenario's cert = \"FILE\" and key = \"FILE\" in the suite"),
        ),
        (
            alert(AlertDescription::BadCertificate),
            "127.0.0.1 refused the client certificate (alert bad_certificate): check --cert against the CA the server trusts, and its dates",
            Some("127.0.0.1 refused the client certificate (alert bad_certificate): check the scenario's cert and key against the CA the server trusts, and its dates"),
        ),
        (
            alert(AlertDescription::HandshakeFailure),
            "127.0.0.1 refused the TLS handshake (alert handshake_failure): it may require a client certificate (pass --cert FILE --key FILE) or a cipher suite foxbench lacks",
            Some("127.0.0.1 refused the TLS handshake (alert handshake_failure): it may require a client certificate (set the scenario's cert = \"FILE\" and key = \"FILE\" in the suite) or a cipher suite foxbench lacks"),
        ),
        (
            alert(AlertDescription::NoApplicationProtocol),
            "127.0.0.1 offers no HTTP/1.1 over TLS (ALPN): it speaks only h2: pass --http2",
            Some("127.0.0.1 offers no HTTP/1.1 over TLS (ALPN): it speaks only h2: set the scenario's http2 = true in the suite"),
        ),
        (
            TlsError::CaFile {
                path: PathBuf::from("/x"),
                reason: "gone".into(),
            }
            .text(),
            "cannot read CA certificates from /x: gone: give a PEM file with --cacert",
            Some("cannot read CA certificates from /x: gone: give a PEM file with the scenario's cacert"),
        ),
        (
            TlsError::NoCertificates {
                path: PathBuf::from("/x"),
            }
            .text(),
            "/x holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the CA's certificate with --cacert",
            Some("/x holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the CA's certificate with the scenario's cacert"),
        ),
        (
            TlsError::NoSystemRoots {
                reason: "none".into(),
            }
            .text(),
            "no trusted root certificates found on this system (none): install ca-certificates, or pass --cacert FILE or --insecure",
            Some("no trusted root certificates found on this system (none): install ca-certificates, or set the scenario's cacert = \"FILE\" or insecure = true in the suite"),
        ),
        (
            SetupError::ConnectTimeout {
                addr: addr(),
                timeout: Duration::from_secs(5),
            }
            .text(),
            "cannot connect to 127.0.0.1:8443: no answer within 5s (--connect-timeout)",
            Some("cannot connect to 127.0.0.1:8443: no answer within 5s (the plan's timeout)"),
        ),
        (
            load::handshake_timed_out(Duration::from_secs(5)),
            "no TLS handshake within 5s (--timeout): is it a TLS server?",
            Some("no TLS handshake within 5s (the plan's timeout): is it a TLS server?"),
        ),
        (
            SetupError::Tls {
                addr: addr(),
                message: cert(C::Expired),
            }
            .text(),
            "TLS to 127.0.0.1:8443: certificate for 127.0.0.1 has expired: renew it, or pass --insecure",
            Some("TLS to 127.0.0.1:8443: certificate for 127.0.0.1 has expired: renew it, or set the scenario's insecure = true in the suite"),
        ),
        (
            SetupError::NoHttp2 {
                addr: addr(),
                reason: Text::plain("it answered HTTP/1: ").drop(Setting::Http2),
            }
            .text(),
            "127.0.0.1:8443 does not speak HTTP/2: it answered HTTP/1: drop --http2",
            Some("127.0.0.1:8443 does not speak HTTP/2: it answered HTTP/1: drop the scenario's http2 = true from the suite"),
        ),
        (
            SetupError::NoHttp3 {
                addr: addr(),
                reason: Text::plain("it did not select h3 by ALPN: enable HTTP/3 on the server, or ")
                    .drop(Setting::Http3),
            }
            .text(),
            "127.0.0.1:8443 does not speak HTTP/3: it did not select h3 by ALPN: enable HTTP/3 on the server, or drop --http3",
            Some("127.0.0.1:8443 does not speak HTTP/3: it did not select h3 by ALPN: enable HTTP/3 on the server, or drop http3 = true, or the HTTP/3 level from levels"),
        ),
        (
            PlanError::PipelineWithHttp2.text(),
            "--pipeline has no meaning under HTTP/2: streams multiplex requests instead (--streams)",
            Some("the scenario's pipeline has no meaning under HTTP/2: streams multiplex requests instead (the level's streams)"),
        ),
        (
            PlanError::Connections.text(),
            "--connections must be at least 1",
            Some("the level's connections must be at least 1"),
        ),
        (
            PlanError::Threads.text(),
            "--threads must be at least 1",
            None,
        ),
        (
            PlanError::Pipeline.text(),
            "--pipeline must be between 1 and 1024",
            Some("the scenario's pipeline must be between 1 and 1024"),
        ),
        (
            PlanError::Streams.text(),
            "--streams must be between 1 and 1024",
            Some("the level's streams must be between 1 and 1024"),
        ),
        (
            PlanError::Window.text(),
            "--stream-window must be between 1 and 2147483647 bytes",
            None,
        ),
        (
            PlanError::ConnectionWindow.text(),
            "--connection-window must be between 65535 and 2147483647 bytes",
            None,
        ),
        (
            PlanError::Coalesce.text(),
            "--coalesce must be at most 10 ms: a longer wait than that delays responses, it batches no more",
            Some("the scenario's coalesce must be at most 10 ms: a longer wait than that delays responses, it batches no more"),
        ),
        (
            PlanError::CoalesceWithRate.text(),
            "--coalesce has no meaning in the open model, which sends on its schedule: drop it or drop --rate",
            Some("the scenario's coalesce has no meaning in the open model, which sends on its schedule: drop it or drop the level's rate = N from the suite"),
        ),
        (
            PlanError::CoalesceWithSpin.text(),
            "--coalesce has no meaning when workers spin, which never sleep: drop it, or use --idle auto",
            // A suite says it in its own words, naming its keys (suite/scenarios.rs).
            None,
        ),
        (
            PlanError::Rate(-1.0).text(),
            "--rate must be a positive number of requests per second, not -1",
            Some("the level's rate must be a positive number of requests per second, not -1"),
        ),
        (
            PlanError::Requests.text(),
            "--requests must be at least 1",
            Some("the level's requests must be at least 1"),
        ),
        (
            PlanError::Duration.text(),
            "--duration must be longer than 0",
            Some("the plan's duration must be longer than 0"),
        ),
        (
            PlanError::Timeout.text(),
            "--timeout must be longer than 0",
            Some("the plan's timeout must be longer than 0"),
        ),
        (
            PlanError::Interval.text(),
            "--interval must be longer than 0",
            None,
        ),
        (
            PlanError::NoRequests.text(),
            "--urls is empty: give a URL, or a --urls file with at least one line",
            None,
        ),
        (
            load::UrlsError::Read {
                path: "u.txt".into(),
                reason: "gone".into(),
            }
            .text(),
            "cannot read --urls u.txt: gone",
            None,
        ),
        // `foxbench load --json`'s `tls.verify`, and its text report's.
        (
            Verify::Insecure.text(),
            "none (--insecure)",
            Some("none (the scenario's insecure)"),
        ),
        // `foxbench doctor`'s notes, in its text and its JSON; the shootout keeps no note.
        (
            finding("net.ipv4.ip_local_port_range").note,
            "28232 ports (32768-60999) to one address and port; past it connect() fails with \"Cannot assign requested address\" (EADDRNOTAVAIL). TIME_WAIT is assumed on the server's side: foxbench without keep-alive lets the server close (give --closes-per-s for a client that closes first)",
            None,
        ),
        // `foxbench compare`'s note on a row and its warning above the tables.
        (
            report::compare::floor_note(2, 2, 0.333, 0.05),
            "n=2+2: the smallest possible p is 0.333 > α 0.05: add repeats or raise --alpha",
            None,
        ),
        (
            report::compare::hardware_warning("cpu: A / B"),
            "warning: different hardware (cpu: A / B): the changes may be the machines', not the code's; --same-machine makes this an error",
            None,
        ),
        (
            finding("ulimit -u").note,
            "for a server with a thread per connection: give --threads",
            None,
        ),
    ];
    rows.into_iter().chain(merge_rows).collect()
}

/// `foxbench merge` prints each error with its settings worded as its flags, as it did
/// when the library wrote them; the library's own words name no flag.
#[test]
fn every_merge_message_as_foxbench_merge_prints_it() {
    for (e, cli) in merge_table() {
        assert_eq!(crate::merge_cmd::flagged(e.clone()).to_string(), cli);
        assert!(!e.to_string().contains("--"), "{e}");
    }
}

/// `foxbench doctor` words each finding's note as its flags, in its JSON as in its text.
#[test]
fn a_finding_is_worded_as_doctor_prints_it() {
    let f = finding("net.ipv4.ip_local_port_range");
    let worded = f.worded(&Flags);
    assert!(worded
        .note
        .ends_with("(give --closes-per-s for a client that closes first)"));
    assert_eq!(
        (worded.check, &worded.observed, worded.severity),
        (f.check, &f.observed, f.severity)
    );
    let plan = f.note.to_string();
    assert!(
        plan.ends_with("(give the closes per second setting for a client that closes first)"),
        "{plan}"
    );
}

#[test]
fn every_setting_message_as_the_cli_and_a_suite_word_it() {
    for (text, cli, suite) in table() {
        assert_eq!(text.worded(&Flags), cli);
        if let Some(suite) = suite {
            assert_eq!(text.worded(&SuiteKeys), suite);
        }
    }
}

/// The table shows every setting the library's advice names, each worded both ways: every
/// [`Setting::ALL`] but those no advice names, so a new setting fails here until its advice
/// has a row or it is listed below with why.
#[test]
fn the_table_covers_every_setting_the_advice_names() {
    let named: std::collections::BTreeSet<_> = table()
        .iter()
        .flat_map(|(t, _, _)| t.settings())
        .map(|s| format!("{s:?}"))
        .collect();
    // (setting, why no advice names it): none today, as each setting's PlanError names it,
    // and a merge's or a limit check's message the others.
    let unnamed: &[(Setting, &str)] = &[];
    for s in Setting::ALL {
        let why = unnamed.iter().find(|(u, _)| *u == s).map(|(_, why)| *why);
        match why {
            None => assert!(named.contains(&format!("{s:?}")), "{s:?} is in no row"),
            Some(why) => assert!(
                !named.contains(&format!("{s:?}")),
                "{s:?} is listed as named by no advice ({why}), but a row names it"
            ),
        }
    }
}

/// Every flag a setting is worded as is a flag (or a visible alias) of the command that
/// meets its message: `foxbench load`, but for a merge's and a limit check's own settings.
#[test]
fn every_setting_is_a_flag_of_its_command() {
    let cli = crate::Cli::command();
    for s in Setting::ALL {
        let name = match s {
            Setting::PartialOk => "merge",
            Setting::ClosesPerS | Setting::ServerThreads => "doctor",
            Setting::Alpha | Setting::SameMachine => "compare",
            _ => "load",
        };
        let command = cli.find_subcommand(name).expect("the command");
        for (f, _) in flag(s) {
            let long = f.strip_prefix("--").unwrap();
            assert!(
                command.get_arguments().any(|a| a.get_long() == Some(long)
                    || a.get_visible_aliases().is_some_and(|v| v.contains(&long))),
                "{s:?} is worded as {f}, which `foxbench {name}` does not take"
            );
        }
    }
}
