use super::*;

fn open(rate: f64, worker: usize, threads: usize) -> Schedule {
    Schedule::new(
        Arrival::Open {
            rate: Rate::constant(rate),
        },
        // Long enough for every instant the tests ask of it (7 req/s: 143 s).
        Stop::Duration(Duration::from_secs(1000)),
        None,
        Shard::WHOLE,
        worker,
        threads,
    )
}

/// Every worker's due instants, in the order they were granted, one request at a time.
fn granted_instants(rate: f64, threads: usize, per_worker: u64) -> Vec<u64> {
    let mut all = Vec::new();
    for w in 0..threads {
        let mut s = open(rate, w, threads);
        let mut now = 0;
        while all.len() < (w + 1) * per_worker as usize {
            match s.grant(1, now) {
                Grant::Now { n, first } => {
                    assert_eq!(n, 1);
                    let due = s.start_ns(first, now);
                    assert!(due <= now, "granted before it was due");
                    all.push(due);
                }
                Grant::Later => now = s.next_due_ns().unwrap(),
                Grant::Never => panic!("an open schedule without -n never ends early"),
            }
        }
    }
    all.sort_unstable();
    all
}

#[test]
fn open_model_spreads_every_worker_evenly() {
    for (rate, threads) in [
        (1000.0, 1),
        (1000.0, 2),
        (20_000.0, 3),
        (999_999.0, 4),
        (7.0, 5),
    ] {
        let interval = 1e9 / rate;
        let due = granted_instants(rate, threads, 200);
        // The whole run's arrivals: exactly j * interval, with no duplicates.
        for (j, &t) in due.iter().enumerate() {
            let exact = (j as f64 * interval) as u64;
            assert!(
                t.abs_diff(exact) <= 1,
                "rate {rate} x{threads}: #{j} at {t}, not {exact}"
            );
        }
        assert!(
            due.windows(2).all(|w| w[1] > w[0]),
            "rate {rate} x{threads}: two requests due at one instant"
        );
    }
}

#[test]
fn due_by_agrees_with_due_ns_at_every_boundary() {
    let ramp = Rate::parse("1000..20000/1s").unwrap();
    let steps = Rate::parse("500+500/10ms..5000").unwrap();
    for (rate, phase, stride) in [
        (Rate::constant(3.0), 0, 1),
        (Rate::constant(1e9 / 333.3), 2, 3),
        (Rate::constant(1000.0), 1, 2),
        (ramp, 1, 2),
        (steps, 0, 3),
    ] {
        let r = Due {
            rate,
            phase,
            stride,
        };
        for k in 0..500 {
            let t = r.due_ns(k);
            assert_eq!(r.due_by(t), k + 1, "at its own instant, #{k} is due");
            if t > 0 {
                assert!(r.due_by(t - 1) <= k, "a ns earlier, #{k} is not");
            }
        }
    }
}

/// Under a ramp, every worker's grants follow the schedule: the requests due in each
/// 100 ms window, over all workers, are the integral of the rate over it, within one.
#[test]
fn a_ramp_grants_what_its_integral_says() {
    let rate = Rate::parse("1000..20000/2s").unwrap();
    let threads = 3;
    let mut due = Vec::new();
    for w in 0..threads {
        let mut s = Schedule::new(
            Arrival::Open { rate: rate.clone() },
            Stop::Duration(Duration::from_secs(2)),
            None,
            Shard::WHOLE,
            w,
            threads,
        );
        let mut now = 0;
        while let Some(t) = s.next_due_ns() {
            if t >= 2_000_000_000 {
                break;
            }
            now = now.max(t);
            if let Grant::Now { n, first } = s.grant(1_000_000, now) {
                due.extend((first..first + n).map(|k| s.start_ns(k, now)));
            }
        }
    }
    assert_eq!(due.len() as f64, rate.due_by(2e9).ceil(), "21,000 in all");
    for window in 0..20u64 {
        let (a, b) = (window * 100_000_000, (window + 1) * 100_000_000);
        let n = due.iter().filter(|&&t| t >= a && t < b).count() as f64;
        let want = rate.due_by(b as f64) - rate.due_by(a as f64);
        assert!(
            (n - want).abs() <= 1.0,
            "window {window}: {n} against {want}"
        );
    }
}

#[test]
fn open_model_grants_only_what_is_due_and_counts_the_rest_unsent() {
    let mut s = open(1000.0, 0, 1);
    assert_eq!(s.grant(4, 0), Grant::Now { n: 1, first: 0 });
    assert_eq!(s.grant(4, 999_999), Grant::Later);
    assert_eq!(s.next_due_ns(), Some(1_000_000));
    assert_eq!(s.grant(4, 3_000_000), Grant::Now { n: 3, first: 1 });
    assert_eq!(s.start_ns(3, 3_000_000), 3_000_000);
    assert_eq!(s.unsent(9_500_000), 6, "due by 9.5 ms: 10; granted: 4");
    s.stop();
    assert_eq!(s.grant(4, 10_000_000), Grant::Never);
}

