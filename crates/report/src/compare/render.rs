//! A [`Comparison`] as an aligned text table or as Markdown.

use std::fmt::Write as _;

use super::{Comparison, Figure, ProtocolDifference, Row, Spread, Verdict};
use crate::human_us;
use crate::units::{bytes_compact, rate_suffixed};
use stats::setting::{Setting, Text, Wording};

/// A value of `figure` in its unit.
fn value(figure: &str, v: f64) -> String {
    match Figure::parse(figure) {
        Some(Figure::Rps) => rate_suffixed(v),
        Some(Figure::Latency(_)) | Some(Figure::CpuPerRequest) => human_us(v),
        Some(Figure::RssPeak) => bytes_compact(v as u64),
        None => format!("{v}"),
    }
}

/// A side's centre and how far its repeats stray from it, as `12.3k ±4%`.
fn side(figure: &str, s: &Option<Spread>) -> String {
    let Some(s) = s else {
        return "–".into();
    };
    let stray = (s.max - s.center).abs().max((s.center - s.min).abs());
    if s.center > 0.0 && s.n > 1 {
        format!(
            "{} ±{:.0}%",
            value(figure, s.center),
            100.0 * stray / s.center
        )
    } else {
        value(figure, s.center)
    }
}

/// The change column: `~`, `?`, or the ratio with its spread.
fn change(r: &Row) -> String {
    match (r.verdict, r.ratio, r.ratio_range) {
        (Verdict::Unchanged, _, _) => "~".into(),
        (Verdict::NoVerdict, _, _) => "?".into(),
        (_, Some(x), Some((lo, hi))) => format!("{x:.2}× ({lo:.2}–{hi:.2})"),
        (_, Some(x), None) => format!("{x:.2}×"),
        _ => "changed".into(),
    }
}

fn mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "worse",
        Verdict::Improvement => "better",
        Verdict::Unchanged | Verdict::NoVerdict => "",
    }
}

fn p_text(r: &Row) -> String {
    r.p.map_or("–".into(), |p| format!("{p:.3}"))
}

fn n_text(r: &Row) -> String {
    let n = |s: &Option<Spread>| s.as_ref().map_or(0, |s| s.n);
    format!("{}+{}", n(&r.base), n(&r.new))
}

/// What differs, in one short line: `kernel: 6.1 → 6.8`.
pub(super) fn brief(d: &ProtocolDifference) -> String {
    format!("{}: {}", d.field, values(d))
}

fn values(d: &ProtocolDifference) -> String {
    if let ([a], [b]) = (d.base.as_slice(), d.new.as_slice()) {
        if a.contains('\n') || b.contains('\n') {
            return first_difference(a, b);
        }
        return format!("{a} → {b}");
    }
    let side = |v: &[String]| {
        if v.iter().any(|x| x.contains('\n')) {
            format!("{} versions", v.len())
        } else {
            v.join(" | ")
        }
    };
    format!(
        "base {} → new {} (the files of one side differ)",
        side(&d.base),
        side(&d.new)
    )
}

/// Where two texts first differ: `line 12: duration = "2s" → duration = "1s"`.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = (0..la.len().max(lb.len()))
        .find(|&i| la.get(i) != lb.get(i))
        .unwrap_or(0);
    let at = |l: &[&str]| {
        l.get(i)
            .map_or("(end)".to_string(), |s| s.trim().to_string())
    };
    format!("line {}: {} → {}", i + 1, at(&la), at(&lb))
}

