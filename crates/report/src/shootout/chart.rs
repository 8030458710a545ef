//! Small, dependency-free SVG charts for the HTML report: a line chart with optional log
//! axes, and a bar chart, horizontal or vertical.
//!
//! Every chart has axis ticks and labels, a legend (line charts) or labelled bars, `<title>`
//! elements for hover tooltips, and a `viewBox` so it scales with the page. Every number that
//! reaches an attribute goes through [`num`], and every scale guards empty, single-valued and
//! (on log axes) non-positive data, so missing data draws an empty frame with a note, never
//! `NaN` or `inf`.

use std::fmt::Write as _;

/// Series colours, in assignment order: fourteen hues that stay apart on white and in print.
pub(crate) const PALETTE: [&str; 14] = [
    "#1f77b4", // blue
    "#ff7f0e", // orange
    "#2ca02c", // green
    "#d62728", // red
    "#9467bd", // purple
    "#8c564b", // brown
    "#e377c2", // pink
    "#17becf", // cyan
    "#bcbd22", // olive
    "#1b2a6b", // navy
    "#636363", // grey
    "#00866b", // teal
    "#b8860b", // dark gold
    "#c51b7d", // magenta
];

/// Marker shapes, so series whose colours are close still differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Circle,
    Square,
    Diamond,
}

/// How one series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Style {
    pub colour: &'static str,
    /// `stroke-dasharray`, for series beyond the palette.
    pub dash: Option<&'static str>,
    pub marker: Marker,
}

/// The style of the `i`-th series: a palette colour; the second seven take square markers,
/// and beyond the palette the colours repeat dashed.
pub(crate) fn style(i: usize) -> Style {
    let n = PALETTE.len();
    Style {
        colour: PALETTE[i % n],
        dash: match (i / n) % 3 {
            0 => None,
            1 => Some("7 4"),
            _ => Some("2 3"),
        },
        marker: match (i / 7) % 3 {
            0 => Marker::Circle,
            1 => Marker::Square,
            _ => Marker::Diamond,
        },
    }
}

/// Escapes text for HTML and SVG, in element content and in quoted attributes.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

/// A coordinate for an attribute: one decimal at most, and `0` for anything not finite.
pub(crate) fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let s = format!("{:.1}", v);
    let s = s.strip_suffix(".0").unwrap_or(&s);
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A linear or logarithmic (base 10) axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scale {
    Linear,
    Log,
}

/// One axis: its label, scale, tick format and optional fixed ticks or domain.
pub(crate) struct Axis {
    pub label: String,
    pub scale: Scale,
    /// Formats a tick value.
    pub format: fn(f64) -> String,
    /// Fixed ticks (value, label) instead of computed ones.
    pub ticks: Option<Vec<(f64, String)>>,
    /// The domain in data units, instead of one fitted to the data.
    pub domain: Option<(f64, f64)>,
    /// A linear axis starts at zero (bars and sizes must).
    pub zero: bool,
}

impl Axis {
    /// An axis with computed ticks.
    pub fn new(label: impl Into<String>, scale: Scale, format: fn(f64) -> String) -> Axis {
        Axis {
            label: label.into(),
            scale,
            format,
            ticks: None,
            domain: None,
            zero: scale == Scale::Linear,
        }
    }

    /// Fixed ticks.
    pub fn with_ticks(mut self, ticks: Vec<(f64, String)>) -> Axis {
        self.ticks = Some(ticks);
        self
    }

    /// A fixed domain, in data units.
    pub fn with_domain(mut self, lo: f64, hi: f64) -> Axis {
        self.domain = Some((lo, hi));
        self
    }
}

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

/// Maps one axis's data values to pixels.
#[derive(Debug, Clone, Copy)]
struct Map {
    scale: Scale,
    /// Domain, in transformed units (log10 for a log scale).
    lo: f64,
    hi: f64,
    /// Pixel range: `a` is where `lo` lands.
    a: f64,
    b: f64,
}

impl Map {
    /// The transformed value, or `None` when it cannot be drawn on this scale.
    fn t(scale: Scale, v: f64) -> Option<f64> {
        match scale {
            _ if !v.is_finite() => None,
            Scale::Linear => Some(v),
            Scale::Log if v > 0.0 => Some(v.log10()).filter(|l| l.is_finite()),
            Scale::Log => None,
        }
    }

