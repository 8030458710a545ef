use std::net::UdpSocket as StdSocket;
use std::time::Duration;

use super::*;
use crate::metrics::Metrics;

/// A worker's socket (unconnected, as avatar's is) and a peer reading with a deadline, so a
/// lost datagram fails the test instead of hanging it.
fn sockets() -> (UdpSocket, StdSocket) {
    let worker = UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let peer = StdSocket::bind("127.0.0.1:0").unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // Room for every datagram a test sends before it reads (the kernel doubles it, and caps
    // it at net.core.rmem_max: 425,984 bytes at the least).
    socket2::SockRef::from(&peer)
        .set_recv_buffer_size(1 << 20)
        .unwrap();
    (worker, peer)
}

fn transmit(to: SocketAddr, size: usize, segment_size: Option<usize>) -> Transmit {
    Transmit {
        destination: to,
        ecn: None,
        size,
        segment_size,
        src_ip: None,
    }
}

/// Reads `count` datagrams from `peer`, or fails at its deadline.
#[track_caller]
fn read(peer: &StdSocket, count: usize) -> Vec<Vec<u8>> {
    let mut buf = [0u8; 2048];
    (0..count)
        .map(|i| {
            let n = peer
                .recv(&mut buf)
                .unwrap_or_else(|e| panic!("datagram {i} of {count} never came: {e}"));
            buf[..n].to_vec()
        })
        .collect()
}

/// Sends `datagrams` datagrams of `segment` bytes, the `i`th all `i` (mod 256), as one
/// transmit through a fresh [`Out`] and a connection's batcher, and checks that they came to
/// the peer as sent (read as they come, by a thread of its own, so that a thousand small
/// datagrams never fill its buffer). Returns the send calls made and the datagrams counted,
/// and whether GSO is still on.
#[track_caller]
fn send_through_out(datagrams: usize, segment: usize) -> (u64, u64, bool) {
    let (worker, peer) = sockets();
    let to = peer.local_addr().unwrap();
    let reader = std::thread::spawn(move || read(&peer, datagrams));
    let all = Metrics::new(1);
    let mut out = Out::new();
    let mut batcher = udp::Batcher::default();
    out.tx = (0..datagrams * segment)
        .map(|i| (i / segment) as u8)
        .collect();
    let t = transmit(to, out.tx.len(), Some(segment));
    out.send(&worker, all.worker(0), &mut batcher, &t);
    for (i, d) in reader.join().unwrap().iter().enumerate() {
        assert_eq!(d, &vec![i as u8; segment], "datagram {i}");
    }
    assert!(!out.blocked);
    let gso = batcher.max_datagrams() > 1;
    (
        all.h3_udp(H3Udp::SendCalls),
        all.h3_udp(H3Udp::DatagramsSent),
        gso,
    )
}

#[test]
fn a_transmit_of_many_datagrams_is_one_send_call() {
    assert_eq!(send_through_out(3, 1200), (1, 3, true));
}

#[test]
fn a_route_that_refuses_gso_gets_one_datagram_a_send_from_then_on() {
    // 1,000 segments: far past the kernel's UDP_MAX_SEGMENTS (64, 128 since Linux 6.9), so
    // it refuses the batch (EINVAL), as a route without checksum offload does (EIO). Then
    // the refused call and one a datagram, and QUIC is asked for one datagram a transmit.
    assert_eq!(send_through_out(1000, 10), (1 + 1000, 1000, false));
}

#[test]
fn a_send_to_port_0_leaves_gso_on_for_the_connection_and_the_worker() {
    // EINVAL for the batch and for each datagram alone: the destination, not GSO.
    let (worker, _peer) = sockets();
    let all = Metrics::new(1);
    let mut out = Out::new();
    let mut batcher = udp::Batcher::default();
    out.tx = vec![0; 3000];
    let t = transmit("127.0.0.1:0".parse().unwrap(), 3000, Some(1200));
    out.send(&worker, all.worker(0), &mut batcher, &t);
    assert_eq!(batcher.max_datagrams(), udp::MAX_SEGMENTS);
    assert!(out.gso && !out.blocked);
    assert_eq!(all.h3_udp(H3Udp::GsoRefused), 0);
    assert_eq!(all.h3_udp(H3Udp::DatagramsDropped), 3);
    assert_eq!(all.h3_udp(H3Udp::DatagramsSent), 0);
}

#[test]
fn a_full_socket_drops_the_batch_and_blocks_the_sends_till_it_is_writable() {
    // Loopback never fills a sender's buffer, so the socket's answer is given here.
    let all = Metrics::new(1);
    let mut out = Out::new();
    let to = "127.0.0.1:9".parse().unwrap();
    let t = transmit(to, 12_000, Some(1200));
    out.settle(all.worker(0), &t, &Err(io::ErrorKind::Interrupted.into()));
    assert!(!out.blocked, "an interrupted send is no full socket");
    out.settle(all.worker(0), &t, &Ok(3600));
    assert!(!out.blocked);
    assert_eq!(all.h3_udp(H3Udp::DatagramsSent), 3);
    assert_eq!(all.h3_udp(H3Udp::DatagramsDropped), 10 + 7);
    out.settle(all.worker(0), &t, &Err(io::ErrorKind::WouldBlock.into()));
    assert!(out.blocked);
    assert_eq!(all.h3_udp(H3Udp::DatagramsDropped), 10 + 7 + 10);
}
