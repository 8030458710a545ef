//! `foxbench compare`: whether one set of runs differs from another, figure by figure, and
//! whether the two were measured alike.
//!
//! Each side is one or more result files of one kind: shootout `results.json` files, whose
//! cells' repeats are pooled, or `foxbench load --json` files, each one repeat of the same
//! test. For every cell and figure the repeats of the two sides are put to the
//! Mann-Whitney U test ([`stats::significance`], which says why that test): a change is
//! reported only when p ≤ α, with the ratio of the sides' medians and its spread; otherwise
//! `~`. Latency percentiles are read from each side's merged histogram, and two that lie
//! within the histogram's precision of each other are equal whatever the test says.
//! Before any of that, every difference between the sides' recorded protocols is listed.
//! The output is data ([`Comparison`], schema `schemas/compare.schema.json`), rendered as
//! text or Markdown by [`Comparison::to_text`] and [`Comparison::to_markdown`].

mod gate;
mod input;
mod render;
#[cfg(test)]
mod tests;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use stats::setting::{Setting, Text, Wording};
use stats::significance::{mann_whitney, smallest_p};

pub use gate::{Bound, FailOn, GateError, Limit};
pub use input::Run;
pub use render::hardware_warning;

/// The schema identifier written into `foxbench compare --json` output.
pub const COMPARE_SCHEMA: &str = "foxbench.compare/1";

/// The significance level when none is given.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// Fewer repeats than this on either side, and a figure gets no verdict.
pub const MIN_REPEATS: usize = 3;

/// How many repeats a side (the same on both) can show a change at level `alpha`: at
/// least [`MIN_REPEATS`], and enough that the test's smallest p reaches `alpha` (4 for
/// 0.05, 3 for 0.1).
pub fn repeats_needed(alpha: f64) -> usize {
    // smallest_p(n, n) falls below 1e-15 by n = 30; any α a user gives is reached first.
    (MIN_REPEATS..64)
        .find(|&n| smallest_p(n, n) <= alpha)
        .unwrap_or(64)
}

/// What kind of results are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `foxbench shootout` results.json files.
    Shootout,
    /// `foxbench load --json` files.
    Load,
}

impl Kind {
    /// The figures compared for this kind, in table order.
    pub fn figures(self) -> &'static [Figure] {
        match self {
            Kind::Shootout => &[
                Figure::Rps,
                Figure::Latency(99.0),
                Figure::CpuPerRequest,
                Figure::RssPeak,
            ],
            Kind::Load => &[
                Figure::Rps,
                Figure::Latency(50.0),
                Figure::Latency(90.0),
                Figure::Latency(99.0),
                Figure::Latency(99.9),
            ],
        }
    }

    /// How results of this kind are named in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Shootout => "shootout",
            Kind::Load => "load",
        }
    }
}

/// One compared figure of a cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// Completed responses per second (higher is better).
    Rps,
    /// A latency percentile, µs (lower is better).
    Latency(f64),
    /// Server CPU µs per request (lower is better).
    CpuPerRequest,
    /// Peak RSS of the server tree, bytes (lower is better).
    RssPeak,
}

impl Figure {
    /// The name used in tables and in `--fail-on`: `req/s`, `p99`, `p99.9`, `cpu/req`, `rss`.
    pub fn name(self) -> String {
        match self {
            Figure::Rps => "req/s".into(),
            Figure::Latency(p) => format!("p{p}"),
            Figure::CpuPerRequest => "cpu/req".into(),
            Figure::RssPeak => "rss".into(),
        }
    }

    /// Reads a name written by [`Figure::name`] (`rps` is taken for `req/s`).
    pub fn parse(name: &str) -> Option<Figure> {
        match name {
            "req/s" | "rps" => Some(Figure::Rps),
            "cpu/req" => Some(Figure::CpuPerRequest),
            "rss" => Some(Figure::RssPeak),
            _ => {
                let p: f64 = name.strip_prefix('p')?.parse().ok()?;
                (p > 0.0 && p <= 100.0).then_some(Figure::Latency(p))
            }
        }
    }