    fn px(&self, v: f64) -> Option<f64> {
        let tv = Map::t(self.scale, v)?;
        let span = self.hi - self.lo;
        let p = if span > 0.0 && span.is_finite() {
            self.a + (tv - self.lo) / span * (self.b - self.a)
        } else {
            (self.a + self.b) / 2.0
        };
        p.is_finite().then_some(p)
    }

    /// Like [`Map::px`], but clamped to the pixel range (for whiskers and bars).
    fn px_clamped(&self, v: f64) -> Option<f64> {
        let (lo, hi) = if self.a <= self.b {
            (self.a, self.b)
        } else {
            (self.b, self.a)
        };
        self.px(v).map(|p| p.clamp(lo, hi))
    }
}

/// A round step near `span / target` (1, 2 or 5 times a power of ten).
fn nice_step(span: f64, target: f64) -> f64 {
    if !(span > 0.0 && span.is_finite() && target > 0.0) {
        return 1.0;
    }
    let raw = span / target;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let step = if f < 1.5 {
        1.0
    } else if f < 3.0 {
        2.0
    } else if f < 7.0 {
        5.0
    } else {
        10.0
    } * mag;
    if step > 0.0 && step.is_finite() {
        step
    } else {
        1.0
    }
}

/// The domain (transformed units) and the ticks (data value, label, labelled) of an axis
/// for the given data values.
/// `target` is about how many labelled ticks a linear axis should get.
fn fit(axis: &Axis, values: &[f64], target: f64) -> (f64, f64, Vec<(f64, String, bool)>) {
    let tv: Vec<f64> = values
        .iter()
        .filter_map(|&v| Map::t(axis.scale, v))
        .collect();
    let fixed: Vec<f64> = axis
        .ticks
        .iter()
        .flatten()
        .filter_map(|(v, _)| Map::t(axis.scale, *v))
        .collect();
    let (mut lo, mut hi) = match axis
        .domain
        .and_then(|(a, b)| Some((Map::t(axis.scale, a)?, Map::t(axis.scale, b)?)))
    {
        Some((a, b)) if b > a => (a, b),
        _ => {
            let all = tv.iter().chain(fixed.iter());
            let lo = all.clone().copied().fold(f64::INFINITY, f64::min);
            let hi = all.copied().fold(f64::NEG_INFINITY, f64::max);
            if lo.is_finite() && hi.is_finite() {
                (lo, hi)
            } else {
                (0.0, 1.0)
            }
        }
    };
    let fixed_domain = axis.domain.is_some() && hi > lo;
    let mut ticks: Vec<(f64, String, bool)> = Vec::new();
    match axis.scale {
        Scale::Linear => {
            if axis.zero && !fixed_domain {
                lo = lo.min(0.0);
                hi = hi.max(0.0);
            }
            if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
                let pad = if hi.abs() > 0.0 { hi.abs() * 0.5 } else { 1.0 };
                if axis.zero && lo >= 0.0 {
                    hi += 2.0 * pad;
                } else {
                    lo -= pad;
                    hi += pad;
                }
            }
            let step = nice_step(hi - lo, target);
            if !fixed_domain {
                lo = (lo / step).floor() * step;
                hi = (hi / step).ceil() * step;
            }
            if axis.ticks.is_none() {
                let first = (lo / step).ceil();
                let last = (hi / step).floor();
                let mut k = first;
                while k <= last && ticks.len() < 50 {
                    let v = k * step;
                    ticks.push((
                        v,
                        (axis.format)(if v.abs() < step * 1e-9 { 0.0 } else { v }),
                        true,
                    ));
                    k += 1.0;
                }
            }
        }
        Scale::Log => {
            if !fixed_domain {
                lo = lo.floor();
                hi = hi.ceil();
            }
            if hi - lo < 1.0 {
                hi = lo + 1.0;
            }
            if axis.ticks.is_none() {
                let decades = hi - lo;
                let mut k = lo.floor();
                while k <= hi.ceil() && ticks.len() < 200 {
                    for m in [1.0, 2.0, 5.0] {
                        let v = 10f64.powf(k) * m;
                        let lv = v.log10();
                        if lv < lo - 1e-9 || lv > hi + 1e-9 {
                            continue;
                        }
                        let labelled = m == 1.0 || decades <= 2.0;
                        if m == 1.0 || decades <= 4.0 {
                            ticks.push((v, (axis.format)(v), labelled));
                        }
                    }
                    k += 1.0;
                }
            }
        }
    }
    if let Some(fixed) = &axis.ticks {
        for (v, label) in fixed {
            if let Some(t) = Map::t(axis.scale, *v) {
                if t >= lo - 1e-9 && t <= hi + 1e-9 {
                    ticks.push((*v, label.clone(), true));
                }
            }
        }
    }
    (lo, hi, ticks)
}

