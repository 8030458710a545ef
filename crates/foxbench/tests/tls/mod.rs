//! `foxbench load https://`: certificate flags, the TLS section of the report and JSON, and
//! verification failures as one-line setup errors that send no load.

use super::support::tls::{nginx_binary, tls_redirect_server, Certs, Nginx};
use super::{result, run, usage_error};

#[test]
fn self_signed_without_cacert_is_one_line_and_no_load() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let s = tls_redirect_server(certs.server_config());
    let url = format!("https://127.0.0.1:{}/", s.addr.port());
    usage_error(
        &["load", "-n", "10", &url],
        "certificate for 127.0.0.1 is self-signed or from an unknown authority: pass --cacert FILE or --insecure",
    );
    assert_eq!(s.requests(), 0, "a verification failure sends no load");
    usage_error(
        &["load", "-n", "10", "--cacert", "/nonexistent/ca.pem", &url],
        "cannot read CA certificates from /nonexistent/ca.pem",
    );
    usage_error(
        &["load", "--cacert", "x.pem", "--insecure", &url],
        "cannot be used with",
    );
    usage_error(&["load", "--tls-resume", "maybe", &url], "--tls-resume");
}

/// Bad --cert and --key files: one line naming the file and the problem, exit 2, no load.
#[test]
fn issue_23_bad_client_certificate_files_are_one_line() {
    let certs = Certs::for_names(&["127.0.0.1"]);
    let other = Certs::for_names(&["127.0.0.1"]);
    let s = tls_redirect_server(certs.server_config());
    let url = format!("https://127.0.0.1:{}/", s.addr.port());
    let ca = certs.ca.to_str().unwrap();
    let garbage = certs.dir.0.join("garbage.pem");
    std::fs::write(&garbage, "not a pem file\n").unwrap();
    let garbage = garbage.to_str().unwrap();
    let (cert, key) = (certs.cert.to_str().unwrap(), certs.key.to_str().unwrap());
    let other_key = other.key.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--cert", "/nonexistent/c.pem", "--key", key],
            "cannot read a client certificate from /nonexistent/c.pem",
        ),
        (
            &["--cert", garbage, "--key", key],
            "garbage.pem: no PEM certificate in it",
        ),
        (
            &["--cert", cert, "--key", garbage],
            "cannot read a private key from",
        ),
        (
            &["--cert", cert, "--key", other_key],
            "does not fit the certificate",
        ),
        (&["--cert", cert], "--key"),
    ];
    for (flags, needle) in cases {
        let mut args = vec!["load", "-n", "5", "--cacert", ca];
        args.extend_from_slice(flags);
        args.push(&url);
        usage_error(&args, needle);
    }
    assert_eq!(s.requests(), 0, "a bad client certificate sends no load");
}

