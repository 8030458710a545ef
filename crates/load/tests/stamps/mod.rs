//! Kernel receive stamps: every read is stamped (HTTP/1.1, TLS; HTTP/2 in `h2::hostile`),
//! the latency leads on the kernel's clock, and a socket without stamps falls back to the
//! read. What the stamps leave out of the latency (the client's own delay) is shown end to
//! end in the binary's tests (`foxbench/tests/stamps`).

use load::{ClockInUse, LatencyClock, RunResult, Stop, TlsOptions, Verify};

use super::support::redirect_server;
use super::support::tls::{tls_redirect_server, Certs};
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

#[test]
fn every_tls_read_is_stamped() {
    let certs = Certs::for_names(&["localhost"]);
    let s = tls_redirect_server(certs.server_config());
    let mut p = plan(&format!("https://localhost:{}/", s.addr.port()));
    p.tls = TlsOptions {
        verify: Verify::CaFile(certs.ca.clone()),
        resume: true,
        client: None,
    };
    p.stop = Stop::Requests(300);
    assert_stamped(&run(&p));
}

#[test]
fn without_stamps_the_latency_falls_back_to_the_read() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.stop = Stop::Requests(300);
    p.kernel_stamps = false;
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
    p.kernel_stamps = false;
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
