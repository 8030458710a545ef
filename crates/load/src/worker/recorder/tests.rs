use std::time::Duration;

use super::*;

/// A recorder on a clock whose zero was `age` ago, with stamps read on the monotonic clock
/// as they are (a zero offset).
fn recorder(age: Duration) -> Recorder {
    Recorder::for_test(age)
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

#[test]
fn a_send_stamp_is_matched_to_its_sample_by_key_and_recorded_once() {
    let mut r = recorder(Duration::ZERO);
    r.open = true;
    // Due at 1 ms, handed over at 3 ms; its write's last byte is key 99.
    let mut sample = Some(Sample::new(100, 1_000_000, 3_000_000, true));
    sample.as_mut().unwrap().written(100, 100, false);
    // A stamp of another write (a handshake flight) is counted, not matched.
    r.send_stamp(
        &mut sample,
        SendStamp {
            key: 40,
            stamp_ns: 2_000_000,
        },
    );
    assert!(sample.is_some());
    // The request's: left at 10 ms (the offset is zero: realtime reads as monotonic).
    r.send_stamp(
        &mut sample,
        SendStamp {
            key: 99,
            stamp_ns: 10_000_000,
        },
    );
    assert!(sample.is_none(), "the sample is done");
    // A second stamp with its key finds no sample.
    r.send_stamp(
        &mut sample,
        SendStamp {
            key: 99,
            stamp_ns: 11_000_000,
        },
    );
    let c = r.send_stamps;
    assert_eq!((c.returned, c.matched), (3, 1), "{c:?}");
    assert_eq!(r.send_lateness_kernel.len(), 1);
    let lateness = r.send_lateness_kernel.percentile_ns(100.0);
    assert!((8_900_000..=9_100_000).contains(&lateness), "{lateness}");
    let delay = r.send_delay_kernel.percentile_ns(100.0);
    assert!((6_900_000..=7_100_000).contains(&delay), "{delay}");
}

#[test]
fn a_late_or_closed_model_sample_records_its_send_delay_only() {
    for (open, on_time) in [(true, false), (false, true)] {
        let mut r = recorder(Duration::ZERO);
        r.open = open;
        let mut sample = Some(Sample::new(10, 0, 0, on_time));
        sample.as_mut().unwrap().written(10, 10, false);
        r.send_stamp(
            &mut sample,
            SendStamp {
                key: 9,
                stamp_ns: 5_000,
            },
        );
        assert_eq!(r.send_delay_kernel.len(), 1);
        assert_eq!(
            r.send_lateness_kernel.len(),
            0,
            "open {open} on time {on_time}"
        );
    }
}
