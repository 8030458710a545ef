//! `foxbench load --http3` against a real HTTP/3 server (caddy, quic-go inside): exact
//! counts and the accounting law, a duration run, certificates verified as over TCP, a UDP
//! port that does not answer, and the flags HTTP/3 refuses, each one line and exit 2.

use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::support::tls::{openssl_self_signed, TempDir};
use super::{result, run, usage_error};

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
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        // `bind 127.0.0.1`: with no SNI (an IP address), caddy picks the certificate by the
        // connection's local address, which a QUIC listener on [::] reports as `::`, and no
        // certificate matches (quic-go then ends the handshake with internal_error).
        let conf = format!(
            "{{\n\tauto_https off\n\tadmin off\n\tservers {{\n\t\tprotocols h1 h2 h3\n\t}}\n}}\n\
             https://127.0.0.1:{port} {{\n\tbind 127.0.0.1\n\ttls {} {}\n\trespond \"ok\" 200\n}}\n",
            cert.display(),
            key.display()
        );
        let file = dir.0.join("Caddyfile");
        std::fs::write(&file, conf).unwrap();
        let child = Command::new(bin)
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&file)
            .env("HOME", &dir.0)
            .env("XDG_DATA_HOME", dir.0.join("data"))
            .env("XDG_CONFIG_HOME", dir.0.join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start caddy");
        let mut c = Caddy {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            cert,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(c.addr).is_err() || !udp_bound(port) {
            if let Ok(Some(status)) = c.child.try_wait() {
                panic!("caddy exited with {status}");
            }
            assert!(
                Instant::now() < deadline,
                "caddy did not listen on {}",
                c.addr
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(c)
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
    assert_eq!(
        v["config"]["pipeline"], 8,
        "HTTP/3's streams per connection"
    );
    assert_eq!(v["connections"]["opened"], 4);
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
    // Closed: the kernel's port unreachable ends it at once.
    let port = silent.local_addr().unwrap().port();
    drop(silent);
    let url = format!("https://127.0.0.1:{port}/");
    usage_error(
        &["load", "--http3", "-n", "10", &url],
        "nothing listens on UDP port",
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
