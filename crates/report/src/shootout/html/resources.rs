//! The charts of what each server cost: peak RSS and CPU per request as bars, and RSS over
//! the whole run.

use super::numbers::{short, tick_cpu, tick_kib, tick_mib, tick_s};
use super::{figure, target_style};
use crate::shootout::svg::{self, esc, Axis, Bar, BarChart, LineChart, Point, Scale, Series};
use crate::shootout::{Cell, ShootoutResults, TargetResult};
use crate::units::bytes_compact;

/// Bytes in a MiB.
const MIB: f64 = 1024.0 * 1024.0;

/// Peak RSS and server CPU per request, one bar per target.
pub(super) fn resource_charts(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    let mut rss: Vec<(f64, &TargetResult)> = rows
        .iter()
        .filter_map(|t| Some((t.rss_peak_bytes()? as f64, *t)))
        .collect();
    rss.sort_by(|a, b| a.0.total_cmp(&b.0));
    let max = rss.iter().map(|x| x.0).fold(0.0, f64::max);
    let (unit, fmt): (f64, fn(f64) -> String) = if max >= MIB {
        (MIB, tick_mib)
    } else {
        (1024.0, tick_kib)
    };
    let bars: Vec<Bar> = rss
        .iter()
        .map(|(v, t)| {
            let idle = t
                .idle
                .map(|i| format!(" (idle {})", bytes_compact(i.rss_bytes)))
                .unwrap_or_default();
            Bar {
                label: t.name.clone(),
                value: v / unit,
                text: bytes_compact(*v as u64),
                colour: target_style(r, t).colour,
                hollow: false,
                tip: format!("{}: peak RSS {}{idle}", t.name, bytes_compact(*v as u64)),
            }
        })
        .collect();
    let rss_svg = svg::bar_chart(&BarChart {
        title: "Peak RSS by target".into(),
        bars,
        axis: Axis::new("peak RSS of the server's process tree", Scale::Linear, fmt),
        horizontal: true,
        width: 540.0,
        empty_note: "no RSS measured".into(),
    });
    let mut cpu: Vec<(f64, &TargetResult)> = rows
        .iter()
        .filter_map(|t| Some((t.cpu_us_per_request_median()?, *t)))
        .collect();
    cpu.sort_by(|a, b| a.0.total_cmp(&b.0));
    let bars: Vec<Bar> = cpu
        .iter()
        .map(|(v, t)| Bar {
            label: t.name.clone(),
            value: *v,
            text: format!("{v:.1} µs"),
            colour: target_style(r, t).colour,
            hollow: false,
            tip: format!(
                "{}: median server CPU {v:.1} µs per request over its measured keep-alive cells",
                t.name
            ),
        })
        .collect();
    let cpu_svg = svg::bar_chart(&BarChart {
        title: "Server CPU per request by target".into(),
        bars,
        axis: Axis::new(
            "server CPU per request (median over cells)",
            Scale::Linear,
            tick_cpu,
        ),
        horizontal: true,
        width: 540.0,
        empty_note: "no CPU measured".into(),
    });
    out.push_str("<div class=\"pair\">\n");
    figure(
        out,
        "chart-rss",
        "Peak memory",
        "Peak RSS of the server's process tree over all its cells, smallest first; hover for idle RSS.",
        &rss_svg,
    );
    figure(
        out,
        "chart-cpu",
        "CPU per request",
        "Median server CPU time per completed response over the target's measured keep-alive cells, cheapest first.",
        &cpu_svg,
    );
    out.push_str("</div>\n");
}

/// RSS against time over each target's whole run: its cells' probe series in run order,
/// each level in a slot as long as its longest run among the targets, so levels line up.
pub(super) fn rss_over_time(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    let cols = r.columns();
    let cell_len = |c: &Cell| -> f64 {
        c.repeats
            .iter()
            .map(|rep| {
                let last = rep
                    .series
                    .iter()
                    .map(|p| p.t_s)
                    .filter(|t| t.is_finite())
                    .fold(0.0, f64::max);
                let e = if rep.elapsed_s.is_finite() {
                    rep.elapsed_s
                } else {
                    0.0
                };
                e.max(last).max(0.0)
            })
            .sum()
    };
    let mut starts: Vec<f64> = Vec::with_capacity(cols.len());
    let mut rules: Vec<(f64, String)> = Vec::new();
    let mut at = 0.0;
    for (s, l, _) in &cols {
        let len = rows
            .iter()
            .filter_map(|t| t.cell(s, l))
            .map(cell_len)
            .fold(0.0, f64::max);
        starts.push(at);
        if len > 0.0 {
            rules.push((at, r.column_name(s, l)));
        }
        at += len;
    }
    let mut lo = f64::INFINITY;
    let mut hi: f64 = 0.0;
    let series: Vec<Series> = rows
        .iter()
        .map(|t| {
            let mut points = Vec::new();
            for ((s, l, _), start) in cols.iter().zip(&starts) {
                let Some(c) = t.cell(s, l) else { continue };
                let mut off = 0.0;
                let mut first = true;
                for rep in &c.repeats {
                    for p in &rep.series {
                        if !p.t_s.is_finite() {
                            continue;
                        }
                        let mib = p.rss_bytes as f64 / MIB;
                        if mib > 0.0 {
                            lo = lo.min(mib);
                            hi = hi.max(mib);
                        }
                        let mut pt = Point::new(start + off + p.t_s.max(0.0), mib);
                        pt.gap = first;
                        pt.tip = Some(format!(
                            "{} · {l} at {:.1} s: RSS {}",
                            t.name,
                            off + p.t_s,
                            bytes_compact(p.rss_bytes)
                        ));
                        first = false;
                        points.push(pt);
                    }
                    let last = rep
                        .series
                        .iter()
                        .map(|p| p.t_s)
                        .filter(|t| t.is_finite())
                        .fold(0.0, f64::max);
                    off += if rep.elapsed_s.is_finite() {
                        rep.elapsed_s.max(last).max(0.0)
                    } else {
                        last
                    };
                }
            }
            Series {
                name: t.name.clone(),
                style: target_style(r, t),
                points,
                markers: false,
            }
        })
        .collect();
    let log = hi > 0.0 && lo.is_finite() && hi / lo >= 4.0;
    let y = if log {
        Axis::new("RSS (log scale)", Scale::Log, tick_mib)
    } else {
        Axis::new("RSS", Scale::Linear, tick_mib)
    };
    let svg = svg::line_chart(&LineChart {
        title: "RSS over the run".into(),
        x: Axis::new(
            "seconds of measured load, levels in run order",
            Scale::Linear,
            tick_s,
        )
        .with_domain(0.0, if at > 0.0 { at } else { 1.0 }),
        y,
        series,
        width: 960.0,
        height: 380.0,
        rules,
        empty_note: "no probe samples".into(),
    });
    let interval = r.protocol.plan.sample_interval_s;
    figure(
        out,
        "chart-rss-time",
        "Memory over the run",
        &format!(
            "RSS of each server's process tree, sampled every {} s while load ran, its levels in run order; \
             warm-ups and pauses between repeats are left out. Each level gets the time its longest run took, \
             so a target that finished a level sooner leaves a gap.",
            esc(&short(interval))
        ),
        &svg,
    );
}
