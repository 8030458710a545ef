//! A `--find-max` result's capacity search on its load page: the rate found and its
//! bracket, every window as a point of offered rate against corrected p99 (held or
//! failed, the objective's latency clauses as lines: the chart the dashboard drew live),
//! each window's row and the spectrum around the rate found, as the text report gives them.

use std::fmt::Write as _;

use crate::human_us;
use crate::palette::Line;
use crate::search::{CapacityReport, CapacityWindow, Spectrum};
use crate::shootout::html::figure;
use crate::shootout::html::numbers::{tick_rate, tick_us};
use crate::shootout::svg::{self, esc, Axis, LineChart, Point, Scale, Series};
use crate::slo::Unit;

/// The section, `id="capacity"`.
pub(super) fn section(out: &mut String, c: &CapacityReport) {
    let found = match c.rate_per_sec {
        Some(r) => format!("{r:.0} req/s"),
        None => "none".into(),
    };
    let _ = writeln!(
        out,
        "<section id=\"capacity\">\n<h2>Capacity search <span class=\"badge {}\">{}</span></h2>\n<p>{}</p>\n<p>{}</p>",
        if c.rate_per_sec.is_some() {
            "b-good"
        } else {
            "b-bad"
        },
        esc(&found),
        headline(c),
        esc(&format!(
            "{} windows of {:.1} s in {:.1} s (budget {:.0} s); the result's figures above are the window at the rate found{}.",
            c.windows.len(),
            c.window_s,
            c.elapsed_s,
            c.budget_s,
            if c.rate_per_sec.is_some() {
                ""
            } else {
                " (none held: the lowest rate tried)"
            }
        ))
    );
    windows_chart(out, c);
    windows_table(out, c);
    spectrum_table(out, c);
    for w in c.tcp_warnings() {
        let _ = writeln!(out, "<p class=\"note\">warning: {}</p>", esc(&w));
    }
    out.push_str("</section>\n");
}

/// The rate found under the objective, and the bracket and why the search stopped.
fn headline(c: &CapacityReport) -> String {
    let bound = |what: &str, r: Option<f64>| match r {
        Some(r) => format!("{what} at {r:.0} req/s"),
        None => format!("none {what}"),
    };
    let found = match c.rate_per_sec {
        Some(r) => format!(
            "The highest constant rate whose whole window held <code>{}</code>: <b>{r:.0} req/s</b>{}.",
            esc(&c.objective),
            if c.client_bound {
                " <span class=\"badge b-warn\">client-bound</span> (the load generator's limit, not the server's)"
            } else {
                ""
            }
        ),
        None => format!(
            "<code>{}</code> is not met at any rate tried.",
            esc(&c.objective)
        ),
    };
    format!(
        "{found} The bracket: {}, {}; {}.",
        bound("held", c.bracket.held_per_sec),
        bound("failed", c.bracket.failed_per_sec),
        esc(c.stopped.words())
    )
}

/// The window's corrected p99, µs.
fn p99(w: &CapacityWindow) -> Option<f64> {
    w.corrected.map(|s| s.p99_us)
}

/// Every window as a point: offered rate against corrected p99, held or failed; the
/// objective's latency clauses as lines, and the rate found as a rule.
fn windows_chart(out: &mut String, c: &CapacityReport) {
    let top = c.windows.iter().map(|w| w.rate_per_sec).fold(0.0, f64::max) * 1.1;
    let verdict = |passed: bool, line: Line| {
        let points = c
            .windows
            .iter()
            .enumerate()
            .filter(|(_, w)| w.passed == passed)
            .filter_map(|(i, w)| {
                let mut pt = Point::new(w.rate_per_sec, p99(w)?);
                pt.tip = Some(format!(
                    "window {} ({}): {:.0} req/s offered, {:.0} achieved, p99 {}",
                    i + 1,
                    w.phase.name(),
                    w.rate_per_sec,
                    w.achieved_per_sec,
                    human_us(pt.y)
                ));
                // A scatter: no line between windows.
                pt.gap = true;
                Some(pt)
            })
            .collect();
        Series {
            name: if passed { "held" } else { "failed" }.into(),
            style: super::style(line),
            points,
            markers: true,
        }
    };
    let mut series = vec![verdict(true, Line::Held), verdict(false, Line::Failed)];
    let clauses = c.windows.first().map_or(&[][..], |w| &w.clauses[..]);
    for clause in clauses.iter().filter(|k| k.unit == Unit::Us) {
        series.push(Series {
            name: clause.clause.clone(),
            style: svg::Style {
                dash: Some("4 4"),
                ..super::style(Line::Failed)
            },
            points: vec![
                Point::new(0.0, clause.threshold),
                Point::new(top, clause.threshold),
            ],
            markers: false,
        });
    }
    let chart = svg::line_chart(&LineChart {
        title: "Each window's p99 against the rate it offered".into(),
        x: Axis::new(
            "offered rate, requests/s (the window's -R)",
            Scale::Linear,
            tick_rate,
        ),
        y: Axis::new("p99, corrected (log scale)", Scale::Log, tick_us),
        series,
        width: 960.0,
        height: 360.0,
        rules: c
            .rate_per_sec
            .map(|r| vec![(r, format!("capacity {r:.0} req/s"))])
            .unwrap_or_default(),
        empty_note: "no window had a response".into(),
    });
    figure(
        out,
        "chart-windows",
        "The search's windows",
        "Each window's corrected p99 over the whole window against the rate it offered, green where it held the \
         objective and red where it failed; dashed, the objective's latency clauses. Hover a point for its window.",
        &chart,
    );
}

