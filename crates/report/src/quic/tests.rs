use super::{PathsAtEnd, QuicFrames, QuicReport, Spread};

fn report() -> QuicReport {
    QuicReport {
        datagrams_sent: 200,
        datagrams_received: 180,
        send_calls: 200,
        receive_calls: 280,
        bytes_sent: 40_000,
        bytes_received: 60_000,
        per_request: None,
        datagrams_per_send_call: None,
        datagrams_per_receive_call: None,
        connections: 4,
        handshakes_failed: 1,
        packets_sent: 200,
        packets_lost: 5,
        bytes_lost: 6000,
        loss_percent: None,
        congestion_events: 2,
        frames_sent: QuicFrames {
            stream: 150,
            ..QuicFrames::default()
        },
        frames_received: QuicFrames::default(),
        at_end: PathsAtEnd::of(
            [(80_000, 12_000), (100_000, 14_000), (300_000, 20_000)].into_iter(),
        ),
    }
}

#[test]
fn per_request_figures_divide_by_the_requests_completed() {
    let mut q = report();
    q.derive(100);
    let p = q.per_request.as_ref().expect("requests completed");
    assert_eq!(p.requests, 100);
    assert_eq!(p.datagrams_sent, 2.0);
    assert_eq!(p.datagrams_received, 1.8);
    assert_eq!(p.send_calls, 2.0);
    assert_eq!(p.receive_calls, 2.8);
    assert_eq!(p.bytes_sent, 400.0);
    assert_eq!(p.bytes_received, 600.0);
    assert_eq!(q.datagrams_per_send_call, Some(1.0), "no GSO: one per send");
    assert_eq!(q.datagrams_per_receive_call, Some(180.0 / 280.0));
    assert_eq!(q.loss_percent, Some(2.5));
}

#[test]
fn no_request_completed_leaves_the_per_request_figures_out() {
    let mut q = report();
    q.send_calls = 0;
    q.packets_sent = 0;
    q.derive(0);
    assert_eq!(q.per_request, None);
    assert_eq!(q.datagrams_per_send_call, None);
    assert_eq!(q.loss_percent, None);
}

#[test]
fn a_spread_is_the_least_the_median_and_the_largest() {
    let s = Spread::of(&mut [3.0, 1.0, 2.0]).unwrap();
    assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
    let s = Spread::of(&mut [4.0, 1.0, 2.0, 3.0]).unwrap();
    assert_eq!(s.median, 2.5, "the mean of the middle two");
    assert_eq!(Spread::of(&mut []), None);
    let e = report().at_end.unwrap();
    assert_eq!(e.connections, 3);
    assert_eq!(e.rtt_us.median, 100.0, "ns read as µs");
    assert_eq!(e.cwnd_bytes.max, 20_000.0);
}

#[test]
fn agents_merge_to_the_sums_with_the_ratios_recomputed() {
    let mut a = report();
    a.derive(100);
    let mut b = report();
    b.at_end = PathsAtEnd::of([(500_000, 9_000)].into_iter());
    b.derive(100);
    let m = QuicReport::merge([&a, &b].into_iter(), 150).unwrap();
    assert_eq!(m.datagrams_sent, 400);
    assert_eq!(m.receive_calls, 560);
    assert_eq!((m.packets_lost, m.congestion_events), (10, 4));
    assert_eq!(m.handshakes_failed, 2);
    assert_eq!(m.frames_sent.stream, 300);
    let p = m.per_request.unwrap();
    assert_eq!(p.requests, 150, "the merged run's completed, not a shard's");
    assert!((p.datagrams_sent - 400.0 / 150.0).abs() < 1e-12);
    let e = m.at_end.unwrap();
    assert_eq!(e.connections, 4);
    assert_eq!(e.rtt_us.max, 500.0, "the largest of the largest");
    assert_eq!(e.rtt_us.min, 80.0);
    assert_eq!(e.rtt_us.median, 500.0, "the largest median: an upper bound");
    assert_eq!(e.cwnd_bytes.min, 9_000.0);
}

#[test]
fn the_text_says_the_figures_per_request_and_the_handshakes_failed() {
    let mut q = report();
    q.derive(100);
    let [first, second] = q.lines(None);
    assert!(
        first.starts_with("2.0 datagrams sent and 1.8 received per request"),
        "{first}"
    );
    assert!(first.ends_with("1.00 datagrams per send call"), "{first}");
    assert!(
        second.starts_with("5 of 200 packets lost (2.50%), 2 congestion events"),
        "{second}"
    );
    assert!(second.contains("RTT median 100.0µs (min"), "{second}");
    assert!(!second.contains("≤"), "one run's median is exact: {second}");
    assert!(second.ends_with("0 handshakes, 1 failed"), "{second}");
}

#[test]
fn the_text_report_and_the_page_give_the_quic_lines_under_http3() {
    let mut r = crate::tests::sample();
    let mut q = report();
    q.derive(100);
    r.http3 = Some(crate::Http3Report {
        retries: 2,
        quic: Some(q),
    });
    let text = r.to_text(&stats::setting::PlanWording);
    let at = text.find("HTTP/3:        2 retries\nQUIC:          2.0 datagrams sent");
    assert!(at.is_some(), "{text}");
    assert!(
        text.contains("\n               5 of 200 packets lost"),
        "{text}"
    );
    let html = crate::load_html::to_html(&r);
    assert!(
        html.contains("<dt>QUIC</dt><dd>2.0 datagrams sent and 1.8 received per request"),
        "{html}"
    );
    assert!(
        html.contains("<dt>QUIC</dt><dd>5 of 200 packets lost"),
        "{html}"
    );
    // Without QUIC's figures (a result written before them), the line alone.
    r.http3 = Some(crate::Http3Report {
        retries: 2,
        quic: None,
    });
    assert!(!r.to_text(&stats::setting::PlanWording).contains("QUIC:"));
}

#[test]
fn a_result_written_before_quics_figures_still_reads() {
    let h: crate::Http3Report = serde_json::from_str(r#"{"retries": 3}"#).unwrap();
    assert_eq!(h.retries, 3);
    assert_eq!(h.quic, None);
}

/// A merged median (the largest shard's) was printed as if exact: it reads "median ≤" in
/// the text and on the page, and the JSON says so.
#[test]
fn a_merged_median_reads_as_an_upper_bound() {
    let mut a = report();
    a.derive(100);
    let one = QuicReport::merge([&a].into_iter(), 100).unwrap();
    assert!(
        !one.at_end.as_ref().unwrap().median_upper_bound,
        "one shard's is exact"
    );
    let m = QuicReport::merge([&a, &a].into_iter(), 200).unwrap();
    let [_, second] = m.lines(None);
    assert!(second.contains("RTT median ≤ 100.0µs (min"), "{second}");
    assert!(second.contains("cwnd median ≤ 13.7 KiB"), "{second}");
    let mut r = crate::tests::sample();
    r.http3 = Some(crate::Http3Report {
        retries: 0,
        quic: Some(m.clone()),
    });
    let html = crate::load_html::to_html(&r);
    assert!(html.contains("RTT median ≤ 100.0µs"), "{html}");
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["at_end"]["median_upper_bound"], true, "{json}");
    let single = serde_json::to_value(&a).unwrap();
    assert_eq!(single["at_end"].get("median_upper_bound"), None, "{single}");
}
