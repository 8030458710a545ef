use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::*;

/// A connected loopback pair: (client, server side).
fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (s, _) = l.accept().unwrap();
    (c, s)
}

fn realtime_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

#[test]
fn kernel_latency_is_clamped_to_the_read() {
    // Arrived before the request started (clock step): no stamp for it, the read latency.
    assert_eq!(kernel_ns(1_000, Some(500), 2_000), 1_000);
    // Arrived after the read (offset drift): the read latency, never above it.
    assert_eq!(kernel_ns(1_000, Some(2_500), 2_000), 1_000);
    // In between: to the stamp.
    assert_eq!(kernel_ns(1_000, Some(1_300), 2_000), 300);
    // No stamp: the read latency.
    assert_eq!(kernel_ns(1_000, None, 2_000), 1_000);
    // A read before the start (cannot happen, but must not underflow).
    assert_eq!(kernel_ns(3_000, Some(2_500), 2_000), 0);
}

#[test]
fn a_stamp_before_the_request_started_counts_as_no_stamp() {
    // Not a kernel latency of 0 (which would read as a response the server sent at once,
    // and put the whole read latency down as the client's delay).
    assert_eq!(kernel_ns(10_000, Some(9_999), 15_000), 5_000);
    // A stamp at the start itself is a stamp.
    assert_eq!(kernel_ns(10_000, Some(10_000), 15_000), 0);
}

/// Clocks that step as scripted: each call returns the next reading.
fn scripted(readings: &[i64]) -> impl FnMut() -> i64 + '_ {
    let mut i = 0;
    move || {
        i += 1;
        readings[i - 1]
    }
}

#[test]
fn a_preemption_between_the_offsets_clock_reads_is_retried() {
    // First take: preempted 5 ms between the monotonic read and the realtime one. Second:
    // the reads 200 ns apart, realtime taken at their midpoint.
    let mono = [1_000, 5_001_000, 6_000_000, 6_000_200];
    let real = [1_000_000_005_001_000, 1_000_000_006_000_100];
    let off = ClockOffset::take_with(scripted(&mono), scripted(&real));
    assert_eq!(
        off,
        ClockOffset::from_readings(1_000_000_006_000_100, 6_000_100)
    );
}

#[test]
fn a_take_preempted_every_time_keeps_its_last_reading() {
    let mono = [0, 100_000, 200_000, 300_000, 400_000, 500_000];
    let real = [10_050_000, 10_250_000, 10_450_000];
    let off = ClockOffset::take_with(scripted(&mono), scripted(&real));
    assert_eq!(off, ClockOffset::from_readings(10_450_000, 450_000));
}

#[test]
fn clock_offset_moves_a_realtime_stamp_onto_the_monotonic_clock() {
    let off = ClockOffset::from_readings(1_700_000_000_000_000_000, 5_000);
    assert_eq!(off.mono_ns(1_700_000_000_000_000_000), 5_000);
    assert_eq!(off.mono_ns(1_700_000_000_000_001_000), 6_000);
    // Before the run's epoch: 0, not a wrap.
    assert_eq!(off.mono_ns(1_699_999_999_999_000_000), 0);
    // Taken live, a stamp of "now" lands within a millisecond of the monotonic now.
    let epoch = Instant::now() - Duration::from_secs(1);
    let off = ClockOffset::take(epoch);
    let mono = off.mono_ns(realtime_ns());
    let now = epoch.elapsed().as_nanos() as u64;
    assert!(now.abs_diff(mono) < 1_000_000, "{now} vs {mono}");
}

#[test]
fn a_stamped_receive_dates_data_left_unread_to_its_arrival() {
    // The kernel turns stamping on later, from a work queue: unwarmed, the first segment
    // can come back unstamped. Warmed as a run is, once per process.
    // A loaded machine may take longer than a run's patience: then wait longer here.
    let longer = (!warm().stamped).then(|| Warm::up(Duration::from_secs(5)));
    assert!(
        warm().stamped || longer.as_ref().is_some_and(|w| w.stamped),
        "the kernel stamped no datagram in 5 s of warm-up"
    );
    let (mut c, s) = pair();
    enable(&s, false).unwrap();
    c.write_all(b"hello").unwrap();
    // Left unread for a known time: the stamp must say when it arrived, not when it is read.
    std::thread::sleep(Duration::from_millis(60));
    let mut buf = [0u8; 64];
    let mut cmsg = ControlBuf::new();
    let got = receive(s.as_raw_fd(), &mut buf, &mut cmsg).unwrap();
    let read_at = realtime_ns();
    assert_eq!(&buf[..got.n], b"hello");
    let stamp = got
        .stamp_ns
        .expect("a socket with SO_TIMESTAMPING gives a stamp");
    let age_ms = (read_at - stamp) / 1_000_000;
    assert!(
        (50..10_000).contains(&age_ms),
        "stamped {age_ms} ms before the read"
    );
    // The buffer is reused: a second read is stamped too.
    c.write_all(b"again").unwrap();
    let got = receive(s.as_raw_fd(), &mut buf, &mut cmsg).unwrap();
    assert_eq!(&buf[..got.n], b"again");
    assert!(got.stamp_ns.is_some_and(|t| t > stamp));
}

