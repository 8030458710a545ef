use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::{Counts, StampCounts, StatusSet};

/// A recorder on a clock whose zero was `age` ago, with stamps read on the monotonic clock
/// as they are (a zero offset).
fn recorder(age: Duration) -> Recorder {
    let (tx, _rx) = mpsc::channel();
    let (_spare_tx, spares) = mpsc::channel();
    Recorder {
        counts: Counts::default(),
        interval: CurrentInterval::new(0, Duration::from_secs(3600), tx, spares),
        connect: Latency::new(),
        handshake_full: Latency::new(),
        handshake_resumed: Latency::new(),
        tls: None,
        status: vec![0; 1000],
        shapes: vec![(0, 0); 1],
        fail_status: StatusSet::none(),
        open: false,
        lateness: Latency::new(),
        late: Latency::new(),
        recent_latency_ns: 0,
        clock: crate::LatencyClock::Kernel,
        kernel_latency: None,
        offset: ClockOffset::from_readings(0, 0),
        arrived_ns: None,
        read_ns: 0,
        epoch: Instant::now() - age,
        stamps: StampCounts::default(),
    }
}

fn started_at_zero() -> Pending {
    Pending {
        start_ns: 0,
        sent_ns: 0,
        shape: 0,
        stream: 0,
        retries: 0,
    }
}

#[test]
fn a_stale_poll_instant_does_not_date_the_read() {
    // The poll returned 1 µs into the run; this read comes a second later, after the
    // batch's other connections: its read latency runs to the read, not to the poll.
    let mut rec = recorder(Duration::from_secs(1));
    rec.arrived(None, 1_000);
    rec.response(200, started_at_zero());
    let read = rec.interval.read_latency.percentile_ns(100.0);
    assert!(
        read >= 999_000_000,
        "read latency {read} ns, not to the read"
    );
}

#[test]
fn a_stamp_after_the_poll_instant_is_not_clamped_to_it() {
    // Bytes stamped 0.5 s into the run, after the poll returned (1 µs) and before the read
    // (1 s): the kernel latency is 0.5 s and the client's delay the rest.
    let mut rec = recorder(Duration::from_secs(1));
    rec.arrived(Some(500_000_000), 1_000);
    rec.response(200, started_at_zero());
    let kernel = rec.interval.latency.percentile_ns(100.0);
    assert!(
        kernel.abs_diff(500_000_000) < 1_000_000,
        "kernel latency {kernel} ns"
    );
    let delay = rec.interval.client_delay.percentile_ns(100.0);
    assert!(delay >= 490_000_000, "client delay {delay} ns");
}
