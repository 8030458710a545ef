//! The Charts section: for each scenario, throughput and p99 against concurrency, a bar chart
//! per other level and the latency spectrum; then the resource charts.

use super::levels::{level, level_text, timed_keepalive};
use super::numbers::{pct, tick_int, tick_rate, tick_us};
use super::resources::{resource_charts, rss_over_time};
use super::{figure, target_style};
use crate::human_us;
use crate::shootout::svg::{self, esc, Axis, Bar, BarChart, LineChart, Point, Scale, Series};
use crate::shootout::{Bottleneck, Cell, CellSummary, ShootoutResults, TargetResult};
use crate::units::rate_suffixed;

/// Whether the cell was client-bound, so its point is drawn hollow.
fn is_client_bound(c: &Cell) -> bool {
    c.diagnosis
        .as_ref()
        .is_some_and(|d| d.bottleneck == Bottleneck::ClientBound)
}

/// ` · <bottleneck>` for a tooltip, or nothing.
fn diag_suffix(c: &Cell) -> String {
    c.diagnosis
        .as_ref()
        .map(|d| format!(" · {}", d.bottleneck.as_str()))
        .unwrap_or_default()
}

/// The whole Charts section.
pub(super) fn charts(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    out.push_str("<section id=\"charts\">\n<h2>Charts</h2>\n");
    if rows.is_empty() {
        out.push_str("<p class=\"note\">No target was measured, so there is nothing to chart.</p>\n</section>\n");
        return;
    }
    let cols = r.columns();
    let mut scenarios: Vec<&str> = Vec::new();
    for (s, _, _) in &cols {
        if !scenarios.contains(&s.as_str()) {
            scenarios.push(s);
        }
    }
    let several = scenarios.len() > 1;
    for (si, scenario) in scenarios.iter().enumerate() {
        let of = if several {
            format!(" ({scenario})")
        } else {
            String::new()
        };
        let timed: Vec<(&str, u64)> = cols
            .iter()
            .filter(|(s, l, _)| s == scenario && timed_keepalive(r, s, l))
            .map(|(_, l, c)| (l.as_str(), *c))
            .collect();
        if !timed.is_empty() {
            concurrency_charts(out, r, rows, scenario, &timed, &of, si);
        }
        for (s, l, _) in cols.iter().filter(|(s, l, _)| {
            s == scenario && !timed_keepalive(r, s, l) && !super::levels::capacity(r, l)
        }) {
            counted_chart(out, r, rows, s, l, &of, si);
        }
        spectrum_chart(out, r, rows, scenario, &of, si);
    }
    super::over_time::over_time(out, r, rows);
    super::capacity::ramp_charts(out, r);
    resource_charts(out, r, rows);
    rss_over_time(out, r, rows);
    out.push_str("</section>\n");
}

/// What a concurrency chart plots of a cell: its value, the whisker range and the tooltip.
type PointOf<'a> = &'a dyn Fn(&CellSummary) -> Option<(f64, Option<(f64, f64)>, String)>;

