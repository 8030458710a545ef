//! `foxbench compare a.json b.json`: the ratios between two shootout runs.

use std::fmt::Write as _;

use super::markdown::{column_name, rate};
use super::ShootoutResults;

/// Ratios of run `b` to run `a`, cell by cell, for cells measured in both.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The table, as text.
    pub text: String,
    /// Cells measured in both runs.
    pub cells: usize,
    /// The lowest req/s ratio b/a over those cells, with its target and cell.
    pub worst_rps: Option<(f64, String)>,
}

/// Compares two runs: req/s, p99, server CPU per request and peak RSS, as b/a.
pub fn compare(a: &ShootoutResults, b: &ShootoutResults) -> Comparison {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<24} {:<16} {:>10} {:>10} {:>7} {:>7} {:>8} {:>7}",
        "target", "cell", "req/s a", "req/s b", "req/s", "p99", "CPU/req", "RSS"
    );
    let mut cells = 0;
    let mut worst: Option<(f64, String)> = None;
    let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) if x > 0.0 => format!("{:.2}×", y / x),
        _ => "–".to_string(),
    };
    for tb in &b.targets {
        let Some(ta) = a.targets.iter().find(|t| t.name == tb.name) else {
            continue;
        };
        for cb in &tb.cells {
            let Some(ca) = ta.cell(&cb.scenario, &cb.level) else {
                continue;
            };
            let (Some(sa), Some(sb)) = (&ca.summary, &cb.summary) else {
                continue;
            };
            cells += 1;
            let p99 = |s: &super::CellSummary| s.latency.at(99.0);
            let name = column_name(b, &cb.scenario, &cb.level);
            if sa.rps_median > 0.0 {
                let r = sb.rps_median / sa.rps_median;
                if worst.as_ref().is_none_or(|(w, _)| r < *w) {
                    worst = Some((r, format!("{} {}", tb.name, name)));
                }
            }
            let _ = writeln!(
                text,
                "{:<24} {:<16} {:>10} {:>10} {:>7} {:>7} {:>8} {:>7}",
                tb.name,
                name,
                rate(sa.rps_median),
                rate(sb.rps_median),
                ratio(Some(sa.rps_median), Some(sb.rps_median)),
                ratio(p99(sa), p99(sb)),
                ratio(sa.server_cpu_us_per_request, sb.server_cpu_us_per_request),
                ratio(
                    Some(sa.rss_peak_bytes as f64),
                    Some(sb.rss_peak_bytes as f64)
                ),
            );
        }
    }
    if cells == 0 {
        text.push_str("no cell was measured in both runs: compare runs of the same suite\n");
    } else if let Some((r, at)) = &worst {
        let _ = writeln!(
            text,
            "\n{cells} cells in both runs; lowest req/s ratio b/a: {r:.2}× ({at})"
        );
    }
    Comparison {
        text,
        cells,
        worst_rps: worst,
    }
}
