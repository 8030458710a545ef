use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use super::*;

/// A connected pair on loopback, the reader with a deadline so a lost datagram fails the
/// test instead of hanging it.
fn pair() -> (UdpSocket, UdpSocket) {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    a.connect(b.local_addr().unwrap()).unwrap();
    b.connect(a.local_addr().unwrap()).unwrap();
    b.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    (a, b)
}

#[test]
fn one_gso_send_arrives_as_datagrams_of_its_segment_size() {
    let (a, b) = pair();
    let buf: Vec<u8> = (0..250u32).map(|i| i as u8).collect();
    let sent = send_segments(&a, &buf, 100, None).unwrap();
    assert_eq!(sent, 250);
    // Without GRO on the reader, the kernel hands over each datagram alone.
    let mut got = Vec::new();
    let mut rbuf = [0u8; 2048];
    for _ in 0..3 {
        let n = b.recv(&mut rbuf).unwrap();
        got.push(rbuf[..n].to_vec());
    }
    assert_eq!(got.iter().map(Vec::len).collect::<Vec<_>>(), [100, 100, 50]);
    assert_eq!(got.concat(), buf);
}

#[test]
fn a_segment_too_large_for_a_u16_is_invalid_input_and_eio_is_a_refusal() {
    let (a, _b) = pair();
    let e = send_segments(&a, &[0u8; 10], 70_000, None).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert!(gso_refused(&io::Error::from_raw_os_error(libc::EIO)));
    assert!(!gso_refused(&io::Error::from_raw_os_error(libc::EAGAIN)));
}

/// What a fake socket saw: each call, by the path it took and its length.
#[derive(Default)]
struct Seen {
    batches: Vec<(usize, usize)>,
    ones: Vec<usize>,
}

#[test]
fn a_refused_gso_send_goes_one_by_one_and_turns_gso_off() {
    let mut b = Batcher::default();
    assert_eq!(b.max_datagrams(), MAX_SEGMENTS);
    let seen = std::cell::RefCell::new(Seen::default());
    let sent = b.send(
        &[0u8; 250],
        Some(100),
        |buf, s| {
            seen.borrow_mut().batches.push((buf.len(), s));
            Err(io::Error::from_raw_os_error(libc::EIO))
        },
        |d| {
            seen.borrow_mut().ones.push(d.len());
            Ok(d.len())
        },
    );
    assert_eq!(sent.unwrap(), 250);
    assert_eq!(seen.borrow().batches, [(250, 100)]);
    assert_eq!(seen.borrow().ones, [100, 100, 50]);
    assert_eq!(b.max_datagrams(), 1);
}

#[test]
fn after_a_refusal_a_batch_is_still_cut_not_sent_as_one_datagram() {
    // QUIC asked for many datagrams before the refusal came: each still goes alone.
    let mut b = Batcher::default();
    let refuse = |_: &[u8], _: usize| Err(io::Error::from_raw_os_error(libc::EIO));
    b.send(&[0u8; 20], Some(10), refuse, |d: &[u8]| Ok(d.len()))
        .unwrap();
    let mut ones = Vec::new();
    let sent = b.send(
        &[0u8; 30],
        Some(10),
        |_, _| panic!("GSO is off"),
        |d| {
            ones.push(d.len());
            Ok(d.len())
        },
    );
    assert_eq!(sent.unwrap(), 30);
    assert_eq!(ones, [10, 10, 10]);
}

#[test]
fn a_full_socket_mid_batch_counts_what_went_out() {
    let mut b = Batcher::default();
    let refuse = |_: &[u8], _: usize| Err(io::Error::from_raw_os_error(libc::EIO));
    let mut calls = 0;
    let sent = b.send(&[0u8; 30], Some(10), refuse, |d| {
        calls += 1;
        match calls {
            1 => Ok(d.len()),
            _ => Err(io::Error::from(io::ErrorKind::WouldBlock)),
        }
    });
    assert_eq!(sent.unwrap(), 10, "the first datagram went out");
    assert_eq!(calls, 2, "the transmit ends at the first full send");
    // Nothing out at all is the error itself.
    let e = b
        .send(&[0u8; 30], Some(10), refuse, |_| {
            Err(io::Error::from(io::ErrorKind::WouldBlock))
        })
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
}

#[test]
fn a_gso_send_that_fails_otherwise_keeps_gso_on() {
    let mut b = Batcher::default();
    let e = b
        .send(
            &[0u8; 30],
            Some(10),
            |_, _| Err(io::Error::from(io::ErrorKind::WouldBlock)),
            |_| panic!("not one by one: the socket was only full"),
        )
        .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    assert_eq!(b.max_datagrams(), MAX_SEGMENTS);
    // One datagram, or a segment as large as the transmit, goes through `one`.
    let mut ones = 0;
    b.send(
        &[0u8; 30],
        None,
        |_, _| panic!("one datagram"),
        |d| {
            ones += 1;
            Ok(d.len())
        },
    )
    .unwrap();
    b.send(
        &[0u8; 30],
        Some(30),
        |_, _| panic!("one datagram"),
        |d| {
            ones += 1;
            Ok(d.len())
        },
    )
    .unwrap();
    assert_eq!(ones, 2);
}

