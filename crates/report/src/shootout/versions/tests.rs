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
    assert!(!md.contains("HTTP/3 against") && !html.contains("HTTP/3 against"));

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
    assert!(
        md.contains("### HTTP/2 and HTTP/3 against HTTP/1.1"),
        "{md}"
    );
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
    // req/s ÷ HTTP/1.1, both p99s, then the h2 cell's processes; no h2 to set it against.
    assert!(rows[0].contains("| 2.00× | "), "{}", rows[0]);
    assert!(rows[0].contains(" | avatar 3.5 µs | "), "{}", rows[0]);
    assert!(rows[0].contains(" | – | "), "{}", rows[0]);
    let html = to_html(&r);
    assert!(html.contains("<h3>HTTP/2 and HTTP/3 against HTTP/1.1</h3>"));
    assert!(html.contains("h2-10x10 (h2c, 10 streams)"));
}

/// An h3 cell gets a row of its own, named h3, beside the HTTP/1.1 cell of its connections
/// and the h2 cell of its connections and streams, with its server CPU per request as a
/// ratio of the h2 cell's; it is never the HTTP/1.1 cell an h2 cell is set beside.
#[test]
fn an_h3_cell_stands_beside_http1_and_the_h2_cell_of_its_streams() {
    let mut r = old_results();
    let i = r
        .targets
        .iter()
        .position(|t| t.cells.iter().any(|c| c.summary.is_some()))
        .unwrap();
    let name = r.targets[i].name.clone();
    let base = r.targets[i]
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
    h3.tls_resume = Some(true);
    h3.summary.as_mut().unwrap().server_cpu_us_per_request = Some(30.0);
    let mut h2 = h3.clone();
    h2.scenario = "redirect-tls".into();
    h2.level = "h2-10x10".into();
    h2.protocol = "h2".into();
    h2.summary.as_mut().unwrap().server_cpu_us_per_request = Some(12.0);
    // The same connections with one stream: not the h3 cell's h2.
    let mut h2_one = h2.clone();
    h2_one.level = "h2-10x1".into();
    h2_one.streams = Some(1);
    h2_one.summary.as_mut().unwrap().server_cpu_us_per_request = Some(1.0);

    // Beside a plain HTTP/1.1 cell only: labelled plain TCP, no h2 ratio.
    r.targets[i].cells = vec![base.clone(), h3.clone()];
    let md = to_markdown(&r);
    let row = md
        .lines()
        .find(|l| l.starts_with(&format!("| {name} | redirect-h3 |")))
        .unwrap_or_else(|| panic!("{md}"));
    let want = format!(
        "| {name} | redirect-h3 | h3-10x10 (h3, 10 streams) | {} ({}, plain TCP) |",
        base.level, base.scenario
    );
    assert!(row.starts_with(&want), "{row}\n{want}");

    // With h2 cells too: the ratio is against the one of its streams, 30 / 12.
    r.targets[i].cells = vec![base.clone(), h2_one, h2.clone(), h3.clone()];
    let md = to_markdown(&r);
    let row = md
        .lines()
        .find(|l| l.starts_with(&format!("| {name} | redirect-h3 |")))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains("| 2.50× (h2-10x10, redirect-tls) |"), "{row}");
    // The h2 cells' own rows have no h2 ratio, and their HTTP/1.1 cell is never the h3 one.
    for l in md.lines().filter(|l| l.contains("| h2-10x")) {
        assert!(!l.contains("h3-10x10"), "{l}");
    }

    // An h2 cell beside only an h3 cell: the h3 cell is no HTTP/1.1 pair, so the h2 cell
    // gets no row, and the h3 cell its row against h2 alone.
    r.targets[i].cells = vec![h3, h2];
    let md = to_markdown(&r);
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with(&format!("| {name} |")) && l.contains("streams"))
        .collect();
    assert_eq!(rows.len(), 1, "{md}");
    assert!(
        rows[0].contains("| redirect-h3 | h3-10x10 (h3, 10 streams) | – |"),
        "{}",
        rows[0]
    );
}
