use super::super::markdown::ranking;
use super::super::{to_html, to_markdown, Param};
use super::*;
use crate::units::rate_suffixed;

fn read(path: &str) -> ShootoutResults {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    ShootoutResults::from_json(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn fixture() -> ShootoutResults {
    read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/results.json"
    ))
}

/// Results written before scenarios could be restricted and targets parameterized
/// (the fixture, and every committed run) load with the new fields empty and render
/// as before: no comparison tables, rows in rank order.
#[test]
fn old_results_files_still_load_and_render() {
    let paths = crate::shootout::committed_results();
    for p in &paths {
        let r = read(p);
        let md = to_markdown(&r);
        assert!(md.contains("### Requests per second"), "{p}");
        assert!(to_html(&r).contains("<h3>p99 latency</h3>"), "{p}");
        // Runs from 2026-11-24 on have the new rows and scenarios; the older ones must
        // load with the new fields empty and render as before.
        let run = std::path::Path::new(p)
            .parent()
            .and_then(|d| d.file_name())
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        if run.as_str() >= "2026-11-24" && run.starts_with("20") {
            continue;
        }
        assert!(r
            .targets
            .iter()
            .all(|t| t.base.is_none() && t.params.is_empty() && t.skipped_scenarios.is_empty()));
        let md = to_markdown(&r);
        assert!(md.contains("### Requests per second"), "{p}");
        assert!(
            !md.contains(" against ") && !md.contains("rows by parameter"),
            "{p}"
        );
        let html = to_html(&r);
        assert!(html.contains("<h3>p99 latency</h3>"), "{p}");
        assert!(cost_tables(&r, &ranking(&r)).is_empty() && param_groups(&r).is_empty());
    }
}

/// The fixture with an `svg` scenario on avatar and node-http (each at 1.5× and 2× its
/// redirect's cost), and two parameter rows of node-http.
fn with_svg_and_params() -> ShootoutResults {
    let mut r = fixture();
    for (name, factor) in [("avatar", 1.5), ("node-http", 2.0)] {
        let t = r.targets.iter_mut().find(|t| t.name == name).unwrap();
        let mut c = t.cell("redirect", "c10").unwrap().clone();
        c.scenario = "svg".into();
        let s = c.summary.as_mut().unwrap();
        s.server_cpu_us_per_request = s.server_cpu_us_per_request.map(|us| us * factor);
        t.cells.push(c);
    }
    let node = r
        .targets
        .iter()
        .position(|t| t.name == "node-http")
        .unwrap();
    for (i, heap) in ["8m", "16m"].iter().enumerate() {
        let mut row = r.targets[node].clone();
        row.name = format!("node-http[heap={heap}]");
        row.base = Some("node-http".into());
        row.params = vec![Param {
            name: "heap".into(),
            value: heap.to_string(),
        }];
        row.cells
            .retain(|c| c.level == "c10" && c.scenario == "redirect");
        let s = row.cells[0].summary.as_mut().unwrap();
        // Faster than every plain row, so that ranking alone would move them apart.
        s.rps_median = 1e7 + i as f64;
        s.pss_peak_bytes = 30 << 20;
        r.targets.push(row);
    }
    r
}

