//! Service-level objectives of `foxbench load --slo 'p99<5ms,errors<0.1%,rps>=9500'`.
//!
//! An objective is a list of clauses, each a metric, an operator and a threshold with its
//! unit. It is parsed here ([`Slo`]), judged against a finished run's result data
//! ([`Slo::judge`], giving the `slo` section of the JSON), and watched interval by interval
//! for `--slo-abort` ([`Watch`]). Percentiles are read from the full histogram of the series
//! a clause names: the corrected latency unless `[service]` is given.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{human_us, LoadReport};

/// The histogram a percentile clause reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Series {
    /// Latency from when each request was due (the report's `latency`).
    Corrected,
    /// Open model: latency from when each request was actually written.
    Service,
}

impl Series {
    const ALL: [(Series, &'static str); 2] = [
        (Series::Corrected, "corrected"),
        (Series::Service, "service"),
    ];

    /// Its name, as written between brackets.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(s, _)| *s == self)
            .expect("listed")
            .1
    }

    /// Its full histogram in `report`, if the run recorded it.
    fn histogram(self, report: &LoadReport) -> Option<&str> {
        match self {
            Series::Corrected => Some(&report.latency.hdr_base64),
            Series::Service => Some(&report.open.as_ref()?.service.as_ref()?.hdr_base64),
        }
    }
}

/// What a clause measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// A latency percentile (0 < p ≤ 100) of a series, compared in µs.
    Percentile {
        /// The percentile.
        p: f64,
        /// Which histogram.
        series: Series,
    },
    /// Failed requests (errors and failure statuses) as a percentage of requests sent.
    Errors,
    /// Complete responses per second over the run.
    Rps,
}

/// A comparison; the clause holds when `observed OP threshold` is true.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Op {
    /// `<`
    #[serde(rename = "<")]
    Lt,
    /// `<=`
    #[serde(rename = "<=")]
    Le,
    /// `>`
    #[serde(rename = ">")]
    Gt,
    /// `>=`
    #[serde(rename = ">=")]
    Ge,
}

impl Op {
    // Longest first, so that `<=` is not read as `<`.
    const ALL: [(Op, &'static str); 4] =
        [(Op::Le, "<="), (Op::Ge, ">="), (Op::Lt, "<"), (Op::Gt, ">")];

    /// Its symbol.
    pub fn symbol(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(o, _)| *o == self)
            .expect("listed")
            .1
    }

    /// True when `observed OP threshold`.
    pub fn holds(self, observed: f64, threshold: f64) -> bool {
        match self {
            Op::Lt => observed < threshold,
            Op::Le => observed <= threshold,
            Op::Gt => observed > threshold,
            Op::Ge => observed >= threshold,
        }
    }
}

/// One clause, such as `p99.9<=20ms`.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    /// What it measures.
    pub metric: Metric,
    /// How it compares.
    pub op: Op,
    /// The threshold in the metric's unit: µs, percent, or requests per second.
    pub threshold: f64,
    /// The clause as given, trimmed.
    pub text: String,
}

/// An objective: every clause must hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    /// The clauses, in the order given.
    pub clauses: Vec<Clause>,
}

/// What is wrong with an objective: one line, naming the clause and the fix. It does not
/// name the setting that gave the objective: the caller puts that in front (the CLI's
/// `--slo` or `--find-max`, a suite's level).
#[derive(Debug, Clone, PartialEq)]
pub struct SloError(String);

impl fmt::Display for SloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SloError {}

const METRICS: &str =
    "p<N> (p50, p99, p99.9; p99[service] names the service-time histogram), errors, rps";

/// Time units and their size in µs.
const TIME_UNITS: [(&str, f64); 5] = [
    ("us", 1.0),
    ("µs", 1.0),
    ("ms", 1e3),
    ("s", 1e6),
    ("ns", 1e-3),
];

fn parse_metric(name: &str) -> Result<Metric, String> {
    match name {
        "errors" => return Ok(Metric::Errors),
        "rps" | "req/s" => return Ok(Metric::Rps),
        _ => {}
    }
    let Some(rest) = name.strip_prefix('p') else {
        return Err(format!("unknown metric {name:?}: use {METRICS}"));
    };
    let (number, series) = match rest.split_once('[') {
        None => (rest, Series::Corrected),
        Some((number, qualifier)) => {
            let Some(qualifier) = qualifier.strip_suffix(']') else {
                return Err(format!("{name:?} lacks its closing ']'"));
            };
            let Some(&(series, _)) = Series::ALL.iter().find(|(_, n)| *n == qualifier) else {
                return Err(format!(
                    "unknown histogram {:?}: use [corrected] or [service]",
                    format!("[{qualifier}]")
                ));
            };
            (number, series)
        }
    };
    match number.parse::<f64>() {
        Ok(p)
            if p > 0.0 && p <= 100.0 && number.bytes().all(|b| b.is_ascii_digit() || b == b'.') =>
        {
            Ok(Metric::Percentile { p, series })
        }
        _ => Err(format!("unknown metric {name:?}: use {METRICS}")),
    }
}

