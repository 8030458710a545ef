//! The regression gate of `--fail-on 'req/s<-10%,p99>+20%'`: limits on significant changes.

use std::str::FromStr;

use super::{Failure, Figure, Kind, Row, Verdict};

/// Which way a limit bounds the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `<`: fails when the change is below the limit.
    Below,
    /// `>`: fails when the change is above the limit.
    Above,
}

/// One limit, such as `req/s<-10%`.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// The figure it watches.
    pub figure: Figure,
    /// Below or above.
    pub bound: Bound,
    /// The limit, percent change (signed).
    pub percent: f64,
    /// The limit as given, for messages.
    pub text: String,
}

impl Limit {
    /// True when `change_percent` is beyond the limit.
    fn broken_by(&self, change_percent: f64) -> bool {
        match self.bound {
            Bound::Below => change_percent < self.percent,
            Bound::Above => change_percent > self.percent,
        }
    }
}

/// The limits of `--fail-on`; empty means no gate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FailOn {
    /// Each limit, in the order given.
    pub limits: Vec<Limit>,
}

/// What is wrong with a gate's limits: its message follows the setting's name, which the
/// caller puts in front (the CLI: `--fail-on`).
#[derive(Debug, Clone, PartialEq)]
pub struct GateError(String);

impl std::fmt::Display for GateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GateError {}

const FIGURES: &str = "req/s, p<N> (p99, p99.9), cpu/req or rss";

impl FromStr for Limit {
    type Err = GateError;

    fn from_str(text: &str) -> Result<Limit, GateError> {
        let text = text.trim();
        let err = |why: String| Err(GateError(format!("{text:?}: {why}")));
        let Some(at) = text.find(['<', '>']) else {
            return err(
                "give a figure, < or >, and a signed percentage, e.g. req/s<-10% or p99>+20%"
                    .into(),
            );
        };
        let (name, rest) = (text[..at].trim(), &text[at..]);
        let bound = if rest.starts_with('<') {
            Bound::Below
        } else {
            Bound::Above
        };
        let Some(figure) = Figure::parse(name) else {
            return err(format!("unknown figure {name:?}: use {FIGURES}"));
        };
        let limit = rest[1..].trim();
        let Some(number) = limit.strip_suffix('%') else {
            return err(format!(
                "the limit {limit:?} needs the unit %, e.g. {name}{}{limit}%",
                &rest[..1]
            ));
        };
        if !number.starts_with(['+', '-']) {
            return err(format!(
                "the limit {limit:?} needs a sign: {name}{}+{limit} or {name}{}-{limit}",
                &rest[..1],
                &rest[..1]
            ));
        }
        let percent: f64 = match number.parse() {
            Ok(p) if f64::is_finite(p) && p > -100.0 => p,
            _ => return err(format!("{limit:?} is not a percentage above -100%")),
        };
        Ok(Limit {
            figure,
            bound,
            percent,
            text: text.to_string(),
        })
    }
}

impl FromStr for FailOn {
    type Err = GateError;

    /// Reads comma-separated limits.
    fn from_str(text: &str) -> Result<FailOn, GateError> {
        let limits = text
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(Limit::from_str)
            .collect::<Result<Vec<_>, _>>()?;
        if limits.is_empty() {
            return Err(GateError(
                "is empty: give limits such as 'req/s<-10%,p99>+20%'".into(),
            ));
        }
        Ok(FailOn { limits })
    }
}

impl FailOn {
    /// Checks that every limit names a figure that `kind` compares.
    pub fn check(&self, kind: Kind) -> Result<(), GateError> {
        for l in &self.limits {
            if !kind.figures().contains(&l.figure) {
                let names: Vec<String> = kind.figures().iter().map(|f| f.name()).collect();
                return Err(GateError(format!(
                    "{:?}: {} is not compared in {} results; they have {}",
                    l.text,
                    l.figure.name(),
                    kind.as_str(),
                    names.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// True when a limit watches the figure named `figure`.
    pub fn covers(&self, figure: &str) -> bool {
        self.limits.iter().any(|l| l.figure.name() == figure)
    }

    /// The rows whose significant change breaks a limit, once per row and limit.
    pub(super) fn failures(&self, rows: &[Row]) -> Vec<Failure> {
        let mut out = Vec::new();
        for r in rows {
            if !matches!(r.verdict, Verdict::Improvement | Verdict::Regression) {
                continue;
            }
            let (Some(change), Some(p)) = (r.change_percent(), r.p) else {
                continue;
            };
            for l in &self.limits {
                if l.figure.name() == r.figure && l.broken_by(change) {
                    out.push(Failure {
                        target: r.target.clone(),
                        cell: r.cell.clone(),
                        figure: r.figure.clone(),
                        limit: l.text.clone(),
                        change_percent: change,
                        p,
                    });
                }
            }
        }
        out
    }
}
