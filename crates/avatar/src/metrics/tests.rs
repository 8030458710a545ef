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