/// A finite, non-negative number.
fn number(text: &str) -> Option<f64> {
    let v: f64 = text.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0 && !text.trim().starts_with(['+', '-'])).then_some(v)
}

impl FromStr for Clause {
    type Err = SloError;

    fn from_str(text: &str) -> Result<Clause, SloError> {
        let text = text.trim();
        let err = |why: String| Err(SloError(format!("{text:?}: {why}")));
        let Some(at) = text.find(['<', '>']) else {
            return err(
                "give a metric, an operator (<, <=, >, >=) and a threshold with its unit, e.g. p99<5ms"
                    .into(),
            );
        };
        let name = text[..at].trim();
        let rest = &text[at..];
        let &(op, symbol) = Op::ALL
            .iter()
            .find(|(_, s)| rest.starts_with(s))
            .expect("starts with < or >");
        let value = rest[symbol.len()..].trim();
        let metric = match parse_metric(name) {
            Ok(m) => m,
            Err(why) => return err(why),
        };
        let threshold = match metric {
            Metric::Percentile { .. } => {
                let unit = TIME_UNITS.iter().find(|(u, _)| {
                    value
                        .strip_suffix(u)
                        .is_some_and(|n| n.ends_with(|c: char| c.is_ascii_digit() || c == '.'))
                });
                let Some(&(unit, scale)) = unit else {
                    return err(format!(
                        "the threshold {value:?} needs a time unit (us, ms or s), e.g. {name}{symbol}5ms"
                    ));
                };
                match number(&value[..value.len() - unit.len()]) {
                    Some(v) => v * scale,
                    None => return err(format!("{value:?} is not a duration")),
                }
            }
            Metric::Errors => {
                let Some(n) = value.strip_suffix('%') else {
                    return err(format!(
                        "the threshold {value:?} needs the unit %, e.g. errors{symbol}0.1%"
                    ));
                };
                match number(n) {
                    Some(v) if v <= 100.0 => v,
                    _ => return err(format!("{value:?} is not a percentage from 0 to 100")),
                }
            }
            Metric::Rps => match number(value) {
                Some(v) => v,
                None => {
                    return err(format!(
                        "the threshold {value:?} must be a plain number of responses per second, e.g. rps{symbol}9500"
                    ))
                }
            },
        };
        Ok(Clause {
            metric,
            op,
            threshold,
            text: text.to_string(),
        })
    }
}

impl FromStr for Slo {
    type Err = SloError;

    /// Reads comma-separated clauses.
    fn from_str(text: &str) -> Result<Slo, SloError> {
        let clauses = text
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(Clause::from_str)
            .collect::<Result<Vec<_>, _>>()?;
        if clauses.is_empty() {
            return Err(SloError(
                "is empty: give clauses such as 'p99<5ms,errors<0.1%,rps>=9500'".into(),
            ));
        }
        Ok(Slo { clauses })
    }
}

impl Clause {
    /// Its metric's name as written: `p99`, `p99.9[service]`, `errors`, `rps`.
    pub fn metric_name(&self) -> String {
        match self.metric {
            Metric::Percentile { p, series } => match series {
                Series::Corrected => format!("p{p}"),
                Series::Service => format!("p{p}[service]"),
            },
            Metric::Errors => "errors".into(),
            Metric::Rps => "rps".into(),
        }
    }

    /// The unit of its threshold and observed value in the JSON.
    fn unit(&self) -> Unit {
        match self.metric {
            Metric::Percentile { .. } => Unit::Us,
            Metric::Errors => Unit::Percent,
            Metric::Rps => Unit::PerSec,
        }
    }
}

impl Slo {
    /// Checks before a run that every clause can be measured: `[service]` only when the run
    /// will record a service-time histogram (`service_recorded`), refused in one line if not.
    pub fn check_measurable(&self, service_recorded: bool) -> Result<(), SloError> {
        for c in &self.clauses {
            if let Metric::Percentile {
                series: Series::Service,
                ..
            } = c.metric
            {
                if service_recorded {
                    continue;
                }
                return Err(SloError(format!(
                    "{:?}: [service] needs the open model's service-time histogram, which this run does not record; use the corrected latency ({:?})",
                    c.text,
                    c.text.replace("[service]", "")
                )));
            }
        }
        Ok(())
    }

    /// Judges every clause against a finished run; `breach` is what stopped it early under
    /// `--slo-abort`, and fails its clause whatever the whole run's value.
    pub fn judge(&self, report: &LoadReport, breach: Option<&Breach>) -> SloReport {
        self.judge_figures(&Figures::of(report), breach)
    }

