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
    if !enable_gro(&b) {
        eprintln!("skipped: this kernel has no UDP_GRO");
        return;
    }
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
fn a_segment_too_large_for_the_kernel_is_refused_in_words() {
    let (a, _b) = pair();
    let e = send_segments(&a, &[0u8; 10], 70_000).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert!(gso_refused(&io::Error::from_raw_os_error(libc::EIO)));
    assert!(!gso_refused(&io::Error::from_raw_os_error(libc::EAGAIN)));
}