fn windows_table(out: &mut String, c: &CapacityReport) {
    let spun = c.windows.iter().any(|w| w.client_spin_percent >= 0.5);
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><table id=\"windows\"><thead><tr><th class=\"n\">#</th><th>phase</th>\
         <th class=\"n\">offered, req/s</th><th class=\"n\">achieved, req/s</th><th class=\"n\">p50</th>\
         <th class=\"n\">p99</th><th class=\"n\">p99.9</th><th class=\"n\">late</th><th class=\"n\">client CPU</th>{}\
         <th>verdict</th><th>tcp</th></tr></thead><tbody>",
        if spun {
            "<th class=\"n\">of it, spin</th><th class=\"n\">CPU per request</th>\
             <th class=\"n\">work per request</th>"
        } else {
            ""
        }
    );
    for (i, w) in c.windows.iter().enumerate() {
        let p =
            |f: fn(&Spectrum) -> f64| w.corrected.as_ref().map_or("-".into(), |s| human_us(f(s)));
        let tcp = w.tcp.as_ref().map_or("-".to_string(), |t| {
            if t.warnings.is_empty() {
                "ok".into()
            } else {
                let kinds: Vec<&str> = t.warnings.iter().map(|f| f.kind.as_str()).collect();
                kinds.join(", ")
            }
        });
        let _ = writeln!(
            out,
            "<tr><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{:.0}</td><td class=\"n\">{:.0}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{:.0}%</td>{}<td><span class=\"badge {}\">{}</span></td><td>{}</td></tr>",
            i + 1,
            w.phase.name(),
            w.rate_per_sec,
            w.achieved_per_sec,
            esc(&p(|s| s.p50_us)),
            esc(&p(|s| s.p99_us)),
            esc(&p(|s| s.p99_9_us)),
            w.late.map_or("-".to_string(), |n| n.to_string()),
            w.client_cpu_percent,
            if spun {
                let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}µs"));
                format!(
                    "<td class=\"n\">{:.0}%</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
                    w.client_spin_percent,
                    us(w.client_cpu_us_per_request),
                    us(w.client_work_us_per_request)
                )
            } else {
                String::new()
            },
            if w.passed { "b-good" } else { "b-bad" },
            if w.passed { "held" } else { "failed" },
            esc(&tcp)
        );
    }
    out.push_str("</tbody></table></div>\n");
}

/// The spectrum at 50%, 80%, 100% and 110% of the rate found: corrected and service time.
fn spectrum_table(out: &mut String, c: &CapacityReport) {
    if c.spectra.is_empty() {
        return;
    }
    out.push_str(
        "<h3>Spectrum around the rate found</h3>\n<div class=\"scroll\"><table id=\"spectrum\"><thead><tr>\
         <th class=\"n\">share</th><th></th><th class=\"n\">rate, req/s</th><th class=\"n\">p50</th><th class=\"n\">p90</th>\
         <th class=\"n\">p99</th><th class=\"n\">p99.9</th><th class=\"n\">p99.99</th><th class=\"n\">max</th></tr></thead><tbody>\n",
    );
    for row in &c.spectra {
        let Some(w) = c.spectrum_window(row) else {
            continue;
        };
        for (name, s) in [("corrected", &w.corrected), ("service", &w.service)] {
            let Some(s) = s else { continue };
            let _ = writeln!(
                out,
                "<tr><td class=\"n\">{:.0}%</td><td>{name}</td><td class=\"n\">{:.0}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                row.share_percent,
                w.rate_per_sec,
                human_us(s.p50_us),
                human_us(s.p90_us),
                human_us(s.p99_us),
                human_us(s.p99_9_us),
                human_us(s.p99_99_us),
                human_us(s.max_us)
            );
        }
    }
    out.push_str("</tbody></table></div>\n");
}

#[cfg(test)]
mod tests;