    /// True for req/s, the one figure where more is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Figure::Rps)
    }
}

/// A figure's samples on one side: how many, their middle and their extremes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Spread {
    /// Repeats with a value.
    pub n: usize,
    /// The median of the repeats; for a latency percentile, that percentile of the side's
    /// merged histogram.
    pub center: f64,
    /// The lowest repeat.
    pub min: f64,
    /// The highest repeat.
    pub max: f64,
    /// Each repeat's value, as measured.
    pub samples: Vec<f64>,
}

/// What the comparison of one figure concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// No significant difference (`~`).
    Unchanged,
    /// A significant change for the better.
    Improvement,
    /// A significant change for the worse.
    Regression,
    /// Too few repeats to tell; `note` says why.
    NoVerdict,
}

/// One cell's figure, compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Row {
    /// The target (shootout) or the method and path (load).
    pub target: String,
    /// The cell: scenario and level (shootout) or connections and model (load).
    pub cell: String,
    /// The figure's name, as [`Figure::name`].
    pub figure: String,
    /// The base side's samples; `None` when no repeat had a value.
    pub base: Option<Spread>,
    /// The new side's samples.
    pub new: Option<Spread>,
    /// `new.center / base.center`.
    pub ratio: Option<f64>,
    /// The ratio's spread: lowest new repeat / highest base repeat, and highest / lowest.
    pub ratio_range: Option<(f64, f64)>,
    /// Two-sided Mann-Whitney p-value of the repeats.
    pub p: Option<f64>,
    /// The conclusion.
    pub verdict: Verdict,
    /// Why there is no verdict, or why two values count as equal.
    pub note: Option<String>,
}

impl Row {
    /// The change in percent, `(ratio − 1)·100`.
    pub fn change_percent(&self) -> Option<f64> {
        self.ratio.map(|r| (r - 1.0) * 100.0)
    }
}

/// A setting that differs between the runs (or between files of one side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProtocolDifference {
    /// The setting, e.g. `kernel`, `sysctl.net.core.somaxconn`, `toolchains.go`.
    pub field: String,
    /// Its distinct values in the base files (`(none)` when a file lacks it).
    pub base: Vec<String>,
    /// Its distinct values in the new files.
    pub new: Vec<String>,
    /// True for the hardware: CPU model and CPU count.
    pub hardware: bool,
}

/// Counts of the verdicts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tally {
    /// Significant changes for the worse.
    pub regressions: usize,
    /// Significant changes for the better.
    pub improvements: usize,
    /// No significant change.
    pub unchanged: usize,
    /// Too few repeats to tell.
    pub no_verdict: usize,
}

impl Tally {
    /// The line a CI log can grep: `3 regressions, 1 improvement, 20 unchanged`, and how
    /// many had no verdict when some had none.
    pub fn line(&self) -> String {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut s = format!(
            "{}, {}, {} unchanged",
            plural(self.regressions, "regression", "regressions"),
            plural(self.improvements, "improvement", "improvements"),
            self.unchanged
        );
        if self.no_verdict > 0 {
            s.push_str(&format!(", {} without a verdict", self.no_verdict));
        }
        s
    }
}

/// A row that broke a `--fail-on` limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    /// The target.
    pub target: String,
    /// The cell.
    pub cell: String,
    /// The figure.
    pub figure: String,
    /// The limit it broke, as given.
    pub limit: String,
    /// The change, percent.
    pub change_percent: f64,
    /// Its p-value.
    pub p: f64,
}

impl Failure {
    /// One line naming the cell, its change and the limit.
    pub fn line(&self) -> String {
        format!(
            "{} {} {}: {:+.1}% (p={:.3}) breaks {}",
            self.target, self.cell, self.figure, self.change_percent, self.p, self.limit
        )
    }
}

