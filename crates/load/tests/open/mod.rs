//! The open model over time: arrivals timed by the server itself, rate ramps counted by the
//! server, and a stall that the corrected latency shows and the service time does not.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use load::{Arrival, Rate, Stop};

use super::support::{Server, REDIRECT};
use super::{plan, run};

/// A server that answers every request with a 302 and notes when each head arrived.
fn timestamping_server() -> (Server, Arc<Mutex<Vec<Instant>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = {
        let seen = seen.clone();
        Server::spawn(move |mut c| {
            while c.next_request().is_some() {
                seen.lock().unwrap().push(Instant::now());
                if !c.send(REDIRECT) {
                    return;
                }
            }
        })
    };
    (s, seen)
}

fn offsets_us(seen: &Mutex<Vec<Instant>>) -> Vec<f64> {
    let mut t = seen.lock().unwrap().clone();
    t.sort();
    t.iter().map(|x| (*x - t[0]).as_secs_f64() * 1e6).collect()
}

/// At 1,000 and 5,000 req/s every request reaches the server and has its send lateness
/// recorded. How precisely they leave is a timing figure, measured by `bench/open.py` on a
/// quiet machine, not asserted here: a loaded test machine deschedules the client.
#[test]
fn every_request_has_its_lateness_recorded() {
    for per_sec in [1000.0, 5000.0] {
        let (s, seen) = timestamping_server();
        let rate = Rate::constant(per_sec);
        let mut p = plan(&s.url());
        p.connections = 20;
        p.threads = 1;
        p.arrival = Arrival::Open { rate: rate.clone() };
        p.stop = Stop::Requests(1000);
        let r = run(&p);
        assert_eq!(r.counts.ok, 1000, "{:?}", r.counts);
        assert_eq!(offsets_us(&seen).len(), 1000);
        assert_eq!(
            r.lateness.len() + r.late.len(),
            1000,
            "every request's lateness recorded"
        );
        assert_eq!(r.late.len(), r.counts.late);
        assert_eq!(
            r.service.len(),
            1000,
            "every response's service time recorded"
        );
        // The service time excludes the wait before sending: never longer than latency.
        assert!(r.service.percentile_ns(50.0) <= r.latency.percentile_ns(50.0));
    }
}

/// A ramp from 1,000 to 3,000 req/s over 2 s, counted by the server in 250 ms windows.
#[test]
fn a_ramp_follows_its_schedule_at_the_server() {
    let (s, seen) = timestamping_server();
    let rate = Rate::parse("1000..3000/2s").unwrap();
    let mut p = plan(&s.url());
    p.connections = 20;
    p.threads = 2;
    p.arrival = Arrival::Open { rate: rate.clone() };
    p.stop = Stop::Requests(4000);
    let r = run(&p);
    assert_eq!(r.counts.ok, 4000, "exact total: {:?}", r.counts);
    let t = offsets_us(&seen);
    assert_eq!(t.len(), 4000);
    // Per window, on the schedule's own timeline (arrivals less their common offset).
    let raw: Vec<f64> = (0..t.len())
        .map(|j| t[j] - rate.due_ns(j as f64).unwrap() / 1e3)
        .collect();
    let mut sorted = raw.clone();
    sorted.sort_by(f64::total_cmp);
    let shift = sorted[sorted.len() / 2];
    for w in 0..8u64 {
        let (a, b) = (w as f64 * 250_000.0, (w + 1) as f64 * 250_000.0);
        let n = t
            .iter()
            .filter(|&&x| x - shift >= a && x - shift < b)
            .count() as f64;
        let want = rate.due_by(b * 1e3) - rate.due_by(a * 1e3);
        // Loose for a loaded test machine; bench/open.py measures the real precision.
        assert!(
            (n - want).abs() <= want * 0.2 + 20.0,
            "window {w}: {n} against {want}"
        );
    }
}

/// The server stalls 300 ms of every second; one connection at 200 req/s. Requests due in
/// a stall wait in the client: the corrected latency shows the stall, the service time
/// (from each request's hand-off to its connection) does not, and they count as late.
#[test]
fn a_stall_shows_in_corrected_latency_not_in_service_time() {
    let start: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let s = {
        let start = start.clone();
        Server::spawn(move |mut c| {
            while c.next_request().is_some() {
                let t0 = *start.lock().unwrap().get_or_insert_with(Instant::now);
                let in_cycle = t0.elapsed().as_millis() % 1000;
                if (500..800).contains(&in_cycle) {
                    // The stall under test, not a wait for a condition.
                    std::thread::sleep(Duration::from_millis((800 - in_cycle) as u64));
                }
                if !c.send(REDIRECT) {
                    return;
                }
            }
        })
    };
    let mut p = plan(&s.url());
    p.connections = 1;
    p.threads = 1;
    p.timeout = Duration::from_secs(5);
    p.arrival = Arrival::Open {
        rate: Rate::constant(200.0),
    };
    p.stop = Stop::Requests(500);
    let r = run(&p);
    assert_eq!(r.counts.ok, 500, "{:?}", r.counts);
    let ms = |ns: u64| ns as f64 / 1e6;
    let corrected = ms(r.latency.percentile_ns(99.0));
    let service = ms(r.service.percentile_ns(99.0));
    assert!(
        corrected >= 150.0,
        "corrected p99 {corrected} ms hides the stall"
    );
    assert!(
        service < 100.0,
        "service p99 {service} ms: it should not show the stall"
    );
    assert!(
        r.counts.late >= 40,
        "{} late: requests due in a stall waited",
        r.counts.late
    );
    assert_eq!(r.late.len(), r.counts.late);
    assert!(ms(r.late.percentile_ns(100.0)) >= 100.0);
}

/// The open model spins through the last 50 µs before each due instant (a timer wake-up
/// costs more): that wall time is counted as `spin`, at most the run's wall time per worker,
/// so that a spinning client is not judged saturated. The closed model never spins.
///
/// At 2,000 req/s a due instant comes every 500 µs, so even a debug build on a loaded
/// machine has spare turns to spin in; at 20,000 (this test's first rate) a debug client
/// beside a parallel build fell behind its schedule, never had a due instant ahead of it,
/// and recorded no spin.
#[test]
fn the_spin_before_due_instants_is_counted_apart() {
    let (s, _) = timestamping_server();
    let mut p = plan(&s.url());
    p.connections = 20;
    p.threads = 1;
    p.arrival = Arrival::Open {
        rate: Rate::constant(2_000.0),
    };
    p.stop = Stop::Duration(Duration::from_secs(1));
    let r = run(&p);
    assert!(r.counts.ok > 0, "{:?}", r.counts);
    assert!(r.spin > Duration::ZERO, "no spin recorded at 2,000 req/s");
    assert!(
        r.spin <= r.elapsed * p.threads as u32,
        "spin {:?} over {:?} of wall time on {} thread(s)",
        r.spin,
        r.elapsed,
        p.threads
    );

    let mut closed = plan(&s.url());
    closed.stop = Stop::Requests(500);
    let r = run(&closed);
    assert_eq!(r.counts.ok, 500, "{:?}", r.counts);
    assert_eq!(
        r.spin,
        Duration::ZERO,
        "the closed model has no due instants"
    );
}
