use std::time::Duration;

use crate::window::Spent;

use super::client_of;

fn usage(user_ms: u64, sys_ms: u64) -> probe::OwnUsage {
    probe::OwnUsage {
        user: Duration::from_millis(user_ms),
        sys: Duration::from_millis(sys_ms),
        max_rss_bytes: 1 << 20,
        ..probe::OwnUsage::default()
    }
}

#[test]
fn the_client_carries_every_figure_of_its_window() {
    let spent = Spent {
        wall: Duration::from_secs(1),
        client: probe::OwnUsage {
            voluntary_ctxt: 250,
            involuntary_ctxt: 10,
            ..usage(600, 200)
        },
        beside: Some(usage(30, 10)),
        helpers: usage(5, 5),
        tcp: None,
        udp: None,
    };
    let coalesced = load::Coalesced {
        waits: 7,
        waited: Duration::from_millis(70),
    };
    let c = client_of((1000, Duration::from_millis(100), coalesced), &spent, 2);
    assert_eq!(c.cpus, 2);
    assert!((c.cpu_user_s - 0.6).abs() < 1e-9);
    assert!((c.cpu_sys_s - 0.2).abs() < 1e-9);
    assert!((c.cpu_percent - 40.0).abs() < 1e-9, "{}", c.cpu_percent);
    assert!((c.cpu_us_per_request.unwrap() - 800.0).abs() < 1e-9);
    assert_eq!(c.max_rss_bytes, 1 << 20);
    assert_eq!(c.voluntary_ctxt_per_request, Some(0.25));
    assert_eq!(c.involuntary_ctxt_per_request, Some(0.01));
    assert!((c.spin_s - 0.1).abs() < 1e-9);
    assert_eq!(c.coalesced_waits, 7);
    assert!((c.coalesced_s - 0.07).abs() < 1e-9);
    assert!(!c.saturated);
    assert_eq!(c.probe_cpu_s, Some(0.01));
    assert!((c.dashboard_cpu_s.unwrap() - 0.04).abs() < 1e-9);
}

#[test]
fn a_client_busy_but_spinning_is_not_saturated() {
    let spent = Spent {
        wall: Duration::from_secs(1),
        client: usage(1900, 0),
        beside: None,
        helpers: probe::OwnUsage::default(),
        tcp: None,
        udp: None,
    };
    let busy = client_of((10, Duration::ZERO, load::Coalesced::default()), &spent, 2);
    assert!(busy.saturated);
    let spinning = client_of(
        (10, Duration::from_millis(900), load::Coalesced::default()),
        &spent,
        2,
    );
    assert!(!spinning.saturated);
    assert_eq!(spinning.voluntary_ctxt_per_request, Some(0.0));
    assert_eq!(spinning.saturated, spinning.saturated_by_rule());
    assert_eq!(spinning.dashboard_cpu_s, None);
}

#[test]
fn client_windows_share_the_client_cpus() {
    let used = probe::OwnUsage {
        user: Duration::from_secs(1),
        sys: Duration::from_millis(500),
        max_rss_bytes: 1 << 20,
        ..probe::OwnUsage::default()
    };
    let cases = [
        // (elapsed s, CPUs, completed) → (CPU %, µs per request)
        ((1.5, 1, 3), (100.0, Some(500_000.0))),
        ((3.0, 2, 1500), (25.0, Some(1000.0))),
        ((1.5, 4, 0), (25.0, None)),
    ];
    for ((elapsed, cpus, completed), (percent, per_req)) in cases {
        let spent = Spent {
            wall: Duration::from_secs_f64(elapsed),
            client: used,
            beside: None,
            helpers: probe::OwnUsage::default(),
            tcp: None,
            udp: None,
        };
        let w = client_of(
            (completed, Duration::ZERO, load::Coalesced::default()),
            &spent,
            cpus,
        );
        assert_eq!(
            (
                w.cpu_user_s,
                w.cpu_sys_s,
                w.cpu_percent,
                w.cpu_us_per_request
            ),
            (1.0, 0.5, percent, per_req),
            "{elapsed} s on {cpus} CPUs"
        );
    }
}

