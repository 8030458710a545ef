//! Engine tests over real loopback sockets, against small well-behaved and hostile servers.

mod coalesce;
mod h2;
mod idle;
mod open;
mod os_limits;
mod progress;
mod reasons;
mod stamps;
mod support;
mod tls;

use std::time::{Duration, Instant};

use std::io::Write as _;

use load::{Arrival, Control, Plan, RequestSpec, RunResult, Stop, Target};
use support::{redirect_server, Server};

fn plan(url: &str) -> Plan {
    let mut p = Plan::new(Target::parse(url).unwrap());
    p.threads = 2;
    p.connections = 4;
    p.timeout = Duration::from_millis(800);
    p.connect_timeout = Duration::from_secs(2);
    p.stop = Stop::Requests(200);
    p
}

/// Runs a plan, checks the conservation law and that the run ended in bounded time.
#[track_caller]
fn run(p: &Plan) -> RunResult {
    let control = Control::new(p.effective_threads());
    // Generous: these runs take milliseconds to a few timeouts; a hang takes forever.
    let bound = Duration::from_secs(20) + p.timeout * 4;
    // A watchdog stops a hung run at the bound, so that a hang fails the test (below)
    // instead of blocking CI.
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = {
        let control = control.clone();
        std::thread::spawn(move || {
            if finished.recv_timeout(bound) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                control.stop();
            }
        })
    };
    let started = Instant::now();
    let r = load::run(p, &control).expect("run starts");
    let _ = done.send(());
    watchdog.join().unwrap();
    assert!(
        !r.interrupted,
        "the run hung: the watchdog stopped it after {bound:?}: {:?}",
        r.counts
    );
    let c = &r.counts;
    assert!(
        c.conserved(),
        "sent {} != ok {} + failed {} + errors {} + in flight {}: {c:?}",
        c.sent,
        c.ok,
        c.failed_status,
        c.errors(),
        c.in_flight
    );
    assert!(c.reasons_conserved(), "reasons differ from kinds: {c:?}");
    assert!(
        started.elapsed() < bound,
        "run took {:?}",
        started.elapsed()
    );
    r
}

/// Keep-alive: `r`'s requests went over at most `conns` connections, each opened once. Not
/// exactly `conns`: the `-n` budget is shared, and on a loaded machine a worker thread that
/// starts after the others spent it opens none (seen in CI: 2 of 4).
#[track_caller]
fn assert_kept_alive(s: &Server, r: &RunResult, conns: u64) {
    let accepts = s.accepts();
    assert!(
        (1..=conns).contains(&accepts),
        "{accepts} connections accepted for {} requests: keep-alive reuses at most {conns}",
        r.counts.ok
    );
    assert_eq!(r.counts.connections_opened, accepts);
}

mod accounting {
    use super::*;

    #[test]
    fn server_counts_exactly_n_requests() {
        for (n, conns, threads, pipeline) in [
            (1, 1, 1, 1),
            (7, 3, 2, 1),
            (1000, 10, 2, 1),
            (999, 4, 2, 16),
            (5, 10, 3, 4),
        ] {
            let s = redirect_server();
            let mut p = plan(&s.url());
            p.stop = Stop::Requests(n);
            p.connections = conns;
            p.threads = threads;
            p.pipeline = pipeline;
            let r = run(&p);
            assert_eq!(r.counts.sent, n);
            assert_eq!(r.counts.ok, n, "{:?}", r.counts);
            assert_eq!(r.counts.errors(), 0);
            assert_eq!(r.latency.len(), n);
            assert_eq!(r.status, vec![(302, n)]);
            // The server thread may still be counting the last head it answered.
            testkit::wait_until(
                Duration::from_secs(10),
                "the server to count every head",
                || s.requests() >= n,
            );
            assert_eq!(s.requests(), n, "n={n} c={conns} t={threads} p={pipeline}");
        }
    }

    #[test]
    fn duration_run_reports_in_flight_at_the_stop() {
        let s = redirect_server();
        let mut p = plan(&s.url());
        p.stop = Stop::Duration(Duration::from_millis(300));
        let r = run(&p);
        assert!(r.counts.ok > 0);
        assert!(r.counts.in_flight <= 4);
        assert!(!r.interrupted);
    }

