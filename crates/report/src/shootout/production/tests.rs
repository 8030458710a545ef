use super::*;
use crate::shootout::{to_html, to_markdown, ShootoutResults};

fn costs(v: &[(&str, f64)]) -> Vec<ProcessCost> {
    v.iter()
        .map(|&(name, us)| ProcessCost {
            name: name.into(),
            cpu_us_per_request: us,
        })
        .collect()
}

/// A results file written before TLS and processes were measured.
fn old_results() -> ShootoutResults {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/runs/2026-11-22-shootout/results.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    ShootoutResults::from_json(&text).unwrap()
}

#[test]
fn the_proxy_against_the_app_leaves_out_what_costs_nothing() {
    let mut s = old_results()
        .targets
        .iter()
        .flat_map(|t| &t.cells)
        .find_map(|c| c.summary.clone())
        .unwrap();
    // (each process's µs per request) → (the line, how many cost something)
    type Case<'a> = (&'a [(&'a str, f64)], Option<&'a str>, usize);
    let cases: &[Case] = &[
        (&[], None, 0),
        (&[("avatar", 7.0)], None, 1),
        // The wrapper shell is under 2% of the tree: not a process that costs.
        (
            &[("nginx", 31.0), ("avatar", 7.0), ("sh", 0.1)],
            Some("nginx 31.0 µs/req, avatar 7.0 µs/req: nginx costs 4.43× avatar"),
            2,
        ),
        (
            &[("nginx", 20.0), ("java", 10.0), ("sh", 0.0)],
            Some("nginx 20.0 µs/req, java 10.0 µs/req: nginx costs 2.00× java"),
            2,
        ),
        (&[("sh", 0.0)], None, 0),
    ];
    for (procs, line, costly) in cases {
        s.processes = costs(procs);
        assert_eq!(s.process_line().as_deref(), *line, "{procs:?}");
        assert_eq!(s.costly_processes().len(), *costly, "{procs:?}");
    }
    s.handshakes_full_per_s = Some(1200.0);
    s.handshakes_resumed_per_s = Some(0.0);
    assert_eq!(
        s.handshake_line().as_deref(),
        Some("TLS handshakes 1.2k/s full, 0/s resumed")
    );
    s.handshakes_full_per_s = None;
    assert_eq!(s.handshake_line(), None);
}

/// Results from before TLS and the process breakdown still load and render, without
/// the production table; with a TLS cell added, both renderings show it.
#[test]
fn old_results_render_and_a_tls_cell_gets_its_table() {
    let mut r = old_results();
    assert!(r
        .targets
        .iter()
        .flat_map(|t| &t.cells)
        .all(|c| c.tls_resume.is_none()
            && c.repeats
                .iter()
                .all(|p| p.handshakes.is_none() && p.server.processes.is_empty())));
    let (md, html) = (to_markdown(&r), to_html(&r));
    assert!(md.contains("Requests per second") && !md.contains("TLS handshakes"));
    assert!(!html.contains("TLS handshakes"));

    let t = r
        .targets
        .iter_mut()
        .find(|t| t.cells.iter().any(|c| c.summary.is_some()))
        .unwrap();
    let name = t.name.clone();
    let c = t.cells.iter_mut().find(|c| c.summary.is_some()).unwrap();
    c.tls_resume = Some(false);
    let s = c.summary.as_mut().unwrap();
    s.handshakes_full_per_s = Some(1234.0);
    s.handshakes_resumed_per_s = Some(0.0);
    s.processes = costs(&[("nginx", 31.0), ("avatar", 7.0), ("sh", 0.0)]);
    let md = to_markdown(&r);
    let row = md
        .lines()
        .find(|l| l.starts_with(&format!("| {name} |")) && l.contains("no resumption"))
        .unwrap_or_else(|| panic!("no production row for {name}:\n{md}"));
    assert!(
        row.contains("| 1.2k/s | 0/s | nginx 31.0 µs, avatar 7.0 µs (nginx 4.43× avatar) |"),
        "{row}"
    );
    let html = to_html(&r);
    assert!(html.contains("TLS handshakes and CPU per process"));
    assert!(html.contains("nginx 31.0 µs, avatar 7.0 µs (nginx 4.43× avatar)"));
}
