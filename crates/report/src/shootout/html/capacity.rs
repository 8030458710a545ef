//! Capacity levels in the HTML report: the ranking of servers by the rate they sustain under
//! the objective (client-bound capacities marked), and latency percentiles over the ramp,
//! p50 and p99 of every window against the rate it asked for.

use std::fmt::Write as _;

use super::numbers::{tick_rate, tick_us};
use super::{figure, swatch, target_style};
use crate::human_us;
use crate::shootout::capacity::{
    bracket_text, p99_at_rate, ranking, rate_text, stopped_text, thousands,
};
use crate::shootout::svg::{self, esc, Axis, LineChart, Point, Scale, Series};
use crate::shootout::ShootoutResults;

/// The ranking table; nothing when no cell ran a capacity level.
pub(super) fn table(out: &mut String, r: &ShootoutResults) {
    let rows = ranking(r);
    if rows.is_empty() {
        return;
    }
    let mut objectives: Vec<&str> = rows.iter().map(|r| r.capacity.objective.as_str()).collect();
    objectives.dedup();
    let _ = writeln!(
        out,
        "<div id=\"capacity\"><h3>Capacity under {}</h3>\n<p class=\"note\">The highest constant arrival rate \
         (open model) whose whole window held the objective, ranked: the rate each server sustains, which closed-loop \
         req/s cannot show when the client is the bottleneck. <b>ᶜ</b> client-bound: foxbench's CPU was saturated at \
         the rate found or at the rate that failed, so the server may sustain more.</p>\n\
         <div class=\"scroll\"><table>\n<thead><tr><th class=\"n\">#</th><th>target</th><th>scenario</th><th>level</th>\
         <th class=\"n\">capacity, req/s</th><th class=\"n\">p99 at it</th><th>bracket (held – failed)</th>\
         <th class=\"n\" title=\"the closed-loop median req/s of the same scenario at the same connections\">closed loop, same c</th><th class=\"n\">search</th>\
         <th>stopped</th></tr></thead>\n<tbody>",
        objectives
            .iter()
            .map(|o| format!("<code>{}</code>", esc(o)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (i, row) in rows.iter().enumerate() {
        let c = row.capacity;
        let t = r.targets.iter().find(|t| t.name == row.target);
        let _ = writeln!(
            out,
            "<tr><td class=\"n\">{}</td><th scope=\"row\">{}{}</th><td>{}</td><td>{} (c{})</td>\
             <td class=\"n\"{}>{}{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{} windows, {:.0} s of {:.0} s</td><td>{}</td></tr>",
            i + 1,
            t.map(|t| swatch(r, t)).unwrap_or_default(),
            esc(row.target),
            esc(row.scenario),
            esc(row.level),
            row.connections,
            if c.client_bound {
                " title=\"client-bound: foxbench's CPU was saturated\""
            } else {
                ""
            },
            esc(&rate_text(c)),
            if c.client_bound { " ᶜ" } else { "" },
            p99_at_rate(c).map_or("-".into(), human_us),
            esc(&bracket_text(c.bracket)),
            row.closed_rps.map_or("-".into(), thousands),
            c.windows.len(),
            c.elapsed_s,
            c.budget_s,
            stopped_text(c.stopped),
        );
    }
    out.push_str("</tbody></table></div></div>\n");
}

/// Latency over the ramp: for each capacity level, p50 (dashed) and p99 (solid) of every
/// window against its rate, per target; a window that failed the objective is hollow.
pub(super) fn ramp_charts(out: &mut String, r: &ShootoutResults) {
    let mut levels: Vec<(&str, &str, &str)> = Vec::new();
    for t in &r.targets {
        for c in &t.cells {
            if let Some(cap) = &c.capacity {
                let key = (
                    c.scenario.as_str(),
                    c.level.as_str(),
                    cap.objective.as_str(),
                );
                if !levels.contains(&key) {
                    levels.push(key);
                }
            }
        }
    }
    for (i, (scenario, level, objective)) in levels.iter().enumerate() {
        let mut series = Vec::new();
        for t in &r.targets {
            let Some(cap) = t
                .cells
                .iter()
                .find(|c| c.scenario == *scenario && c.level == *level)
                .and_then(|c| c.capacity.as_ref())
            else {
                continue;
            };
            let mut windows: Vec<_> = cap
                .windows
                .iter()
                .filter(|w| w.rate_per_sec.is_finite() && w.rate_per_sec > 0.0)
                .collect();
            windows.sort_by(|a, b| a.rate_per_sec.total_cmp(&b.rate_per_sec));
            type Of = fn(&crate::search::CapacityWindow) -> Option<f64>;
            let percentiles: [(&str, Option<&'static str>, Of); 2] = [
                ("p99", None, |w| w.p99_us),
                ("p50", Some("5 4"), |w| w.p50_us),
            ];
            for (name, dash, of) in percentiles {
                let points = windows
                    .iter()
                    .filter_map(|w| {
                        let v = of(w).filter(|v: &f64| v.is_finite() && *v > 0.0)?;
                        let mut p = Point::new(w.rate_per_sec, v);
                        p.hollow = !w.passed;
                        p.tip = Some(format!(
                            "{} · {name} {} at {:.0} req/s asked ({:.0} achieved), {}; client CPU {:.0}%{}, server CPU {}",
                            t.name,
                            human_us(v),
                            w.rate_per_sec,
                            w.achieved_per_sec,
                            if w.passed { "held" } else { "failed" },
                            w.client_cpu_percent,
                            if w.client_spin_percent >= 0.5 {
                                format!(" ({:.0}% spin, time to spare)", w.client_spin_percent)
                            } else {
                                String::new()
                            },
                            w.server_cpu_us_per_request
                                .map_or("-".into(), |us| format!("{us:.1} µs/request")),
                        ));
                        Some(p)
                    })
                    .collect();
                let mut style = target_style(r, t);
                if dash.is_some() {
                    style.dash = dash;
                }
                series.push(Series {
                    name: format!("{} {name}", t.name),
                    style,
                    points,
                    markers: true,
                });
            }
        }
        let title = format!("Latency over the ramp: {scenario} at {level}, under {objective}");
        let svg = svg::line_chart(&LineChart {
            title: title.clone(),
            x: Axis::new("rate asked, req/s (log scale)", Scale::Log, tick_rate),
            y: Axis::new("latency (log scale)", Scale::Log, tick_us),
            series,
            width: 960.0,
            height: 400.0,
            rules: Vec::new(),
            empty_note: "no window had a response".into(),
        });
        figure(
            out,
            &format!("chart-capacity-{i}"),
            &title,
            &format!(
                "Every window of the capacity search (latency over the ramp): p99 solid, p50 dashed, \
                 against the constant rate the window asked for; hollow points failed <code>{}</code>.",
                esc(objective)
            ),
            &svg,
        );
    }
}
