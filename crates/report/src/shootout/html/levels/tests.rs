use super::*;

fn info(
    connections: u64,
    duration_s: Option<f64>,
    requests: Option<u64>,
    keepalive: Option<bool>,
) -> LevelInfo {
    LevelInfo {
        name: "l".into(),
        connections,
        duration_s,
        requests,
        max_duration_s: None,
        keepalive,
        repeats: 1,
        tls_resume: None,
        capacity: None,
        rate: None,
        http2_streams: None,
        http3_streams: None,
    }
}

#[test]
fn levels_in_a_few_words() {
    for (l, want) in [
        (info(100, Some(10.0), None, None), "l (100 conns, 10 s)"),
        (info(1, Some(2.5), None, Some(true)), "l (1 conn, 2.5 s)"),
        (
            info(100, None, Some(10_000), Some(false)),
            "l (100 conns, 10000 requests, no keep-alive)",
        ),
        // A count wins over a duration, as in the runner.
        (
            info(4, Some(5.0), Some(50), None),
            "l (4 conns, 50 requests)",
        ),
        (
            LevelInfo {
                tls_resume: Some(false),
                http2_streams: None,
                ..info(10, None, Some(500), Some(false))
            },
            "l (10 conns, 500 requests, no keep-alive, no TLS resumption)",
        ),
        (
            LevelInfo {
                rate: Some("400".into()),
                ..info(150, Some(1.5), None, None)
            },
            "l (150 conns, 1.5 s, open model at 400 req/s, latency corrected)",
        ),
    ] {
        assert_eq!(level_text(&l), want);
    }
}
