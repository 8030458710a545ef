//! Every library message that names a setting, as `foxbench load` prints it (its flags,
//! [`crate::cli::Flags`]) and as a suite error shows it (its keys,
//! [`shootout::wording::SuiteKeys`]): the two edges word the same typed text.

use std::path::PathBuf;
use std::time::Duration;

use clap::CommandFactory as _;
use load::{explain_tls, PlanError, Setting, SetupError, Text, TlsError};
use rustls::{AlertDescription, CertificateError as C, Error};
use shootout::wording::SuiteKeys;

use crate::cli::{flag, Flags};

const HOST: &str = "127.0.0.1";

fn addr() -> std::net::SocketAddr {
    "127.0.0.1:8443".parse().unwrap()
}

/// (the message, as the CLI prints it, as a suite error shows it; `None` for a setting
/// no suite gives, whose message the shootout never meets).
fn table() -> Vec<(Text, &'static str, Option<&'static str>)> {
    let cert = |c: C| explain_tls(&Error::InvalidCertificate(c), HOST);
    let alert = |a: AlertDescription| explain_tls(&Error::AlertReceived(a), HOST);
    vec![
        (
            cert(C::UnknownIssuer),
            "certificate for 127.0.0.1 is self-signed or from an unknown authority: pass --cacert FILE or --insecure (FILE may be the CA's certificate or the server's own)",
            Some("certificate for 127.0.0.1 is self-signed or from an unknown authority: set the scenario's cacert = \"FILE\" or insecure = true in the suite (FILE may be the CA's certificate or the server's own)"),
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
    ]
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
    // (setting, why no advice names it): none today, as each setting's PlanError names it.
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

/// Every flag a setting is worded as is a flag `foxbench load` takes.
#[test]
fn every_setting_is_a_flag_of_load() {
    let cli = crate::Cli::command();
    let load = cli.find_subcommand("load").expect("the load command");
    for s in Setting::ALL {
        for (f, _) in flag(s) {
            let long = f.strip_prefix("--").unwrap();
            assert!(
                load.get_arguments().any(|a| a.get_long() == Some(long)),
                "{s:?} is worded as {f}, which `foxbench load` does not take"
            );
        }
    }
}
