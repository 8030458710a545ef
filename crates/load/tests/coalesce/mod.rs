//! The closed model's wait before sleeping (`Coalesce`): made and counted when the worker
//! is idle, never at low concurrency under `auto`, never when off or in the open model.
//! Whether it pays (client and server CPU per request) is a benchmark's question:
//! `bench/load.py`, runs in bench/runs/.

use std::time::Duration;

use load::{Arrival, Coalesce, PlanError, Rate, Stop};

use super::support::{Server, REDIRECT};
use super::{plan, run};

/// Answers each request 1 ms after reading it: the client has time to spare.
fn slow_server() -> Server {
    Server::spawn(|mut c| {
        while c.next_request().is_some() {
            std::thread::sleep(Duration::from_millis(1));
            if !c.send(REDIRECT) {
                return;
            }
        }
    })
}

#[test]
fn a_fixed_wait_is_made_and_counted_when_the_worker_is_idle() {
    let s = slow_server();
    let mut p = plan(&s.url());
    p.threads = 1;
    p.stop = Stop::Requests(100);
    p.coalesce = Coalesce::Fixed(Duration::from_micros(200));
    assert_eq!(p.coalesce_in_effect(), p.coalesce);
    let r = run(&p);
    assert_eq!(r.counts.ok, 100, "{:?}", r.counts);
    assert!(
        r.coalesced.waits > 0,
        "no wait made by an idle worker: {:?}",
        r.coalesced
    );
    // The first wait asks for the whole 200 µs (no overshoot learnt yet), and a sleep
    // never ends early.
    assert!(
        r.coalesced.waited >= Duration::from_micros(200),
        "{:?}",
        r.coalesced
    );
}

#[test]
fn auto_never_waits_when_few_responses_are_due() {
    // 4 requests in flight, ~1 ms each: 1/40 of the latency is 25 µs, in which 0.1
    // responses are due, below the 4 a wait needs. An ab-like run is never slowed.
    let s = slow_server();
    let mut p = plan(&s.url());
    p.threads = 1;
    p.stop = Stop::Requests(100);
    assert_eq!(p.coalesce, Coalesce::Auto, "auto is the default");
    let r = run(&p);
    assert_eq!(r.counts.ok, 100, "{:?}", r.counts);
    assert_eq!(r.coalesced.waits, 0, "{:?}", r.coalesced);
}

#[test]
fn off_and_the_open_model_never_wait() {
    let s = slow_server();
    let mut p = plan(&s.url());
    p.threads = 1;
    p.stop = Stop::Requests(50);
    p.coalesce = Coalesce::Off;
    let r = run(&p);
    assert_eq!(r.counts.ok, 50, "{:?}", r.counts);
    assert_eq!(r.coalesced.waits, 0, "{:?}", r.coalesced);

    p.arrival = Arrival::Open {
        rate: Rate::constant(2_000.0),
    };
    p.coalesce = Coalesce::Fixed(Duration::from_micros(200));
    assert_eq!(p.validate(), Err(PlanError::CoalesceWithRate));
    p.coalesce = Coalesce::Auto;
    // The worker waits as `Plan::coalesce_in_effect` decides, the one copy of the rule.
    assert_eq!(p.coalesce_in_effect(), Coalesce::Off);
    let r = run(&p);
    assert_eq!(r.counts.ok, 50, "{:?}", r.counts);
    assert_eq!(r.coalesced.waits, 0, "the open model sends on its schedule");
}
