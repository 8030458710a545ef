//! Line charts: series of points on linear or log axes, with whiskers, markers, labelled
//! rules and a legend.

use std::fmt::Write as _;

use super::axis::{axes, fit, Axis, Map};
use super::{clip, esc, note, num, svg_open, text_width, Marker, Style};

/// One point of a line series.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    pub x: f64,
    pub y: f64,
    /// A vertical range drawn as a whisker (min–max of repeats).
    pub range: Option<(f64, f64)>,
    /// Drawn hollow (for points the reader should trust less).
    pub hollow: bool,
    /// The tooltip.
    pub tip: Option<String>,
    /// The line breaks before this point.
    pub gap: bool,
}

impl Point {
    pub fn new(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            range: None,
            hollow: false,
            tip: None,
            gap: false,
        }
    }
}

/// One line.
pub(crate) struct Series {
    pub name: String,
    pub style: Style,
    pub points: Vec<Point>,
    /// Draw a marker on every point.
    pub markers: bool,
}

/// A line chart.
pub(crate) struct LineChart {
    /// For the `<title>` and `aria-label`.
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub width: f64,
    pub height: f64,
    /// Labelled vertical rules (value, label), such as the boundaries between levels.
    pub rules: Vec<(f64, String)>,
    /// Shown in place of the plot when nothing can be drawn.
    pub empty_note: String,
}

/// A series' marker at (x, y) of radius `r`: filled, or white inside when `hollow`.
fn marker(
    out: &mut String,
    st: Style,
    (x, y): (f64, f64),
    r: f64,
    hollow: bool,
    tip: Option<&str>,
) {
    let (m, colour) = (st.marker, st.colour);
    let fill = if hollow { "#fff" } else { colour };
    let attrs = format!(r#"fill="{fill}" stroke="{colour}" stroke-width="1.6""#);
    let shape = match m {
        Marker::Circle => format!(
            r#"<circle cx="{}" cy="{}" r="{}" {attrs}"#,
            num(x),
            num(y),
            num(r)
        ),
        Marker::Square => format!(
            r#"<rect x="{}" y="{}" width="{}" height="{}" {attrs}"#,
            num(x - r * 0.9),
            num(y - r * 0.9),
            num(r * 1.8),
            num(r * 1.8)
        ),
        Marker::Diamond => format!(
            r#"<path d="M{} {}L{} {}L{} {}L{} {}Z" {attrs}"#,
            num(x),
            num(y - r * 1.2),
            num(x + r * 1.2),
            num(y),
            num(x),
            num(y + r * 1.2),
            num(x - r * 1.2),
            num(y)
        ),
    };
    out.push_str(&shape);
    match tip {
        Some(t) => {
            let _ = write!(out, "><title>{}</title></{}>", esc(t), shape_tag(m));
        }
        None => out.push_str("/>"),
    }
}

fn shape_tag(m: Marker) -> &'static str {
    match m {
        Marker::Circle => "circle",
        Marker::Square => "rect",
        Marker::Diamond => "path",
    }
}

