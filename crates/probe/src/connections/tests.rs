use super::*;

fn sock(inode: u64, local: u16, remote: u16, state: State, tx: u32, rx: u32) -> Socket {
    Socket {
        inode,
        local_port: local,
        remote_port: remote,
        state,
        tx_queue: tx,
        rx_queue: rx,
    }
}

#[test]
fn counting_by_peer_owner_state_and_queues() {
    // A front end (inodes 1-5) with a listener on 8080, two clients of it, and a pool of
    // three to a service on 5432; another process's connection to 5432 (inode 9).
    use State::{ClosedByPeer as Gone, Established as Up, Other};
    let table = [
        sock(1, 8080, 0, Other, 0, 0),     // the listener
        sock(2, 8080, 40001, Up, 0, 0),    // inbound, idle
        sock(3, 8080, 40002, Up, 0, 17),   // inbound, request unread
        sock(7, 8080, 40003, Gone, 0, 0),  // inbound, the client left mid-request
        sock(4, 50001, 5432, Up, 0, 0),    // pool, idle
        sock(5, 50002, 5432, Up, 120, 0),  // pool, query unacknowledged
        sock(6, 50003, 5432, Other, 0, 0), // pool, closing: FIN_WAIT
        sock(9, 50004, 5432, Up, 0, 900),  // someone else's
        sock(8, 8080, 40004, Gone, 0, 0),  // someone else's, left
        sock(5, 50002, 5432, Up, 120, 0),  // listed twice (tcp and tcp6 never do; be safe)
    ];
    let owned: HashSet<u64> = [1, 2, 3, 4, 5, 6, 7].into();
    let cases = [
        (Peer::Remote(5432), 2, 1, 0),
        (Peer::Local(8080), 2, 1, 1),
        (Peer::Remote(80), 0, 0, 0),
        (Peer::Local(5432), 0, 0, 0),
    ];
    for (peer, established, busy, closed_by_peer) in cases {
        assert_eq!(
            count(&table, &owned, peer),
            Connections {
                established,
                busy,
                closed_by_peer
            },
            "{peer:?}"
        );
    }
    assert_eq!(
        count(&table, &HashSet::new(), Peer::Remote(5432)),
        Connections::default()
    );
}

#[test]
fn a_series_keeps_min_mean_max_and_the_busy_share() {
    let mut s = ConnectionSeries::default();
    assert_eq!(
        (s.mean(), s.busy_mean(), s.busy_fraction()),
        (None, None, None)
    );
    for (established, busy) in [(2, 2), (2, 1), (1, 1), (3, 0)] {
        s.push(Connections {
            established,
            busy,
            closed_by_peer: 0,
        });
    }
    assert_eq!((s.samples, s.min, s.max, s.busy_max), (4, 1, 3, 2));
    assert_eq!(s.mean(), Some(2.0));
    assert_eq!(s.busy_mean(), Some(1.0));
    assert_eq!(s.busy_fraction(), Some(0.5));
    let mut z = ConnectionSeries::default();
    z.push(Connections::default());
    assert_eq!((z.min, z.max, z.busy_fraction()), (0, 0, None));
}
