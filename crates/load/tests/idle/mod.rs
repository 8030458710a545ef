//! Workers that spin (`Idle::Spin`): they never sleep, and everything a sleeping worker
//! is woken for still happens on time: timeouts found by the tick, the open model's due
//! instants, the end of a run by duration. The polls that find nothing are counted as spin.

use std::time::{Duration, Instant};

use load::{Arrival, Coalesce, Idle, Rate, Stop};

use super::support::{redirect_server, Server};
use super::{plan, run};

#[test]
fn a_spinning_worker_counts_its_spin_and_answers_every_request() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.idle = Idle::Spin;
    assert!(p.idle_in_effect().spin);
    assert_eq!(p.coalesce_in_effect(), Coalesce::Off);
    let r = run(&p);
    assert_eq!(r.counts.ok, 200, "{:?}", r.counts);
    assert!(r.spin > Duration::ZERO, "no spin counted");
    assert_eq!(r.coalesced.waits, 0);
}

#[test]
fn a_spinning_worker_still_times_out_and_stops_on_time() {
    // A server that never answers: the requests fail by the tick's timeout scan, and a
    // run by duration ends at its end, though the worker never sleeps.
    let s = Server::spawn(|c| c.hold());
    let mut p = plan(&s.url());
    p.idle = Idle::Spin;
    p.threads = 1;
    p.connections = 2;
    p.timeout = Duration::from_millis(100);
    p.stop = Stop::Duration(Duration::from_millis(500));
    let started = Instant::now();
    let r = run(&p);
    assert!(r.counts.timeout >= 2, "{:?}", r.counts);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(r.spin > Duration::ZERO);
}

#[test]
fn a_spinning_open_model_sends_on_its_schedule() {
    let s = redirect_server();
    let mut p = plan(&s.url());
    p.idle = Idle::Spin;
    p.threads = 1;
    p.arrival = Arrival::Open {
        rate: Rate::constant(400.0),
    };
    p.stop = Stop::Duration(Duration::from_millis(500));
    let r = run(&p);
    // 200 due over the run, none after its end (a worker late past the end once sent
    // 202); a loaded machine may leave a few unsent at the end.
    assert!((180..=200).contains(&r.counts.sent), "{:?}", r.counts);
    assert!(r.spin > Duration::ZERO);
}
