use report::shootout::Repeat;
use report::tcp::{Runtime, TcpCounts};
use stats::Latency;

use super::*;
use crate::summary::conclude;
use crate::summary::tests::{a_cell, rep, server};

/// A cell whose repeats read the TCP counters: added up, per response, and the
/// Nagle rule with the JVM's fix when the target is a JVM.
#[test]
fn tcp_counters_of_the_repeats_make_the_cells_report_and_verdict() {
    let at_44ms = vec![44_000_000; 50];
    let mut reps = vec![
        rep(200.0, &at_44ms, server(20.0, 1000, 1000)),
        rep(200.0, &at_44ms, server(20.0, 1000, 1000)),
    ];
    for r in &mut reps {
        r.requests.completed = 50;
        r.requests.sent = 50;
        r.tcp = Some(TcpCounts {
            delayed_acks: 60,
            ..Default::default()
        });
    }
    let mut cell = a_cell();
    cell.repeats = reps.clone();
    let jvm = Net {
        runtime: Runtime::Jvm,
        somaxconn: Some(4096),
    };
    conclude(&mut cell, 1, &jvm);
    let tcp = cell.tcp.as_ref().expect("the repeats read the counters");
    assert_eq!(tcp.deltas.delayed_acks, 120);
    assert_eq!(tcp.per_request.unwrap().delayed_acks, 1.2);
    let d = cell.diagnosis.unwrap();
    assert_eq!(
        d.bottleneck,
        report::shootout::Bottleneck::Nagle,
        "{}",
        d.detail
    );
    assert!(
        d.detail
            .starts_with("1.20 delayed ACKs per request with p50 44")
            && d.detail.contains("-Dsun.net.httpserver.nodelay=true"),
        "{}",
        d.detail
    );
    // A capacity window alone: its own deltas, per response and the same rule.
    let w = window_tcp(&reps[0], 1, &jvm).expect("the window read the counters");
    assert_eq!(w.deltas.delayed_acks, 60);
    assert_eq!(w.per_request.unwrap().delayed_acks, 1.2);
    assert_eq!(w.warnings[0].kind, report::tcp::TcpFinding::Nagle);
    assert!(window_tcp(
        &Repeat {
            tcp: None,
            ..reps[0].clone()
        },
        1,
        &jvm
    )
    .is_none());
    // Without counters (results from before), no report and the old verdicts.
    let mut cell = a_cell();
    cell.repeats = reps
        .into_iter()
        .map(|r| Repeat { tcp: None, ..r })
        .collect();
    conclude(&mut cell, 1, &jvm);
    assert!(cell.tcp.is_none());
    assert_ne!(
        cell.diagnosis.unwrap().bottleneck,
        report::shootout::Bottleneck::Nagle
    );
}

/// Above capacity an open-model window's latency is its queue (p50 334 ms, off the
/// 40 ms timer): the TCP rules read the service time, where the Nagle stall sits, as
/// `foxbench load --find-max` does; without a service histogram, the latency.
#[test]
fn open_model_windows_judge_nagle_on_service_time_not_the_queued_latency() {
    let queued = vec![334_000_000; 50];
    let mut window = rep(150.0, &queued, server(20.0, 1000, 1000));
    window.requests.completed = 50;
    window.requests.sent = 50;
    window.tcp = Some(TcpCounts {
        delayed_acks: 60,
        ..Default::default()
    });
    let mut service = Latency::new();
    for _ in 0..50 {
        service.record_ns(40_300_000);
    }
    let net = Net::default();
    // Before the fix the rules read the queued latency and named nothing.
    let latency_only = window_tcp(&window, 1, &net).expect("the window read the counters");
    assert!(
        latency_only.warnings.is_empty(),
        "{:?}",
        latency_only.warnings
    );
    window.service_hdr_base64 = Some(service.to_base64());
    let w = window_tcp(&window, 1, &net).expect("the window read the counters");
    assert_eq!(
        w.warnings.iter().map(|f| f.kind).collect::<Vec<_>>(),
        vec![report::tcp::TcpFinding::Nagle],
        "{:?}",
        w.warnings
    );
    assert!(
        w.warnings[0].detail.contains("p50 40"),
        "{}",
        w.warnings[0].detail
    );
    // A rate level's cell: the same, from its repeats' merged service times.
    let mut cell = a_cell();
    cell.repeats = vec![window.clone(), window];
    conclude(&mut cell, 1, &net);
    assert_eq!(
        cell.diagnosis.unwrap().bottleneck,
        report::shootout::Bottleneck::Nagle
    );
}

fn link(service: Option<&str>, retransmits: u64, held_ack_ms: f64) -> report::tcp::TcpLink {
    report::tcp::TcpLink {
        service: service.map(str::to_string),
        port: if service.is_some() { 9000 } else { 8080 },
        readings: 6,
        sockets_max: 20,
        retransmits,
        data_segments: 500,
        delayed_ack_ms: service.is_none().then_some(40.0),
        ato_ms: service.is_none().then_some(40.0),
        min_rtt_ms: service.is_none().then_some(0.03),
        held_ack_ms: Some(held_ack_ms),
    }
}

/// A cell's links are its repeats' added up, and the rules read them: a stall whose data
/// waited on the target's calls to its service is named there, with the namespace's caveat.
#[test]
fn a_cells_links_are_its_repeats_and_name_the_link_a_stall_sat_on() {
    let at_44ms = vec![44_000_000; 50];
    let mut reps = vec![
        rep(200.0, &at_44ms, server(20.0, 1000, 1000)),
        rep(200.0, &at_44ms, server(20.0, 1000, 1000)),
    ];
    for (i, r) in reps.iter_mut().enumerate() {
        r.requests.completed = 50;
        r.requests.sent = 50;
        r.tcp = Some(TcpCounts {
            delayed_acks: 60,
            ..Default::default()
        });
        r.tcp_links = vec![
            link(None, i as u64, 0.1),
            link(Some("hello"), 3, 20.0 + i as f64),
        ];
    }
    let mut cell = a_cell();
    cell.repeats = reps;
    conclude(&mut cell, 1, &Net::default());
    let tcp = cell.tcp.as_ref().unwrap();
    assert_eq!(tcp.links.len(), 2);
    assert_eq!((tcp.links[0].retransmits, tcp.links[1].retransmits), (1, 6));
    assert_eq!(tcp.links[1].data_segments, 1000);
    assert_eq!(tcp.links[1].held_ack_ms, Some(20.5));
    let d = cell.diagnosis.unwrap();
    assert_eq!(d.bottleneck, report::shootout::Bottleneck::Nagle);
    assert!(
        d.detail.contains("on the target's calls to hello")
            && d.detail.contains("the network namespace's"),
        "{}",
        d.detail
    );
}
