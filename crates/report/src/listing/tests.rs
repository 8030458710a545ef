use super::*;

#[test]
fn every_row_of_a_listing() {
    let l = Listing {
        suite: "s".into(),
        source: "suites/s.toml".into(),
        root: "/r".into(),
        client_cpus: vec![0],
        server_cpus: vec![1],
        services: Some(Services {
            cpus: vec![1],
            notes: vec!["services share CPU 1 with the targets".into()],
            rows: vec![Service {
                name: "db".into(),
                missing: vec!["postgres".into()],
            }],
        }),
        levels: vec![Level {
            name: "c10".into(),
            connections: 10,
            rate: Some("1000".into()),
            requests: Some(500),
            no_tls_resumption: true,
            streams: Some(("HTTP/2", 10)),
        }],
        scenarios: vec![Scenario {
            name: "get".into(),
            method: "GET".into(),
            path: "/".into(),
            https: Some("insecure".into()),
            every_level: Some("HTTP/2"),
            levels: Some(vec!["c10".into()]),
            targets: None,
        }],
        targets: vec![
            Target {
                name: "a".into(),
                language: "c".into(),
                levels: None,
                missing: vec![],
                install: None,
            },
            Target {
                name: "b".into(),
                language: "go".into(),
                levels: Some(vec!["c10".into()]),
                missing: vec!["go".into()],
                install: None,
            },
        ],
    };
    assert_eq!(
        l.to_text(),
        "suite \"s\" (suites/s.toml), root /r\n\
         client CPUs [0], server CPUs [1]\n\
         service CPUs [1]\n\
         note: services share CPU 1 with the targets\n\
         service db                    down: postgres missing: its targets will be skipped\n\
         level c10          10 connections, HTTP/2 × 10 streams, open model at 1000 req/s, 500 requests, no TLS resumption\n\
         scenario get        GET /, HTTP/2 at every level, https (insecure), levels c10\n\
         target a                      c        ready\n\
         target b                      go       levels c10, skipped: go missing (install it)\n"
    );
}
