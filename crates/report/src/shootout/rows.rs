//! What the comparisons within targets show, for both renderings: each scenario's server
//! CPU per request beside the reference scenario's (the SVG route against the redirect),
//! and a target's parameter rows side by side (the JVM settings, with RSS and PSS).

use std::collections::BTreeSet;

use super::{Cell, CellSummary, ShootoutResults, TargetResult};

/// A target's cost of one scenario beside the reference's at one level.
pub(crate) struct CostRow<'a> {
    /// The target (or row).
    pub target: &'a TargetResult,
    /// The level both were measured at.
    pub level: String,
    /// The reference's server CPU µs per request.
    pub reference_us: f64,
    /// The scenario's.
    pub us: f64,
    /// `us` over `reference_us`.
    pub ratio: f64,
    /// The reference's cell at that level.
    pub reference_cell: Option<&'a Cell>,
    /// The scenario's cell.
    pub cell: Option<&'a Cell>,
}

/// The cost rows of one scenario against the reference.
pub(crate) struct CostTable<'a> {
    /// The reference scenario (the first one run).
    pub reference: String,
    /// The scenario compared with it.
    pub scenario: String,
    /// One row per target and level measured in both, in `rows` order.
    pub rows: Vec<CostRow<'a>>,
}

/// One table per scenario other than the reference, for the targets that ran both.
pub(crate) fn cost_tables<'a>(
    r: &ShootoutResults,
    rows: &[&'a TargetResult],
) -> Vec<CostTable<'a>> {
    let Some(reference) = r.reference_scenario() else {
        return Vec::new();
    };
    let mut scenarios: Vec<String> = Vec::new();
    for (s, _, _) in r.columns() {
        if s != reference && !scenarios.contains(&s) {
            scenarios.push(s);
        }
    }
    scenarios
        .into_iter()
        .map(|scenario| {
            let mut table = CostTable {
                reference: reference.clone(),
                scenario: scenario.clone(),
                rows: Vec::new(),
            };
            for t in rows {
                for ratio in t.cost_ratios(&reference) {
                    if ratio.scenario == scenario {
                        table.rows.push(CostRow {
                            target: t,
                            level: ratio.level.to_string(),
                            reference_us: ratio.reference_us,
                            us: ratio.us,
                            ratio: ratio.ratio(),
                            reference_cell: t.cell(&reference, ratio.level),
                            cell: t.cell(&scenario, ratio.level),
                        });
                    }
                }
            }
            table
        })
        .filter(|t| !t.rows.is_empty())
        .collect()
}

/// A target's rows that differ by parameters, with the cell they are compared at.
pub(crate) struct ParamGroup<'a> {
    /// The target's name (the rows' base).
    pub name: &'a str,
    /// The column compared: (scenario, level).
    pub column: Option<(String, String)>,
    /// The plain row of that name first, if any, then the parameter rows in suite order.
    pub rows: Vec<&'a TargetResult>,
    /// The parameters' names, in the order written.
    pub keys: Vec<&'a str>,
}

impl<'a> ParamGroup<'a> {
    /// A row's summary in the compared column.
    pub fn summary(&self, t: &'a TargetResult) -> Option<&'a CellSummary> {
        let (s, l) = self.column.as_ref()?;
        t.cell(s, l)?.summary.as_ref()
    }

    /// A row's value of each parameter; the plain row has none.
    pub fn values(&self, t: &'a TargetResult) -> Vec<&'a str> {
        self.keys
            .iter()
            .map(|k| {
                t.params
                    .iter()
                    .find(|p| p.name == *k)
                    .map(|p| p.value.as_str())
                    .unwrap_or(if t.base.is_none() {
                        "(its start command)"
                    } else {
                        "–"
                    })
            })
            .collect()
    }
}

/// One column's req/s across a group's rows: the first row's, and each other row's with
/// its ratio to the first (`None` where a row has no figure).
pub(crate) struct RatioRow {
    /// The column's name as the report prints it.
    pub column: String,
    /// The first row's req/s.
    pub reference: f64,
    /// Each other row's req/s and its ratio to the first's, in row order.
    pub others: Vec<Option<(f64, f64)>>,
}

impl<'a> ParamGroup<'a> {
    /// A row's parameters as `pool=150`, or its name for the plain row.
    pub fn label(&self, t: &'a TargetResult) -> String {
        if t.params.is_empty() {
            return t.name.clone();
        }
        t.params
            .iter()
            .map(|p| format!("{}={}", p.name, p.value))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every column the first row measured, with each other row's req/s against it: "what
    /// pool 150 gains over pool 2", level by level. Empty for a group of one row.
    pub fn ratios(&self, r: &ShootoutResults) -> Vec<RatioRow> {
        let Some((first, rest)) = self.rows.split_first() else {
            return Vec::new();
        };
        if rest.is_empty() {
            return Vec::new();
        }
        let rps = |t: &TargetResult, s: &str, l: &str| {
            t.cell(s, l)
                .and_then(|c| c.summary.as_ref())
                .map(|s| s.rps_median)
        };
        r.columns()
            .iter()
            .filter_map(|(s, l, _)| {
                let reference = rps(first, s, l).filter(|v| *v > 0.0)?;
                Some(RatioRow {
                    column: r.column_name(s, l),
                    reference,
                    others: rest
                        .iter()
                        .map(|t| rps(t, s, l).map(|v| (v, v / reference)))
                        .collect(),
                })
            })
            .collect()
    }
}

/// Every target that has parameter rows, with its rows: compared in the first column
/// (in run order) that all of them measured, else the first that any of them did.
pub(crate) fn param_groups(r: &ShootoutResults) -> Vec<ParamGroup<'_>> {
    let bases: BTreeSet<&str> = r.targets.iter().filter_map(|t| t.base.as_deref()).collect();
    let mut groups: Vec<ParamGroup> = Vec::new();
    for t in &r.targets {
        let name = t.group();
        if !bases.contains(name) || groups.iter().any(|g| g.name == name) {
            continue;
        }
        let mut rows: Vec<&TargetResult> = r.targets.iter().filter(|x| x.group() == name).collect();
        // The plain row is the reference: first.
        rows.sort_by_key(|x| x.base.is_some());
        let measured =
            |x: &TargetResult, s: &str, l: &str| x.cell(s, l).is_some_and(|c| c.summary.is_some());
        let cols = r.columns();
        let column = cols
            .iter()
            .find(|(s, l, _)| rows.iter().all(|x| measured(x, s, l)))
            .or_else(|| {
                cols.iter()
                    .find(|(s, l, _)| rows.iter().any(|x| measured(x, s, l)))
            })
            .map(|(s, l, _)| (s.clone(), l.clone()));
        let mut keys: Vec<&str> = Vec::new();
        for p in rows.iter().flat_map(|x| &x.params) {
            if !keys.contains(&p.name.as_str()) {
                keys.push(&p.name);
            }
        }
        groups.push(ParamGroup {
            name,
            column,
            rows,
            keys,
        });
    }
    groups
}

#[cfg(test)]
mod tests;
