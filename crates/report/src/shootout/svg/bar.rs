//! Bar charts: one labelled bar per entry from zero, running across or up the page.

use std::fmt::Write as _;

use super::axis::{axes, fit, Axis, Map, Scale};
use super::{clip, esc, note, num, svg_open, text_width};

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

#[cfg(test)]
mod tests;