#[test]
fn the_svg_cost_is_shown_beside_the_redirects() {
    let mut r = with_svg_and_params();
    let tables = cost_tables(&r, &ranking(&r));
    assert_eq!(tables.len(), 1);
    let t = &tables[0];
    assert_eq!(
        (t.reference.as_str(), t.scenario.as_str()),
        ("redirect", "svg")
    );
    let ratios: Vec<(&str, &str, String)> = t
        .rows
        .iter()
        .map(|x| {
            (
                x.target.name.as_str(),
                x.level.as_str(),
                format!("{:.2}", x.ratio),
            )
        })
        .collect();
    // In ranking order: node-http's group is first, by its fastest (parameter) row.
    assert_eq!(
        ratios,
        [
            ("node-http", "c10", "2.00".into()),
            ("avatar", "c10", "1.50".into())
        ]
    );
    let c_epoll = r.targets.iter_mut().find(|t| t.name == "c-epoll").unwrap();
    c_epoll.skipped_scenarios = vec!["svg".into()];
    assert_eq!(r.not_implemented(), [("svg".to_string(), vec!["c-epoll"])]);
    let md = to_markdown(&r);
    assert!(
        md.contains("\n- svg: not implemented by c-epoll (skipped)\n"),
        "{md}"
    );
    assert!(
        md.contains("### svg against redirect: server CPU per request"),
        "{md}"
    );
    assert!(
        md.contains("| svg / redirect |") && md.contains("| 1.50× |") && md.contains("| 2.00× |"),
        "{md}"
    );
    let html = to_html(&r);
    assert!(html.contains("<h3>svg against redirect: server CPU per request</h3>"));
    assert!(html.contains("svg: not implemented by c-epoll (skipped)."));
    assert!(html.contains("<b>1.50×</b>") && html.contains("<b>2.00×</b>"));
    let avatar = r.targets.iter().find(|t| t.name == "avatar").unwrap();
    // The targets table's CPU per request stays the redirect's.
    let before = fixture();
    let plain = before.targets.iter().find(|t| t.name == "avatar").unwrap();
    assert_eq!(
        avatar.cpu_us_per_request_median(),
        plain.cpu_us_per_request_median()
    );
    let line = avatar.cost_ratios("redirect")[0].line();
    assert!(
        line.starts_with("svg/redirect at c10: 1.50× server CPU per request ("),
        "{line}"
    );
}

#[test]
fn parameter_rows_are_grouped_with_their_memory() {
    let r = with_svg_and_params();
    let order: Vec<&str> = ranking(&r).iter().map(|t| t.name.as_str()).collect();
    let at = order.iter().position(|n| *n == "node-http").unwrap();
    assert_eq!(
        order[at..at + 3],
        ["node-http", "node-http[heap=8m]", "node-http[heap=16m]"],
        "{order:?}"
    );
    let groups = param_groups(&r);
    assert_eq!(groups.len(), 1);
    let g = &groups[0];
    assert_eq!(g.name, "node-http");
    assert_eq!(g.keys, ["heap"]);
    assert_eq!(g.column, Some(("redirect".into(), "c10".into())));
    assert_eq!(g.values(g.rows[1]), ["8m"]);
    assert_eq!(g.values(g.rows[0]), ["(its start command)"]);
    let md = to_markdown(&r);
    assert!(
        md.contains("### node-http: rows by parameter at redirect c10"),
        "{md}"
    );
    assert!(
        md.contains(
            "| row | heap | req/s | server CPU/req | idle RSS | idle PSS | peak RSS | peak PSS |"
        ),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| node-http[heap=8m] | 8m |"))
        .unwrap();
    assert!(row.ends_with("| 30.0 MiB |"), "{row}");
    let html = to_html(&r);
    assert!(html.contains("<h3>node-http: rows by parameter at redirect c10</h3>"));
    // Each row's req/s against the first's, level by level (pool 150 against pool 2):
    // the plain row measured c10 of both scenarios; the parameter rows only redirect.
    let plain = g.rows[0].cell("redirect", "c10").unwrap();
    let base = plain.summary.as_ref().unwrap().rps_median;
    let ratios = g.ratios(&r);
    let svg = ratios.iter().find(|x| x.column == "svg c10").unwrap();
    assert_eq!(svg.others, [None, None]);
    let c10 = ratios.iter().find(|x| x.column == "redirect c10").unwrap();
    assert_eq!(c10.reference, base);
    let want: Vec<Option<(f64, f64)>> = [1e7, 1e7 + 1.0]
        .iter()
        .map(|v| Some((*v, v / base)))
        .collect();
    assert_eq!(c10.others, want);
    assert!(
        md.contains("### node-http: req/s against node-http\n"),
        "{md}"
    );
    assert!(
            md.contains("| level | node-http | heap=8m | heap=8m / node-http | heap=16m | heap=16m / node-http |"),
            "{md}"
        );
    let line = format!(
        "| redirect c10 | {} | {} | {:.2}× |",
        rate_suffixed(base),
        rate_suffixed(1e7),
        1e7 / base
    );
    assert!(md.contains(&line), "{line} in {md}");
    assert!(
        md.contains("| svg c10 |") && md.contains("| – | – | – | – |"),
        "{md}"
    );
    assert!(html.contains("<h3>node-http: req/s against node-http</h3>"));
    assert!(html.contains(&format!("<b>{:.2}×</b>", 1e7 / base)));
    // The JSON keeps the rows' parameters; files without them load too (tested above).
    let back = ShootoutResults::from_json(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}