/// req/s and p99 against connections, over the timed keep-alive levels.
fn concurrency_charts(
    out: &mut String,
    r: &ShootoutResults,
    rows: &[&TargetResult],
    scenario: &str,
    timed: &[(&str, u64)],
    of: &str,
    si: usize,
) {
    let conns: Vec<u64> = {
        let mut v: Vec<u64> = timed.iter().map(|t| t.1).filter(|&c| c > 0).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (lo, hi) = match (conns.first(), conns.last()) {
        (Some(&a), Some(&b)) => (a as f64 / 1.6, b as f64 * 1.6),
        _ => (1.0, 10.0),
    };
    let xaxis = || {
        Axis::new("concurrent connections (log scale)", Scale::Log, tick_int)
            .with_ticks(conns.iter().map(|&c| (c as f64, c.to_string())).collect())
            .with_domain(lo, hi)
    };
    let build = |y: PointOf| -> Vec<Series> {
        rows.iter()
            .map(|t| {
                let points = timed
                    .iter()
                    .filter_map(|(l, c)| {
                        let cell = t.cell(scenario, l)?;
                        let s = cell.summary.as_ref()?;
                        let (v, range, text) = y(s)?;
                        let mut p = Point::new(*c as f64, v);
                        p.range = range;
                        p.hollow = is_client_bound(cell);
                        p.tip = Some(format!("{} · {l}: {text}{}", t.name, diag_suffix(cell)));
                        Some(p)
                    })
                    .collect();
                Series {
                    name: t.name.clone(),
                    style: target_style(r, t),
                    points,
                    markers: true,
                }
            })
            .collect()
    };
    let rps = build(&|s| {
        Some((
            s.rps_median,
            Some((s.rps_min, s.rps_max)),
            format!(
                "{} req/s (min {}, max {})",
                rate_suffixed(s.rps_median),
                rate_suffixed(s.rps_min),
                rate_suffixed(s.rps_max)
            ),
        ))
    });
    let svg = svg::line_chart(&LineChart {
        title: format!("Requests per second by concurrency{of}"),
        x: xaxis(),
        y: Axis::new("requests per second (median)", Scale::Linear, tick_rate),
        series: rps,
        width: 960.0,
        height: 400.0,
        rules: vec![],
        empty_note: "no measured keep-alive level".into(),
    });
    figure(
        out,
        &format!("chart-rps-{si}"),
        &format!("Throughput by concurrency{of}"),
        "Median req/s of the repeats at each keep-alive level; whiskers span the slowest and fastest repeat. \
         Hollow points were client-bound: foxbench's CPU was saturated, so the server may be faster than shown.",
        &svg,
    );
    let p99 = build(&|s| {
        let v = s.latency.at(99.0)?;
        Some((v, None, format!("p99 {}", human_us(v))))
    });
    let svg = svg::line_chart(&LineChart {
        title: format!("p99 latency by concurrency{of}"),
        x: xaxis(),
        y: Axis::new("p99 latency (log scale)", Scale::Log, tick_us),
        series: p99,
        width: 960.0,
        height: 400.0,
        rules: vec![],
        empty_note: "no p99 at any keep-alive level".into(),
    });
    figure(
        out,
        &format!("chart-p99-{si}"),
        &format!("p99 latency by concurrency{of}"),
        "The 99th percentile of every repeat's requests merged, on a log scale. Hollow points were client-bound.",
        &svg,
    );
}

/// A counted (ab-style) or other non-concurrency level: one bar per target.
fn counted_chart(
    out: &mut String,
    r: &ShootoutResults,
    rows: &[&TargetResult],
    scenario: &str,
    l: &str,
    of: &str,
    si: usize,
) {
    let mut bars: Vec<Bar> = rows
        .iter()
        .filter_map(|t| {
            let cell = t.cell(scenario, l)?;
            let s = cell.summary.as_ref()?;
            let p99 = s
                .latency
                .at(99.0)
                .map(|v| format!(", p99 {}", human_us(v)))
                .unwrap_or_default();
            Some(Bar {
                label: t.name.clone(),
                value: s.rps_median,
                text: rate_suffixed(s.rps_median),
                colour: target_style(r, t).colour,
                hollow: is_client_bound(cell),
                tip: format!(
                    "{} · {l}: {} req/s (min {}, max {}){p99}{}",
                    t.name,
                    rate_suffixed(s.rps_median),
                    rate_suffixed(s.rps_min),
                    rate_suffixed(s.rps_max),
                    diag_suffix(cell)
                ),
            })
        })
        .collect();
    if bars.is_empty() {
        return;
    }
    bars.sort_by(|a, b| b.value.total_cmp(&a.value));
    let what = level(r, l).map(level_text).unwrap_or_else(|| l.to_string());
    let svg = svg::bar_chart(&BarChart {
        title: format!("Requests per second at level {l}{of}"),
        bars,
        axis: Axis::new("requests per second (median)", Scale::Linear, tick_rate),
        horizontal: false,
        width: 960.0,
        empty_note: "not measured".into(),
    });
    let counted = level(r, l).is_some_and(|x| x.requests.is_some());
    figure(
        out,
        &format!("chart-level-{si}-{l}"),
        &format!("Throughput at level {l}{of}"),
        &format!(
            "{} {}. Pale bars were client-bound.",
            esc(&what),
            if counted {
                "— a fixed number of requests, like the original post's <code>ab</code> run, kept apart from the concurrency chart because its connections are not kept alive"
            } else {
                "— kept apart from the concurrency chart, which shows timed keep-alive levels only"
            }
        ),
        &svg,
    );
}

/// The column the spectrum chart shows: the timed keep-alive level measured for most targets,
/// ties going to the one nearest 100 connections.
fn spectrum_column(
    r: &ShootoutResults,
    rows: &[&TargetResult],
    scenario: &str,
) -> Option<(String, u64)> {
    let cols = r.columns();
    let timed: Vec<&(String, String, u64)> = cols
        .iter()
        .filter(|(s, l, _)| s == scenario && timed_keepalive(r, s, l))
        .collect();
    let candidates: Vec<&(String, String, u64)> = if timed.is_empty() {
        cols.iter().filter(|(s, _, _)| s == scenario).collect()
    } else {
        timed
    };
    let count = |l: &str| {
        rows.iter()
            .filter(|t| {
                t.cell(scenario, l)
                    .and_then(|c| c.summary.as_ref())
                    .is_some_and(|s| !s.spectrum.is_empty())
            })
            .count()
    };
    let dist = |c: u64| ((c.max(1) as f64).log10() - 2.0).abs();
    candidates
        .iter()
        .filter(|(_, l, _)| count(l) > 0)
        .min_by(|a, b| {
            count(&b.1)
                .cmp(&count(&a.1))
                .then(dist(a.2).total_cmp(&dist(b.2)))
        })
        .map(|(_, l, c)| (l.clone(), *c))
}

/// Latency against percentile, on HdrHistogram's `1/(1-p)` axis, for one level.
fn spectrum_chart(
    out: &mut String,
    r: &ShootoutResults,
    rows: &[&TargetResult],
    scenario: &str,
    of: &str,
    si: usize,
) {
    let Some((l, conns)) = spectrum_column(r, rows, scenario) else {
        return;
    };
    let l = l.as_str();
    let x_of = |p: f64| {
        let q = 1.0 - p / 100.0;
        if p.is_finite() && q > 1e-12 && p >= 0.0 {
            Some(-q.log10())
        } else {
            None
        }
    };
    let mut xmax: f64 = 1.0;
    let series: Vec<Series> = rows
        .iter()
        .map(|t| {
            let points: Vec<Point> = t
                .cell(scenario, l)
                .and_then(|c| c.summary.as_ref())
                .map(|s| {
                    s.spectrum
                        .iter()
                        .filter_map(|&(p, us)| {
                            let x = x_of(p)?;
                            let mut pt = Point::new(x, us);
                            pt.tip = Some(format!("{} · p{}: {}", t.name, pct(p), human_us(us)));
                            Some(pt)
                        })
                        .collect()
                })
                .unwrap_or_default();
            for p in &points {
                if p.x.is_finite() && p.y > 0.0 {
                    xmax = xmax.max(p.x);
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
    let decades = xmax.ceil().clamp(1.0, 9.0);
    let mut ticks = vec![(0.0, "0%".to_string()), (2f64.log10(), "50%".to_string())];
    let mut k = 1.0;
    while k <= decades {
        ticks.push((k, format!("{}%", pct(100.0 - 100.0 * 10f64.powf(-k)))));
        k += 1.0;
    }
    let svg = svg::line_chart(&LineChart {
        title: format!("Latency by percentile at {l}{of}"),
        x: Axis::new("percentile (scale 1/(1−p))", Scale::Linear, tick_int)
            .with_ticks(ticks)
            .with_domain(0.0, decades),
        y: Axis::new("latency (log scale)", Scale::Log, tick_us),
        series,
        width: 960.0,
        height: 400.0,
        rules: vec![],
        empty_note: "no latency spectrum at this level".into(),
    });
    figure(
        out,
        &format!("chart-spectrum-{si}"),
        &format!("Latency spectrum at {l}{of}"),
        &format!(
            "Latency at each percentile for level <b>{}</b> ({conns} connections), the level most targets were measured at; \
             each step right is ten times rarer. The maximum (100%) is left off the axis; hover a point for its value.",
            esc(l)
        ),
        &svg,
    );
}
