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
                    column: super::markdown::column_name(r, s, l),
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
mod tests {
    use super::super::markdown::{ranking, rate};
    use super::super::{to_html, to_markdown, Param};
    use super::*;

    fn read(path: &str) -> ShootoutResults {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        ShootoutResults::from_json(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn fixture() -> ShootoutResults {
        read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/results.json"
        ))
    }

    /// Results written before scenarios could be restricted and targets parameterized
    /// (the fixture, and every committed run) load with the new fields empty and render
    /// as before: no comparison tables, rows in rank order.
    #[test]
    fn old_results_files_still_load_and_render() {
        let paths = crate::shootout::committed_results();
        for p in &paths {
            let r = read(p);
            let md = to_markdown(&r);
            assert!(md.contains("### Requests per second"), "{p}");
            assert!(to_html(&r).contains("<h3>p99 latency</h3>"), "{p}");
            // Runs from 2026-11-24 on have the new rows and scenarios; the older ones must
            // load with the new fields empty and render as before.
            let run = std::path::Path::new(p)
                .parent()
                .and_then(|d| d.file_name())
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            if run.as_str() >= "2026-11-24" && run.starts_with("20") {
                continue;
            }
            assert!(r.targets.iter().all(|t| t.base.is_none()
                && t.params.is_empty()
                && t.skipped_scenarios.is_empty()));
            let md = to_markdown(&r);
            assert!(md.contains("### Requests per second"), "{p}");
            assert!(
                !md.contains(" against ") && !md.contains("rows by parameter"),
                "{p}"
            );
            let html = to_html(&r);
            assert!(html.contains("<h3>p99 latency</h3>"), "{p}");
            assert!(cost_tables(&r, &ranking(&r)).is_empty() && param_groups(&r).is_empty());
        }
    }

    /// The fixture with an `svg` scenario on avatar and node-http (each at 1.5× and 2× its
    /// redirect's cost), and two parameter rows of node-http.
    fn with_svg_and_params() -> ShootoutResults {
        let mut r = fixture();
        for (name, factor) in [("avatar", 1.5), ("node-http", 2.0)] {
            let t = r.targets.iter_mut().find(|t| t.name == name).unwrap();
            let mut c = t.cell("redirect", "c10").unwrap().clone();
            c.scenario = "svg".into();
            let s = c.summary.as_mut().unwrap();
            s.server_cpu_us_per_request = s.server_cpu_us_per_request.map(|us| us * factor);
            t.cells.push(c);
        }
        let node = r
            .targets
            .iter()
            .position(|t| t.name == "node-http")
            .unwrap();
        for (i, heap) in ["8m", "16m"].iter().enumerate() {
            let mut row = r.targets[node].clone();
            row.name = format!("node-http[heap={heap}]");
            row.base = Some("node-http".into());
            row.params = vec![Param {
                name: "heap".into(),
                value: heap.to_string(),
            }];
            row.cells
                .retain(|c| c.level == "c10" && c.scenario == "redirect");
            let s = row.cells[0].summary.as_mut().unwrap();
            // Faster than every plain row, so that ranking alone would move them apart.
            s.rps_median = 1e7 + i as f64;
            s.pss_peak_bytes = 30 << 20;
            r.targets.push(row);
        }
        r
    }