#[test]
fn a_spinning_client_at_full_cpu_is_not_client_bound_and_its_work_leaves_the_spin_out() {
    // `--idle spin` on one CPU: 100% busy, 90% of it polls that found nothing.
    let spent = Spent {
        wall: Duration::from_secs(1),
        client: usage(600, 400),
        beside: None,
        helpers: probe::OwnUsage::default(),
        tcp: None,
        udp: None,
    };
    let spun = (1000, Duration::from_millis(900), load::Coalesced::default());
    let c = client_of(spun, &spent, 1);
    assert!((c.cpu_percent - 100.0).abs() < 1e-9, "{}", c.cpu_percent);
    assert!(!c.saturated, "{c:?}");
    assert!(!c.saturated_by_rule(), "{c:?}");
    assert!((c.cpu_us_per_request.unwrap() - 1000.0).abs() < 1e-9);
    assert!(
        (c.work_us_per_request.unwrap() - 100.0).abs() < 1e-9,
        "{c:?}"
    );
    // Without spin the work is the CPU, and the same client is client-bound.
    let busy = client_of(
        (1000, Duration::ZERO, load::Coalesced::default()),
        &spent,
        1,
    );
    assert!(busy.saturated);
    assert_eq!(busy.work_us_per_request, busy.cpu_us_per_request);
}

/// Every QUIC count, each a distinct value, lands in its own field of the report: a field
/// copied into another's place (two frame types swapped) would show here.
#[test]
fn every_quic_count_reaches_its_own_report_field() {
    let frames = |b: u64| load::QuicFrames {
        acks: b + 1,
        crypto: b + 2,
        stream: b + 3,
        ping: b + 4,
        max_data: b + 5,
        max_stream_data: b + 6,
        max_streams_bidi: b + 7,
        streams_blocked_bidi: b + 8,
        reset_stream: b + 9,
        stop_sending: b + 10,
        connection_close: b + 11,
    };
    let h = load::H3Counts {
        retries: 99,
        quic: load::QuicCounts {
            send_calls: 1,
            datagrams_sent: 2,
            bytes_sent: 3,
            receive_calls: 4,
            datagrams_received: 5,
            bytes_received: 6,
            connections: 7,
            handshakes_failed: 8,
            packets_sent: 9,
            packets_lost: 10,
            bytes_lost: 11,
            congestion_events: 12,
            frames_sent: frames(100),
            frames_received: frames(200),
            at_end: vec![load::PathAtEnd {
                rtt_ns: 13_000,
                cwnd_bytes: 14,
            }],
        },
    };
    let r = super::http3_report(&h, 2);
    assert_eq!(r.retries, 99);
    let q = r.quic.expect("QUIC's figures");
    assert_eq!(
        [
            q.send_calls,
            q.datagrams_sent,
            q.bytes_sent,
            q.receive_calls,
            q.datagrams_received,
            q.bytes_received,
            q.connections,
            q.handshakes_failed,
            q.packets_sent,
            q.packets_lost,
            q.bytes_lost,
            q.congestion_events,
        ],
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    );
    for (f, b) in [(&q.frames_sent, 100), (&q.frames_received, 200)] {
        assert_eq!(
            [
                f.acks,
                f.crypto,
                f.stream,
                f.ping,
                f.max_data,
                f.max_stream_data,
                f.max_streams_bidi,
                f.streams_blocked_bidi,
                f.reset_stream,
                f.stop_sending,
                f.connection_close,
            ],
            std::array::from_fn(|i| b + 1 + i as u64),
            "frames from {b}"
        );
    }
    let e = q.at_end.expect("a path at the end");
    assert_eq!(
        (e.connections, e.rtt_us.median, e.cwnd_bytes.median),
        (1, 13.0, 14.0)
    );
    assert_eq!(q.per_request.map(|p| p.requests), Some(2));
}
