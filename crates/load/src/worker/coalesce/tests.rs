use super::*;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

#[test]
fn auto_waits_a_fortieth_of_the_latency_when_enough_responses_are_due() {
    // (recent mean latency, in flight, wait)
    let table = [
        // TLS h2 at 100 connections x 10 streams against nginx: ~6 ms, 1000 in flight:
        // 150 µs, 25 responses due.
        (6 * MS, 1000, 150 * US),
        // Capped at 200 µs.
        (20 * MS, 1000, 200 * US),
        // 1.6 ms and 400 in flight: 40 µs, 10 responses due.
        (1600 * US, 400, 40 * US),
        // 1/40th below 10 µs: a timer costs what the wake-up would.
        (300 * US, 1000, 0),
        // ab's -c 10 against a fast server: 66 µs.
        (66 * US, 10, 0),
        // 10 x 10 streams at 0.7 ms: 17.5 µs, 2.5 responses due, below 4.
        (700 * US, 100, 0),
        // 160 in flight over 1/40th is exactly 4 due.
        (800 * US, 160, 20 * US),
        (800 * US, 159, 0),
        // 20 ms and 300 in flight: 200 µs (capped), 3 responses due.
        (20 * MS, 300, 0),
        // Nothing measured yet, or nothing in flight.
        (0, 1000, 0),
        (6 * MS, 0, 0),
        (u64::MAX, u64::MAX, 200 * US),
    ];
    for (latency, in_flight, want) in table {
        assert_eq!(
            auto_wait_ns(latency, || in_flight),
            want,
            "latency {latency} ns, {in_flight} in flight"
        );
    }
}

#[test]
fn a_wait_asks_for_less_by_what_sleeps_overshot() {
    let mut c = Coalescer {
        mode: Coalesce::Auto,
        overshoot_ns: 0,
        waits: 0,
        waited_ns: 0,
    };
    assert_eq!(c.ask_ns(50 * US), 50 * US, "nothing learnt yet");
    assert_eq!(c.ask_ns(0), 0, "no wait asks for none");
    // Sleeps that last 35 µs longer than asked, as a VM's timer does.
    for _ in 0..64 {
        let ask = c.ask_ns(50 * US).max(1);
        c.waited(ask, ask + 35 * US);
    }
    let ask = c.ask_ns(50 * US);
    assert!((14 * US..=16 * US).contains(&ask), "asks {ask} ns");
    assert_eq!(c.waits, 64);
    // A wait shorter than the overshoot is not made, and each one skipped lowers the
    // overshoot learnt, so that the wait is tried again on a machine that got quieter.
    assert_eq!(c.ask_ns(30 * US), 0);
    let mut skipped = 1;
    while c.ask_ns(30 * US) == 0 {
        skipped += 1;
        assert!(skipped < 10_000, "never tried again");
    }
    assert!(skipped > 100, "tried again after {skipped} skips");
}

#[test]
fn a_preempted_sleep_counts_as_at_most_twice_the_longest_wait_late() {
    let mut c = Coalescer {
        mode: Coalesce::Auto,
        overshoot_ns: 0,
        waits: 0,
        waited_ns: 0,
    };
    // A 100 µs sleep that lasted 50 ms (the thread was preempted): the whole 50 ms counts
    // as waited, but the overshoot learnt is bounded.
    c.waited(100 * US, 50 * MS);
    assert_eq!(c.waited_ns, 50 * MS);
    assert_eq!(c.overshoot_ns, 400 * US / 8);
}

#[test]
fn the_open_model_and_off_never_wait() {
    let mut plan = crate::Plan::new(crate::Target::parse("http://127.0.0.1:1/").unwrap());
    plan.coalesce = Coalesce::Fixed(std::time::Duration::from_micros(50));
    plan.arrival = crate::Arrival::Open {
        rate: crate::Rate::constant(1000.0),
    };
    let open = Coalescer::new(plan.coalesce_in_effect());
    assert_eq!(open.wait_ns(6 * MS, || 1000), 0);
    let off = Coalescer::new(Coalesce::Off);
    assert_eq!(off.wait_ns(6 * MS, || 1000), 0);
    let fixed = Coalescer::new(Coalesce::Fixed(std::time::Duration::from_micros(30)));
    assert_eq!(
        fixed.wait_ns(66 * US, || 1),
        30 * US,
        "a fixed wait is made whatever the load"
    );
}
