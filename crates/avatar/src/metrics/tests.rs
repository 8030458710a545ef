use super::*;

#[test]
fn render_sums_workers_and_lists_series() {
    let m = Metrics::new(2);
    m.worker(0).request(Route::Redirect, Status::Found);
    m.worker(1).request(Route::Redirect, Status::Found);
    m.worker(1).parse_error(ParseError::Smuggling);
    m.worker(0).set_open(3);
    m.worker(1).set_open(4);
    let mut out = Vec::new();
    m.render(&mut out);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("avatar_requests_total{route=\"redirect\",status=\"302\"} 2\n"),
        "{text}"
    );
    assert!(text.contains("avatar_requests_total{route=\"svg\",status=\"200\"} 0\n"));
    assert!(text.contains("avatar_parse_errors_total{kind=\"smuggling\"} 1\n"));
    assert!(text.contains("avatar_connections_open 7\n"));
    assert!(!text.contains("status=\"431\""));
}

#[test]
fn h3_udp_counts_sum_workers_under_their_families() {
    let m = Metrics::new(2);
    m.worker(0).h3_udp(H3Udp::DatagramsSent, 10);
    m.worker(1).h3_udp(H3Udp::DatagramsSent, 3);
    m.worker(0).h3_udp(H3Udp::SendCalls, 2);
    m.worker(1).h3_udp(H3Udp::ReceiveCalls, 5);
    assert_eq!(m.h3_udp(H3Udp::DatagramsSent), 13);
    let mut out = Vec::new();
    m.render(&mut out);
    let text = String::from_utf8(out).unwrap();
    for line in [
        "# TYPE avatar_h3_datagrams_total counter\n",
        "avatar_h3_datagrams_total{direction=\"sent\"} 13\n",
        "avatar_h3_datagrams_total{direction=\"received\"} 0\n",
        "avatar_h3_datagrams_total{direction=\"dropped\"} 0\n",
        "# TYPE avatar_h3_udp_calls_total counter\n",
        "avatar_h3_udp_calls_total{direction=\"sent\"} 2\n",
        "avatar_h3_udp_calls_total{direction=\"received\"} 5\n",
        "# TYPE avatar_h3_gso_refused_total counter\n",
        "avatar_h3_gso_refused_total 0\n",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
}
