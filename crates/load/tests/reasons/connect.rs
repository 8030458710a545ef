//! Connect and write failures, each caused for real: a listener whose accept queue is full
//! (the kernel drops the SYNs: a connect timeout), a server that closes while a large body
//! is still being written, and a network namespace with two local ports (EADDRNOTAVAIL)
//! and routes to nowhere (ENETUNREACH, EHOSTUNREACH).

use std::net::TcpStream;
use std::time::Duration;

use load::Stop;
use stats::reason::{At, Cause, Kind, Reason, EADDRNOTAVAIL};

use super::super::support::{redirect_server, Conn, Server};
use super::super::{plan, run};
use super::runs_failing_with;

/// A listener with a backlog of 0 holds one connection it never accepts: its accept queue
/// is then full, and Linux drops every further SYN, so connects neither succeed nor fail.
#[test]
fn a_connect_that_never_completes_is_a_connect_timeout() {
    use socket2::{Domain, Socket, Type};
    let listener = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    listener
        .bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
    listener.listen(0).unwrap();
    let addr = listener.local_addr().unwrap().as_socket().unwrap();
    let _queued = TcpStream::connect(addr).unwrap();
    let mut p = plan(&format!("http://{addr}/"));
    p.connections = 2;
    p.connect_timeout = Duration::from_millis(300);
    p.stop = Stop::Requests(4);
    let r = runs_failing_with(&p, Reason::new(Kind::Connect, Cause::Timeout(At::Connect)));
    assert_eq!(r.counts.connect_timeout, 4, "{:?}", r.counts);
}

/// A POST whose body is far larger than the socket buffers on both sides, so that the
/// client is still writing when the server gives up.
fn large_post(url: &str, n: u64) -> load::Plan {
    let mut p = plan(url);
    p.requests[0].method = "POST".into();
    p.requests[0].body = vec![b'x'; 16 << 20];
    p.connections = 2;
    p.stop = Stop::Requests(n);
    p.timeout = Duration::from_secs(5);
    p
}

/// The server reads the head and closes with the body unread: the kernel answers the rest
/// of the body with a reset, which the client meets in its write.
#[test]
fn a_server_that_closes_mid_request_fails_the_write() {
    let s = Server::spawn(|mut c: Conn| {
        if c.next_request().is_some() {
            drop(c);
        }
    });
    runs_failing_with(
        &large_post(&s.url(), 6),
        Reason::new(Kind::Write, Cause::Reset(At::BeforeResponse)),
    );
}

/// EPIPE needs the reset to come after the server's FIN (the socket is then in CLOSE_WAIT)
/// and before the client has read that FIN: the server shuts its side down, then closes
/// with the body unread. The client, blocked on a full send buffer, wakes with the write
/// refused by EPIPE; if the scheduler wakes it between the two, it reads the FIN first and
/// the request fails as closed before the response instead. Both are counted exactly.
#[test]
fn a_server_that_shuts_down_then_closes_mid_request_is_epipe() {
    let s = Server::spawn(|mut c: Conn| {
        if c.next_request().is_some() {
            let _ = c.stream.shutdown(std::net::Shutdown::Write);
            drop(c);
        }
    });
    let n = 20;
    let r = run(&large_post(&s.url(), n));
    let epipe = Reason::new(Kind::Write, Cause::Errno(32));
    let closed = Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse));
    let c = &r.counts;
    let (pipes, closes) = (
        c.reasons.count(epipe).unwrap_or(0),
        c.reasons.count(closed).unwrap_or(0),
    );
    assert_eq!(pipes + closes, n, "{:?}", c.reasons);
    assert_eq!((c.write, c.read), (pipes, closes), "{c:?}");
    assert!(pipes > 0, "no EPIPE in {n} requests: {:?}", c.reasons);
}

/// In a network namespace of its own whose ephemeral port range holds two ports, a run of
/// four kept-alive connections gets two: the other two connects fail with EADDRNOTAVAIL,
/// counted as ports exhausted, and the requests on them fail so. In the same namespace, an
/// address with no route is ENETUNREACH, and one with an unreachable route EHOSTUNREACH.
#[test]
fn ports_running_out_and_no_route_are_their_errnos() {
    // testkit's namespace (loopback up; a loud skip without root, a failure under
    // FOXBENCH_NETNS=require), entered by this thread alone (and its children: the
    // server's and the engine's threads, and `ip`); the test binary's other threads keep theirs.
    let Some(ns) = testkit::Netns::new("ports") else {
        return;
    };
    let path = ns.path();
    let r = std::thread::spawn(move || {
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        nix::sched::setns(file, nix::sched::CloneFlags::CLONE_NEWNET).expect("setns(CLONE_NEWNET)");
        // The listener's port comes from the default range, before it is narrowed.
        let s = redirect_server();
        std::fs::write("/proc/sys/net/ipv4/ip_local_port_range", "40000 40001\n").unwrap();
        let mut p = plan(&s.url());
        p.connections = 4;
        p.threads = 1;
        p.stop = Stop::Requests(200);
        let r = run(&p);
        // No route at all, and a route that says unreachable: the connect fails at once.
        let ip = |args: &[&str]| {
            let ok = std::process::Command::new("ip")
                .args(args)
                .status()
                .unwrap();
            assert!(ok.success(), "ip {args:?}");
        };
        ip(&["route", "add", "unreachable", "10.98.0.0/16"]);
        for (url, errno) in [
            ("http://10.99.0.1:80/", 101), // ENETUNREACH
            ("http://10.98.0.1:80/", 113), // EHOSTUNREACH
        ] {
            let mut p = plan(url);
            p.stop = Stop::Requests(4);
            runs_failing_with(&p, Reason::new(Kind::Connect, Cause::Errno(errno)));
        }
        r
    })
    .join()
    .unwrap();
    let c = &r.counts;
    let want = Reason::new(Kind::Connect, Cause::Errno(EADDRNOTAVAIL));
    assert!(c.connect_ports_exhausted >= 2, "{c:?}");
    assert_eq!(c.reasons.count(want), Some(c.connect), "{:?}", c.reasons);
    assert_eq!(c.connect_ports_exhausted, c.connect, "{c:?}");
    assert_eq!(c.ok + c.connect, 200, "{c:?}");
}
