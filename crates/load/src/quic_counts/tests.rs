use std::time::Duration;

use quinn_proto::ConnectionStats;

use super::{PathAtEnd, QuicCounts};

/// A closed connection's statistics as quinn-proto hands them out.
fn stats(sent: u64, lost: u64, acks_rx: u64, rtt_us: u64, cwnd: u64) -> ConnectionStats {
    let mut s = ConnectionStats::default();
    s.path.sent_packets = sent;
    s.path.lost_packets = lost;
    s.path.lost_bytes = lost * 1200;
    s.path.congestion_events = lost.min(1);
    s.path.rtt = Duration::from_micros(rtt_us);
    s.path.cwnd = cwnd;
    s.frame_rx.acks = acks_rx;
    s.frame_tx.stream = sent;
    s
}

#[test]
fn each_closing_connection_adds_its_packets_losses_and_frames_once() {
    let mut q = QuicCounts::default();
    q.add_connection(&stats(100, 3, 40, 80, 12_000));
    q.add_connection(&stats(50, 0, 20, 90, 14_000));
    assert_eq!(q.connections, 2);
    assert_eq!(q.packets_sent, 150);
    assert_eq!(q.packets_lost, 3);
    assert_eq!(q.bytes_lost, 3600);
    assert_eq!(q.congestion_events, 1);
    assert_eq!(q.frames_received.acks, 60);
    assert_eq!(q.frames_sent.stream, 150);
    assert!(
        q.at_end.is_empty(),
        "a close notes no path: only the run's end does"
    );
}

#[test]
fn the_paths_at_the_end_keep_each_connections_rtt_and_window() {
    let mut q = QuicCounts::default();
    q.note_end(&stats(10, 0, 0, 85, 12_288));
    assert_eq!(
        q.at_end,
        vec![PathAtEnd {
            rtt_ns: 85_000,
            cwnd_bytes: 12_288
        }]
    );
}

#[test]
fn workers_merge_to_the_sums_and_all_their_paths() {
    let mut a = QuicCounts {
        send_calls: 10,
        datagrams_sent: 10,
        bytes_sent: 5000,
        receive_calls: 14,
        datagrams_received: 9,
        bytes_received: 4000,
        handshakes_failed: 1,
        ..QuicCounts::default()
    };
    a.add_connection(&stats(10, 1, 4, 80, 1));
    a.note_end(&stats(10, 1, 4, 80, 1));
    let b = a.clone();
    a.merge(&b);
    assert_eq!(
        (a.send_calls, a.datagrams_sent, a.bytes_sent),
        (20, 20, 10_000)
    );
    assert_eq!(
        (a.receive_calls, a.datagrams_received, a.bytes_received),
        (28, 18, 8000)
    );
    assert_eq!((a.connections, a.handshakes_failed), (2, 2));
    assert_eq!((a.packets_sent, a.packets_lost), (20, 2));
    assert_eq!(a.frames_received.acks, 8);
    assert_eq!(a.at_end.len(), 2);
}