#[test]
fn cacert_run_reports_tls_in_text_and_json() {
    let certs = Certs::for_names(&["localhost"]);
    let s = tls_redirect_server(certs.server_config());
    let url = format!("https://localhost:{}/", s.addr.port());
    let ca = certs.ca.to_str().unwrap();
    let out = run(&[
        "load", "-q", "-n", "300", "-c", "3", "-t", "1", "--cacert", ca, "--json", "-", &url,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&out.stdout);
    assert_eq!(v["requests"]["ok"], 300);
    assert_eq!(v["errors"]["tls"], 0);
    let tls = &v["tls"];
    assert_eq!(tls["version"], "TLSv1.3");
    assert_eq!(tls["alpn"], "http/1.1");
    assert_eq!(tls["insecure"], false);
    assert_eq!(tls["resumption"], true);
    assert_eq!(
        tls["handshakes_full"].as_u64().unwrap() + tls["handshakes_resumed"].as_u64().unwrap(),
        v["connections"]["opened"].as_u64().unwrap()
    );
    assert!(tls["handshake_full"]["hdr_base64"].is_string());
    assert_eq!(s.requests(), 300);

    // A new connection per request, no resumption: every request paid a full handshake.
    let out = run(&[
        "load",
        "-n",
        "40",
        "-c",
        "2",
        "-t",
        "1",
        "--no-keepalive",
        "--tls-resume",
        "off",
        "--cacert",
        ca,
        &url,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("TLS:           TLSv1.3, TLS13_"), "{text}");
    assert!(
        text.contains("Handshakes:    40 full, 0 resumed; 40 of 40 requests paid a full handshake"),
        "{text}"
    );
    assert!(text.contains("resumption off"), "{text}");
    assert!(text.contains(", tls 0"), "{text}");
}

#[test]
fn insecure_is_shown_in_the_report() {
    let certs = Certs::for_names(&["other.example"]);
    let s = tls_redirect_server(certs.server_config());
    let url = format!("https://127.0.0.1:{}/", s.addr.port());
    let out = run(&["load", "-n", "20", "-c", "2", "--insecure", &url]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("certificate verified by none (--insecure)"),
        "{text}"
    );
    assert!(text.contains("warning: --insecure"), "{text}");
    let out = run(&[
        "load",
        "-q",
        "-n",
        "20",
        "-c",
        "2",
        "--insecure",
        "--json",
        "-",
        &url,
    ]);
    assert_eq!(result(&out.stdout)["tls"]["insecure"], true);
}

/// nginx with `ssl_verify_client on` and no --cert: nginx completes the handshake and
/// answers 400 to every request. The run exits 1, its first line says no request succeeded
/// and that the server asked for a client certificate, and so do the TLS section and the
/// JSON (the load crate's `issue_23_mutual_tls_with_nginx` checks the same run's counts).
#[test]
fn issue_23_mutual_tls_without_a_certificate_says_it_was_asked() {
    let Some(bin) = nginx_binary() else {
        return;
    };
    let server = Certs::for_names(&["127.0.0.1"]);
    let client_ca = Certs::for_names(&["client"]);
    let extra = format!(
        "ssl_client_certificate {}; ssl_verify_client on;",
        client_ca.ca.display()
    );
    let nginx = Nginx::start_with(&bin, &server.cert, &server.key, "TLSv1.2 TLSv1.3", &extra);
    let url = format!("https://127.0.0.1:{}/", nginx.addr.port());
    let ca = server.ca.to_str().unwrap();
    let out = run(&["load", "-n", "20", "-c", "2", "--cacert", ca, &url]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert_eq!(
        text.lines().next(),
        Some("No request succeeded: status 400 20 of 20; the server asked for a client certificate and none was given: pass --cert FILE --key FILE"),
        "{text}"
    );
    assert!(
        text.contains("               the server asked for a client certificate and none was given: pass --cert FILE --key FILE\n"),
        "{text}"
    );
    let out = run(&[
        "load", "-q", "-n", "20", "--cacert", ca, "--json", "-", &url,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v = result(&out.stdout);
    assert_eq!(v["tls"]["client_certificate"], "asked_none_given", "{v}");
}

/// The preflight's sentence (`load::explain_tls`) and the report's reason words agree on
/// every alert a server sends: both say the client certificate was asked for, or refused,
/// or neither. The report left out access_denied (49), which the preflight words as a
/// refused client certificate.
#[test]
fn received_alert_words_agree_with_the_preflight() {
    use stats::reason::{Cause, Kind, Reason, ALERTS};
    for (n, name) in ALERTS {
        let preflight = load::explain_tls(
            &rustls::Error::AlertReceived(rustls::AlertDescription::from(n)),
            "127.0.0.1",
        )
        .to_string();
        let report = report::errors_by_reason::ReasonRow::new(
            Reason::new(Kind::Tls, Cause::AlertReceived(n)),
            1,
        )
        .line(1, &load::PlanWording);
        for words in [
            "refused the client certificate",
            "asked for a client certificate",
        ] {
            assert_eq!(
                preflight.contains(words),
                report.contains(words),
                "alert {name}: {preflight:?} vs {report:?}"
            );
        }
    }
}
