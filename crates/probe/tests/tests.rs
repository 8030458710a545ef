//! The probe against real processes and real loopback sockets.

use std::io::{BufRead as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use probe::{connections, ConnectionSeries, Connections, Peer};

/// Polls `connections(root, peer)` until `want` holds, or fails after 10 s with the last.
#[track_caller]
fn wait_for(
    root: i32,
    peer: Peer,
    series: &mut ConnectionSeries,
    want: impl Fn(Connections) -> bool,
) -> Connections {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let c = connections(root, peer).expect("the tree is alive");
        series.push(c);
        if want(c) {
            return c;
        }
        assert!(Instant::now() < deadline, "{peer:?}: last reading {c:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn connections_from_this_process_and_a_child_are_counted_and_followed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // The server side: accepted sockets are held (and never read) by this process.
    let accepted: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
    {
        let accepted = accepted.clone();
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                accepted.lock().unwrap().push(s);
            }
        });
    }
    let me = std::process::id() as i32;
    let mut outbound = ConnectionSeries::default();
    let mut inbound = ConnectionSeries::default();
    // 3 from this process.
    let mut mine: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // 2 from a child, which says when it holds them and exits when its stdin closes.
    let script = format!(
        "import socket,sys\ns=[socket.create_connection(('127.0.0.1',{port})) for _ in range(2)]\nprint('open',flush=True)\nsys.stdin.read()"
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "open");
    // K = 5 out of the tree to the port, and 5 into it on the port (the accepted ends).
    let c = wait_for(me, Peer::Remote(port), &mut outbound, |c| {
        c.established == 5
    });
    assert_eq!(c.busy, 0, "nothing in flight yet");
    wait_for(me, Peer::Local(port), &mut inbound, |c| c.established == 5);
    // A port nothing uses has none.
    assert_eq!(
        connections(me, Peer::Remote(1)).unwrap(),
        Connections::default()
    );
    // Bytes the server side never reads: one inbound connection is busy.
    mine[0].write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let c = wait_for(me, Peer::Local(port), &mut inbound, |c| c.busy == 1);
    assert_eq!(c.established, 5);
    // Close 2 of this process's: the count follows.
    mine.truncate(1);
    wait_for(me, Peer::Remote(port), &mut outbound, |c| {
        c.established == 3
    });
    // The child exits: its 2 go too.
    drop(child.stdin.take());
    child.wait().unwrap();
    wait_for(me, Peer::Remote(port), &mut outbound, |c| {
        c.established == 1
    });
    // The server ends whose peers closed are no longer established: the server still
    // holds them, closed by their clients (CLOSE_WAIT).
    let c = wait_for(me, Peer::Local(port), &mut inbound, |c| c.established == 1);
    assert_eq!(c.closed_by_peer, 4, "{c:?}");
    drop(mine);
    wait_for(me, Peer::Remote(port), &mut outbound, |c| {
        c.established == 0
    });
    wait_for(me, Peer::Local(port), &mut inbound, |c| {
        c.closed_by_peer == 5
    });
    // The server closes its ends: none is held any more.
    accepted.lock().unwrap().clear();
    wait_for(me, Peer::Local(port), &mut inbound, |c| {
        c == Connections::default()
    });
    // The window saw 5 at most and 0 at least.
    assert_eq!((outbound.max, outbound.min), (5, 0), "{outbound:?}");
    assert!(outbound.mean().unwrap() > 0.0 && outbound.mean().unwrap() < 5.0);
    assert_eq!(inbound.busy_max, 1, "{inbound:?}");
}

#[test]
fn a_listening_port_is_known_by_its_owner() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let me = std::process::id() as i32;
    assert!(probe::listens(&[me], port).unwrap());
    // A child that does not hold it: the port answers, but not as the child's.
    let mut child = Command::new("sleep").arg("30").spawn().unwrap();
    assert!(!probe::listens(&[child.id() as i32], port).unwrap());
    let _ = child.kill();
    let _ = child.wait();
    drop(listener);
    assert!(!probe::listens(&[me], port).unwrap());
}

#[test]
fn a_child_only_tree_counts_its_own() {
    // The child is the root: this process's sockets are not in its tree.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let _mine = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let script = format!(
        "import socket,sys\ns=[socket.create_connection(('127.0.0.1',{port})) for _ in range(4)]\nprint('open',flush=True)\nsys.stdin.read()"
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let root = child.id() as i32;
    let mut series = ConnectionSeries::default();
    let c = wait_for(root, Peer::Remote(port), &mut series, |c| {
        c.established == 4
    });
    assert_eq!(c.busy, 0);
    drop(child.stdin.take());
    child.wait().unwrap();
    assert!(matches!(
        connections(root, Peer::Remote(port)),
        Err(probe::ProbeError::Gone(_))
    ));
    drop(listener);
}

/// A server that answers in two writes without TCP_NODELAY, and a client that waits for
/// each answer before it asks again: the head goes out, the body waits for the client's
/// delayed ACK. The kernel's figures per socket show both ends of it.
#[test]
fn tcp_info_shows_a_delayed_ack_stall_on_the_link_it_happened_on() {
    use std::io::Read as _;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 64];
        while s.read(&mut buf).is_ok_and(|n| n > 0) {
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n")
                .unwrap();
            s.write_all(b"hello\n").unwrap();
        }
    });
    let mut client = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let want = b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n".len();
    let mut round = || {
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let mut got = 0;
        let mut buf = [0u8; 128];
        while got < want {
            got += client.read(&mut buf).unwrap();
        }
    };
    // A new connection ACKs its first segments at once (quick ACKs): past those, every
    // round waits.
    for _ in 0..16 {
        round();
    }
    let rounds = 12;
    let mut link = probe::LinkSeries::new(port);
    let started = Instant::now();
    for _ in 0..rounds {
        round();
        link.push(&probe::tcp_sockets().expect("sock_diag answers"));
    }
    let elapsed = started.elapsed();
    let w = link.window();
    // Both ends of the one connection (the tests beside it may leave a closing socket
    // whose port number this listener reused).
    assert!(w.sockets_max >= 2, "{w:?}");
    assert!(w.data_segments >= 3 * (rounds - 1), "{w:?}");
    assert_eq!(w.retransmits, 0, "{w:?}");
    // The client end's delayed-ACK timeout is the kernel's 40 ms on loopback.
    assert_eq!(w.delayed_ack_us, Some(probe::TCP_DELACK_MIN_US), "{w:?}");
    assert!(
        w.ato_us.is_some_and(|a| a >= probe::TCP_DELACK_MIN_US),
        "{w:?}"
    );
    assert!(w.min_rtt_us.is_some_and(|r| r < 5_000), "{w:?}");
    // The stalls: most rounds waited for the delayed ACK, and the server end's round trip
    // carries the wait (its head's ACK came late, its body's did not: a smoothed mean of
    // both, a few ms against the microseconds of a loopback round trip).
    assert!(
        elapsed >= Duration::from_millis(35 * rounds),
        "{elapsed:?} for {rounds} rounds"
    );
    assert!(w.held_ack_us.is_some_and(|h| h >= 2_000), "{w:?}");
    drop(client);
    server.join().unwrap();
}