/// Approximate width of `s` in pixels at font size `size` (for layout only).
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.58
}

fn svg_open(out: &mut String, width: f64, height: f64, title: &str) {
    let _ = write!(
        out,
        r#"<svg class="chart" viewBox="0 0 {w} {h}" style="max-width:{m}px" role="img" aria-label="{t}" font-size="12"><title>{t}</title>"#,
        w = num(width),
        h = num(height),
        // Never drawn much larger than designed, so text keeps its size.
        m = num(width * 1.15),
        t = esc(title),
    );
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
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#777">{}</text>"##,
            num((x0 + x1) / 2.0),
            num((y0 + y1) / 2.0),
            esc(&c.empty_note)
        );
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

/// Shortens `s` to `n` characters with an ellipsis.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Frame, grid, ticks and axis labels.
#[allow(clippy::too_many_arguments)]
fn axes(
    out: &mut String,
    xm: &Map,
    ym: &Map,
    xticks: &[(f64, String, bool)],
    yticks: &[(f64, String, bool)],
    xlabel: &str,
    ylabel: &str,
    width: f64,
    height: f64,
) {
    let (x0, x1, y0, y1) = (xm.a, xm.b, ym.a, ym.b);
    let _ = write!(
        out,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="#fcfcfd" stroke="none"/>"##,
        num(x0),
        num(y1),
        num((x1 - x0).max(0.0)),
        num((y0 - y1).max(0.0))
    );
    for (v, label, labelled) in yticks {
        let Some(y) = ym.px(*v) else { continue };
        let _ = write!(
            out,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="1"/>"##,
            num(x0),
            num(x1),
            if *labelled { "#dcdde3" } else { "#eeeff2" },
            y = num(y)
        );
        if *labelled {
            let _ = write!(
                out,
                r##"<text x="{}" y="{}" text-anchor="end" dominant-baseline="middle" fill="#444" font-size="11">{}</text>"##,
                num(x0 - 6.0),
                num(y),
                esc(label)
            );
        }
    }
    for (v, label, labelled) in xticks {
        let Some(x) = xm.px(*v) else { continue };
        let _ = write!(
            out,
            r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{}" stroke-width="1"/>"##,
            num(y0),
            num(y1),
            if *labelled { "#dcdde3" } else { "#eeeff2" },
            x = num(x)
        );
        if *labelled {
            let _ = write!(
                out,
                r##"<text x="{}" y="{}" text-anchor="middle" fill="#444" font-size="11">{}</text>"##,
                num(x),
                num(y0 + 16.0),
                esc(label)
            );
        }
    }
    let _ = write!(
        out,
        r##"<path d="M{} {}V{}H{}" fill="none" stroke="#777" stroke-width="1"/>"##,
        num(x0),
        num(y1),
        num(y0),
        num(x1)
    );
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#222">{}</text>"##,
        num((x0 + x1) / 2.0),
        num(height - 8.0),
        esc(xlabel)
    );
    let _ = write!(
        out,
        r##"<text transform="translate({} {}) rotate(-90)" text-anchor="middle" fill="#222">{}</text>"##,
        num(14.0),
        num((y0 + y1) / 2.0),
        esc(ylabel)
    );
    let _ = width;
}

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bar {
    pub label: String,
    pub value: f64,
    /// The value as printed at the bar's end.
    pub text: String,
    pub colour: &'static str,
    /// Drawn pale with an outline (for values the reader should trust less).
    pub hollow: bool,
    pub tip: String,
}

