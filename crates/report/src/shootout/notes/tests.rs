use super::*;

#[test]
fn a_cell_says_its_waits_and_whether_a_load_began_unsettled() {
    let mut c: Cell = serde_json::from_value(serde_json::json!({
        "scenario": "plain", "level": "c60", "connections": 60, "keepalive": true,
        "pipeline": 1, "status": "measured", "warmup_s": 0.5, "warmup_rps": [],
        "repeats": []
    }))
    .expect("a cell from before settle loads");
    assert_eq!(c.settle, None);
    assert_eq!(c.why_with_notes("idle".into()), "idle");
    let mut s = Settle {
        limit_s: 5.0,
        ..Settle::default()
    };
    s.add(40, 0.25, true);
    c.settle = Some(s);
    assert_eq!(
            c.why_with_notes(String::new()),
            "1 load waited 0.25 s in all for the server to finish requests an earlier load had given up (up to 40 connections closed by the client and still held)"
        );
    s.add(60, 5.0, false);
    c.settle = Some(s);
    let line = c.why_with_notes("pool-bound".into());
    assert!(
        line.starts_with("pool-bound; 2 loads waited 5.25 s"),
        "{line}"
    );
    assert!(line.contains("up to 60 connections"), "{line}");
    assert!(
            line.ends_with("1 began with the server still busy with them after 5 s: their figures include that work"),
            "{line}"
        );
    let v = serde_json::to_value(&c).unwrap();
    assert_eq!(v["settle"]["unsettled"], 1);
}

#[test]
fn tcp_warnings_the_verdict_did_not_name_follow_it() {
    use crate::tcp::{TcpFinding, TcpReport, TcpWarning};
    let mut c: Cell = serde_json::from_value(serde_json::json!({
        "scenario": "plain", "level": "c10", "connections": 10, "keepalive": true,
        "pipeline": 1, "status": "measured", "warmup_s": 0.5, "warmup_rps": [],
        "repeats": [],
        "diagnosis": { "bottleneck": "pool-bound", "detail": "pool" }
    }))
    .unwrap();
    assert_eq!(c.why_with_notes("pool".into()), "pool");
    let warn = |kind| TcpWarning {
        kind,
        detail: "evidence".into(),
    };
    c.tcp = Some(TcpReport {
        deltas: Default::default(),
        per_request: None,
        warnings: vec![warn(TcpFinding::Nagle)],
        links: Vec::new(),
    });
    assert_eq!(c.why_with_notes("pool".into()), "pool; TCP nagle: evidence");
    // The verdict's own warning is its detail already.
    c.diagnosis.as_mut().unwrap().bottleneck = super::super::Bottleneck::Nagle;
    assert_eq!(c.why_with_notes("nagle".into()), "nagle");
}