    #[test]
    fn stop_switch_ends_the_run_early_and_keeps_results() {
        let s = redirect_server();
        let mut p = plan(&s.url());
        p.stop = Stop::Duration(Duration::from_secs(60));
        let control = Control::new(2);
        let started = Instant::now();
        // Stop once the run is under way, not after a fixed time a loaded machine may not
        // give it: more requests than connections means a response was already counted.
        let r = std::thread::scope(|scope| {
            scope.spawn(|| {
                testkit::wait_until(
                    Duration::from_secs(30),
                    "the server to see 10 requests",
                    || s.requests() >= 10,
                );
                control.stop();
            });
            load::run(&p, &control).unwrap()
        });
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(r.interrupted);
        assert!(r.counts.ok > 0);
        assert!(r.counts.conserved());
    }

    /// The opening of a run's connections looks at the stop switch: against a server whose
    /// accept queue is full each connect took ~1 ms, and a stop (a shootout's cap, Ctrl-C)
    /// that came while 10,000 were being opened waited for all of them (a repeat capped at
    /// 6 s ran 27 s). Stopped before it starts, a run opens at most one batch.
    #[test]
    fn stop_during_the_opening_of_connections_ends_the_opening() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let mut p = plan(&url);
        p.threads = 1;
        p.connections = 1000;
        p.stop = Stop::Duration(Duration::from_secs(60));
        let control = Control::new(1);
        control.stop();
        let r = load::run(&p, &control).unwrap();
        assert!(r.interrupted);
        assert!(
            r.counts.sent < 100,
            "{} of 1000 connections were opened after the stop",
            r.counts.sent
        );
        assert!(r.counts.conserved(), "{:?}", r.counts);
    }

    #[test]
    fn failed_status_is_its_own_outcome() {
        let s = Server::spawn(|mut c| {
            let mut i = 0u32;
            while c.next_request().is_some() {
                i += 1;
                let resp: &[u8] = if i.is_multiple_of(2) {
                    b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n"
                } else {
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
                };
                c.send(resp);
            }
        });
        let mut p = plan(&s.url());
        p.connections = 1;
        p.threads = 1;
        p.stop = Stop::Requests(10);
        let r = run(&p);
        assert_eq!((r.counts.ok, r.counts.failed_status), (5, 5));
        assert_eq!(r.status, vec![(200, 5), (503, 5)]);
        p.fail_status = load::StatusSet::none();
        let r = run(&p);
        assert_eq!((r.counts.ok, r.counts.failed_status), (10, 0));
    }
}

mod connections {
    use super::*;

    #[test]
    fn keepalive_reuses_connections() {
        let s = redirect_server();
        let mut p = plan(&s.url());
        p.stop = Stop::Requests(500);
        let r = run(&p);
        assert_eq!(r.counts.ok, 500);
        assert_kept_alive(&s, &r, 4);
        assert_eq!(r.counts.reconnects, 0);
    }

    #[test]
    fn no_keepalive_really_reconnects() {
        let s = redirect_server();
        let mut p = plan(&s.url());
        p.keepalive = false;
        p.stop = Stop::Requests(300);
        let r = run(&p);
        assert_eq!(r.counts.ok, 300);
        assert_eq!(s.accepts(), 300, "one connection per request");
        assert_eq!(r.counts.connections_opened, 300);
        assert_eq!(r.connect.len(), 300, "every connect is timed");
        // Regression: connects were timed from a stale clock reading, as ~1 ns.
        // A loopback connect is a syscall and a handshake: never under half a microsecond.
        assert!(
            r.connect.summary().min_us > 0.5,
            "{:?}",
            r.connect.summary()
        );
        assert_eq!(s.requests(), 300);
    }

