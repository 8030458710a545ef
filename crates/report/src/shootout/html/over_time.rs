//! The charts over time: req/s and p99 of every interval of every repeat, each level's
//! repeats in run order, from the repeats' `intervals` (absent in files written before
//! 2026-11-24, which then get no such chart).

use super::numbers::{short, tick_rate, tick_s, tick_us};
use super::{figure, target_style};
use crate::shootout::svg::{self, esc, Axis, LineChart, Point, Scale, Series};
use crate::shootout::{Cell, ShootoutResults, TargetResult};
use crate::{human_us, IntervalRow};

/// What a chart over time plots of an interval, and how it reads.
struct Measure {
    id: &'static str,
    title: &'static str,
    axis: &'static str,
    tick: fn(f64) -> String,
    /// The value of an interval, None when it has none (no response for a percentile).
    value: fn(&IntervalRow) -> Option<f64>,
    show: fn(f64) -> String,
    log: bool,
}

const MEASURES: [Measure; 2] = [
    Measure {
        id: "chart-rps-time",
        title: "Throughput over the run",
        axis: "req/s",
        tick: tick_rate,
        value: |iv| Some(iv.requests_per_sec),
        show: |v| format!("{v:.0} req/s"),
        log: false,
    },
    Measure {
        id: "chart-p99-time",
        title: "p99 latency over the run",
        axis: "p99 latency (log scale)",
        tick: tick_us,
        value: |iv| (iv.requests > 0 && iv.p99_us > 0.0).then_some(iv.p99_us),
        show: human_us,
        log: true,
    },
];

/// The length of a cell's repeats laid end to end, seconds.
fn cell_len(c: &Cell) -> f64 {
    c.repeats
        .iter()
        .map(|rep| {
            let last = rep
                .intervals
                .iter()
                .map(|iv| iv.start_s + iv.duration_s)
                .filter(|t| t.is_finite())
                .fold(0.0, f64::max);
            last.max(if rep.elapsed_s.is_finite() {
                rep.elapsed_s
            } else {
                0.0
            })
        })
        .sum()
}

/// Both charts over time, when any repeat recorded intervals.
pub(super) fn over_time(out: &mut String, r: &ShootoutResults, rows: &[&TargetResult]) {
    let recorded = rows
        .iter()
        .flat_map(|t| &t.cells)
        .flat_map(|c| &c.repeats)
        .any(|rep| !rep.intervals.is_empty());
    if !recorded {
        return;
    }
    let cols = r.columns();
    let mut starts = Vec::with_capacity(cols.len());
    let mut rules = Vec::new();
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
    for m in &MEASURES {
        let series: Vec<Series> = rows
            .iter()
            .map(|t| {
                let mut points = Vec::new();
                for ((s, l, _), start) in cols.iter().zip(&starts) {
                    let Some(c) = t.cell(s, l) else { continue };
                    let mut off = 0.0;
                    for rep in &c.repeats {
                        let mut first = true;
                        for iv in &rep.intervals {
                            let mid = iv.start_s + iv.duration_s / 2.0;
                            let Some(v) = (m.value)(iv) else {
                                first = true;
                                continue;
                            };
                            if !(mid.is_finite() && v.is_finite()) {
                                continue;
                            }
                            let mut p = Point::new(start + off + mid, v);
                            p.gap = first;
                            p.tip = Some(format!(
                                "{} · {l} at {:.2} s: {}",
                                t.name,
                                off + mid,
                                (m.show)(v)
                            ));
                            first = false;
                            points.push(p);
                        }
                        off += rep
                            .intervals
                            .iter()
                            .map(|iv| iv.start_s + iv.duration_s)
                            .fold(rep.elapsed_s.max(0.0), f64::max);
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
        let y = if m.log {
            Axis::new(m.axis, Scale::Log, m.tick)
        } else {
            Axis::new(m.axis, Scale::Linear, m.tick)
        };
        let svg = svg::line_chart(&LineChart {
            title: m.title.into(),
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
            rules: rules.clone(),
            empty_note: "no intervals recorded".into(),
        });
        let interval = r.protocol.plan.sample_interval_s;
        figure(
            out,
            m.id,
            m.title,
            &format!(
                "Every {} s interval of every measured repeat, each level's repeats end to end, levels in run order; \
                 warm-ups are left out. Each level gets the time its longest run took.",
                esc(&short(interval))
            ),
            &svg,
        );
    }
}
