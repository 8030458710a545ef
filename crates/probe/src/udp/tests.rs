use std::net::UdpSocket;

use super::*;

const SNMP: &str = include_str!("../fixtures/snmp-6.18.txt");
const SNMP6: &str = include_str!("../fixtures/snmp6-6.18.txt");

/// The files of a 6.18 kernel: IPv4's `Udp` pair by name, and IPv6's lines added to it.
#[test]
fn reads_a_real_kernels_files_and_adds_ipv6() {
    let v6 = |name: &str| {
        SNMP6
            .lines()
            .find_map(|l| {
                let (n, v) = l.split_once(char::is_whitespace)?;
                (n == name).then(|| v.trim().parse::<u64>().unwrap())
            })
            .unwrap()
    };
    let c = parse_udp_counters(SNMP, SNMP6);
    assert_eq!(c.in_datagrams, 51 + v6("Udp6InDatagrams"));
    assert_eq!(c.out_datagrams, 52 + v6("Udp6OutDatagrams"));
    assert_eq!(c.rcvbuf_errors, v6("Udp6RcvbufErrors"));
    // Without snmp6 (IPv6 disabled): IPv4's alone.
    let v4 = parse_udp_counters(SNMP, "");
    assert_eq!((v4.in_datagrams, v4.out_datagrams), (51, 52));
}

/// `UdpLite:` has the same names as `Udp:`; only `Udp:` is UDP.
#[test]
fn udplite_is_not_udp() {
    let snmp = "Udp: InDatagrams RcvbufErrors\nUdp: 3 0\nUdpLite: InDatagrams RcvbufErrors\nUdpLite: 70 9\n";
    let c = parse_udp_counters(snmp, "Udp6RcvbufErrors 2\nUdpLite6RcvbufErrors 40\n");
    assert_eq!(c.in_datagrams, 3);
    assert_eq!(c.rcvbuf_errors, 2);
}

#[test]
fn malformed_lines_are_skipped() {
    let snmp6 = "Udp6InErrors\nUdp6InErrors x\nUdp6InErrors 1 2\nUdp6SndbufErrors\t7\n";
    let c = parse_udp_counters("Udp: InErrors\nUdp: -1\n", snmp6);
    assert_eq!(
        c,
        UdpCounters {
            sndbuf_errors: 7,
            ..Default::default()
        }
    );
}

#[test]
fn since_never_goes_below_zero() {
    let a = UdpCounters {
        in_datagrams: 10,
        rcvbuf_errors: 5,
        ..Default::default()
    };
    let b = UdpCounters {
        in_datagrams: 4,
        rcvbuf_errors: 8,
        ..Default::default()
    };
    let d = b.since(&a);
    assert_eq!((d.in_datagrams, d.rcvbuf_errors), (0, 3));
}

/// The real kernel: datagrams sent to a socket nobody reads, whose receive buffer is the
/// smallest the kernel allows, are queued until the buffer is full, then dropped as
/// RcvbufErrors (and InErrors).
#[test]
fn a_full_receive_buffer_counts_rcvbuf_errors() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    nix::sys::socket::setsockopt(&rx, nix::sys::socket::sockopt::RcvBuf, &1024).unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let before = udp_counters().unwrap();
    let payload = [0u8; 1200];
    for _ in 0..200 {
        tx.send_to(&payload, rx.local_addr().unwrap()).unwrap();
    }
    // InDatagrams counts a datagram when it is read, not when it is queued.
    let mut buf = [0u8; 1500];
    assert_eq!(rx.recv(&mut buf).unwrap(), payload.len());
    let d = udp_counters().unwrap().since(&before);
    assert!(d.out_datagrams >= 200, "{d:?}");
    assert!(d.in_datagrams >= 1, "{d:?}");
    // A 1 KiB buffer (the kernel doubles it, to a 4.5 KiB floor) holds a few of 200.
    assert!(d.rcvbuf_errors >= 150, "{d:?}");
    assert!(d.in_errors >= d.rcvbuf_errors, "{d:?}");
}
