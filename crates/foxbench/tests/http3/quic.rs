//! QUIC's own figures in an `--http3` run's result (`http3.quic`): against caddy directly,
//! and through a relay that drops datagrams, where QUIC must see losses and recover them.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use super::super::{result, run};
use super::Caddy;

/// `foxbench load --http3 -n N -c 4` at `url` with `extra` flags, its JSON result
/// checked.
fn load(url: &str, ca: &str, requests: u64, extra: &[&str]) -> Value {
    let n = requests.to_string();
    let mut args = vec![
        "load", "--http3", "-n", &n, "-c", "4", "--cacert", ca, "--json", "-",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `result` checks the schema and sent = ok + failed_status + errors + in_flight.
    result(&out.stdout)
}

#[track_caller]
fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A request body of many datagrams goes out in GSO batches: more than one datagram per
/// send call (quinn's segmentation offload was once left off, and every transmit was one).
#[test]
fn a_body_of_many_datagrams_goes_out_in_gso_batches() {
    let Some(caddy) = Caddy::start() else { return };
    let body = "x".repeat(30_000);
    let v = load(
        &caddy.url(),
        caddy.ca(),
        40,
        &["--streams", "1", "-m", "POST", "-b", &body],
    );
    assert_eq!(v["requests"]["ok"], 40, "{}", v["requests"]);
    let q = &v["http3"]["quic"];
    assert!(
        num(&q["datagrams_per_send_call"]) > 1.5,
        "30 KB a request, about 25 datagrams, went out one a send: {q}"
    );
    assert!(num(&q["per_request"]["bytes_sent"]) > 30_000.0, "{q}");
}

/// The connections open when a `-n` run ends are closed by the run's end, not by a
/// failure: their QUIC statistics must still be counted (with keep-alive and no error,
/// no connection closes before), and their paths noted.
#[test]
fn connections_open_at_the_end_count_their_quic_figures() {
    let Some(caddy) = Caddy::start() else { return };
    let v = load(&caddy.url(), caddy.ca(), 1000, &["--streams", "8"]);
    assert_eq!(v["requests"]["ok"], 1000, "{}", v["requests"]);
    let q = &v["http3"]["quic"];
    let p = &q["per_request"];
    assert_eq!(
        p["requests"], 1000,
        "divided by the requests completed: {q}"
    );
    for k in [
        "datagrams_sent",
        "datagrams_received",
        "bytes_sent",
        "bytes_received",
    ] {
        assert!(num(&p[k]) > 0.0, "{k}: {q}");
    }
    assert!(num(&p["send_calls"]) > 0.0, "{q}");
    // A GRO read may hold many datagrams: receive calls are at least one per read.
    assert!(num(&p["receive_calls"]) > 0.0, "{q}");
    // At least one datagram per send call (GSO batches make it more), none refused.
    assert!(num(&q["datagrams_per_send_call"]) > 0.9, "{q}");
    // The worker's bytes are the throughput's over UDP, both ways.
    assert!(
        q["bytes_sent"].as_u64() >= v["throughput"]["bytes_written"].as_u64(),
        "{v}"
    );
    assert_eq!(q["bytes_received"], v["throughput"]["bytes_read"], "{v}");
    let opened = &v["connections"]["opened"];
    assert_eq!(*opened, 4);
    assert_eq!(
        q["connections"], *opened,
        "every connection's stats, once: {q}"
    );
    assert!(q["packets_sent"].as_u64().unwrap() > 0, "{q}");
    assert!(
        q["frames_received"]["stream"].as_u64().unwrap() >= 1000,
        "{q}"
    );
    // Every QUIC handshake counted as a full TLS one, none resumed: resumption is off.
    let tls = &v["tls"];
    assert_eq!(tls["handshakes_full"], *opened, "{tls}");
    assert_eq!(tls["handshakes_resumed"], 0, "{tls}");
    assert_eq!(tls["resumption"], false, "{tls}");
    assert_eq!(q["handshakes_failed"], 0, "{q}");
    let end = &q["at_end"];
    assert_eq!(end["connections"], *opened, "{q}");
    let rtt = &end["rtt_us"];
    assert!(num(&rtt["min"]) > 0.0, "{rtt}");
    assert!(num(&rtt["max"]) < 1e6, "{rtt}");
    assert!(num(&end["cwnd_bytes"]["median"]) > 0.0, "{end}");
}

/// Under `--no-keepalive` each request has its own connection, closed after its response:
/// every connection's statistics are summed once, and none is open at the end.
#[test]
fn without_keepalive_every_connection_counts_once_and_none_is_open_at_the_end() {
    let Some(caddy) = Caddy::start() else { return };
    let v = load(&caddy.url(), caddy.ca(), 40, &["--no-keepalive"]);
    assert_eq!(v["requests"]["ok"], 40, "{}", v["requests"]);
    let q = &v["http3"]["quic"];
    let opened = &v["connections"]["opened"];
    assert!(opened.as_u64().unwrap() >= 40, "{}", v["connections"]);
    assert_eq!(q["connections"], *opened, "{q}");
    assert_eq!(q["handshakes_failed"], 0, "{q}");
    assert_eq!(q["at_end"], Value::Null, "{q}");
}

/// A loss on the path was invisible in the report. Through a relay that drops every
/// 10th datagram each way, QUIC declares packets lost, sends their frames again, and every
/// request still ends in exactly one outcome. `packets_lost` counts the client's packets
/// only (quinn's loss detection is the sender's): enough of the client's datagrams must go,
/// so the run is long enough for at least 8 of them to be dropped.
#[test]
fn datagrams_dropped_on_the_path_show_as_lost_packets() {
    let Some(caddy) = Caddy::start() else { return };
    let relay = LossyRelay::start(caddy.addr, every_tenth_after_the_handshake);
    let url = format!("https://127.0.0.1:{}/", relay.addr.port());
    let v = load(&url, caddy.ca(), 2000, &["--streams", "8"]);
    let dropped = relay.stop();
    assert!(
        dropped.to_server >= 8,
        "too few client packets dropped: {dropped:?}"
    );
    assert!(dropped.to_client > 0, "{dropped:?}");
    assert!(
        v["requests"]["ok"].as_u64().unwrap() > 0,
        "{}",
        v["requests"]
    );
    let q = &v["http3"]["quic"];
    assert!(q["packets_lost"].as_u64().unwrap() > 0, "{q}");
    assert!(q["bytes_lost"].as_u64().unwrap() > 0, "{q}");
    assert!(num(&q["loss_percent"]) > 0.0, "{q}");
}

/// A QUIC connection that never finished its handshake was counted nowhere but in the
/// connect errors. Through a relay that lets the preflight through and nothing after,
/// every connection of the run fails its handshake, each counted once.
#[test]
fn a_handshake_that_never_ends_is_a_failed_handshake() {
    let Some(caddy) = Caddy::start() else { return };
    let relay = LossyRelay::start(caddy.addr, all_after_the_preflight);
    let url = format!("https://127.0.0.1:{}/", relay.addr.port());
    let out = run(&[
        "load",
        "--http3",
        "-n",
        "4",
        "-c",
        "2",
        // Long enough for the preflight's handshake on a loaded machine.
        "--connect-timeout",
        "1s",
        "--cacert",
        caddy.ca(),
        "--json",
        "-",
        &url,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.stdout.is_empty(), "{:?}: {stderr}", out.status);
    let v = result(&out.stdout);
    relay.stop();
    assert_eq!(v["requests"]["ok"], 0, "{}", v["requests"]);
    let failed = v["errors"]["connect_timeout"].as_u64().unwrap();
    assert!(failed > 0, "{}", v["errors"]);
    let q = &v["http3"]["quic"];
    // Equal: a connection carries one request until its handshake ends (`Http3::room`),
    // so each connect timeout is one request's error and one connection closed by
    // `Http::close` before its handshake was counted (`Conn::handshake_failed`); the run
    // ends only once every request has its outcome, so none is cut short by the end.
    assert_eq!(q["handshakes_failed"].as_u64(), Some(failed), "{q}");
    assert_eq!(v["tls"]["handshakes_full"], 0, "{}", v["tls"]);
    assert_eq!(
        q["at_end"],
        Value::Null,
        "no connection was up at the end: {q}"
    );
}

/// The datagrams of a flow passed before drops start: the QUIC handshake's.
const HANDSHAKE_DATAGRAMS: u64 = 10;

/// Every 10th datagram after those, each way, is dropped (`n` counts a flow's datagrams
/// in one direction; `flow` numbers the flows from 0, the preflight's).
fn every_tenth_after_the_handshake(_flow: usize, n: u64) -> bool {
    n > HANDSHAKE_DATAGRAMS && n.is_multiple_of(10)
}

/// Every datagram of every flow but the first (the preflight's) is dropped: the run's
/// handshakes never end.
fn all_after_the_preflight(flow: usize, _n: u64) -> bool {
    flow > 0
}

/// A UDP relay on loopback to `server`: each client address (one per QUIC connection)
/// gets its own upstream socket; a datagram is dropped when `rule(flow, n)` says so, `n`
/// counted per flow and direction.
struct LossyRelay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Drops>>,
}

/// Datagrams the relay dropped, each way.
#[derive(Debug, Default)]
struct Drops {
    to_server: u64,
    to_client: u64,
}

/// One client's flow: its upstream socket and its datagrams each way.
struct Flow {
    up: UdpSocket,
    index: usize,
    to_server: u64,
    to_client: u64,
}

impl LossyRelay {
    fn start(server: SocketAddr, rule: fn(usize, u64) -> bool) -> LossyRelay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        // The loop waits on the front socket this long at most, then reads the upstream
        // ones: the answers' extra delay, not a sleep.
        front
            .set_read_timeout(Some(Duration::from_millis(1)))
            .unwrap();
        let addr = front.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || relay(&front, server, rule, &flag));
        LossyRelay {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops the relay and returns the datagrams it dropped.
    fn stop(mut self) -> Drops {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for LossyRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn relay(
    front: &UdpSocket,
    server: SocketAddr,
    rule: fn(usize, u64) -> bool,
    stop: &AtomicBool,
) -> Drops {
    let mut flows: HashMap<SocketAddr, Flow> = HashMap::new();
    let mut buf = vec![0u8; 65_535];
    let mut drops = Drops::default();
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = front.recv_from(&mut buf) {
            let index = flows.len();
            let flow = flows.entry(from).or_insert_with(|| {
                let up = UdpSocket::bind("127.0.0.1:0").unwrap();
                up.connect(server).unwrap();
                up.set_nonblocking(true).unwrap();
                Flow {
                    up,
                    index,
                    to_server: 0,
                    to_client: 0,
                }
            });
            flow.to_server += 1;
            match rule(flow.index, flow.to_server) {
                true => drops.to_server += 1,
                false => {
                    let _ = flow.up.send(&buf[..n]);
                }
            }
        }
        for (client, flow) in &mut flows {
            while let Ok(n) = flow.up.recv(&mut buf) {
                flow.to_client += 1;
                match rule(flow.index, flow.to_client) {
                    true => drops.to_client += 1,
                    false => {
                        let _ = front.send_to(&buf[..n], client);
                    }
                }
            }
        }
    }
    drops
}
