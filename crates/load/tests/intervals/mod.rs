use super::*;
use std::sync::{Arc, Mutex};

#[test]
fn a_stall_shows_in_the_interval_it_ends_in_and_nowhere_else() {
    // Every connection answers at once, except that the first request the server sees
    // 1.3 s after its first one waits until 2.3 s: a 1 s stall in a 3.6 s run.
    let first: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let stalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = Server::spawn(move |mut c| {
        while c.next_request().is_some() {
            let t0 = *first.lock().unwrap().get_or_insert_with(Instant::now);
            let since = t0.elapsed();
            if since >= Duration::from_millis(1300)
                && !stalled.swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                std::thread::sleep(Duration::from_millis(2300) - since);
            }
            if !c.send(support::REDIRECT) {
                return;
            }
        }
    });
    let mut p = plan(&s.url());
    p.connections = 1;
    p.threads = 1;
    p.timeout = Duration::from_secs(5);
    p.stop = Stop::Duration(Duration::from_millis(3600));
    p.interval = Duration::from_secs(1);
    let control = Control::new(1);
    let started = Instant::now();
    let mut seen = Vec::new();
    let r = load::run_with_intervals(&p, &control, &mut |iv| {
        seen.push((iv.clone(), started.elapsed()));
    })
    .unwrap();
    let run_took = started.elapsed();
    assert!(r.counts.conserved(), "{:?}", r.counts);
    let idx: Vec<u64> = seen.iter().map(|(iv, _)| iv.index).collect();
    assert_eq!(
        idx,
        [0, 1, 2, 3],
        "consecutive intervals, the last one partial"
    );
    assert!(
        seen[0].1 < run_took - Duration::from_millis(500),
        "interval 0 was handed over during the run, not after it: {:?} of {run_took:?}",
        seen[0].1
    );
    // The stalled request completes at ~2.3 s: interval 2 carries its ~1 s latency.
    let max_ms = |i: usize| seen[i].0.latency.percentile_ns(100.0) / 1_000_000;
    assert!(max_ms(2) >= 700, "interval 2 max {} ms", max_ms(2));
    for i in [0, 1, 3] {
        assert!(
            max_ms(i) < 300,
            "interval {i} max {} ms: {:?}",
            max_ms(i),
            idx
        );
    }
    // Interval 1 stalls from 1.3 s: it completes fewer responses than interval 0.
    assert!(seen[1].0.counts.ok < seen[0].0.counts.ok);
    // The intervals add up to the run.
    let ok: u64 = seen.iter().map(|(iv, _)| iv.counts.ok).sum();
    assert_eq!(ok, r.counts.ok);
    let recorded: u64 = seen.iter().map(|(iv, _)| iv.latency.len()).sum();
    assert_eq!(recorded, r.latency.len());
    assert!(seen[3].0.duration < Duration::from_secs(1));
}

/// Issue 25: the engine handed each interval off as new histograms over an unbounded
/// channel, so a consumer slower than the intervals let them pile up (a debug build grew to
/// 213 MB). Each worker now holds a bounded set of histograms and waits for the consumer
/// when all are out: the waits are counted, and no interval or response is lost.
#[test]
fn a_slow_interval_consumer_makes_workers_wait_and_loses_nothing() {
    let s = Server::spawn(|mut c| {
        while c.next_request().is_some() {
            if !c.send(support::REDIRECT) {
                return;
            }
        }
    });
    let mut p = plan(&s.url());
    p.connections = 2;
    p.threads = 1;
    p.stop = Stop::Duration(Duration::from_secs(2));
    p.interval = Duration::from_millis(1);
    let control = Control::new(1);
    let mut seen: Vec<(u64, u64, u64)> = Vec::new();
    let r = load::run_with_intervals(&p, &control, &mut |iv| {
        if seen.is_empty() {
            // The consumer stops at its first interval until the worker has stopped too:
            // its 64 histograms are out, and it waits for one (no response completes for
            // 200 ms). Polled, not timed: a loaded machine only makes it take longer.
            let deadline = Instant::now() + Duration::from_secs(20);
            let (mut last, mut since) = (control.snapshot().completed, Instant::now());
            while Instant::now() < deadline && since.elapsed() < Duration::from_millis(200) {
                std::thread::sleep(Duration::from_millis(5));
                let now = control.snapshot().completed;
                if now != last {
                    (last, since) = (now, Instant::now());
                }
            }
        }
        seen.push((iv.index, iv.counts.ok, iv.latency.len()));
    })
    .unwrap();
    assert!(r.counts.conserved(), "{:?}", r.counts);
    assert!(r.counts.ok > 0, "{:?}", r.counts);
    assert!(
        r.interval_waits > 0,
        "the worker never waited for a consumer that stopped"
    );
    let idx: Vec<u64> = seen.iter().map(|s| s.0).collect();
    assert_eq!(
        idx,
        (0..seen.len() as u64).collect::<Vec<_>>(),
        "every interval, in order"
    );
    assert_eq!(seen.iter().map(|s| s.1).sum::<u64>(), r.counts.ok);
    assert_eq!(seen.iter().map(|s| s.2).sum::<u64>(), r.latency.len());
}