/// The whole comparison, as `--json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    /// Always [`COMPARE_SCHEMA`].
    pub schema: String,
    /// What was compared.
    pub kind: Kind,
    /// The significance level.
    pub alpha: f64,
    /// Files on the base side.
    pub base_files: usize,
    /// Files on the new side.
    pub new_files: usize,
    /// False for load results, which do not record the machine.
    pub machine_recorded: bool,
    /// Every setting that differs.
    pub protocol: Vec<ProtocolDifference>,
    /// One row per cell and figure measured on both sides.
    pub rows: Vec<Row>,
    /// Cells measured only on the base side (`target cell`).
    pub only_base: Vec<String>,
    /// Cells measured only on the new side.
    pub only_new: Vec<String>,
    /// The verdicts counted.
    pub tally: Tally,
    /// The `--fail-on` limits, as given.
    pub fail_on: Vec<String>,
    /// Rows that broke a limit.
    pub failures: Vec<Failure>,
}

/// Why two sets of runs cannot be compared.
#[derive(Debug, Clone, PartialEq)]
pub enum CompareError {
    /// A side has no file.
    Empty,
    /// Shootout and load results were mixed.
    MixedKinds,
    /// No cell was measured on both sides.
    NothingInCommon,
    /// A `--fail-on` limit names a figure this kind does not have.
    Gate(GateError),
}

impl std::fmt::Display for CompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CompareError::Empty => write!(f, "each side needs at least one results file"),
            CompareError::MixedKinds => write!(
                f,
                "shootout results.json and load --json files are mixed: compare files of one kind"
            ),
            CompareError::NothingInCommon => write!(
                f,
                "no cell was measured on both sides: compare runs of the same suite (or load runs of the same test)"
            ),
            CompareError::Gate(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CompareError {}

/// How to compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The significance level, 0 < α < 1.
    pub alpha: f64,
    /// The regression gate.
    pub fail_on: FailOn,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            alpha: DEFAULT_ALPHA,
            fail_on: FailOn::default(),
        }
    }
}

/// Compares the `new` runs with the `base` runs. A row's note that names a setting (raise
/// the significance level) names it in `words`, the words of the edge that shows it.
pub fn compare(
    base: &[Run],
    new: &[Run],
    opts: &Options,
    words: &dyn Wording,
) -> Result<Comparison, CompareError> {
    let kind = input::kind_of(base, new)?;
    opts.fail_on.check(kind).map_err(CompareError::Gate)?;
    let figures = kind.figures();
    let a = input::cells(base, figures);
    let b = input::cells(new, figures);
    let mut rows = Vec::new();
    let label = |c: &input::CellData| format!("{} {}", c.target, c.cell);
    for cb in &b {
        let Some(ca) = a.iter().find(|ca| ca.key == cb.key) else {
            continue;
        };
        for (i, &figure) in figures.iter().enumerate() {
            rows.push(judge(
                &ca.target,
                &ca.cell,
                figure,
                &ca.series[i],
                &cb.series[i],
                opts.alpha,
                words,
            ));
        }
    }
    if rows.is_empty() {
        return Err(CompareError::NothingInCommon);
    }
    let only = |x: &[input::CellData], y: &[input::CellData]| {
        x.iter()
            .filter(|c| !y.iter().any(|d| d.key == c.key))
            .map(label)
            .collect::<Vec<_>>()
    };
    let mut tally = Tally::default();
    for r in &rows {
        *match r.verdict {
            Verdict::Unchanged => &mut tally.unchanged,
            Verdict::Improvement => &mut tally.improvements,
            Verdict::Regression => &mut tally.regressions,
            Verdict::NoVerdict => &mut tally.no_verdict,
        } += 1;
    }
    let failures = opts.fail_on.failures(&rows);
    Ok(Comparison {
        schema: COMPARE_SCHEMA.into(),
        kind,
        alpha: opts.alpha,
        base_files: base.len(),
        new_files: new.len(),
        machine_recorded: kind == Kind::Shootout,
        protocol: input::protocol_differences(base, new),
        only_base: only(&a, &b),
        only_new: only(&b, &a),
        rows,
        tally,
        fail_on: opts.fail_on.limits.iter().map(|l| l.text.clone()).collect(),
        failures,
    })
}