    #[test]
    fn server_connection_close_is_followed_by_a_reconnect() {
        let s = Server::spawn(|mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            }
        });
        let mut p = plan(&s.url());
        p.stop = Stop::Requests(50);
        let r = run(&p);
        assert_eq!(r.counts.ok, 50);
        assert_eq!(s.accepts(), 50);
        assert!(r.counts.reconnects >= 46);
    }

    #[test]
    fn refused_connections_are_connect_errors() {
        // Bind then drop, so the port is very likely closed.
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let mut p = plan(&format!("http://{addr}/"));
        p.stop = Stop::Requests(20);
        let r = run(&p);
        assert_eq!(r.counts.connect, 20, "{:?}", r.counts);
        assert_eq!(r.counts.connect_refused, 20);
        assert_eq!(r.counts.ok, 0);
    }

    #[test]
    fn ipv6_loopback() {
        let Ok(l) = std::net::TcpListener::bind("[::1]:0") else {
            panic!("IPv6 loopback is not available on this machine: enable ::1 (sysctl net.ipv6.conf.lo.disable_ipv6=0)");
        };
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut c = support_conn(s);
                    while c.next_request().is_some() {
                        c.send(support::REDIRECT);
                    }
                });
            }
        });
        let mut p = plan(&format!("http://[{}]:{}/", addr.ip(), addr.port()));
        p.stop = Stop::Requests(100);
        let r = run(&p);
        assert_eq!(r.counts.ok, 100);
    }

    /// Requests in flight per connection are `Plan::per_connection`, the one decision: the
    /// server holds what it reads until no more comes for a while, then answers it all, so
    /// the most it ever held unanswered is what the client put in flight at once.
    #[test]
    fn pipelined_requests_in_flight_are_the_plans_per_connection() {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::Arc;
        for pipeline in [1, 3, 8] {
            let most = Arc::new(AtomicU64::new(0));
            let held = most.clone();
            let s = Server::spawn(move |mut c| loop {
                let _ = c.stream.set_read_timeout(None);
                if c.next_request().is_none() {
                    return;
                }
                let mut pending = 1;
                // Quiet for 100 ms: the client sent all it will before an answer.
                let _ = c.stream.set_read_timeout(Some(Duration::from_millis(100)));
                while c.next_request().is_some() {
                    pending += 1;
                }
                held.fetch_max(pending, Ordering::Relaxed);
                if !c.send(&support::REDIRECT.repeat(pending as usize)) {
                    return;
                }
            });
            let mut p = plan(&s.url());
            p.threads = 1;
            p.connections = 2;
            p.pipeline = pipeline;
            p.stop = Stop::Requests(4 * pipeline as u64);
            let r = run(&p);
            assert_eq!(r.counts.ok, r.counts.sent, "{:?}", r.counts);
            assert_eq!(
                most.load(Ordering::Relaxed),
                p.per_connection() as u64,
                "pipeline {pipeline}: the most requests a connection had in flight"
            );
            assert_eq!(r.counts.max_batch, p.per_connection() as u64);
        }
    }

    fn support_conn(stream: std::net::TcpStream) -> support::Conn {
        // Reuse the Conn helpers for a listener the test made itself.
        let s = Server::spawn(|_| {});
        let counters = s.counters.clone();
        support::Conn::from_parts(stream, counters)
    }
}

mod bodies {
    use super::*;

    fn serve(resp: &'static [u8]) -> Server {
        Server::spawn(move |mut c| {
            while c.next_request().is_some() {
                if !c.send(resp) {
                    return;
                }
            }
        })
    }