#[test]
fn bytes_cut_by_a_segment_size_are_that_many_datagrams() {
    assert_eq!(datagrams(0, None), 0);
    assert_eq!(datagrams(1200, None), 1);
    assert_eq!(datagrams(2400, Some(1200)), 2);
    assert_eq!(datagrams(2401, Some(1200)), 3);
    assert_eq!(datagrams(10, Some(0)), 1);
}

/// Has `send` send to an unconnected reader with GRO on (as avatar's worker socket is),
/// then reads until `bytes` bytes came, cutting each read at its segment size: the
/// datagrams as the reader hands them to QUIC, and the reads it took. Each read must name
/// the sender.
#[track_caller]
fn sent_and_read(send: impl FnOnce(&UdpSocket, SocketAddr), bytes: usize) -> (Vec<Vec<u8>>, usize) {
    let r = UdpSocket::bind("127.0.0.1:0").unwrap();
    r.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // Linux has had UDP_GRO since 5.0: a kernel without it fails here rather than skip.
    assert!(enable_gro(&r), "this kernel has no UDP_GRO");
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    send(&s, r.local_addr().unwrap());
    let mut rbuf = vec![0u8; 64 * 1024];
    let mut cmsg = ControlBuf::new();
    let (mut got, mut seen, mut reads) = (Vec::new(), 0, 0);
    while seen < bytes {
        assert!(reads < 16, "{reads} reads and {seen} of {bytes} bytes");
        let read = receive(&r, &mut rbuf, &mut cmsg).unwrap();
        reads += 1;
        seen += read.n;
        assert_eq!(read.from, Some(s.local_addr().unwrap()));
        let data = BytesMut::from(&rbuf[..read.n]);
        let before = got.len();
        got.extend(segments(data, read.segment).map(|d| d.to_vec()));
        assert_eq!(got.len() - before, datagrams(read.n, read.segment));
    }
    (got, reads)
}

#[test]
fn two_datagrams_read_with_gro_come_back_as_exactly_the_two_payloads() {
    // Sent in one GSO send, so that loopback hands them to the reader coalesced.
    let payloads = [vec![1u8; 1200], vec![2u8; 1200]];
    let (got, _) = sent_and_read(
        |s, to| {
            assert_eq!(
                send_segments(s, &payloads.concat(), 1200, Some(to)).unwrap(),
                2400
            )
        },
        2400,
    );
    assert_eq!(got, payloads);
}

#[test]
fn datagrams_sent_apart_to_a_gro_socket_come_back_apart() {
    let payloads = [vec![1u8; 1200], vec![2u8; 1200], vec![3u8; 700]];
    let send = |s: &UdpSocket, to| {
        payloads
            .iter()
            .for_each(|p| assert_eq!(s.send_to(p, to).unwrap(), p.len()))
    };
    assert_eq!(sent_and_read(send, 3100).0, payloads);
}

#[test]
fn a_gso_send_to_an_address_is_one_gro_read_cut_back_into_its_datagrams() {
    let buf: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    let (got, reads) = sent_and_read(
        |s, to| assert_eq!(send_segments(s, &buf, 1200, Some(to)).unwrap(), 3000),
        3000,
    );
    let sizes: Vec<usize> = got.iter().map(Vec::len).collect();
    assert_eq!(sizes, [1200, 1200, 600]);
    assert_eq!(got.concat(), buf);
    // Loopback hands a GSO send to a GRO reader whole.
    assert!(
        reads < 3,
        "three datagrams sent in one GSO send were never coalesced"
    );
}
#[test]
fn a_read_without_a_segment_size_is_one_datagram() {
    let data = BytesMut::from(&b"hello"[..]);
    assert_eq!(segments(data, None).collect::<Vec<_>>(), [&b"hello"[..]]);
    assert_eq!(segments(BytesMut::new(), None).count(), 0);
    let cut: Vec<_> = segments(BytesMut::from(&b"abcde"[..]), Some(2)).collect();
    assert_eq!(cut, [&b"ab"[..], &b"cd"[..], &b"e"[..]]);
}

