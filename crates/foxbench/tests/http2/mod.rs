//! `foxbench load --http2`: the JSON's protocol and http2 section against nginx (h2c and h2
//! over TLS), valid against the schema, and the flags HTTP/2 refuses as one line each.

use super::support::tls::{nginx_binary, Certs, Nginx};
use super::{redirect_server, result, run, usage_error};

#[test]
fn h2c_and_h2_results_are_valid_and_say_what_was_spoken() {
    let Some(bin) = nginx_binary() else { return };
    let nginx = Nginx::h2(&bin, None, 5);
    let url = format!("http://{}/", nginx.addr);
    let out = run(&[
        "load",
        "--http2",
        "--streams",
        "100",
        "-n",
        "500",
        "-c",
        "3",
        "-t",
        "1",
        "--json",
        "-",
        &url,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&out.stdout);
    assert_eq!(v["protocol"], "h2c");
    assert_eq!(v["requests"]["ok"], 500);
    let h = &v["http2"];
    assert_eq!(h["streams"], 100);
    assert_eq!(h["server_max_streams"], 5);
    assert_eq!(h["streams_used_max"], 5);
    assert!(h["alpn"].is_null());
    assert!(h["hpack_saving_sent_percent"].as_f64().is_some(), "{h}");
    assert!(
        h["hpack_saving_received_percent"].as_f64().unwrap() > 0.0,
        "{h}"
    );
    assert_eq!(nginx.log_lines(500).len(), 500);

    let certs = Certs::for_names(&["localhost"]);
    let tls = Nginx::h2(&bin, Some(&certs), 128);
    let url = format!("https://localhost:{}/", tls.addr.port());
    let ca = certs.ca.display().to_string();
    let out = run(&[
        "load",
        "--http2",
        "--streams",
        "10",
        "-n",
        "300",
        "-c",
        "2",
        "--cacert",
        &ca,
        "--json",
        "-",
        &url,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&out.stdout);
    assert_eq!(v["protocol"], "h2");
    assert_eq!(v["http2"]["alpn"], "h2");
    assert_eq!(v["tls"]["alpn"], "h2");
    assert_eq!(v["requests"]["ok"], 300);
}

#[test]
fn flags_without_meaning_under_http2_are_refused() {
    let url = "http://127.0.0.1:1/";
    usage_error(
        &["load", "--http2", "--pipeline", "2", url],
        "--pipeline has no meaning under HTTP/2",
    );
    usage_error(
        &["load", "--http2", "--streams", "2", "--no-keepalive", url],
        "--streams above 1 needs keep-alive",
    );
    usage_error(
        &["load", "--http2", "--streams", "0", url],
        "--streams must be between 1",
    );
    usage_error(
        &["load", "--http2", "--connection-window", "10", url],
        "--connection-window must be between 65535",
    );
}

#[test]
fn an_http1_server_under_h2c_is_one_line() {
    let s = redirect_server();
    usage_error(
        &["load", "--http2", "-n", "5", &s.url()],
        "answered the h2c preface with HTTP/1",
    );
}

/// `--find-max` and `--slo` over h2c: every window of the search speaks HTTP/2 (nginx logs
/// each of its requests as HTTP/2.0), fails none, and the verdict is the objective's.
#[test]
fn find_max_and_slo_run_over_http2() {
    let Some(bin) = nginx_binary() else { return };
    let nginx = Nginx::h2(&bin, None, 128);
    let url = format!("http://{}/", nginx.addr);
    let out = run(&[
        "load",
        "--http2",
        "--streams",
        "10",
        "-c",
        "4",
        "--find-max",
        "p99<1s",
        "--start-rate",
        "200",
        "--window",
        "400ms",
        "--max-time",
        "4s",
        "--json",
        "-",
        &url,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&out.stdout);
    assert_eq!(v["protocol"], "h2c");
    let windows = v["capacity"]["windows"].as_array().unwrap();
    assert!(windows.len() >= 2, "{:#}", v["capacity"]);
    let sent: u64 = windows.iter().map(|w| w["sent"].as_u64().unwrap()).sum();
    assert!(windows
        .iter()
        .all(|w| w["failed"] == 0 && w["passed"] == true));
    // The windows' requests, and any warm-up's, all reached nginx over HTTP/2.
    let lines = nginx.log_lines(sent as usize);
    assert!(lines.iter().all(|l| l.starts_with("HTTP/2.0 302 ")));

    let before = nginx.log_lines(0).len();
    let out = run(&[
        "load",
        "--http2",
        "--streams",
        "10",
        "-c",
        "2",
        "-n",
        "400",
        "--slo",
        "p99<1s,errors<1%",
        "--json",
        "-",
        &url,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = result(&out.stdout);
    assert_eq!(v["slo"]["passed"], true, "{:#}", v["slo"]);
    assert_eq!(v["requests"]["ok"], 400);
    assert_eq!(nginx.log_lines(before + 400).len(), before + 400);
}