    #[test]
    fn the_svg_cost_is_shown_beside_the_redirects() {
        let mut r = with_svg_and_params();
        let tables = cost_tables(&r, &ranking(&r));
        assert_eq!(tables.len(), 1);
        let t = &tables[0];
        assert_eq!(
            (t.reference.as_str(), t.scenario.as_str()),
            ("redirect", "svg")
        );
        let ratios: Vec<(&str, &str, String)> = t
            .rows
            .iter()
            .map(|x| {
                (
                    x.target.name.as_str(),
                    x.level.as_str(),
                    format!("{:.2}", x.ratio),
                )
            })
            .collect();
        // In ranking order: node-http's group is first, by its fastest (parameter) row.
        assert_eq!(
            ratios,
            [
                ("node-http", "c10", "2.00".into()),
                ("avatar", "c10", "1.50".into())
            ]
        );
        let c_epoll = r.targets.iter_mut().find(|t| t.name == "c-epoll").unwrap();
        c_epoll.skipped_scenarios = vec!["svg".into()];
        assert_eq!(r.not_implemented(), [("svg".to_string(), vec!["c-epoll"])]);
        let md = to_markdown(&r);
        assert!(
            md.contains("\n- svg: not implemented by c-epoll (skipped)\n"),
            "{md}"
        );
        assert!(
            md.contains("### svg against redirect: server CPU per request"),
            "{md}"
        );
        assert!(
            md.contains("| svg / redirect |")
                && md.contains("| 1.50× |")
                && md.contains("| 2.00× |"),
            "{md}"
        );
        let html = to_html(&r);
        assert!(html.contains("<h3>svg against redirect: server CPU per request</h3>"));
        assert!(html.contains("svg: not implemented by c-epoll (skipped)."));
        assert!(html.contains("<b>1.50×</b>") && html.contains("<b>2.00×</b>"));
        let avatar = r.targets.iter().find(|t| t.name == "avatar").unwrap();
        // The targets table's CPU per request stays the redirect's.
        let before = fixture();
        let plain = before.targets.iter().find(|t| t.name == "avatar").unwrap();
        assert_eq!(
            avatar.cpu_us_per_request_median(),
            plain.cpu_us_per_request_median()
        );
        let line = avatar.cost_ratios("redirect")[0].line();
        assert!(
            line.starts_with("svg/redirect at c10: 1.50× server CPU per request ("),
            "{line}"
        );
    }

    #[test]
    fn parameter_rows_are_grouped_with_their_memory() {
        let r = with_svg_and_params();
        let order: Vec<&str> = ranking(&r).iter().map(|t| t.name.as_str()).collect();
        let at = order.iter().position(|n| *n == "node-http").unwrap();
        assert_eq!(
            order[at..at + 3],
            ["node-http", "node-http[heap=8m]", "node-http[heap=16m]"],
            "{order:?}"
        );
        let groups = param_groups(&r);
        assert_eq!(groups.len(), 1);
        let g = &groups[0];
        assert_eq!(g.name, "node-http");
        assert_eq!(g.keys, ["heap"]);
        assert_eq!(g.column, Some(("redirect".into(), "c10".into())));
        assert_eq!(g.values(g.rows[1]), ["8m"]);
        assert_eq!(g.values(g.rows[0]), ["(its start command)"]);
        let md = to_markdown(&r);
        assert!(
            md.contains("### node-http: rows by parameter at redirect c10"),
            "{md}"
        );
        assert!(md.contains("| row | heap | req/s | server CPU/req | idle RSS | idle PSS | peak RSS | peak PSS |"), "{md}");
        let row = md
            .lines()
            .find(|l| l.starts_with("| node-http[heap=8m] | 8m |"))
            .unwrap();
        assert!(row.ends_with("| 30.0 MiB |"), "{row}");
        let html = to_html(&r);
        assert!(html.contains("<h3>node-http: rows by parameter at redirect c10</h3>"));
        // Each row's req/s against the first's, level by level (pool 150 against pool 2):
        // the plain row measured c10 of both scenarios; the parameter rows only redirect.
        let plain = g.rows[0].cell("redirect", "c10").unwrap();
        let base = plain.summary.as_ref().unwrap().rps_median;
        let ratios = g.ratios(&r);
        let svg = ratios.iter().find(|x| x.column == "svg c10").unwrap();
        assert_eq!(svg.others, [None, None]);
        let c10 = ratios.iter().find(|x| x.column == "redirect c10").unwrap();
        assert_eq!(c10.reference, base);
        let want: Vec<Option<(f64, f64)>> = [1e7, 1e7 + 1.0]
            .iter()
            .map(|v| Some((*v, v / base)))
            .collect();
        assert_eq!(c10.others, want);
        assert!(
            md.contains("### node-http: req/s against node-http\n"),
            "{md}"
        );
        assert!(
            md.contains("| level | node-http | heap=8m | heap=8m / node-http | heap=16m | heap=16m / node-http |"),
            "{md}"
        );
        let line = format!(
            "| redirect c10 | {} | {} | {:.2}× |",
            rate(base),
            rate(1e7),
            1e7 / base
        );
        assert!(md.contains(&line), "{line} in {md}");
        assert!(
            md.contains("| svg c10 |") && md.contains("| – | – | – | – |"),
            "{md}"
        );
        assert!(html.contains("<h3>node-http: req/s against node-http</h3>"));
        assert!(html.contains(&format!("<b>{:.2}×</b>", 1e7 / base)));
        // The JSON keeps the rows' parameters; files without them load too (tested above).
        let back = ShootoutResults::from_json(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