#[test]
fn a_batch_the_kernel_refuses_goes_one_datagram_a_send_to_its_address() {
    // Far more segments than the kernel's UDP_MAX_SEGMENTS (64, 128 since Linux 6.9): a
    // real refusal (EINVAL), as a route without checksum offload refuses with EIO.
    let r = UdpSocket::bind("127.0.0.1:0").unwrap();
    r.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let to = r.local_addr().unwrap();
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let buf: Vec<u8> = (0..10_000u32).map(|i| (i / 10) as u8).collect();
    let e = send_segments(&s, &buf, 10, Some(to)).unwrap_err();
    assert!(gso_refused(&e), "{e}");
    let mut b = Batcher::default();
    let calls = std::cell::Cell::new(0);
    let mut got = Vec::new();
    let mut rbuf = [0u8; 2048];
    let sent = b.send(
        &buf,
        Some(10),
        |buf, segment| {
            calls.set(calls.get() + 1);
            send_segments(&s, buf, segment, Some(to))
        },
        |d| {
            calls.set(calls.get() + 1);
            let n = s.send_to(d, to)?;
            // Each read at once, so that 1,000 small datagrams never fill the reader's buffer.
            let m = r.recv(&mut rbuf)?;
            got.push(rbuf[..m].to_vec());
            Ok(n)
        },
    );
    assert_eq!(sent.unwrap(), 10_000);
    assert_eq!(
        calls.get(),
        1 + 1000,
        "the refused batch, then one send a datagram"
    );
    assert_eq!(b.max_datagrams(), 1, "GSO is off from the refusal on");
    assert_eq!(got.len(), 1000);
    for (i, d) in got.iter().enumerate() {
        assert_eq!(d, &[i as u8; 10], "datagram {i}");
    }
}

#[test]
fn a_destination_that_refuses_every_send_leaves_gso_on_for_the_others() {
    // Port 0 refuses a batch with EINVAL, and each datagram alone too: nothing says the
    // route cannot segment.
    let r = UdpSocket::bind("127.0.0.1:0").unwrap();
    r.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut b = Batcher::default();
    let nowhere: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let sent = b.send_on(&s, &[7u8; 3000], Some(1200), Some(nowhere));
    let e = sent.bytes.unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}");
    assert_eq!(sent.calls, 2, "the batch, then its first datagram alone");
    assert!(!b.gave_up());
    assert_eq!(b.max_datagrams(), MAX_SEGMENTS);
    // The same batcher still batches to a destination that takes it.
    let to = r.local_addr().unwrap();
    let sent = b.send_on(&s, &[7u8; 3000], Some(1200), Some(to));
    assert_eq!(sent.bytes.unwrap(), 3000);
    assert_eq!(sent.calls, 1);
}

#[test]
fn only_enoprotoopt_says_the_kernel_lacks_gso() {
    for (errno, lacks) in [
        (libc::EIO, false),
        (libc::EINVAL, false),
        (libc::ENOPROTOOPT, true),
    ] {
        let mut b = Batcher::default();
        let sent = b.send(
            &[0u8; 20],
            Some(10),
            |_, _| Err(io::Error::from_raw_os_error(errno)),
            |d| Ok(d.len()),
        );
        assert_eq!(sent.unwrap(), 20);
        assert!(b.gave_up(), "errno {errno}");
        assert_eq!(b.kernel_lacks_gso(), lacks, "errno {errno}");
    }
}

#[test]
fn a_gro_read_cut_short_by_its_buffer_keeps_its_whole_datagrams_and_says_so() {
    let r = UdpSocket::bind("127.0.0.1:0").unwrap();
    r.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert!(enable_gro(&r), "this kernel has no UDP_GRO");
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let buf: Vec<u8> = (0..3600u32).map(|i| (i / 1200) as u8).collect();
    let to = r.local_addr().unwrap();
    assert_eq!(send_segments(&s, &buf, 1200, Some(to)).unwrap(), 3600);
    let mut rbuf = vec![0u8; 3000];
    let mut cmsg = ControlBuf::new();
    let read = receive(&r, &mut rbuf, &mut cmsg).unwrap();
    assert_eq!(read.segment, Some(1200), "loopback coalesced the GSO send");
    assert!(read.truncated);
    assert_eq!(read.n, 2400);
    let data = BytesMut::from(&rbuf[..read.n]);
    let got: Vec<_> = segments(data, read.segment).collect();
    assert_eq!(got, [&buf[..1200], &buf[1200..2400]]);
}

#[test]
fn one_datagram_cut_short_by_its_buffer_is_dropped() {
    let r = UdpSocket::bind("127.0.0.1:0").unwrap();
    r.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.send_to(&[1u8; 100], r.local_addr().unwrap()).unwrap();
    let mut rbuf = vec![0u8; 60];
    let read = receive(&r, &mut rbuf, &mut ControlBuf::new()).unwrap();
    assert!(read.truncated);
    assert_eq!(read.n, 0);
}