#[test]
fn a_socket_without_the_option_gives_no_stamp() {
    let (mut c, s) = pair();
    c.write_all(b"hello").unwrap();
    let mut buf = [0u8; 64];
    let got = receive(s.as_raw_fd(), &mut buf, &mut ControlBuf::new()).unwrap();
    assert_eq!(got.n, 5);
    assert_eq!(got.stamp_ns, None);
}

#[test]
fn warm_waits_until_the_kernel_stamps_a_datagram() {
    // UDP takes the same stamps as TCP: the seam an HTTP/3 client will use.
    let warm = Warm::up(Duration::from_secs(5));
    assert!(warm.stamped, "no UDP datagram came back stamped within 5 s");
}

/// The send stamps the socket's error queue gives within `patience`, until `n` came.
fn send_stamps(c: &TcpStream, n: usize, patience: Duration) -> Vec<SendStamp> {
    let (mut got, mut cmsg) = (Vec::new(), ControlBuf::new());
    let end = Instant::now() + patience;
    while got.len() < n && Instant::now() < end {
        drain_sends(c.as_raw_fd(), &mut cmsg, |s| got.push(s)).unwrap();
        std::thread::yield_now();
    }
    got
}

#[test]
fn turning_send_stamps_on_and_off_keeps_the_key_counting_from_the_enable() {
    let (mut c, _s) = pair();
    assert!(
        enable(&c, true).unwrap(),
        "this kernel refused OPT_ID_TCP (Linux 6.2 and later have it)"
    );
    // Unsampled, sampled, unsampled, sampled: the key of a sampled write is the offset of
    // its last byte since the enable, across the toggles (which would reset it if they
    // reset OPT_ID).
    for (len, sampled) in [(100, false), (50, true), (10, false), (7, true)] {
        stamp_sends(&c, sampled).unwrap();
        c.write_all(&vec![b'x'; len]).unwrap();
        stamp_sends(&c, false).unwrap();
    }
    let got = send_stamps(&c, 3, Duration::from_secs(5));
    let keys: Vec<u32> = got.iter().map(|s| s.key).collect();
    assert_eq!(keys, [149, 166], "{got:?}");
    let now = realtime_ns();
    for s in &got {
        assert!(
            (0..10_000_000_000).contains(&(now - s.stamp_ns)),
            "{s:?} vs {now}"
        );
    }
}

#[test]
fn a_send_left_in_the_socket_is_stamped_when_it_leaves_not_when_it_was_written() {
    use socket2::{Domain, Socket, Type};
    // A receiver with a small window, which does not read for a known time: the write's
    // last byte waits in the sender's socket until it reads.
    let l = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    l.set_recv_buffer_size(4096).unwrap();
    l.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )
    .unwrap();
    l.listen(1).unwrap();
    let l: TcpListener = l.into();
    let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (mut s, _) = l.accept().unwrap();
    assert!(enable(&c, true).unwrap());
    const LEN: usize = 100_000;
    stamp_sends(&c, true).unwrap();
    let written_at = realtime_ns();
    c.write_all(&vec![b'x'; LEN]).unwrap();
    // Off at once: the stamp must come all the same, for the segment that leaves later.
    stamp_sends(&c, false).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut buf = vec![0u8; LEN];
    std::io::Read::read_exact(&mut s, &mut buf).unwrap();
    let got = send_stamps(&c, 1, Duration::from_secs(5));
    let last = got
        .iter()
        .find(|s| s.key == LEN as u32 - 1)
        .unwrap_or_else(|| panic!("no stamp for the last byte: {got:?}"));
    let waited_ms = (last.stamp_ns - written_at) / 1_000_000;
    assert!(
        (90..10_000).contains(&waited_ms),
        "the last byte left {waited_ms} ms after the write"
    );
}

#[test]
fn draining_an_empty_error_queue_reads_nothing() {
    let (c, _s) = pair();
    enable(&c, true).unwrap();
    let mut n = 0;
    let read = drain_sends(c.as_raw_fd(), &mut ControlBuf::new(), |_| n += 1).unwrap();
    assert_eq!((read, n), (0, 0));
}

#[test]
fn a_gro_read_says_its_segment_size_and_holds_every_datagram() {
    // The reader with a deadline, so that a lost datagram fails the test, not hangs it.
    let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    b.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // Linux has had UDP_GRO since 5.0: a kernel without it fails here rather than skip.
    assert!(udp::enable_gro(&b), "this kernel has no UDP_GRO");
    let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    a.connect(b.local_addr().unwrap()).unwrap();
    let buf: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    udp::send_segments(&a, &buf, 1200, None).unwrap();
    let mut rbuf = vec![0u8; 64 * 1024];
    let mut cmsg = ControlBuf::new();
    let mut seen = Vec::new();
    let mut reads = 0;
    // Loopback usually coalesces all three into one read; however many reads it takes,
    // each says how to cut it, and cutting gives back the datagrams as sent.
    while seen.len() < buf.len() && reads < 3 {
        let got = receive(b.as_raw_fd(), &mut rbuf, &mut cmsg).unwrap();
        reads += 1;
        let stride = got.segment.unwrap_or(got.n);
        assert!(
            stride == 1200 || got.n <= 1200,
            "a read of {} cut at {stride}",
            got.n
        );
        seen.extend_from_slice(&rbuf[..got.n]);
    }
    assert_eq!(seen, buf);
    assert!(
        reads < 3,
        "three datagrams sent back to back were never coalesced"
    );
}
