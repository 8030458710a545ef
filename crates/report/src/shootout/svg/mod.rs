//! Small, dependency-free SVG charts for the HTML report, and what they share: series styles,
//! escaping, attribute numbers and the `<svg>` element itself.
//!
//! Every chart has axis ticks and labels, a legend (line charts) or labelled bars, `<title>`
//! elements for hover tooltips, and a `viewBox` so it scales with the page. Every number that
//! reaches an attribute goes through [`num`], and every scale guards empty, single-valued and
//! (on log axes) non-positive data, so missing data draws an empty frame with a note, never
//! `NaN` or `inf`.

mod axis;
mod bar;
mod line;

use std::fmt::Write as _;

pub(crate) use axis::{Axis, Scale};
pub(crate) use bar::{bar_chart, Bar, BarChart};
pub(crate) use line::{line_chart, LineChart, Point, Series};

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

/// A grey note centred at (x, y), shown where a chart has nothing to draw.
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
mod tests;
