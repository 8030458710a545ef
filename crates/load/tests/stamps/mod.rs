//! Kernel receive stamps: every read is stamped (HTTP/1.1, TLS; HTTP/2 in `h2::hostile`),
//! the latency leads on the kernel's clock, and a socket without stamps falls back to the
//! read. What the stamps leave out of the latency (the client's own delay) is shown end to
//! end in the binary's tests (`foxbench/tests/stamps`).

use std::time::Duration;

use load::{
    Arrival, ClockInUse, KernelStamps, LatencyClock, Rate, RequestSpec, RunResult, Stop,
    TlsOptions, Verify,
};

use super::support::tls::{tls_redirect_server, Certs};
use super::support::{redirect_server, Conn, REDIRECT};
use super::{plan, run};

/// Every response is recorded on both clocks, with its delay, and every read was stamped.
#[track_caller]
pub(crate) fn assert_stamped(r: &RunResult) {
    let ok = r.counts.ok;
    assert!(ok > 0, "{:?}", r.counts);
    assert_eq!(r.latency.len(), ok);
    assert_eq!(r.read_latency.len(), ok);
    assert_eq!(r.client_delay.len(), ok);
    assert!(r.stamps.stamped > 0, "{:?}", r.stamps);
    assert_eq!(r.stamps.unstamped, 0, "{:?}", r.stamps);
    assert_eq!(r.latency_clock, ClockInUse::Kernel);
    // The kernel latency is never above the read latency.
    assert!(
        r.latency.percentile_ns(100.0) <= r.read_latency.percentile_ns(100.0),
        "kernel max {} > read max {}",
        r.latency.percentile_ns(100.0),
        r.read_latency.percentile_ns(100.0)
    );
}

#[test]
fn every_http1_read_is_stamped() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(300);
    assert_stamped(&run(&p));
}

/// A TLS redirect server with a certificate made now, and a plan that verifies it: the
/// certificates and the server live as long as the caller holds them.
fn tls_plan() -> (Certs, super::support::Server, load::Plan) {
    let certs = Certs::for_names(&["localhost"]);
    let s = tls_redirect_server(certs.server_config());
    let mut p = plan(&format!("https://localhost:{}/", s.addr.port()));
    p.tls = TlsOptions {
        verify: Verify::CaFile(certs.ca.clone()),
        resume: true,
        client: None,
    };
    (certs, s, p)
}

#[test]
fn every_tls_read_is_stamped() {
    let (_certs, _s, mut p) = tls_plan();
    p.stop = Stop::Requests(300);
    assert_stamped(&run(&p));
}

#[test]
fn without_stamps_the_latency_falls_back_to_the_read() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(300);
    p.kernel_stamps = KernelStamps::Off;
    let r = run(&p);
    assert_eq!(r.counts.ok, 300, "{:?}", r.counts);
    assert_eq!(r.stamps.stamped, 0, "{:?}", r.stamps);
    assert!(r.stamps.unstamped > 0, "{:?}", r.stamps);
    assert_eq!(r.latency_clock, ClockInUse::ReadNoStamps);
    // Each latency is its read latency, and the client's delay is nothing.
    assert_eq!(r.latency, r.read_latency);
    assert!(
        r.client_delay.percentile_ns(100.0) <= 1,
        "{}",
        r.client_delay.percentile_ns(100.0)
    );
}

#[test]
fn the_read_clock_leads_when_asked_and_both_are_kept() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(300);
    p.latency_clock = LatencyClock::Read;
    let r = run(&p);
    assert_eq!(r.latency_clock, ClockInUse::ReadAsked);
    assert_eq!(r.latency, r.read_latency);
    assert!(r.stamps.stamped > 0, "still stamped: {:?}", r.stamps);
    assert_eq!(r.client_delay.len(), r.counts.ok);
    // The kernel latency is kept beside it, one sample per response, never above the read
    // latency at any percentile.
    let kernel = r
        .kernel_latency
        .as_ref()
        .expect("the kernel latency is kept");
    assert_eq!(kernel.len(), r.counts.ok);
    assert_eq!(r.latency_on(LatencyClock::Kernel), Some(kernel));
    for q in [0.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
        let (k, rd) = (kernel.percentile_ns(q), r.read_latency.percentile_ns(q));
        assert!(k <= rd, "p{q}: kernel {k} ns > read {rd} ns");
    }
}

