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