    #[test]
    fn content_length_body() {
        let s = serve(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world");
        let r = run(&plan(&s.url()));
        assert_eq!(r.counts.ok, 200);
        assert_kept_alive(&s, &r, 4);
    }

    #[test]
    fn chunked_with_trailers() {
        let s = serve(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n");
        let r = run(&plan(&s.url()));
        assert_eq!(r.counts.ok, 200, "{:?}", r.counts);
        assert_kept_alive(&s, &r, 4); // chunked responses keep the connection
    }

    #[test]
    fn close_delimited_http10() {
        let s = Server::spawn(|mut c| {
            if c.next_request().is_some() {
                c.send(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end");
            }
        });
        let r = run(&plan(&s.url()));
        assert_eq!(r.counts.ok, 200, "{:?}", r.counts);
        assert_eq!(s.accepts(), 200);
        assert_eq!(r.counts.read, 0);
    }

    #[test]
    fn head_responses_have_no_body() {
        let s = Server::spawn(|mut c| {
            while let Some(req) = c.next_request() {
                assert!(req.is_head());
                c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
            }
        });
        let mut p = plan(&s.url());
        p.requests = vec![RequestSpec {
            method: "HEAD".into(),
            ..RequestSpec::get(&p.target)
        }];
        let r = run(&p);
        assert_eq!(r.counts.ok, 200, "{:?}", r.counts);
        assert_eq!(r.counts.timeout, 0);
    }

    #[test]
    fn interim_100_continue_is_skipped() {
        let s = serve(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n");
        let r = run(&plan(&s.url()));
        assert_eq!(r.counts.ok, 200);
        assert_eq!(r.status, vec![(204, 200)]);
    }

    #[test]
    fn pipelined_responses_in_one_write() {
        // The server answers a whole batch of pipelined requests in one write.
        let s = Server::spawn(|mut c| {
            let mut pending = Vec::new();
            while c.next_request().is_some() {
                pending.extend_from_slice(support::REDIRECT);
                if c.buffered_heads() == 0 {
                    if !c.send(&pending) {
                        return;
                    }
                    pending.clear();
                }
            }
        });
        let mut p = plan(&s.url());
        p.pipeline = 16;
        p.connections = 2;
        p.stop = Stop::Requests(3200);
        let r = run(&p);
        assert_eq!(r.counts.ok, 3200);
        assert_eq!(s.accepts(), 2);
        assert!(
            r.counts.max_batch > 1,
            "requests were pipelined: {:?}",
            r.counts
        );
    }
}

mod hostile;

mod open_model {
    use super::*;

    #[test]
    fn rate_is_held_and_latency_is_timed_from_the_schedule() {
        let s = redirect_server();
        let mut p = plan(&s.url());
        p.arrival = Arrival::Open {
            rate: load::Rate::constant(2000.0),
        };
        p.stop = Stop::Duration(Duration::from_millis(1000));
        let r = run(&p);
        let done = r.counts.ok as f64;
        // Loose bounds: the machine may be loaded; an open model must not race ahead.
        assert!(done <= 2000.0 * 1.05 + 10.0, "{done} > rate");
        assert!(done >= 500.0, "{done} far below rate");
    }

    #[test]
    fn stalled_server_shows_in_latency_not_in_fewer_samples() {
        // Every 50th response is delayed 200 ms. A closed loop would hide the other
        // requests that should have been sent meanwhile; the open model times them.
        let s = Server::spawn(|mut c| {
            let mut i = 0u64;
            while c.next_request().is_some() {
                i += 1;
                if i.is_multiple_of(50) {
                    std::thread::sleep(Duration::from_millis(200));
                }
                c.send(support::REDIRECT);
            }
        });
        let mut p = plan(&s.url());
        p.connections = 1;
        p.threads = 1;
        p.arrival = Arrival::Open {
            rate: load::Rate::constant(500.0),
        };
        p.stop = Stop::Requests(300);
        p.timeout = Duration::from_secs(5);
        let r = run(&p);
        assert_eq!(r.counts.ok, 300, "{:?}", r.counts);
        // Requests due during a stall wait for it: far more than 1 in 50 are slow.
        let slow = r.latency.len() as f64 * (1.0 - 0.9);
        assert!(
            r.latency.percentile_ns(90.0) > 20_000_000,
            "p90 {} ns, {slow}",
            r.latency.percentile_ns(90.0)
        );
    }

    #[test]
    fn open_model_with_n_reports_nothing_unsent_beyond_the_budget() {
        // Regression: `unsent` counted every request the schedule made due by the end,
        // even those past -n, so a slow server showed hundreds of phantom unsent requests.
        let s = Server::spawn(|mut c| {
            while c.next_request().is_some() {
                std::thread::sleep(Duration::from_millis(40));
                c.send(support::REDIRECT);
            }
        });
        let mut p = plan(&s.url());
        p.connections = 2;
        p.threads = 1;
        p.arrival = Arrival::Open {
            rate: load::Rate::constant(1000.0),
        };
        p.stop = Stop::Requests(20);
        p.timeout = Duration::from_secs(5);
        let r = run(&p);
        assert_eq!(r.counts.ok, 20, "{:?}", r.counts);
        assert_eq!(r.counts.unsent, 0, "{:?}", r.counts);
    }

    #[test]
    fn no_keepalive_open_model() {
        let s = redirect_server();
        let mut p = plan(&s.url());
        p.keepalive = false;
        p.arrival = Arrival::Open {
            rate: load::Rate::constant(1000.0),
        };
        p.stop = Stop::Requests(100);
        let r = run(&p);
        assert_eq!(r.counts.ok, 100, "{:?}", r.counts);
        assert_eq!(s.accepts(), 100);
    }
}

/// A server that answers every request with a 302 and records each request line.
fn recording_server() -> (Server, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = lines.clone();
    let s = Server::spawn(move |mut c| {
        while let Some(req) = c.next_request() {
            let line = req.head.lines().next().unwrap_or_default().to_string();
            seen.lock().unwrap().push(line);
            let resp: &[u8] = if req.is_head() {
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
            } else {
                support::REDIRECT
            };
            if !c.send(resp) {
                return;
            }
        }
    });
    (s, lines)
}

/// Pearson's chi-square against the uniform distribution, with its critical value at
/// p = 0.001 (Wilson-Hilferty): a fair sample fails 1 run in 1000.
#[track_caller]
fn assert_uniform(counts: &[u64]) {
    let k = counts.len() as f64;
    let n: u64 = counts.iter().sum();
    let expect = n as f64 / k;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expect).powi(2) / expect)
        .sum();
    let df = k - 1.0;
    let critical = df * (1.0 - 2.0 / (9.0 * df) + 3.09 * (2.0 / (9.0 * df)).sqrt()).powi(3);
    assert!(
        chi2 < critical,
        "chi2 {chi2:.1} >= {critical:.1}: {counts:?}"
    );
}

mod table;

mod intervals;