impl Comparison {
    /// The differences that concern the hardware.
    pub fn hardware_differences(&self) -> impl Iterator<Item = &ProtocolDifference> {
        self.protocol.iter().filter(|d| d.hardware)
    }

    /// Why a comparison that requires the same machine ([`Setting::SameMachine`]) refuses
    /// this one, in one line (the caller puts the setting's name in front: the CLI's
    /// `--same-machine`); `None` when it passes.
    pub fn same_machine_error(&self) -> Option<String> {
        if !self.machine_recorded {
            return Some(format!(
                "{} results do not record the machine; compare shootout results.json files, or do not require the same machine",
                self.kind.as_str()
            ));
        }
        let hw: Vec<String> = self.hardware_differences().map(render::brief).collect();
        (!hw.is_empty()).then(|| {
            format!(
                "the runs were measured on different hardware: {}",
                hw.join("; ")
            )
        })
    }

    /// Rows covered by a `--fail-on` limit that got no verdict.
    pub fn ungated(&self, fail_on: &FailOn) -> usize {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::NoVerdict && fail_on.covers(&r.figure))
            .count()
    }

    /// The JSON of `--json`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a comparison serializes") + "\n"
    }

    /// The JSON schema of `--json`, as committed at `schemas/compare.schema.json`.
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(Comparison);
        serde_json::to_string_pretty(&schema).expect("schema serializes") + "\n"
    }
}

/// A row's note when `na` and `nb` repeats cannot reach `alpha` however they fall: the
/// test's smallest p is `floor`.
pub fn floor_note(na: usize, nb: usize, floor: f64, alpha: f64) -> Text {
    Text::plain(format!(
        "n={na}+{nb}: the smallest possible p is {floor:.3} > α {alpha}: add repeats or raise "
    ))
    .name(Setting::Alpha)
}

/// Compares one figure of one cell.
fn judge(
    target: &str,
    cell: &str,
    figure: Figure,
    a: &input::Series,
    b: &input::Series,
    alpha: f64,
    words: &dyn Wording,
) -> Row {
    let (sa, sb) = (a.spread(), b.spread());
    let mut row = Row {
        target: target.into(),
        cell: cell.into(),
        figure: figure.name(),
        base: sa.clone(),
        new: sb.clone(),
        ratio: None,
        ratio_range: None,
        p: None,
        verdict: Verdict::NoVerdict,
        note: None,
    };
    let (Some(sa), Some(sb)) = (sa, sb) else {
        row.note = Some("not measured on both sides".into());
        return row;
    };
    if sa.center > 0.0 && sa.min > 0.0 {
        row.ratio = Some(sb.center / sa.center);
        row.ratio_range = Some((sb.min / sa.max, sb.max / sa.min));
    }
    row.p = mann_whitney(&a.values, &b.values).map(|t| t.p);
    let (na, nb) = (sa.n, sb.n);
    if na < MIN_REPEATS || nb < MIN_REPEATS {
        row.note = Some(format!(
            "n={na}+{nb}: too few repeats for a verdict (need {MIN_REPEATS} a side)"
        ));
        return row;
    }
    if let (Some(pa), Some(pb)) = (&a.pooled, &b.pooled) {
        if pa.within_precision(pb) {
            row.verdict = Verdict::Unchanged;
            row.note = Some("equal within the histograms' precision".into());
            return row;
        }
    }
    let floor = smallest_p(na, nb);
    if floor > alpha {
        row.note = Some(floor_note(na, nb, floor, alpha).worded(words));
        return row;
    }
    let significant = row.p.is_some_and(|p| p <= alpha);
    row.verdict = if !significant || sb.center == sa.center {
        Verdict::Unchanged
    } else if (sb.center > sa.center) == figure.higher_is_better() {
        Verdict::Improvement
    } else {
        Verdict::Regression
    };
    row
}
