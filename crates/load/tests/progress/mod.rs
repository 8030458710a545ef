//! Live progress (`Control::snapshot`), read while a run goes on, as the dashboard and the
//! progress line read it.

use std::time::{Duration, Instant};

use load::{Control, Stop};

use super::plan;
use super::support::redirect_server;

/// Runs `p` until `until` holds of a snapshot (or 20 s pass), then stops it; returns the
/// snapshot that held, the one after the run, and the run's result.
fn watch(
    p: &load::Plan,
    until: fn(&load::Snapshot) -> bool,
) -> (Option<load::Snapshot>, load::Snapshot, load::RunResult) {
    let control = Control::new(p.effective_threads());
    let watcher = {
        let control = control.clone();
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut held = None;
            while held.is_none() && Instant::now() < deadline {
                let s = control.snapshot();
                if until(&s) {
                    held = Some(s);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            // Stopped in any case, so that a failing test ends.
            control.stop();
            held
        })
    };
    let r = load::run(p, &control).expect("run starts");
    let held = watcher.join().unwrap();
    assert!(r.counts.conserved(), "{:?}", r.counts);
    assert!(r.counts.reasons_conserved(), "{:?}", r.counts);
    (held, control.snapshot(), r)
}

/// The engine counts the connections it holds open (the dashboard's "connections open",
/// which it read from /proc/net/tcp every second before): all of them while a kept-alive
/// run goes on, none once it ended.
#[test]
fn connections_open_is_the_engines_own_count() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.connections = 6;
    p.stop = Stop::Duration(Duration::from_secs(60));
    let (held, after, r) = watch(&p, |s| s.connections_open == 6 && s.completed > 100);
    let held = held.expect("six connections open while the run went on");
    assert_eq!(held.connections_open, 6);
    assert_eq!(
        after.connections_open, 0,
        "every connection closed at the end"
    );
    assert_eq!(r.counts.connections_opened, 6, "{:?}", r.counts);
    assert_eq!(s.accepts(), 6);
}

/// Connects that fail hold nothing open.
#[test]
fn refused_connects_are_not_open_connections() {
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut p = plan(&format!("http://{addr}/"));
    p.stop = Stop::Duration(Duration::from_secs(60));
    let (held, after, r) = watch(&p, |s| s.errors > 50);
    assert_eq!(held.expect("connects refused").connections_open, 0);
    assert_eq!(after.connections_open, 0);
    assert_eq!(r.counts.connections_opened, 0);
}
