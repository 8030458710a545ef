//! Axes: linear and log scales, mapping data to pixels, choosing round ticks, and drawing the
//! frame, grid and labels.

use std::fmt::Write as _;

use super::{esc, num};

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

/// Maps one axis's data values to pixels.
#[derive(Debug, Clone, Copy)]
pub(super) struct Map {
    pub(super) scale: Scale,
    /// Domain, in transformed units (log10 for a log scale).
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// Pixel range: `a` is where `lo` lands.
    pub(super) a: f64,
    pub(super) b: f64,
}

impl Map {
    /// The transformed value, or `None` when it cannot be drawn on this scale.
    pub(super) fn t(scale: Scale, v: f64) -> Option<f64> {
        match scale {
            _ if !v.is_finite() => None,
            Scale::Linear => Some(v),
            Scale::Log if v > 0.0 => Some(v.log10()).filter(|l| l.is_finite()),
            Scale::Log => None,
        }
    }

    pub(super) fn px(&self, v: f64) -> Option<f64> {
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
    pub(super) fn px_clamped(&self, v: f64) -> Option<f64> {
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
pub(super) fn fit(
    axis: &Axis,
    values: &[f64],
    target: f64,
) -> (f64, f64, Vec<(f64, String, bool)>) {
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

/// Frame, grid, ticks and axis labels.
#[allow(clippy::too_many_arguments)]
pub(super) fn axes(
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

#[cfg(test)]
mod tests;
