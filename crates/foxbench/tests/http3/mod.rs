//! `foxbench load --http3` against a real HTTP/3 server (caddy, quic-go inside): exact
//! counts and the accounting law, a duration run, certificates verified as over TCP, a UDP
//! port that does not answer, and the flags HTTP/3 refuses, each one line and exit 2.

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::support::tls::{openssl_self_signed, TempDir};
use super::{result, run, usage_error};

mod client;
mod go;
mod quic;

use go::{reason, GoH3};

/// A private caddy serving `respond "ok" 200` over TLS on TCP (h1, h2) and QUIC (h3) on one
/// loopback port, with the test's certificate; killed when dropped.
struct Caddy {
    child: Child,
    addr: SocketAddr,
    cert: PathBuf,
    _dir: TempDir,
}

impl Caddy {
    /// None after a loud skip when caddy or openssl is missing (a failure in CI).
    fn start() -> Option<Caddy> {
        let bin = testkit::require("caddy", &["/usr/bin/caddy"], "apt-get install caddy")?;
        let dir = TempDir::new("caddy");
        let (cert, key) = openssl_self_signed(&dir.0, "server", "ec", &[])?;
        // caddy takes no port 0 for QUIC: a free port is picked and may be taken before
        // caddy binds it (another test's server), so a start that finds it in use is tried
        // again on another, until the deadline.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let port = {
                let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                l.local_addr().unwrap().port()
            };
            // `bind 127.0.0.1`: with no SNI (an IP address), caddy picks the certificate by
            // the connection's local address, which a QUIC listener on [::] reports as `::`,
            // and no certificate matches (quic-go then ends the handshake with
            // internal_error).
            let conf = format!(
                "{{\n\tauto_https off\n\tadmin off\n\tservers {{\n\t\tprotocols h1 h2 h3\n\t}}\n}}\n\
                 https://127.0.0.1:{port} {{\n\tbind 127.0.0.1\n\ttls {} {}\n\trespond \"ok\" 200\n}}\n",
                cert.display(),
                key.display()
            );
            let file = dir.0.join("Caddyfile");
            std::fs::write(&file, conf).unwrap();
            let log = dir.0.join("caddy.log");
            let mut child = Command::new(&bin)
                .args(["run", "--adapter", "caddyfile", "--config"])
                .arg(&file)
                .env("HOME", &dir.0)
                .env("XDG_DATA_HOME", dir.0.join("data"))
                .env("XDG_CONFIG_HOME", dir.0.join("config"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .expect("start caddy");
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            loop {
                if TcpStream::connect(addr).is_ok() && udp_bound(port) {
                    return Some(Caddy {
                        child,
                        addr,
                        cert,
                        _dir: dir,
                    });
                }
                if let Ok(Some(status)) = child.try_wait() {
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    assert!(
                        text.contains("address already in use") && Instant::now() < deadline,
                        "caddy exited with {status}: {text}"
                    );
                    break; // taken meanwhile: another port
                }
                if Instant::now() >= deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("caddy did not listen on {addr}");
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}/", self.addr.port())
    }

    fn ca(&self) -> &str {
        self.cert.to_str().unwrap()
    }
}

impl Drop for Caddy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a UDP socket is bound to `port` on this machine (its QUIC listener).
fn udp_bound(port: u16) -> bool {
    let needle = format!(":{port:04X} ");
    ["/proc/net/udp", "/proc/net/udp6"].iter().any(|f| {
        std::fs::read_to_string(Path::new(f))
            .unwrap_or_default()
            .lines()
            .any(|l| {
                l.split_whitespace()
                    .nth(1)
                    .is_some_and(|a| format!("{a} ").ends_with(&needle))
            })
    })
}

#[test]
fn exact_count_over_h3_against_caddy_keeps_the_accounting_law() {
    let Some(caddy) = Caddy::start() else { return };
    let url = caddy.url();
    let out = run(&[
        "load",
        "--http3",
        "-n",
        "1000",
        "-c",
        "4",
        "--streams",
        "8",
        "-t",
        "2",
        "--cacert",
        caddy.ca(),
        "--json",
        "-",
        &url,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `result` checks the schema and sent = ok + failed_status + errors + in_flight.
    let v = result(&out.stdout);
    assert_eq!(v["protocol"], "h3");
    assert_eq!(v["requests"]["sent"], 1000);
    assert_eq!(v["requests"]["ok"], 1000);
    assert_eq!(v["requests"]["errors"], 0);
    assert_eq!(v["status"]["200"], 1000);
    // Its own field: HTTP/3's streams were written as HTTP/1.1's pipeline depth.
    assert_eq!(v["config"]["streams"], 8, "HTTP/3's streams per connection");
    assert_eq!(v["config"]["pipeline"], 1, "no pipelining under HTTP/3");
    assert_eq!(v["connections"]["opened"], 4);
    // The kernel's UDP counters were read around the run, and saw its datagrams both ways
    // (the namespace's: at least a handshake's per connection).
    let udp = &v["udp"]["deltas"];
    assert!(udp["OutDatagrams"].as_u64().unwrap() >= 4, "{udp}");
    assert!(udp["InDatagrams"].as_u64().unwrap() >= 4, "{udp}");
}

#[test]
fn a_duration_run_over_h3_answers_and_conserves() {
    let Some(caddy) = Caddy::start() else { return };
    let url = caddy.url();
    let out = run(&[
        "load",
        "--http3",
        "-d",
        "2s",
        "-c",
        "10",
        "--streams",
        "10",
        "--cacert",
        caddy.ca(),
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
    assert!(
        v["requests"]["ok"].as_u64().unwrap() > 0,
        "{}",
        v["requests"]
    );
    assert_eq!(v["errors"]["protocol"], 0, "{}", v["errors"]);
}

#[test]
fn h3_verifies_certificates_as_h2_over_tcp_does() {
    let Some(caddy) = Caddy::start() else { return };
    let url = caddy.url();
    let ok = run(&["load", "--http3", "-n", "10", "--cacert", caddy.ca(), &url]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // Without --cacert: the same one line as HTTP/2 over TCP gives against the same server.
    let h3 = run(&["load", "--http3", "-n", "10", &url]);
    let h2 = run(&["load", "--http2", "-n", "10", &url]);
    let (h3_err, h2_err) = (
        String::from_utf8_lossy(&h3.stderr),
        String::from_utf8_lossy(&h2.stderr),
    );
    assert_eq!(h3.status.code(), Some(2), "{h3_err}");
    assert_eq!(h3_err.lines().count(), 1, "{h3_err}");
    assert!(h3_err.contains("certificate for 127.0.0.1"), "{h3_err}");
    assert_eq!(h3_err, h2_err);
}

#[test]
fn a_udp_port_where_nothing_answers_is_one_line_in_bounded_time() {
    // Bound and silent: no ICMP either, so the Initial goes unanswered.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let url = format!("https://127.0.0.1:{}/", silent.local_addr().unwrap().port());
    let start = Instant::now();
    usage_error(
        &[
            "load",
            "--http3",
            "-n",
            "10",
            "--connect-timeout",
            "1s",
            &url,
        ],
        "does not speak HTTP/3: nothing answered QUIC's Initial",
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    // Closed: the kernel's port unreachable ends it at once. Another test may bind the
    // freed port meanwhile (then it is silent, or answers): either wording, one line.
    let port = silent.local_addr().unwrap().port();
    drop(silent);
    let url = format!("https://127.0.0.1:{port}/");
    let args = [
        "load",
        "--http3",
        "-n",
        "10",
        "--connect-timeout",
        "1s",
        &url,
    ];
    let out = run(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("nothing listens on UDP port")
            || err.contains("does not speak HTTP/3: nothing answered QUIC's Initial"),
        "{err}"
    );
}

#[test]
fn flags_http3_refuses_are_one_line() {
    usage_error(
        &["load", "--http3", "-n", "1", "http://127.0.0.1:1/"],
        "--http3 needs an https:// URL",
    );
    usage_error(
        &[
            "load",
            "--http3",
            "--pipeline",
            "2",
            "-n",
            "1",
            "https://127.0.0.1:1/",
        ],
        "--pipeline has no meaning under HTTP/3",
    );
    usage_error(
        &[
            "load",
            "--http3",
            "--http2",
            "-n",
            "1",
            "https://127.0.0.1:1/",
        ],
        "cannot be used with",
    );
    usage_error(
        &[
            "load",
            "--http3",
            "--no-keepalive",
            "--streams",
            "2",
            "-n",
            "1",
            "https://127.0.0.1:1/",
        ],
        "--streams above 1 needs keep-alive",
    );
}

/// `--streams` alone was refused only when a run was planned, so `k8s-job`, which renders a
/// Job from the load flags without planning a run, took it and its agents then failed: clap
/// refuses it for both, in one line.
#[test]
fn streams_without_http2_or_http3_is_refused_by_load_and_k8s_job() {
    let needle = "the following required arguments were not provided: <--http2|--http3>";
    usage_error(
        &["load", "--streams", "4", "-n", "1", "https://127.0.0.1:1/"],
        needle,
    );
    usage_error(
        &[
            "k8s-job",
            "--agents",
            "2",
            "--image",
            "foxbench:1",
            "--",
            "--streams",
            "4",
            "http://127.0.0.1:8080/",
        ],
        needle,
    );
}

/// QUIC's handshake is TLS 1.3's: the report said "no handshake completed" beside "4 full"
/// handshakes, since quinn-proto hands out no rustls session to read it from.
#[test]
fn an_h3_run_reports_its_tls_handshake_rather_than_none() {
    let Some(caddy) = Caddy::start() else { return };
    let url = caddy.url();
    let out = run(&[
        "load",
        "--http3",
        "-n",
        "20",
        "-c",
        "2",
        "--cacert",
        caddy.ca(),
        &url,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tls = text
        .lines()
        .find(|l| l.starts_with("TLS:"))
        .unwrap_or_else(|| panic!("no TLS line: {text}"));
    assert_eq!(tls, "TLS:           TLSv1.3, ALPN h3", "{text}");
    assert!(
        text.contains("Protocol:               HTTP/3 (h3 over QUIC)"),
        "{text}"
    );
}

/// quic-go allows 100 bidirectional streams at once: the requests past that credit wait in
/// the connection's queue for the server's MAX_STREAMS, and every one is answered.
#[test]
fn requests_past_the_servers_stream_credit_wait_for_it() {
    let Some(caddy) = Caddy::start() else { return };
    let url = caddy.url();
    let out = run(&[
        "load",
        "--http3",
        "-n",
        "1500",
        "-c",
        "1",
        "--streams",
        "250",
        "--cacert",
        caddy.ca(),
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
    assert_eq!(v["requests"]["ok"], 1500, "{}", v["requests"]);
    assert_eq!(v["connections"]["opened"], 1);
}

/// quic-go grants 100 streams; 150 asked: the rest wait in the connection's queue, where
/// some time out. Tags were taken for stream indexes, so a request that expired queued
/// shifted every later one onto its neighbour's stream: answers went to the wrong
/// requests. One fast request (201 at once) to two slow ones (200 after 5 s, past the
/// 400 ms timeout): every answer must be a fast request's, and no slow one completes.
#[test]
fn a_request_that_expires_queued_does_not_shift_later_ones_onto_other_streams() {
    let Some(go) = GoH3::start() else { return };
    let v = go.load(
        &["/status/201", "/slow/5000", "/slow/5000"],
        &[
            "-c",
            "1",
            "-t",
            "1",
            "--streams",
            "150",
            "--timeout",
            "400ms",
            "-d",
            "1s",
        ],
    );
    let rows = v["request_table"].as_array().unwrap();
    let row = |i: usize, k: &str| rows[i][k].as_u64().unwrap();
    assert_eq!(
        (row(1, "completed"), row(2, "completed")),
        (0, 0),
        "slow rows answered: {rows:?}"
    );
    assert!(
        row(0, "completed") + 150 >= row(0, "sent"),
        "fast requests not answered: {rows:?}"
    );
    assert_eq!(v["status"]["201"], v["requests"]["ok"], "{}", v["status"]);
    let timeouts = v["errors"]["timeout"].as_u64().unwrap();
    assert_eq!(
        v["requests"]["errors"], timeouts,
        "{}",
        v["errors_by_reason"]
    );
    // quic-go's credit is 100: more timeouts than that prove some expired queued.
    assert!(
        timeouts > 100,
        "some requests expired while queued: {}",
        v["requests"]
    );
    assert_eq!(v["connections"]["opened"], 1);
}

/// A stream the server resets (quic-go aborts a handler with H3_INTERNAL_ERROR) fails
/// that request alone, as a reset named by its HTTP/3 code; the connection goes on and
/// answers the others.
#[test]
fn a_stream_reset_by_the_server_is_a_reset_named_by_its_code() {
    let Some(go) = GoH3::start() else { return };
    let v = go.load(
        &["/reset", "/status/200"],
        &["-n", "20", "-c", "1", "-t", "1", "--streams", "4"],
    );
    assert_eq!(v["requests"]["ok"], 10, "{}", v["requests"]);
    assert_eq!(v["errors"]["reset"], 10, "{}", v["errors"]);
    assert_eq!(
        reason(&v, "h3_received:H3_INTERNAL_ERROR"),
        10,
        "{}",
        v["errors_by_reason"]
    );
    assert_eq!(v["connections"]["opened"], 1);
}

/// `--timeout` fails each request that waits too long, alone: the connection stays and
/// answers the others.
#[test]
fn a_request_past_its_timeout_is_a_timeout_and_the_connection_stays() {
    let Some(go) = GoH3::start() else { return };
    let v = go.load(
        &["/slow/5000", "/status/200"],
        &[
            "-n",
            "6",
            "-c",
            "1",
            "-t",
            "1",
            "--streams",
            "3",
            "--timeout",
            "300ms",
        ],
    );
    assert_eq!(v["requests"]["ok"], 3, "{}", v["requests"]);
    assert_eq!(v["errors"]["timeout"], 3, "{}", v["errors"]);
    assert_eq!(
        reason(&v, "timeout_before_response"),
        3,
        "{}",
        v["errors_by_reason"]
    );
    assert_eq!(v["connections"]["opened"], 1);
}

/// A server's graceful GOAWAY is no error: what it took is answered, the connection is
/// replaced once drained, and every request is answered on one connection or the next.
#[test]
fn a_goaway_is_no_error_and_the_connection_is_replaced_when_drained() {
    let Some(go) = GoH3::start() else { return };
    let v = go.load(
        &["/goaway/20", "/slow/100"],
        &["-n", "16", "-c", "1", "--streams", "4"],
    );
    assert_eq!(
        v["requests"]["ok"], 16,
        "{} {}",
        v["requests"], v["errors_by_reason"]
    );
    assert_eq!(v["requests"]["errors"], 0);
    // Whether a stream raced the GOAWAY (and went again) is the server's timing: counted.
    assert!(v["http3"]["retries"].is_u64(), "{}", v["http3"]);
    assert!(
        v["connections"]["opened"].as_u64().unwrap() >= 2,
        "{}",
        v["connections"]
    );
}

/// A stream reset with H3_REQUEST_REJECTED was not processed: the request goes again,
/// counted as a retry, and is answered.
#[test]
fn a_rejected_request_goes_again_and_is_counted_as_a_retry() {
    let Some(go) = GoH3::start() else { return };
    let v = go.load(&["/reject"], &["-n", "8", "-c", "1", "--streams", "2"]);
    assert_eq!(
        v["requests"]["ok"], 8,
        "{} {}",
        v["requests"], v["errors_by_reason"]
    );
    assert!(
        v["http3"]["retries"].as_u64().unwrap() >= 1,
        "{}",
        v["http3"]
    );
}

/// `--no-keepalive` over HTTP/3: a connection per request, closed once it is answered
/// (the connection stayed open with its request done until QUIC's idle timeout).
#[test]
fn no_keepalive_closes_each_h3_connection_once_its_request_is_answered() {
    let Some(go) = GoH3::start() else { return };
    let started = std::time::Instant::now();
    let v = go.load(&["/status/200"], &["--no-keepalive", "-n", "20", "-c", "2"]);
    assert_eq!(
        v["requests"]["ok"], 20,
        "{} {}",
        v["requests"], v["errors_by_reason"]
    );
    assert_eq!(v["connections"]["opened"], 20, "{}", v["connections"]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
}

/// A frame no response may carry (SETTINGS on a request stream) is a connection error
/// (RFC 9114 7.1): we close the connection with H3_FRAME_UNEXPECTED, and the server sees
/// that code. The CONNECTION_CLOSE was never sent: the loop returned before sending, and
/// the worker's close took a closed connection for one with nothing left to say.
#[test]
fn a_connection_we_close_on_an_error_sends_its_close_to_the_server() {
    let Some(go) = GoH3::start() else { return };
    let v = go.load(&["/status/200", "/badframe"], &["-n", "2", "-c", "1"]);
    assert_eq!(v["requests"]["ok"], 1, "{}", v["requests"]);
    assert_eq!(
        reason(&v, "h3_sent:H3_FRAME_UNEXPECTED"),
        1,
        "{}",
        v["errors_by_reason"]
    );
    // The preflight's connection closes with H3_NO_ERROR (0x100), the run's with 0x105.
    let closes = go.closes(2);
    assert!(closes.iter().any(|c| c == "0x105"), "{closes:?}");
}

/// HTTP/3 samples no send stamp (a datagram is many requests' frames): the report said
/// "the kernel gave no send stamps" on every default run, blaming the kernel.
#[test]
fn an_h3_run_says_send_stamps_are_off_rather_than_blaming_the_kernel() {
    let Some(go) = GoH3::start() else { return };
    let urls = go.urls(&["/status/200"]);
    let base = format!("https://127.0.0.1:{}/", go.addr.port());
    let out = run(&[
        "load",
        "--http3",
        "--cacert",
        go.cert(),
        "--urls",
        &urls,
        "-n",
        "4",
        "-c",
        "1",
        &base,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("Send stamps:   off"),
        "{}",
        text.lines()
            .filter(|l| l.contains("Send stamps"))
            .collect::<String>()
    );
}

/// quinn raises no Readable for the frame that opens a stream: a second control stream
/// sent whole (type, SETTINGS, FIN in one write) was never read, so never refused.
#[test]
fn a_server_streams_opening_frame_is_read() {
    let Some(go) = GoH3::start() else { return };
    go.load(&["/status/200", "/control2"], &["-n", "2", "-c", "1"]);
    // The preflight's connection closes with H3_NO_ERROR (0x100), the run's with 0x103.
    let closes = go.closes(2);
    assert!(closes.iter().any(|c| c == "0x103"), "{closes:?}");
}
