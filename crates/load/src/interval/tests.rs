use super::*;
use std::sync::mpsc::channel;

#[test]
fn parts_from_skewed_workers_merge_into_consecutive_intervals() {
    let (tx, rx) = channel();
    let (spare_a, spares_a) = channel();
    let (spare_b, spares_b) = channel();
    let mut a = CurrentInterval::new(0, Duration::from_millis(10), tx.clone(), spares_a);
    let mut b = CurrentInterval::new(1, Duration::from_millis(10), tx, spares_b);
    let mut ca = Counts::default();
    let mut cb = Counts::default();
    let ms = 1_000_000;
    // Worker a: one response in each of intervals 0, 1 and 3; b: two in 0, then idle
    // until it finishes inside interval 3.
    a.latency.record_ns(5 * ms);
    ca.ok += 1;
    a.rotate(12 * ms, &ca);
    a.latency.record_ns(7 * ms);
    ca.ok += 1;
    a.rotate(35 * ms, &ca);
    a.latency.record_ns(9 * ms);
    ca.ok += 1;
    b.latency.record_ns(ms);
    b.latency.record_ns(2 * ms);
    cb.ok += 2;
    b.rotate(31 * ms, &cb);
    b.finish(&cb);
    a.finish(&ca);

    let mut c = Collector::new(Duration::from_millis(10), vec![spare_a, spare_b]);
    let mut seen: Vec<Interval> = Vec::new();
    for part in rx.try_iter() {
        c.add(part, &mut |iv| seen.push(iv.clone()));
    }
    assert_eq!(seen.len(), 3, "0, 1 and 2 complete before the end");
    c.finish(Duration::from_millis(37), &mut |iv| seen.push(iv.clone()));
    let got: Vec<(u64, u64, u64, u64)> = seen
        .iter()
        .map(|iv| {
            (
                iv.index,
                iv.counts.ok,
                iv.latency.len(),
                iv.duration.as_millis() as u64,
            )
        })
        .collect();
    assert_eq!(
        got,
        [(0, 3, 3, 10), (1, 1, 1, 10), (2, 0, 0, 10), (3, 1, 1, 7)]
    );
    assert_eq!(c.total.len(), 5, "the total is every part merged");
    assert_eq!(seen[3].start, Duration::from_millis(30));
}

/// Issue 25: each hand-off made two new 270 KB histograms, and nothing bounded how many
/// a slow consumer let pile up. A worker now makes at most `PAIRS` pairs, gets
/// them back emptied once merged, and waits (counted) when all are out.
#[test]
fn a_worker_reuses_its_histograms_and_waits_when_all_are_out() {
    let (tx, rx) = channel();
    let (spare_tx, spares) = channel();
    let mut w = CurrentInterval::new(0, Duration::from_millis(1), tx, spares);
    let pairs = w.pairs;
    assert_eq!(pairs, PAIRS);
    let mut counts = Counts::default();
    let ms = 1_000_000;
    // No collector yet: the worker makes its pairs, up to the bound, and never waits.
    for i in 1..pairs as u64 {
        w.latency.record_ns(i * ms);
        counts.ok += 1;
        w.rotate(i * ms, &counts);
    }
    assert_eq!((w.made, w.waits), (pairs, 0));
    let parts: Vec<Part> = rx.try_iter().collect();
    assert_eq!(parts.len(), pairs - 1);
    // The collector merges them and sends every pair back, emptied.
    let mut c = Collector::new(Duration::from_millis(1), vec![spare_tx]);
    let mut seen = Vec::new();
    for part in parts {
        c.add(part, &mut |iv| seen.push((iv.index, iv.latency.len())));
    }
    let want: Vec<(u64, u64)> = (0..pairs as u64 - 1).map(|i| (i, 1)).collect();
    assert_eq!(seen, want);
    // The next hand-offs take the pairs sent back: no new one, no wait, and each starts
    // empty.
    for i in pairs as u64..2 * pairs as u64 - 1 {
        assert!(w.latency.is_empty() && w.service.is_empty());
        w.latency.record_ns(i * ms);
        counts.ok += 1;
        w.rotate(i * ms, &counts);
    }
    assert_eq!((w.made, w.waits), (pairs, 0));
    // Every pair is out again and none comes back until the collector runs: the next
    // hand-off waits, counted, and goes on once one is back. The collector starts only
    // once the worker sleeps in that wait: started at once, it could send a pair back
    // before the hand-off looked, and the hand-off would not wait (a flaky failure).
    let (tid_tx, tid_rx) = channel();
    let worker = std::thread::spawn(move || {
        let _ = tid_tx.send(nix::unistd::gettid().as_raw());
        w.latency.record_ns(ms);
        counts.ok += 1;
        w.rotate(200 * ms, &counts);
        w.finish(&counts);
        (w, counts)
    });
    let tid = tid_rx.recv().unwrap();
    testkit::wait_until(
        Duration::from_secs(30),
        "the worker to wait for a pair",
        || {
            probe::thread_waits(std::process::id() as i32).is_ok_and(|threads| {
                threads
                    .iter()
                    .any(|t| t.tid == tid && t.wait == probe::Wait::Futex)
            })
        },
    );
    let collector = std::thread::spawn(move || {
        let mut total = 0;
        for part in rx {
            c.add(part, &mut |iv| total += iv.latency.len());
        }
        c.finish(Duration::from_millis(300), &mut |iv| {
            total += iv.latency.len()
        });
        total
    });
    let (w, counts) = worker.join().unwrap();
    assert!(w.waits >= 1, "a hand-off with every pair out waits");
    assert_eq!(w.made, pairs, "and makes no new pair");
    drop(w);
    let total = collector.join().unwrap();
    assert_eq!(
        total + seen.len() as u64,
        counts.ok,
        "every response is in one interval"
    );
}