    /// The verdict on a run given by its figures alone (a shootout window, which keeps no
    /// `LoadReport`).
    pub fn judge_figures(&self, figures: &Figures, breach: Option<&Breach>) -> SloReport {
        let clauses: Vec<ClauseVerdict> = self
            .clauses
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let observed = observe(c, figures);
                ClauseVerdict {
                    clause: c.text.clone(),
                    metric: c.metric_name(),
                    op: c.op,
                    threshold: c.threshold,
                    unit: c.unit(),
                    observed,
                    passed: observed.is_some_and(|v| c.op.holds(v, c.threshold))
                        && breach.is_none_or(|b| b.clause != i),
                }
            })
            .collect();
        SloReport {
            passed: clauses.iter().all(|c| c.passed),
            aborted: breach.map(|b| b.reason.clone()),
            clauses,
        }
    }
}

/// What a clause can be judged on: a run's histograms and counts.
#[derive(Debug, Clone, Copy)]
pub struct Figures<'a> {
    /// The corrected latency histogram (`hdr_base64`).
    pub corrected: &'a str,
    /// The service-time histogram, when the run recorded it.
    pub service: Option<&'a str>,
    /// Requests sent.
    pub sent: u64,
    /// Requests that failed: errors and failure statuses.
    pub failed: u64,
    /// Complete responses per second.
    pub requests_per_sec: f64,
}

impl<'a> Figures<'a> {
    /// The figures of a `foxbench load` report.
    pub fn of(r: &'a LoadReport) -> Figures<'a> {
        Figures {
            corrected: &r.latency.hdr_base64,
            service: Series::Service.histogram(r),
            sent: r.requests.sent,
            failed: r.requests.errors + r.requests.failed_status,
            requests_per_sec: r.throughput.requests_per_sec,
        }
    }
}

/// The value of a clause's metric over the whole run; None when it cannot be measured
/// (a percentile of a run with no response, a series the run did not record).
fn observe(c: &Clause, r: &Figures) -> Option<f64> {
    match c.metric {
        Metric::Percentile { p, series } => {
            let hdr = match series {
                Series::Corrected => Some(r.corrected),
                Series::Service => r.service,
            };
            let h = stats::Latency::from_base64(hdr?).ok()?;
            (!h.is_empty()).then(|| h.percentile_ns(p) as f64 / 1e3)
        }
        Metric::Errors => Some(if r.sent == 0 {
            0.0
        } else {
            100.0 * r.failed as f64 / r.sent as f64
        }),
        Metric::Rps => Some(r.requests_per_sec),
    }
}

/// The unit of a clause's threshold and observed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Unit {
    /// Microseconds (latency percentiles).
    #[serde(rename = "us")]
    Us,
    /// Percent of requests sent (errors).
    #[serde(rename = "%")]
    Percent,
    /// Complete responses per second (rps).
    #[serde(rename = "req/s")]
    PerSec,
}

impl Unit {
    /// A value in this unit, for people.
    pub fn show(self, v: f64) -> String {
        match self {
            Unit::Us => human_us(v),
            Unit::Percent => format!("{v:.3}%"),
            Unit::PerSec => format!("{v:.1} req/s"),
        }
    }
}

/// The verdict of `--slo`, as written in the JSON's `slo` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SloReport {
    /// True when every clause held.
    pub passed: bool,
    /// With `--slo-abort`: why the run was stopped early; absent when it ran to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    /// Each clause's verdict, in the order given.
    pub clauses: Vec<ClauseVerdict>,
}

/// One clause's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClauseVerdict {
    /// The clause as given.
    pub clause: String,
    /// Its metric: `p99`, `p99.9`, `errors`, `rps`.
    pub metric: String,
    /// Its operator.
    pub op: Op,
    /// Its threshold, in `unit`.
    pub threshold: f64,
    /// The unit of `threshold` and `observed`.
    pub unit: Unit,
    /// The value over the whole run; null when it could not be measured (no response).
    pub observed: Option<f64>,
    /// True when it held (a clause that could not be measured did not hold).
    pub passed: bool,
}

impl SloReport {
    /// The text report's lines, one per clause.
    pub fn write_text(&self, o: &mut String) {
        use fmt::Write as _;
        let _ = writeln!(
            o,
            "SLO:           {}",
            if self.passed { "passed" } else { "FAILED" }
        );
        for v in &self.clauses {
            let _ = writeln!(
                o,
                "  {:<6} {:<20} observed {}",
                if v.passed { "pass" } else { "FAIL" },
                v.clause,
                v.observed
                    .map_or("nothing (no response)".into(), |x| v.unit.show(x))
            );
        }
        if let Some(a) = &self.aborted {
            let _ = writeln!(o, "  stopped early (--slo-abort): {a}");
        }
    }
}

mod watch;
pub use watch::{Breach, Watch};

#[cfg(test)]
mod tests;
