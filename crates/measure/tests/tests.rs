//! `measure` end to end: one window of a real load over loopback, into its record.

use std::cell::Cell;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use load::{Control, Plan, Stop, Target};

/// A server on 127.0.0.1:0 that answers every request head with a 200 and no body, each
/// connection on its own thread; it lives as long as the test process.
fn ok_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let addr = listener.local_addr().expect("has an address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n) = stream.read(&mut chunk) {
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
                        if stream.write_all(ok).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    format!("http://{addr}/")
}

#[test]
fn one_window_becomes_one_record() {
    let target = Target::parse(&ok_server()).expect("a loopback URL parses");
    let plan = Plan {
        connections: 2,
        threads: 1,
        stop: Stop::Requests(300),
        ..Plan::new(target)
    };
    let control = Control::new(plan.effective_threads());
    // A thread beside the load that used 10 ms of CPU during the window.
    let calls = Cell::new(0u64);
    let beside = || {
        calls.set(calls.get() + 1);
        probe::OwnUsage {
            user: Duration::from_millis(10 * (calls.get() - 1)),
            ..probe::OwnUsage::default()
        }
    };
    let mut ended = 0;
    let window = measure::window::run(
        &plan,
        &control,
        Some(&beside),
        measure::window::Sockets::Watch,
        &mut |_| {},
        &mut || {
            ended += 1;
            probe::OwnUsage::default()
        },
    );
    assert_eq!(
        (calls.get(), ended),
        (2, 1),
        "an edge on each side, one end"
    );
    assert!(control.stopped(), "the window stops its control");
    let result = window.result.as_ref().expect("the load runs");
    assert_eq!(result.counts.completed(), 300);
    assert!(
        window.spent.wall >= result.elapsed,
        "the window's time base holds the engine's"
    );
    assert_eq!(
        window.spent.beside.map(|b| b.user),
        Some(Duration::from_millis(10))
    );

    let report =
        measure::record::load_report(&plan, 1, result, Vec::new(), &window, &load::PlanWording);
    assert_eq!(report.protocol.as_deref(), Some("http/1.1"));
    assert_eq!(report.requests.completed, 300);
    let c = &report.client;
    assert_eq!(c.cpus, 1);
    assert_eq!(
        c.dashboard_cpu_s,
        Some(0.01),
        "the CPU beside the load, left out"
    );
    assert!(
        c.probe_cpu_s.is_some(),
        "the socket reader's CPU, told apart"
    );
    assert!(c.cpu_us_per_request.is_some());
    // 300 responses over 2 connections: the worker waited for some of them.
    assert!(
        c.voluntary_ctxt_per_request.is_some_and(|n| n > 0.0),
        "{c:?}"
    );
    assert_eq!(report.tcp.is_some(), window.spent.tcp.is_some());
}
