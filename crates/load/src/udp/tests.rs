use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::Duration;

use super::*;
use crate::stamps::{self, ControlBuf};

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
    let sent = send_segments(&a, &buf, 100).unwrap();
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
fn a_gro_read_says_its_segment_size_and_holds_every_datagram() {
    let (a, b) = pair();
    // Linux has had UDP_GRO since 5.0: a kernel without it fails here rather than skip.
    assert!(enable_gro(&b), "this kernel has no UDP_GRO");
    let buf: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
    send_segments(&a, &buf, 1200).unwrap();
    let mut rbuf = vec![0u8; 64 * 1024];
    let mut cmsg = ControlBuf::new();
    let mut seen = Vec::new();
    let mut reads = 0;
    // Loopback usually coalesces all three into one read; however many reads it takes,
    // each says how to cut it, and cutting gives back the datagrams as sent.
    while seen.len() < buf.len() && reads < 3 {
        let got = stamps::receive(b.as_raw_fd(), &mut rbuf, &mut cmsg).unwrap();
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

#[test]
fn a_segment_too_large_for_a_u16_is_invalid_input_and_eio_is_a_refusal() {
    let (a, _b) = pair();
    let e = send_segments(&a, &[0u8; 10], 70_000).unwrap_err();
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