/// Rows of cells padded to their column's widest, in characters.
fn aligned(rows: &[Vec<String>], right: &[bool]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            let pad = " ".repeat(width[c] - cell.chars().count());
            if c > 0 {
                line.push_str("  ");
            }
            if right.get(c).copied().unwrap_or(false) {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The warning above the tables when the runs' hardware differs (`differences`: each
/// difference, briefly).
pub fn hardware_warning(differences: &str) -> Text {
    Text::plain(format!(
        "warning: different hardware ({differences}): the changes may be the machines', not the code's; "
    ))
    .name(Setting::SameMachine)
    .then(" makes this an error")
}

impl Comparison {
    /// The figures in table order, as named in rows.
    fn figure_names(&self) -> Vec<String> {
        self.kind.figures().iter().map(|f| f.name()).collect()
    }

    /// The lines above the tables: the hardware warning and every protocol difference.
    fn protocol_lines(&self, words: &dyn Wording) -> Vec<String> {
        let mut out = Vec::new();
        let hw: Vec<String> = self.hardware_differences().map(brief).collect();
        if !hw.is_empty() {
            out.push(hardware_warning(&hw.join("; ")).worded(words));
        }
        if !self.machine_recorded {
            out.push(format!(
                "note: {} results do not record the machine: make sure both sides ran on the same one",
                self.kind.as_str()
            ));
        }
        if self.protocol.is_empty() {
            out.push("protocol: identical".into());
        } else {
            out.push(format!(
                "protocol: {} difference{}",
                self.protocol.len(),
                if self.protocol.len() == 1 { "" } else { "s" }
            ));
        }
        out
    }

    /// The aligned text table: protocol differences first, then one table per figure, the
    /// cells seen on one side only, and the summary line.
    /// Settings named (the same-machine requirement) are worded in `words`.
    pub fn to_text(&self, words: &dyn Wording) -> String {
        let mut o = String::new();
        for l in self.protocol_lines(words) {
            let _ = writeln!(o, "{l}");
        }
        for d in &self.protocol {
            let _ = writeln!(o, "  {}", brief(d));
        }
        for figure in self.figure_names() {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.figure == figure).collect();
            if rows.is_empty() {
                continue;
            }
            let mut table = vec![vec![
                figure.clone(),
                "base".into(),
                "new".into(),
                "change".into(),
                String::new(),
                "p".into(),
                "n".into(),
                String::new(),
            ]];
            for r in rows {
                table.push(vec![
                    format!("{} {}", r.target, r.cell),
                    side(&figure, &r.base),
                    side(&figure, &r.new),
                    change(r),
                    mark(r.verdict).into(),
                    p_text(r),
                    n_text(r),
                    if r.verdict == Verdict::NoVerdict {
                        r.note.clone().unwrap_or_default()
                    } else {
                        String::new()
                    },
                ]);
            }
            o.push('\n');
            o.push_str(&aligned(
                &table,
                &[false, true, true, true, false, true, true, false],
            ));
        }
        for (side, cells) in [("base", &self.only_base), ("new", &self.only_new)] {
            if !cells.is_empty() {
                let _ = writeln!(o, "\nonly in {side}: {}", cells.join(", "));
            }
        }
        let _ = writeln!(
            o,
            "\n{} (α = {}; ~ = no significant difference, ? = too few repeats to tell)",
            self.tally.line(),
            self.alpha
        );
        o
    }

    /// Markdown for a pull request: the protocol differences as a list, one table per
    /// figure, and the summary line.
    /// Settings named are worded in `words`.
    pub fn to_markdown(&self, words: &dyn Wording) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace('<', "&lt;");
        let mut o = String::new();
        for l in self.protocol_lines(words) {
            let _ = writeln!(o, "{}\n", esc(&l));
        }
        for d in &self.protocol {
            let _ = writeln!(o, "- `{}`: {}", d.field, esc(&values(d)));
        }
        if !self.protocol.is_empty() {
            o.push('\n');
        }
        for figure in self.figure_names() {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.figure == figure).collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(o, "| {figure} | base | new | change | p | n |");
            let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|");
            for r in rows {
                let verdict = match r.verdict {
                    Verdict::NoVerdict => {
                        format!("? {}", r.note.as_deref().unwrap_or_default())
                    }
                    Verdict::Unchanged => "~".into(),
                    v => format!("**{}** {}", change(r), mark(v)),
                };
                let _ = writeln!(
                    o,
                    "| {} {} | {} | {} | {} | {} | {} |",
                    esc(&r.target),
                    esc(&r.cell),
                    side(&figure, &r.base),
                    side(&figure, &r.new),
                    esc(&verdict),
                    p_text(r),
                    n_text(r)
                );
            }
            o.push('\n');
        }
        for (side, cells) in [("base", &self.only_base), ("new", &self.only_new)] {
            if !cells.is_empty() {
                let _ = writeln!(o, "Only in {side}: {}\n", esc(&cells.join(", ")));
            }
        }
        let _ = writeln!(o, "**{}** (α = {})", self.tally.line(), self.alpha);
        o
    }
}
