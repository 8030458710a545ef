use super::*;

fn info(ato_ms: f64, rtt_ms: f64) -> TcpInfo {
    TcpInfo {
        ato_us: (ato_ms * 1000.0) as u32,
        rtt_us: (rtt_ms * 1000.0) as u32,
        ..TcpInfo::default()
    }
}

/// `tcp_send_delayed_ack()`'s bound, case by case: (ato, srtt) -> the wait, ms.
#[test]
fn the_delayed_ack_wait_is_the_ato_bounded_by_the_round_trip_as_the_kernel_bounds_it() {
    for (ato, rtt, want) in [
        // At or under TCP_DELACK_MIN the ato is taken as it is.
        (40.0, 0.03, 40.0),
        (30.0, 90.0, 30.0),
        // Above it, loopback's round trip of microseconds bounds it to 40 ms...
        (52.0, 0.03, 40.0),
        (96.0, 30.0, 40.0),
        // ...a longer round trip lets it grow up to the ato...
        (58.0, 60.0, 58.0),
        (80.0, 50.0, 50.0),
        // ...and never past TCP_DELACK_MAX.
        (400.0, 300.0, 200.0),
    ] {
        assert_eq!(
            info(ato, rtt).delayed_ack_us(),
            (want * 1000.0) as u32,
            "ato {ato} ms, srtt {rtt} ms"
        );
    }
}

#[test]
fn a_tally_keeps_a_median_to_100us_in_constant_memory() {
    let mut t = Tally::default();
    assert_eq!(
        (t.median_us(), t.min_us(), t.is_empty()),
        (None, None, true)
    );
    for _ in 0..10_000 {
        t.push(40_030);
    }
    for _ in 0..3 {
        t.push(58_000);
    }
    t.push(120);
    assert_eq!(t.0.len(), 3, "one entry per distinct value");
    assert_eq!(t.len(), 10_004);
    assert_eq!(t.median_us(), Some(40_000));
    assert_eq!(t.min_us(), Some(100));
}

fn socket(local: u16, remote: u16, cookie: u64, retrans: u32, segs: u32) -> TcpSocket {
    TcpSocket {
        local: SocketAddr::from(([127, 0, 0, 1], local)),
        remote: SocketAddr::from(([127, 0, 0, 1], remote)),
        cookie,
        info: TcpInfo {
            ato_us: 40_000,
            rtt_us: 21_000,
            min_rtt_us: 1_000,
            total_retrans: retrans,
            data_segs_out: segs,
        },
    }
}

/// Counts run from the first reading for the sockets open then, from zero for later ones; a
/// socket that closed keeps its last reading; sockets of other ports are not the link's.
#[test]
fn a_link_counts_its_own_sockets_from_the_first_reading_and_keeps_closed_ones() {
    let mut link = LinkSeries::new(8080);
    // Before the load: one old connection (its 5 retransmits are from before), and a
    // service's socket.
    link.push(&[
        socket(8080, 40000, 1, 5, 100),
        socket(41000, 9000, 9, 50, 50),
    ]);
    // During: the old one retransmits 2 more; a new client connection and its server end.
    link.push(&[
        socket(8080, 40000, 1, 7, 110),
        socket(40001, 8080, 2, 1, 10),
        socket(8080, 40001, 3, 0, 20),
        socket(41000, 9000, 9, 80, 90),
    ]);
    // The new client end closed; the server end goes on.
    link.push(&[
        socket(8080, 40000, 1, 7, 112),
        socket(8080, 40001, 3, 3, 30),
    ]);
    let w = link.window();
    assert_eq!(w.readings, 3);
    assert_eq!(w.sockets_max, 3);
    assert_eq!(w.retransmits, 2 + 1 + 3, "{w:?}");
    assert_eq!(w.data_segments, 12 + 10 + 30, "{w:?}");
    // One client end in one reading: its delayed-ACK wait (ato 40 ms), its min round trip.
    assert_eq!(link.delayed_ack.len(), 1);
    assert_eq!(w.delayed_ack_us, Some(40_000));
    assert_eq!(w.min_rtt_us, Some(1_000));
    // The server ends' round trip less the path's: 20 ms held.
    assert_eq!(w.held_ack_us, Some(20_000));
}

/// A link to a remote server sees its client ends alone, and only those to that address.
#[test]
fn a_link_to_an_address_takes_only_the_sockets_connected_to_it() {
    let mut link = LinkSeries::to("127.0.0.1:8080".parse().unwrap());
    let mut other = socket(40002, 8080, 4, 0, 10);
    other.remote = "10.1.2.3:8080".parse().unwrap();
    let mut mapped = socket(40003, 8080, 5, 0, 10);
    mapped.remote = "[::ffff:127.0.0.1]:8080".parse().unwrap();
    link.push(&[
        socket(40001, 8080, 2, 0, 10),
        socket(8080, 40001, 3, 0, 10),
        other,
        mapped,
    ]);
    assert_eq!(link.window().sockets_max, 2);
    assert!(link.held_ack.is_empty());
}
