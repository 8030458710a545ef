use super::*;

fn delay(p99_us: f64, latency_p50_us: f64, stamped_reads: u64) -> ClientDelay {
    ClientDelay {
        latency_clock: LatencyClock::Kernel,
        p50_us: 2.0,
        p99_us,
        max_us: 38.0,
        latency_p50_us,
        stamped_reads,
        unstamped_reads: 0,
        send_stamps: None,
    }
}

#[test]
fn client_bound_when_the_p99_delay_passes_a_tenth_of_the_p50_latency() {
    assert!(!delay(9.0, 100.0, 10).client_bound());
    assert!(!delay(10.0, 100.0, 10).client_bound());
    assert!(delay(10.5, 100.0, 10).client_bound());
    assert!(delay(10.5, 100.0, 10).warning().is_some());
    // Without stamps nothing was measured: no verdict.
    assert!(!delay(50.0, 100.0, 0).client_bound());
}

#[test]
fn the_line_says_what_the_client_added() {
    assert_eq!(
        delay(9.0, 100.0, 10).line(),
        "the client added at most 38.0µs (p99 9.0µs, p50 2.0µs) to any latency"
    );
    assert!(delay(9.0, 100.0, 0).line().contains("not measured"));
}

#[test]
fn a_run_with_some_unstamped_reads_says_how_many() {
    let mut d = delay(9.0, 100.0, 990);
    d.unstamped_reads = 10;
    assert_eq!(
        d.line(),
        "the client added at most 38.0µs (p99 9.0µs, p50 2.0µs) to any latency; \
         10 of 1000 reads had no stamp: their latencies are from the read"
    );
}

#[test]
fn merging_keeps_the_worst_parts_ratio_not_each_figures_largest() {
    // A: 20 µs against 100 µs is client-bound. B: 1 µs against 1000 µs is not. The
    // largest of each (20 against 1000) would not be.
    let a = delay(20.0, 100.0, 10);
    let mut b = delay(1.0, 1000.0, 10);
    b.max_us = 50.0;
    for merged in [a.merge(b), b.merge(a)] {
        assert!(merged.client_bound(), "{merged:?}");
        assert_eq!((merged.p99_us, merged.latency_p50_us), (20.0, 100.0));
        assert_eq!(merged.max_us, 50.0);
        assert_eq!(merged.stamped_reads, 20);
    }
}

#[test]
fn merging_kernel_and_read_clocks_is_mixed_not_no_stamps() {
    let a = delay(1.0, 100.0, 10);
    let mut b = delay(1.0, 100.0, 0);
    b.latency_clock = LatencyClock::ReadAsked;
    assert_eq!(a.merge(b).latency_clock, LatencyClock::Mixed);
    assert_eq!(a.merge(a).latency_clock, LatencyClock::Kernel);
    // The part without stamps has no verdict: the stamped part's figures stand.
    b.p99_us = 500.0;
    assert_eq!(a.merge(b).p99_us, 1.0);
}
