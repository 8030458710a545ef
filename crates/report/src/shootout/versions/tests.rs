use crate::shootout::{to_html, to_markdown, ProcessCost, ShootoutResults};

/// A results file written before HTTP/2: its cells read as HTTP/1.1.
fn old_results() -> ShootoutResults {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/runs/2026-11-22-shootout/results.json"
    );
    ShootoutResults::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Old results have no h2 cell and no table; an h2 cell is set beside the HTTP/1.1
/// cell of its connections (another scenario's when its own has none), with each
/// process apart, in both renderings; one without such a cell gets no row.
#[test]
fn an_h2_cell_stands_beside_the_http1_cell_of_its_connections() {
    let mut r = old_results();
    assert!(r
        .targets
        .iter()
        .flat_map(|t| &t.cells)
        .all(|c| !c.is_http2()));
    let (md, html) = (to_markdown(&r), to_html(&r));
    assert!(!md.contains("HTTP/2 against") && !html.contains("HTTP/2 against"));

    let t = r
        .targets
        .iter_mut()
        .find(|t| t.cells.iter().filter(|c| c.summary.is_some()).count() >= 2)
        .unwrap();
    let name = t.name.clone();
    let base = t
        .cells
        .iter()
        .find(|c| c.summary.is_some())
        .unwrap()
        .clone();
    let mut h2 = base.clone();
    h2.scenario = "redirect-h2".into();
    h2.level = "h2-10x10".into();
    h2.protocol = "h2c".into();
    h2.streams = Some(10);
    let s = h2.summary.as_mut().unwrap();
    s.rps_median = 2.0 * base.summary.as_ref().unwrap().rps_median;
    s.processes = vec![ProcessCost {
        name: "avatar".into(),
        cpu_us_per_request: 3.5,
    }];
    // An h2 level whose connections no HTTP/1.1 cell has: no row.
    let mut alone = h2.clone();
    alone.level = "h2-7x1".into();
    alone.connections = 7;
    t.cells.push(h2);
    t.cells.push(alone);
    let md = to_markdown(&r);
    assert!(md.contains("### HTTP/2 against HTTP/1.1"), "{md}");
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with(&format!("| {name} | redirect-h2 |")))
        .collect();
    assert_eq!(rows.len(), 1, "{md}");
    let want = format!(
        "| {name} | redirect-h2 | h2-10x10 (h2c, 10 streams) | {} ({}) |",
        base.level, base.scenario
    );
    assert!(rows[0].starts_with(&want), "{}\n{want}", rows[0]);
    assert!(rows[0].contains("| 2.00× | avatar 3.5 µs |"), "{}", rows[0]);
    let html = to_html(&r);
    assert!(html.contains("<h3>HTTP/2 against HTTP/1.1</h3>"));
    assert!(html.contains("h2-10x10 (h2c, 10 streams)"));
}

/// An h3 cell is no HTTP/2 cell: it gets no row in the HTTP/2 table (which would call it
/// h2), and is never the HTTP/1.1 cell an h2 cell is set beside.
#[test]
fn an_h3_cell_is_neither_an_h2_row_nor_the_http1_pair() {
    let mut r = old_results();
    let t = r
        .targets
        .iter_mut()
        .find(|t| t.cells.iter().any(|c| c.summary.is_some()))
        .unwrap();
    let base = t
        .cells
        .iter()
        .find(|c| c.summary.is_some())
        .unwrap()
        .clone();
    let mut h3 = base.clone();
    h3.scenario = "redirect-h3".into();
    h3.level = "h3-10x10".into();
    h3.protocol = "h3".into();
    h3.streams = Some(10);
    let mut h2 = h3.clone();
    h2.scenario = "redirect-h2".into();
    h2.level = "h2-10x10".into();
    h2.protocol = "h2".into();
    // An h3 cell beside a measured HTTP/1.1 cell of its connections: no HTTP/2 table.
    t.cells = vec![base, h3.clone()];
    let md = to_markdown(&r);
    assert!(!md.contains("HTTP/2 against"), "{md}");
    // An h2 cell beside only an h3 cell: the h3 cell is no HTTP/1.1 pair, so no row.
    let t = r
        .targets
        .iter_mut()
        .find(|t| !t.cells.is_empty() && t.cells[0].summary.is_some())
        .unwrap();
    t.cells = vec![h3, h2];
    let md = to_markdown(&r);
    assert!(!md.contains("HTTP/2 against"), "{md}");
}
