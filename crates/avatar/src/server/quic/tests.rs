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

/// Sends `datagrams` datagrams of `segment` bytes, the `i`th all `i`, as one transmit
/// through a fresh [`Out`], and checks that they came to the peer as sent. Returns the
/// send calls made and the datagrams counted, and whether GSO is still on.
#[track_caller]
fn send_through_out(datagrams: usize, segment: usize) -> (u64, u64, bool) {
    let (worker, peer) = sockets();
    let all = Metrics::new(1);
    let mut out = Out::new();
    out.tx = (0..datagrams * segment)
        .map(|i| (i / segment) as u8)
        .collect();
    let t = transmit(peer.local_addr().unwrap(), out.tx.len(), Some(segment));
    out.send(&worker, all.worker(0), &t);
    for (i, d) in read(&peer, datagrams).iter().enumerate() {
        assert_eq!(d, &vec![i as u8; segment], "datagram {i}");
    }
    let gso = out.batcher.max_datagrams() > 1;
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
    // 130 segments: past the kernel's UDP_MAX_SEGMENTS (64, 128 since Linux 6.9), so it
    // refuses the batch (EINVAL), as a route without checksum offload does (EIO). Then the
    // refused call and one a datagram, and QUIC is asked for one datagram a transmit.
    assert_eq!(send_through_out(130, 100), (1 + 130, 130, false));
}