#[test]
fn a_worker_late_past_the_end_sends_nothing_due_after_it() {
    // 400 req/s over 500 ms: the instants 0, 2.5, ..., 497.5 ms (200). A worker that first
    // comes round at 600 ms is granted those, not the 40 due after the end.
    let mut s = Schedule::new(
        Arrival::Open {
            rate: Rate::constant(400.0),
        },
        Stop::Duration(Duration::from_millis(500)),
        None,
        Shard::WHOLE,
        0,
        1,
    );
    assert_eq!(
        s.unsent(600_000_000),
        200,
        "unsent: only what fell due in the run"
    );
    assert_eq!(s.grant(1000, 600_000_000), Grant::Now { n: 200, first: 0 });
    assert_eq!(s.unsent(600_000_000), 0);
    // And nothing is left to wait for: the next instant is past the end.
    assert_eq!(s.grant(1000, 600_000_000), Grant::Never);
}

#[test]
fn closed_model_refills_on_each_response() {
    let budget = Arc::new(Budget::new(5, 1));
    let mut s = Schedule::new(
        Arrival::Closed,
        Stop::Requests(5),
        Some(budget),
        Shard::WHOLE,
        0,
        1,
    );
    assert_eq!(s.next_due_ns(), None, "nothing waits for an instant");
    assert_eq!(s.grant(2, 10), Grant::Now { n: 2, first: 0 });
    assert_eq!(s.start_ns(0, 10), 10, "timed from when it was granted");
    // Each response frees one slot, and the slot is refilled at once.
    assert_eq!(s.grant(1, 20), Grant::Now { n: 1, first: 2 });
    assert_eq!(s.grant(1, 30), Grant::Now { n: 1, first: 3 });
    assert_eq!(s.grant(3, 40), Grant::Now { n: 1, first: 4 });
    assert!(
        !s.exhausted(),
        "the budget's end is only seen at the next claim"
    );
    assert_eq!(s.grant(1, 50), Grant::Never);
    assert!(s.exhausted());
    assert_eq!(s.unsent(50), 0);
}

#[test]
fn a_timed_run_ends_at_its_end() {
    let mut s = Schedule::new(
        Arrival::Closed,
        Stop::Duration(Duration::from_millis(5)),
        None,
        Shard::WHOLE,
        0,
        1,
    );
    assert!(!s.ended(4_999_999));
    assert_eq!(s.grant(1, 0), Grant::Now { n: 1, first: 0 });
    assert!(s.ended(5_000_000));
    assert_eq!(s.grant(1, 5_000_000), Grant::Never);
    assert!(!s.exhausted(), "not spent: stopped");
}

#[test]
fn budget_claims_are_shared_exactly() {
    let budget = Arc::new(Budget::new(1000, 3));
    let mut workers: Vec<Schedule> = (0..3)
        .map(|w| {
            Schedule::new(
                Arrival::Closed,
                Stop::Requests(1000),
                Some(budget.clone()),
                Shard::WHOLE,
                w,
                3,
            )
        })
        .collect();
    let mut total = 0;
    let mut live = true;
    while live {
        live = false;
        for s in &mut workers {
            if let Grant::Now { n, .. } = s.grant(7, 0) {
                total += n;
                live = true;
            }
        }
    }
    assert_eq!(total, 1000);
}
/// Every due instant a schedule grants before `end_ns`, one request at a time.
fn all_due(mut s: Schedule, end_ns: u64) -> Vec<u64> {
    let mut due = Vec::new();
    let mut now = 0;
    loop {
        match s.grant(1, now) {
            Grant::Now { first, .. } => due.push(s.start_ns(first, now)),
            Grant::Later => match s.next_due_ns() {
                Some(t) if t < end_ns => now = t,
                _ => break,
            },
            Grant::Never => break,
        }
    }
    due
}

#[test]
fn shards_together_send_exactly_the_unsharded_arrivals() {
    let end_ns = 2_000_000_000;
    for shape in [
        "1500",
        "1000..20000/2s",
        "1000/1s,5000/1s",
        "1000+1000/500ms..4000",
    ] {
        let rate = Rate::parse(shape).unwrap();
        let arrival = Arrival::Open { rate };
        let stop = Stop::Duration(Duration::from_nanos(end_ns));
        let whole = all_due(
            Schedule::new(arrival.clone(), stop, None, Shard::WHOLE, 0, 1),
            end_ns,
        );
        assert!(whole.len() > 1000, "{shape}: {}", whole.len());
        for count in 1..=4u64 {
            for threads in 1..=3usize {
                let mut union = Vec::new();
                for index in 0..count {
                    let mut mine = Vec::new();
                    for w in 0..threads {
                        let shard = Shard { index, count };
                        let s = Schedule::new(arrival.clone(), stop, None, shard, w, threads);
                        mine.extend(all_due(s, end_ns));
                    }
                    // Shard i's arrivals are the whole schedule's i, i+N, i+2N...
                    mine.sort_unstable();
                    let want: Vec<u64> = whole
                        .iter()
                        .copied()
                        .skip(index as usize)
                        .step_by(count as usize)
                        .collect();
                    assert_eq!(
                        mine, want,
                        "{shape} shard {index}/{count} threads {threads}"
                    );
                    union.extend(mine);
                }
                union.sort_unstable();
                assert_eq!(union, whole, "{shape} N={count} T={threads}");
            }
        }
    }
}