/// A bar chart: one bar per entry, from zero.
pub(crate) struct BarChart {
    pub title: String,
    pub bars: Vec<Bar>,
    /// The value axis (its label and tick format; linear from zero).
    pub axis: Axis,
    /// Bars run left to right, one row per bar; otherwise bottom to top.
    pub horizontal: bool,
    pub width: f64,
    pub empty_note: String,
}

/// Renders a bar chart as an inline `<svg>`.
pub(crate) fn bar_chart(c: &BarChart) -> String {
    let bars: Vec<&Bar> = c
        .bars
        .iter()
        .filter(|b| b.value.is_finite() && b.value >= 0.0)
        .collect();
    let values: Vec<f64> = bars.iter().map(|b| b.value).collect();
    let axis = Axis {
        label: c.axis.label.clone(),
        scale: Scale::Linear,
        format: c.axis.format,
        ticks: None,
        domain: None,
        zero: true,
    };
    let mut out = String::new();
    let font = 12.0;
    let label_w = bars
        .iter()
        .map(|b| text_width(&clip(&b.label, 28), font))
        .fold(0.0, f64::max);
    let text_w = bars
        .iter()
        .map(|b| text_width(&b.text, 11.0))
        .fold(0.0, f64::max);
    // A tick label every 110 px or so along the value axis.
    let target = if c.horizontal {
        ((c.width - label_w - text_w - 34.0) / 110.0).clamp(2.0, 6.0)
    } else {
        5.0
    };
    let (lo, hi, ticks) = fit(&axis, &values, target);
    if c.horizontal {
        let row = 24.0;
        let top = 10.0;
        let bottom = 44.0;
        let left = (label_w + 16.0).max(60.0);
        let right = text_w + 18.0;
        let n = bars.len().max(1) as f64;
        let height = top + bottom + n * row;
        let width = c.width.max(left + right + 120.0);
        let xm = Map {
            scale: Scale::Linear,
            lo,
            hi,
            a: left,
            b: width - right,
        };
        let ym = Map {
            scale: Scale::Linear,
            lo: 0.0,
            hi: n,
            a: height - bottom,
            b: top,
        };
        svg_open(&mut out, width, height, &c.title);
        axes(
            &mut out,
            &xm,
            &ym,
            &ticks,
            &[],
            &c.axis.label,
            "",
            width,
            height,
        );
        if bars.is_empty() {
            note(
                &mut out,
                (xm.a + xm.b) / 2.0,
                top + row / 2.0 + 4.0,
                &c.empty_note,
            );
        }
        for (i, b) in bars.iter().enumerate() {
            let y = top + i as f64 * row + 4.0;
            let x0 = xm.a;
            let x1 = xm.px_clamped(b.value).unwrap_or(x0);
            let _ = write!(
                out,
                r#"<g class="bar"><title>{}</title><text x="{}" y="{}" text-anchor="end" dominant-baseline="middle">{}</text>"#,
                esc(&b.tip),
                num(x0 - 8.0),
                num(y + (row - 8.0) / 2.0),
                esc(&clip(&b.label, 28))
            );
            bar_rect(&mut out, x0, y, (x1 - x0).max(0.0), row - 8.0, b);
            let _ = write!(
                out,
                r##"<text x="{}" y="{}" dominant-baseline="middle" fill="#333" font-size="11">{}</text></g>"##,
                num(x1 + 5.0),
                num(y + (row - 8.0) / 2.0),
                esc(&b.text)
            );
        }
    } else {
        let n = bars.len().max(1) as f64;
        let top = 22.0;
        let ytick_w = ticks
            .iter()
            .map(|t| text_width(&t.1, 11.0))
            .fold(0.0, f64::max);
        let left = (ytick_w + 30.0).max(56.0);
        let right = 16.0;
        // About 110 px per bar, so two bars do not stretch across the page.
        let width = c
            .width
            .min(left + right + 110.0 * n)
            .max(left + right + 40.0 * n)
            .max(300.0);
        let slot = (width - left - right) / n;
        let rotate = bars.iter().any(|b| text_width(&b.label, 11.0) > slot - 6.0);
        let bottom = if rotate {
            (label_w * 0.7 + 34.0).clamp(48.0, 140.0)
        } else {
            48.0
        };
        let height = 270.0 + bottom - 48.0;
        let xm = Map {
            scale: Scale::Linear,
            lo: 0.0,
            hi: n,
            a: left,
            b: width - right,
        };
        let ym = Map {
            scale: Scale::Linear,
            lo,
            hi,
            a: height - bottom,
            b: top,
        };
        svg_open(&mut out, width, height, &c.title);
        axes(
            &mut out,
            &xm,
            &ym,
            &[],
            &ticks,
            "",
            &c.axis.label,
            width,
            height,
        );
        if bars.is_empty() {
            note(
                &mut out,
                (xm.a + xm.b) / 2.0,
                (ym.a + ym.b) / 2.0,
                &c.empty_note,
            );
        }
        let bw = (slot * 0.62).min(70.0);
        for (i, b) in bars.iter().enumerate() {
            let cx = left + (i as f64 + 0.5) * slot;
            let y0 = ym.a;
            let y1 = ym.px_clamped(b.value).unwrap_or(y0);
            let _ = write!(out, r#"<g class="bar"><title>{}</title>"#, esc(&b.tip));
            bar_rect(&mut out, cx - bw / 2.0, y1, bw, (y0 - y1).max(0.0), b);
            let _ = write!(
                out,
                r##"<text x="{}" y="{}" text-anchor="middle" fill="#333" font-size="11">{}</text>"##,
                num(cx),
                num(y1 - 5.0),
                esc(&b.text)
            );
            if rotate {
                let _ = write!(
                    out,
                    r#"<text transform="translate({} {}) rotate(-35)" text-anchor="end" font-size="11">{}</text></g>"#,
                    num(cx + 4.0),
                    num(y0 + 14.0),
                    esc(&clip(&b.label, 28))
                );
            } else {
                let _ = write!(
                    out,
                    r#"<text x="{}" y="{}" text-anchor="middle" font-size="11">{}</text></g>"#,
                    num(cx),
                    num(y0 + 16.0),
                    esc(&b.label)
                );
            }
        }
    }
    out.push_str("</svg>");
    out
}

fn bar_rect(out: &mut String, x: f64, y: f64, w: f64, h: f64, b: &Bar) {
    let (fill, extra) = if b.hollow {
        (
            b.colour,
            format!(
                r#" fill-opacity="0.28" stroke="{}" stroke-width="1.5""#,
                b.colour
            ),
        )
    } else {
        (b.colour, String::new())
    };
    let _ = write!(
        out,
        r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"{extra}/>"#,
        num(x),
        num(y),
        num(w),
        num(h)
    );
}

fn note(out: &mut String, x: f64, y: f64, text: &str) {
    let _ = write!(
        out,
        r##"<text x="{}" y="{}" text-anchor="middle" fill="#777">{}</text>"##,
        num(x),
        num(y),
        esc(text)
    );
}

/// Asserts that every geometric attribute in `svg` (coordinates, sizes, paths, transforms,
/// viewBox) holds only finite numbers.
#[cfg(test)]
pub(crate) fn assert_finite(svg: &str) {
    const GEOMETRIC: [&str; 14] = [
        "x",
        "y",
        "x1",
        "x2",
        "y1",
        "y2",
        "cx",
        "cy",
        "r",
        "width",
        "height",
        "d",
        "transform",
        "viewBox",
    ];
    let mut checked = 0;
    for attr in GEOMETRIC {
        let pat = format!(" {attr}=\"");
        let mut rest = svg;
        while let Some(i) = rest.find(&pat) {
            rest = &rest[i + pat.len()..];
            let end = rest.find('"').expect("attribute closes");
            let value = &rest[..end];
            if value.ends_with('%') {
                continue;
            }
            let cleaned = value.replace("translate", " ").replace("rotate", " ");
            for token in cleaned.split(|c: char| c.is_whitespace() || "(),MLHVZ".contains(c)) {
                if token.is_empty() {
                    continue;
                }
                let f: f64 = token
                    .parse()
                    .unwrap_or_else(|_| panic!("{attr}={value:?}: {token:?} is not a number"));
                assert!(f.is_finite(), "{attr}={value:?}");
                checked += 1;
            }
        }
    }
    assert!(
        svg.is_empty() || checked > 0 || !svg.contains("<svg"),
        "no geometry found"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: f64) -> String {
        format!("{v:.0}")
    }

    fn chart(scale: Scale, series: Vec<Series>) -> String {
        line_chart(&LineChart {
            title: "t".into(),
            x: Axis::new("x", scale, int),
            y: Axis::new("y", scale, int),
            series,
            width: 600.0,
            height: 300.0,
            rules: vec![(f64::NAN, "nan rule".into()), (1.0, "one".into())],
            empty_note: "nothing".into(),
        })
    }

    fn series(points: Vec<(f64, f64)>) -> Series {
        Series {
            name: "s".into(),
            style: style(0),
            points: points.into_iter().map(|(x, y)| Point::new(x, y)).collect(),
            markers: true,
        }
    }

    #[test]
    fn num_never_prints_nan_or_inf() {
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(f64::INFINITY), "0");
        assert_eq!(num(-0.01), "0");
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.25), "12.2");
    }

    #[test]
    fn degenerate_line_charts_stay_finite() {
        for scale in [Scale::Linear, Scale::Log] {
            for pts in [
                vec![],
                vec![(1.0, 1.0)],
                vec![(0.0, 0.0)],
                vec![(0.0, 0.0), (0.0, 0.0)],
                vec![(5.0, 7.0), (5.0, 7.0)],
                vec![(f64::NAN, 1.0), (1.0, f64::INFINITY), (-1.0, -5.0)],
                vec![(1e-300, 1e300), (1e300, 1e-300)],
            ] {
                let svg = chart(scale, vec![series(pts.clone())]);
                assert_finite(&svg);
                assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{svg}");
            }
            assert_finite(&chart(scale, vec![]));
        }
        assert!(chart(Scale::Log, vec![series(vec![(0.0, 0.0)])]).contains("nothing"));
    }

    #[test]
    fn a_lone_point_gets_a_marker_without_markers() {
        let mut s = series(vec![(1.0, 2.0)]);
        s.markers = false;
        assert!(chart(Scale::Linear, vec![s]).contains("<circle"));
    }

    #[test]
    fn degenerate_bar_charts_stay_finite() {
        for horizontal in [true, false] {
            for values in [
                vec![],
                vec![0.0],
                vec![0.0, 0.0],
                vec![f64::NAN, 3.0],
                vec![1e12, 1.0],
            ] {
                let bars = values
                    .iter()
                    .map(|&v| Bar {
                        label: "<b>".into(),
                        value: v,
                        text: int(v),
                        colour: PALETTE[0],
                        hollow: false,
                        tip: "tip".into(),
                    })
                    .collect();
                let svg = bar_chart(&BarChart {
                    title: "t".into(),
                    bars,
                    axis: Axis::new("v", Scale::Linear, int),
                    horizontal,
                    width: 500.0,
                    empty_note: "none".into(),
                });
                assert_finite(&svg);
                assert!(!svg.contains("<b>"));
            }
        }
    }

    #[test]
    fn log_ticks_are_decades_and_linear_ticks_are_round() {
        let axis = Axis::new("y", Scale::Log, int);
        let (lo, hi, ticks) = fit(&axis, &[15.0, 4000.0], 5.0);
        assert_eq!((lo, hi), (1.0, 4.0));
        let labelled: Vec<&str> = ticks.iter().filter(|t| t.2).map(|t| t.1.as_str()).collect();
        assert_eq!(labelled, ["10", "100", "1000", "10000"]);
        let axis = Axis::new("y", Scale::Linear, int);
        let (lo, hi, ticks) = fit(&axis, &[3.0, 87.0], 5.0);
        assert_eq!((lo, hi), (0.0, 100.0));
        assert_eq!(ticks.len(), 6);
    }

    #[test]
    fn fourteen_styles_are_distinct() {
        let styles: Vec<Style> = (0..14).map(style).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert_ne!(a.colour, b.colour);
            }
        }
        assert_eq!(style(14).colour, style(0).colour);
        assert_ne!(style(14), style(0));
    }

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
