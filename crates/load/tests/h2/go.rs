//! Against Go's own HTTP/2 server (`net/http`, h2c with prior knowledge): a second
//! implementation besides nginx and nghttpd, which counts on its side what it served and
//! how many streams any one connection had in flight.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

use load::{RequestSpec, Stop};

use super::{h2_counts, h2_plan, KillOnDrop};
use crate::run;
use crate::support::tls::TempDir;

/// `tests/h2/go/server.go`, built and started; its address.
struct GoServer {
    _child: KillOnDrop,
    addr: SocketAddr,
    _dir: TempDir,
}

impl GoServer {
    fn start() -> Option<GoServer> {
        let go = testkit::require(
            "go",
            &["/usr/local/go/bin/go", "/usr/bin/go"],
            "install Go 1.24 or newer (https://go.dev/dl), or apt-get install golang-go",
        )?;
        let dir = TempDir::new("go-h2");
        let bin = dir.0.join("server");
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/h2/go/server.go");
        // Built, not `go run`: killing `go run` would leave the server it started running.
        let out = Command::new(go)
            .args(["build", "-o"])
            .arg(&bin)
            .arg(src)
            .env("GO111MODULE", "off")
            .env("GOFLAGS", "")
            .env("GOTOOLCHAIN", "local")
            .output()
            .expect("run go build");
        assert!(
            out.status.success(),
            "go build {src}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut child = Command::new(&bin)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the Go server");
        let stdout = child.stdout.take().unwrap();
        let child = KillOnDrop(child);
        // Its first line is its address; the read ends when it prints it or exits.
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let addr = line
            .trim()
            .parse()
            .expect("the Go server prints its address");
        Some(GoServer {
            _child: child,
            addr,
            _dir: dir,
        })
    }

    /// (the most streams one connection had in flight, requests served), by its own count.
    fn stats(&self) -> (u64, u64) {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
        let mut it = body.split_whitespace().map(|v| v.parse::<u64>().unwrap());
        (it.next().unwrap(), it.next().unwrap())
    }
}

/// 100 streams asked for, 5 allowed by Go's server: every request is answered, none is
/// refused, the server never sees more than 5 in flight on a connection (it sees exactly
/// 5), and it served exactly `-n`.
#[test]
fn go_net_http_sees_at_most_its_max_concurrent_streams_and_exactly_n() {
    let Some(go) = GoServer::start() else { return };
    let mut served = 0;
    for (n, connections) in [(2000, 1), (3001, 4)] {
        let mut p = h2_plan(&format!("http://{}/", go.addr), 100);
        p.connections = connections;
        p.threads = connections.min(2);
        p.stop = Stop::Requests(n);
        load::preflight(&p).expect("Go's server speaks h2c with prior knowledge");
        let r = run(&p);
        assert_eq!((r.counts.sent, r.counts.ok), (n, n), "{:?}", r.counts);
        assert_eq!(r.status, vec![(302, n)]);
        let h = h2_counts(&r);
        assert_eq!(h.server_max_streams, Some(5));
        assert_eq!(h.streams_used_max, 5);
        assert_eq!(h.rst_received.iter().sum::<u64>(), 0, "no stream refused");
        assert_eq!(h.retries, 0);
        served += n;
        let (max_in_flight, counted) = go.stats();
        assert_eq!(
            max_in_flight, 5,
            "the most streams in flight on one connection"
        );
        assert_eq!(counted, served, "the server's own count");
    }
}

/// Several request shapes share one connection's HPACK table (their fixed fields are
/// indexed once, then sent as indices): Go's server checks every request's fields and
/// answers 400 to any that decoded wrong.
#[test]
fn indexed_request_fields_decode_right_on_every_request() {
    let Some(go) = GoServer::start() else { return };
    let mut p = h2_plan(&format!("http://{}/", go.addr), 5);
    p.connections = 2;
    p.threads = 1;
    p.stop = Stop::Requests(3000);
    p.requests = ["/a", "/b?x=1", "/c/d", "/a"]
        .iter()
        .enumerate()
        .map(|(i, path)| RequestSpec {
            path: (*path).into(),
            headers: vec![
                ("X-Check".into(), (*path).into()),
                (format!("X-Shape-{i}"), "v".repeat(40 * i)),
            ],
            ..RequestSpec::default()
        })
        .collect();
    let r = run(&p);
    assert_eq!(r.status, vec![(302, 3000)], "{:?}", r.counts);
    let h = h2_counts(&r);
    // Indexed, each request's block is a few bytes: far below its decoded size.
    assert!(
        h.header_bytes_sent * 5 < h.header_bytes_sent_raw,
        "{} bytes sent for {} decoded",
        h.header_bytes_sent,
        h.header_bytes_sent_raw
    );
}