/// Renders a line chart as an inline `<svg>`.
pub(crate) fn line_chart(c: &LineChart) -> String {
    let mut out = String::new();
    let font = 12.0;
    // Legend at the right, one entry per series that has a drawable point.
    let drawable = |s: &Series| {
        s.points
            .iter()
            .filter(|p| Map::t(c.x.scale, p.x).is_some() && Map::t(c.y.scale, p.y).is_some())
            .count()
    };
    let legend: Vec<&Series> = c.series.iter().filter(|s| drawable(s) > 0).collect();
    let legend_w = legend
        .iter()
        .map(|s| text_width(&s.name, font))
        .fold(0.0, f64::max)
        .min(200.0);
    let legend_w = if legend.is_empty() {
        0.0
    } else {
        legend_w + 44.0
    };
    let xs: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    let ys: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| {
            s.points.iter().flat_map(|p| {
                let mut v = vec![p.y];
                if let Some((a, b)) = p.range {
                    v.extend([a, b]);
                }
                v
            })
        })
        .collect();
    let (xlo, xhi, xticks) = fit(&c.x, &xs, 7.0);
    let (ylo, yhi, yticks) = fit(&c.y, &ys, 5.0);
    let ytick_w = yticks
        .iter()
        .filter(|t| t.2)
        .map(|t| text_width(&t.1, 11.0))
        .fold(0.0, f64::max);
    let left = (ytick_w + 30.0).max(56.0);
    let top = 14.0;
    let bottom = 48.0;
    let height = c
        .height
        .max(top + bottom + 18.0 * legend.len() as f64 + 10.0);
    let right = legend_w + 16.0;
    let width = c.width.max(left + right + 120.0);
    let (x0, x1) = (left, width - right);
    let (y0, y1) = (height - bottom, top);
    let xm = Map {
        scale: c.x.scale,
        lo: xlo,
        hi: xhi,
        a: x0,
        b: x1,
    };
    let ym = Map {
        scale: c.y.scale,
        lo: ylo,
        hi: yhi,
        a: y0,
        b: y1,
    };

    svg_open(&mut out, width, height, &c.title);
    axes(
        &mut out, &xm, &ym, &xticks, &yticks, &c.x.label, &c.y.label, width, height,
    );

    for (v, label) in &c.rules {
        if let Some(x) = xm.px(*v) {
            if x < x0 - 0.5 || x > x1 + 0.5 {
                continue;
            }
            let _ = write!(
                out,
                r##"<line x1="{x}" y1="{a}" x2="{x}" y2="{b}" stroke="#999" stroke-dasharray="3 3"/><text x="{tx}" y="{ty}" fill="#555" font-size="10.5">{l}</text>"##,
                x = num(x),
                a = num(y0),
                b = num(y1),
                tx = num(x + 4.0),
                ty = num(y1 + 11.0),
                l = esc(label),
            );
        }
    }

    if legend.is_empty() {
        note(&mut out, (x0 + x1) / 2.0, (y0 + y1) / 2.0, &c.empty_note);
    }

    for s in &c.series {
        let pts: Vec<(f64, f64, &Point)> = s
            .points
            .iter()
            .filter_map(|p| Some((xm.px(p.x)?, ym.px(p.y)?, p)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let _ = write!(out, r#"<g class="series"><title>{}</title>"#, esc(&s.name));
        // Whiskers first, under the line.
        for (x, _, p) in &pts {
            if let Some((a, b)) = p.range {
                if let (Some(ya), Some(yb)) = (ym.px_clamped(a), ym.px_clamped(b)) {
                    if (ya - yb).abs() >= 1.0 {
                        let _ = write!(
                            out,
                            r#"<path d="M{x} {ya}V{yb}M{l} {ya}H{r}M{l} {yb}H{r}" stroke="{c}" stroke-width="1.2" opacity="0.7" fill="none"/>"#,
                            x = num(*x),
                            ya = num(ya),
                            yb = num(yb),
                            l = num(x - 3.0),
                            r = num(x + 3.0),
                            c = s.style.colour
                        );
                    }
                }
            }
        }
        let mut d = String::new();
        let mut pen_down = false;
        for (x, y, p) in &pts {
            let cmd = if !pen_down || p.gap { 'M' } else { 'L' };
            let _ = write!(d, "{cmd}{} {}", num(*x), num(*y));
            pen_down = true;
        }
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{c}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"{dash}/>"#,
            c = s.style.colour,
            dash = s
                .style
                .dash
                .map(|d| format!(r#" stroke-dasharray="{d}""#))
                .unwrap_or_default(),
        );
        // A lone point, or one cut off by gaps on both sides, is drawn as a marker even
        // when the series has none, so it does not vanish.
        for (i, (x, y, p)) in pts.iter().enumerate() {
            let alone = (i == 0 || p.gap) && pts.get(i + 1).is_none_or(|n| n.2.gap);
            if s.markers || alone {
                let r = if s.markers { 4.0 } else { 2.5 };
                marker(&mut out, s.style, (*x, *y), r, p.hollow, p.tip.as_deref());
            }
        }
        out.push_str("</g>");
    }

    // Legend.
    let lx = x1 + 16.0;
    for (i, s) in legend.iter().enumerate() {
        let ly = top + 8.0 + i as f64 * 18.0;
        let _ = write!(
            out,
            r#"<g class="legend"><line x1="{a}" y1="{y}" x2="{b}" y2="{y}" stroke="{c}" stroke-width="2.5"{dash}/>"#,
            a = num(lx),
            b = num(lx + 24.0),
            y = num(ly),
            c = s.style.colour,
            dash = s
                .style
                .dash
                .map(|d| format!(r#" stroke-dasharray="{d}""#))
                .unwrap_or_default(),
        );
        if s.markers {
            marker(&mut out, s.style, (lx + 12.0, ly), 3.5, false, None);
        }
        let _ = write!(
            out,
            r#"<text x="{}" y="{}" dominant-baseline="middle">{}</text></g>"#,
            num(lx + 30.0),
            num(ly + 0.5),
            esc(&clip(&s.name, 30))
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests;
