use super::Wakes;

/// Every deadline due at `now`, in the order taken.
fn due(w: &mut Wakes, now: u64) -> Vec<(usize, u32)> {
    std::iter::from_fn(|| w.take_due(now)).collect()
}

#[test]
fn the_earliest_deadline_comes_first() {
    let mut w = Wakes::new(3);
    assert_eq!(w.next(), None);
    w.set(0, 1, Some(30));
    w.set(1, 1, Some(10));
    w.set(2, 1, Some(20));
    assert_eq!(w.next(), Some(10));
    assert_eq!(w.take_due(9), None);
    assert_eq!(due(&mut w, 25), vec![(1, 1), (2, 1)]);
    assert_eq!(w.next(), Some(30));
}

#[test]
fn a_deadline_moved_later_does_not_wake_early() {
    let mut w = Wakes::new(2);
    w.set(0, 1, Some(10));
    w.set(0, 1, Some(50));
    assert_eq!(w.next(), Some(50), "the old instant is stale");
    assert_eq!(due(&mut w, 10), vec![]);
    assert_eq!(due(&mut w, 50), vec![(0, 1)]);
}

#[test]
fn a_deadline_moved_earlier_wakes_at_the_new_instant_once() {
    let mut w = Wakes::new(1);
    w.set(0, 1, Some(50));
    w.set(0, 1, Some(10));
    assert_eq!(w.next(), Some(10));
    assert_eq!(due(&mut w, 10), vec![(0, 1)]);
    assert_eq!(
        due(&mut w, 100),
        vec![],
        "the old instant must not fire too"
    );
    assert_eq!(w.next(), None);
}

#[test]
fn a_cleared_deadline_never_fires() {
    let mut w = Wakes::new(2);
    w.set(0, 1, Some(10));
    w.set(1, 1, Some(20));
    w.set(0, 1, None);
    assert_eq!(w.next(), Some(20));
    assert_eq!(due(&mut w, 100), vec![(1, 1)]);
}

#[test]
fn a_deadline_moved_away_and_back_fires_once() {
    let mut w = Wakes::new(1);
    w.set(0, 1, Some(10));
    w.set(0, 1, Some(20));
    w.set(0, 1, Some(10));
    assert_eq!(due(&mut w, 100), vec![(0, 1)]);
}

#[test]
fn setting_the_same_deadline_again_adds_nothing() {
    let mut w = Wakes::new(1);
    w.set(0, 1, Some(10));
    w.set(0, 1, Some(10));
    assert_eq!(w.entries(), 1);
    assert_eq!(due(&mut w, 10), vec![(0, 1)]);
}

#[test]
fn a_new_generation_replaces_the_old_connections_deadline() {
    let mut w = Wakes::new(1);
    w.set(0, 1, Some(10));
    // The slot reconnected: same instant, a new connection.
    w.set(0, 2, Some(10));
    assert_eq!(
        due(&mut w, 10),
        vec![(0, 2)],
        "one wake, for the new connection"
    );
}

#[test]
fn a_taken_deadline_is_gone_until_set_again() {
    let mut w = Wakes::new(1);
    w.set(0, 1, Some(10));
    assert_eq!(w.take_due(10), Some((0, 1)));
    assert_eq!(w.take_due(10), None);
    assert_eq!(w.next(), None);
    w.set(0, 1, Some(10));
    assert_eq!(
        w.take_due(10),
        Some((0, 1)),
        "the same instant set again fires again"
    );
}

#[test]
fn the_heap_stays_bounded_under_many_moves() {
    let slots = 8;
    let mut w = Wakes::new(slots);
    for i in 0..100_000u64 {
        let slot = (i % slots as u64) as usize;
        // Deadlines move both ways, as QUIC's do with each packet.
        let at = 1_000 + (i * 7919) % 5_000;
        w.set(slot, 1, Some(at));
        assert!(w.entries() <= 2 * slots, "{} entries", w.entries());
    }
    let fired = due(&mut w, u64::MAX);
    assert_eq!(fired.len(), slots, "each slot once: {fired:?}");
    let mut seen: Vec<usize> = fired.iter().map(|&(s, _)| s).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), slots);
}

#[test]
fn the_heap_stays_bounded_when_deadlines_are_cleared() {
    let mut w = Wakes::new(4);
    for i in 0..10_000u64 {
        let slot = (i % 4) as usize;
        w.set(slot, 1, Some(i));
        w.set(slot, 1, None);
        assert!(w.entries() <= 2 * w.live);
    }
    assert_eq!(w.next(), None);
    assert_eq!(w.entries(), 0);
}

#[test]
fn no_timers_allocate_nothing() {
    let w = Wakes::new(0);
    assert_eq!(w.heap.capacity(), 0);
    assert_eq!(w.slots.capacity(), 0);
}
