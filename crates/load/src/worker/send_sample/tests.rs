use super::*;

#[test]
fn the_sampler_takes_the_first_request_then_one_in_every() {
    let mut s = Sampler::new(true);
    let taken: Vec<u64> = (0..3 * SEND_SAMPLE_EVERY + 1).filter(|_| s.due()).collect();
    assert_eq!(
        taken,
        [
            0,
            SEND_SAMPLE_EVERY,
            2 * SEND_SAMPLE_EVERY,
            3 * SEND_SAMPLE_EVERY
        ]
    );
}

#[test]
fn the_sampler_takes_nothing_when_send_stamps_are_off() {
    let mut s = Sampler::new(false);
    assert!(!(0..1000).any(|_| s.due()));
}

#[test]
fn the_key_is_the_last_byte_of_the_write_that_takes_the_requests_end() {
    // 120 bytes went before; the request is out[30..80], behind 30 bytes not yet written.
    let mut s = Sample::new(80, 1, 2, true);
    s.written(30, 150, false);
    assert!(s.unsent(), "its bytes are still in the buffer");
    // A short write: up to 60 of the buffer.
    s.written(60, 180, false);
    assert!(s.unsent());
    assert!(
        !s.matches(179),
        "a stamp of the first part is not the request's"
    );
    // The rest, with the next request pipelined behind it: the write's last byte counts.
    s.written(120, 240, false);
    assert!(!s.unsent());
    assert!(s.matches(239));
    assert!(!s.matches(240) && !s.matches(238));
}

#[test]
fn a_compacted_buffer_moves_the_requests_end() {
    let mut s = Sample::new(80, 1, 2, true);
    // 50 written and dropped from the front: the request now ends at 30.
    s.compacted(50);
    s.written(29, 1_000, false);
    assert!(s.unsent());
    s.written(30, 1_001, false);
    assert!(s.matches(1_000));
}

#[test]
fn records_held_by_tls_leave_the_key_open_until_the_socket_takes_them() {
    let mut s = Sample::new(40, 1, 2, true);
    // The plaintext is all in rustls, but its records are not all in the socket.
    s.written(40, 500, true);
    assert!(s.unsent());
    // The flush that empties the queue takes the last byte.
    s.written(40, 700, false);
    assert!(s.matches(699));
}

#[test]
fn the_key_wraps_as_the_kernels_does() {
    let mut s = Sample::new(10, 1, 2, true);
    s.written(10, (1 << 32) + 5, false);
    assert!(s.matches(4));
}
