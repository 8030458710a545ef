use super::super::Pending;
use super::*;

#[test]
fn a_crypto_error_is_a_tls_alert() {
    assert_eq!(alert(0x12a), Some(42));
    assert_eq!(alert(0xa), None);
}

#[test]
fn the_tag_after_u32_max_wraps_rather_than_overflowing() {
    let mut t = Tag(u32::MAX - 1);
    assert_eq!([t.next(), t.next(), t.next()], [u32::MAX - 1, u32::MAX, 0]);
}

fn conn() -> Conn {
    Conn {
        socket: None,
        quic: None,
        drained: false,
        up: true,
        handshake_counted: true,
        started_ns: 0,
        answered_ns: None,
        next_tag: Tag::default(),
        queue: VecDeque::new(),
        rx: Vec::new(),
        readable: Vec::new(),
        uni: Vec::new(),
        goaway: None,
        issued: false,
        lost: None,
    }
}

fn on_stream(tag: u32, index: u64) -> Rx {
    Rx::new(StreamId::new(Side::Client, Dir::Bi, index), tag, 0, 0)
}

fn pending(tag: u32) -> Pending {
    Pending {
        stream: tag,
        start_ns: 0,
        sent_ns: 0,
        shape: 0,
        retries: 0,
    }
}

/// Request 1 expired while queued, so request 2 went out on stream index 1 (ID 4): a
/// GOAWAY at ID 8 processed it, and it is no retry; request 3, on index 2 (ID 8), is.
#[test]
fn a_goaway_judges_a_request_by_its_stream_not_its_tag() {
    let mut c = conn();
    c.rx = vec![on_stream(0, 0), on_stream(2, 1), on_stream(3, 2)];
    c.queue.push_back((4, 0));
    c.goaway = Some(8);
    let mut reqs = Requests {
        inflight: [0, 2, 3, 4].into_iter().map(pending).collect(),
        requeue: Vec::new(),
        wait_since_ns: 0,
    };
    let mut rec = Recorder::for_test(std::time::Duration::ZERO);
    apply_goaway(&mut c, &mut reqs, &mut rec);
    let left: Vec<u32> = reqs.inflight.iter().map(|p| p.stream).collect();
    let again: Vec<u32> = reqs.requeue.iter().map(|p| p.stream).collect();
    assert_eq!(left, [0, 2], "processed: below the GOAWAY's ID");
    assert_eq!(again, [3, 4], "unprocessed or never sent: sent again");
    assert!(reqs.requeue.iter().all(|p| p.retries == 1));
    assert!(c.queue.is_empty());
    assert_eq!(c.rx.iter().map(|r| r.tag).collect::<Vec<_>>(), [0, 2]);
}

#[test]
fn a_server_opened_bidirectional_stream_is_no_request() {
    assert!(!ours(StreamId::new(Side::Server, Dir::Bi, 0)));
    assert!(ours(StreamId::new(Side::Client, Dir::Bi, 0)));
}

/// quinn's Connected and ConnectionLost in one poll: `up` set, the handshake never counted
/// as a full TLS one (`setup` returned Failed first), and it was counted nowhere.
#[test]
fn connected_and_lost_in_one_poll_is_a_failed_handshake() {
    let mut c = conn();
    c.handshake_counted = false;
    c.lost = Some(spent());
    assert!(c.handshake_failed(false));
    assert!(c.handshake_failed(true), "lost before the run's end");
    c.lost = None;
    assert!(!c.handshake_failed(true), "cut short by the run's end");
    c.handshake_counted = true;
    assert!(!c.handshake_failed(false), "a full handshake");
}

/// A connection already lost when the run ended was noted as open at the end.
#[test]
fn a_connection_lost_before_the_end_is_not_open_at_it() {
    let mut c = conn();
    assert!(c.open_at_end());
    c.lost = Some(spent());
    assert!(!c.open_at_end());
}