/// Under the kernel's clock `latency` is the kernel latency: it is not kept a second time.
#[test]
fn the_kernel_clock_keeps_its_latency_once() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(100);
    let r = run(&p);
    assert_eq!(r.latency_clock, ClockInUse::Kernel);
    assert!(r.kernel_latency.is_none());
    assert_eq!(r.latency_on(LatencyClock::Kernel), Some(&r.latency));
    assert_eq!(r.latency_on(LatencyClock::Read), Some(&r.read_latency));
}

/// Without stamps there is no kernel latency on the read's clock: each would be its read
/// latency under another name.
#[test]
fn without_stamps_the_read_clock_keeps_no_kernel_latency() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(100);
    p.latency_clock = LatencyClock::Read;
    p.kernel_stamps = KernelStamps::Off;
    let r = run(&p);
    assert_eq!(r.counts.ok, 100, "{:?}", r.counts);
    assert_eq!(r.stamps.stamped, 0, "{:?}", r.stamps);
    assert!(r.kernel_latency.is_none());
    assert_eq!(r.latency_on(LatencyClock::Kernel), None);
}

/// A response framed by the close completes with the close, which carries no stamp: it is
/// dated by the read of the EOF, never by an earlier read's stamp the recorder still held
/// (there, its body's, 100 ms before the response was complete).
#[test]
fn a_response_framed_by_the_close_is_not_dated_by_an_earlier_reads_stamp() {
    let s = super::support::Server::spawn(|mut c| {
        if c.next_request().is_some() {
            c.send(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    let mut p = plan(&s.url());
    p.threads = 1;
    p.connections = 1;
    p.stop = Stop::Requests(1);
    let r = run(&p);
    assert_eq!(r.counts.ok, 1, "{:?}", r.counts);
    let ms = r.latency.percentile_ns(100.0) / 1_000_000;
    assert!(ms >= 100, "latency {ms} ms: dated before the close");
}

/// One request in [`load::SEND_SAMPLE_EVERY`] was sampled (the first, then every 64th, per
/// worker), every sampled request's stamp came back and was matched, and nothing failed.
#[track_caller]
fn assert_sends_sampled(r: &RunResult, requests: u64, threads: u64) {
    assert_eq!(r.counts.ok, requests, "{:?}", r.counts);
    assert_eq!(r.counts.errors(), 0, "{:?}", r.counts);
    let s = r.send_stamps;
    assert_eq!(s.every, load::SEND_SAMPLE_EVERY);
    // Per worker: ceil(its requests / 64); the budget's split between workers moves it by
    // at most one per worker.
    let expected = requests.div_ceil(s.every);
    assert!(
        (expected..=expected + threads).contains(&s.sampled),
        "{s:?}: expected about {expected}"
    );
    assert_eq!(
        s.matched, s.sampled,
        "every sampled send's stamp matched: {s:?}"
    );
    assert!(s.returned >= s.matched, "{s:?}");
    assert_eq!(r.send_delay_kernel.len(), s.matched);
}

/// A send stamp waiting in the socket's error queue raises EPOLLERR: drained, it is no
/// error, and the connection carries on (before the drain, the stamp read as a dead
/// connection while connecting, and was never read once established).
#[test]
fn a_pending_send_stamp_is_not_a_dead_connection() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.threads = 1;
    p.connections = 1;
    p.stop = Stop::Requests(200);
    let r = run(&p);
    assert_sends_sampled(&r, 200, 1);
    assert_eq!(r.counts.connections_opened, 1, "{:?}", r.counts);
}

/// The same under TLS, where the first sampled request is issued before the handshake: the
/// handshake's flights are stamped while the connection is being set up, which EPOLLERR
/// must not fail.
#[test]
fn a_pending_send_stamp_is_not_a_dead_connection_under_tls() {
    let (_certs, _s, mut p) = tls_plan();
    p.threads = 1;
    p.connections = 2;
    p.stop = Stop::Requests(200);
    let r = run(&p);
    assert_sends_sampled(&r, 200, 1);
    assert!(
        r.send_stamps.returned > r.send_stamps.matched,
        "the handshakes' stamps came back too: {:?}",
        r.send_stamps
    );
}

/// A connection per request: the sampled request's write is the connection's first.
#[test]
fn a_send_stamp_on_a_connection_per_request_is_matched() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.threads = 1;
    p.keepalive = false;
    p.stop = Stop::Requests(130);
    let r = run(&p);
    assert_sends_sampled(&r, 130, 1);
}

#[test]
fn without_send_stamps_nothing_is_sampled() {
    let s = redirect_server();
    for stamps in [KernelStamps::Receive, KernelStamps::Off] {
        let mut p = plan(&s.url());
        p.stop = Stop::Requests(200);
        p.kernel_stamps = stamps;
        let r = run(&p);
        assert_eq!(r.counts.ok, 200, "{:?}", r.counts);
        assert_eq!(
            r.send_stamps,
            load::SendStampCounts::default(),
            "{stamps:?}"
        );
        assert_eq!(r.send_delay_kernel.len(), 0);
        assert_eq!(r.stamps.stamped > 0, stamps.receive(), "{stamps:?}");
    }
}

/// How long the server below leaves each request's body unread.
const STALL: Duration = Duration::from_millis(40);

/// A server with a small receive window that reads each request's head, leaves its body
/// unread for [`STALL`], then reads it and answers: the request's last bytes wait in the
/// client's socket for the stall, after the engine handed the request over on time.
fn stalling_body_server() -> std::net::SocketAddr {
    use socket2::{Domain, Socket, Type};
    let l = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    // Inherited by the accepted sockets, and set before the handshake fixes the window.
    l.set_recv_buffer_size(4096).unwrap();
    l.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )
    .unwrap();
    l.listen(64).unwrap();
    let l: std::net::TcpListener = l.into();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in l.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                let mut c = Conn::from_parts(stream, Default::default());
                while let Some(req) = c.next_request() {
                    let len = req
                        .head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length: "))
                        .and_then(|n| n.trim().parse().ok())
                        .unwrap_or(0);
                    std::thread::sleep(STALL);
                    if c.take_body(len).len() < len || !c.send(REDIRECT) {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// The open model's lateness by the engine ends when it hands a request to a free
/// connection; by the kernel it ends when the request's last byte leaves. A server that
/// leaves each body unread for [`STALL`] holds every request in the client's socket that
/// long: the kernel's lateness shows the stall, the engine's cannot.
#[test]
fn the_kernels_send_lateness_shows_a_request_held_in_the_socket() {
    let addr = stalling_body_server();
    let mut p = plan(&format!("http://{addr}/"));
    p.threads = 1;
    p.connections = 8;
    p.timeout = Duration::from_secs(5);
    p.arrival = Arrival::Open {
        rate: Rate::constant(25.0),
    };
    p.stop = Stop::Requests(130);
    // Several times the server's window: the body's end waits in the client's socket.
    p.requests = vec![RequestSpec {
        method: "POST".into(),
        body: vec![b'x'; 16 * 1024],
        ..RequestSpec::get(&p.target)
    }];
    let r = run(&p);
    assert_eq!(r.counts.ok, 130, "{:?}", r.counts);
    let s = r.send_stamps;
    assert_eq!((s.sampled, s.matched), (3, 3), "{s:?}");
    let kernel = &r.send_lateness_kernel;
    // The first request may be counted late (its connection still opening): its kernel
    // lateness is then not recorded beside the engine's.
    assert!(kernel.len() >= 2, "{s:?}: {} on time", kernel.len());
    let stall_ns = STALL.as_nanos() as u64;
    let kernel_min = kernel.percentile_ns(0.0);
    assert!(
        kernel_min >= stall_ns * 9 / 10,
        "kernel send lateness min {kernel_min} ns < the {STALL:?} stall"
    );
    // The engine handed the requests over on time: its lateness knows nothing of the
    // stall (its median: a loaded machine may deschedule a few).
    let engine_p50 = r.lateness.percentile_ns(50.0);
    assert!(
        engine_p50 < stall_ns / 4,
        "engine lateness p50 {engine_p50} ns: the requests were not handed over on time"
    );
    assert!(r.send_delay_kernel.percentile_ns(0.0) >= stall_ns * 9 / 10);
}
