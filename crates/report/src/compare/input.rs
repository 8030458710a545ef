//! What a comparison reads from result files: each cell's repeat samples per figure, the
//! side's merged latency histogram, and the recorded protocol as flat settings.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{CompareError, Figure, Kind, ProtocolDifference, Spread};
use crate::shootout::{median, ShootoutResults, SHOOTOUT_SCHEMA};
use crate::{LoadReport, LOAD_SCHEMA};

/// One results file of either kind.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum Run {
    /// A `foxbench shootout` results.json.
    Shootout(ShootoutResults),
    /// A `foxbench load --json` result: one repeat.
    Load(LoadReport),
}

impl Run {
    /// Reads either kind, by its `schema` field.
    pub fn from_json(text: &str) -> Result<Run, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let run = match v.get("schema").and_then(Value::as_str) {
            Some(SHOOTOUT_SCHEMA) => ShootoutResults::from_json(text).map(Run::Shootout),
            Some(LOAD_SCHEMA) => serde_json::from_value(v)
                .map(Run::Load)
                .map_err(|e| format!("does not match {LOAD_SCHEMA}: {e}")),
            other => Err(format!(
                "schema is {}, expected {SHOOTOUT_SCHEMA:?} (foxbench shootout) or {LOAD_SCHEMA:?} (foxbench load --json)",
                other.map_or("missing".to_string(), |s| format!("{s:?}"))
            )),
        }?;
        run.check_histograms()?;
        Ok(run)
    }

    /// Refuses a histogram that is present but does not decode: p99 is compared on the
    /// merged histograms, and a silently dropped one would change what is compared.
    fn check_histograms(&self) -> Result<(), String> {
        let check = |where_: &str, hdr: &str| {
            if hdr.is_empty() || stats::Latency::from_base64(hdr).is_ok() {
                Ok(())
            } else {
                Err(format!(
                    "{where_}: hdr_base64 is not an HdrHistogram: regenerate the file with foxbench"
                ))
            }
        };
        match self {
            Run::Shootout(r) => {
                for t in &r.targets {
                    for c in &t.cells {
                        if let Some(s) = &c.summary {
                            check(
                                &format!("{} {} {}", t.name, c.scenario, c.level),
                                &s.hdr_base64,
                            )?;
                        }
                    }
                }
                Ok(())
            }
            Run::Load(r) => check("latency", &r.latency.hdr_base64),
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Run::Shootout(_) => Kind::Shootout,
            Run::Load(_) => Kind::Load,
        }
    }
}

/// The one kind of every file on both sides.
pub(super) fn kind_of(base: &[Run], new: &[Run]) -> Result<Kind, CompareError> {
    let (Some(a), Some(b)) = (base.first(), new.first()) else {
        return Err(CompareError::Empty);
    };
    let kind = a.kind();
    if base.iter().chain(new).any(|r| r.kind() != kind) || b.kind() != kind {
        return Err(CompareError::MixedKinds);
    }
    Ok(kind)
}

/// A percentile of a side's merged histogram, with the range of values it stands for.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Pooled {
    /// The percentile, µs.
    pub value_us: f64,
    /// The width of its histogram bucket, µs: values this close are indistinguishable.
    pub resolution_us: f64,
}

impl Pooled {
    /// True when the two values are no further apart than the coarser one's bucket: each
    /// stands for any value in its bucket, so neighbours may be as close as 1 ns.
    pub fn within_precision(&self, other: &Pooled) -> bool {
        (self.value_us - other.value_us).abs() <= self.resolution_us.max(other.resolution_us)
    }
}

/// One figure's repeats on one side.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Series {
    /// Each repeat's value.
    pub values: Vec<f64>,
    /// For a latency percentile: the percentile of all repeats merged.
    pub pooled: Option<Pooled>,
}

impl Series {
    /// The samples' spread; the centre is the pooled value when there is one.
    pub fn spread(&self) -> Option<Spread> {
        let mut v = self.values.clone();
        let mid = median(&mut v)?;
        Some(Spread {
            n: v.len(),
            center: self.pooled.as_ref().map_or(mid, |p| p.value_us),
            min: v[0],
            max: v[v.len() - 1],
            samples: self.values.clone(),
        })
    }
}

/// One cell of one side: its samples per figure, in [`Kind::figures`] order.
#[derive(Debug, Clone)]
pub(super) struct CellData {
    /// What pairs it with the other side's cell.
    pub key: String,
    /// Target name, for display.
    pub target: String,
    /// Cell name, for display.
    pub cell: String,
    /// One series per figure.
    pub series: Vec<Series>,
}

/// A repeat's value of `figure`, or `None` when it was not measured.
trait Sample {
    fn value(&self, figure: Figure) -> Option<f64>;
}

impl Sample for crate::shootout::Repeat {
    fn value(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Rps => Some(self.rps),
            Figure::Latency(p) => self.latency.at(p),
            Figure::CpuPerRequest => self.server.cpu_us_per_request,
            Figure::RssPeak => Some(self.server.rss_peak_bytes as f64),
        }
    }
}

impl Sample for LoadReport {
    fn value(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Rps => Some(self.throughput.requests_per_sec),
            Figure::Latency(p) => self.latency.summary.at(p),
            Figure::CpuPerRequest | Figure::RssPeak => None,
        }
    }
}

/// A cell being gathered over a side's files.
struct Gathering {
    target: String,
    cell: String,
    series: Vec<Series>,
    /// The merged histogram; `None` once one file's could not be read.
    merged: Option<stats::Latency>,
}

impl Gathering {
    fn add(&mut self, figures: &[Figure], sample: &impl Sample, hdr_base64: Option<&str>) {
        for (s, &f) in self.series.iter_mut().zip(figures) {
            if let Some(v) = sample.value(f).filter(|v| v.is_finite()) {
                s.values.push(v);
            }
        }
        if let Some(hdr) = hdr_base64 {
            self.merge(hdr);
        }
    }

    fn merge(&mut self, hdr_base64: &str) {
        let ok = self.merged.as_mut().is_some_and(|m| {
            stats::Latency::from_base64(hdr_base64).is_ok_and(|h| m.merge(&h).is_ok())
        });
        if !ok {
            self.merged = None;
        }
    }

    fn finish(mut self, key: String, figures: &[Figure]) -> CellData {
        if let Some(m) = self.merged.filter(|m| !m.is_empty()) {
            for (s, &f) in self.series.iter_mut().zip(figures) {
                if let Figure::Latency(p) = f {
                    let ns = m.percentile_ns(p);
                    s.pooled = Some(Pooled {
                        value_us: ns as f64 / 1e3,
                        resolution_us: (m.highest_equivalent(ns) - m.lowest_equivalent(ns) + 1)
                            as f64
                            / 1e3,
                    });
                }
            }
        }
        CellData {
            key,
            target: self.target,
            cell: self.cell,
            series: self.series,
        }
    }
}

/// Every cell of a side with at least one measured repeat, its files' repeats pooled.
pub(super) fn cells(runs: &[Run], figures: &[Figure]) -> Vec<CellData> {
    let mut order: Vec<String> = Vec::new();
    let mut by_key: BTreeMap<String, Gathering> = BTreeMap::new();
    let mut start = |key: String, target: String, cell: String| {
        if !by_key.contains_key(&key) {
            order.push(key.clone());
        }
        by_key.entry(key).or_insert_with(|| Gathering {
            target,
            cell,
            series: vec![Series::default(); figures.len()],
            merged: Some(stats::Latency::new()),
        });
    };
    // Keys first (in file order), then samples, to keep the borrow of `by_key` short.
    for run in runs {
        match run {
            Run::Shootout(r) => {
                for t in &r.targets {
                    for c in t.cells.iter().filter(|c| !c.repeats.is_empty()) {
                        let name = r.column_name(&c.scenario, &c.level);
                        start(shootout_key(&t.name, c), t.name.clone(), name);
                    }
                }
            }
            Run::Load(r) => {
                let (target, cell) = load_names(r);
                start("load".into(), target, cell);
            }
        }
    }
    for run in runs {
        match run {
            Run::Shootout(r) => {
                for t in &r.targets {
                    for c in t.cells.iter().filter(|c| !c.repeats.is_empty()) {
                        let g = by_key.get_mut(&shootout_key(&t.name, c)).expect("started");
                        for rep in &c.repeats {
                            g.add(figures, rep, None);
                        }
                        match &c.summary {
                            Some(s) => g.merge(&s.hdr_base64),
                            None => g.merged = None,
                        }
                    }
                }
            }
            Run::Load(r) => {
                let g = by_key.get_mut("load").expect("started");
                g.add(figures, r, Some(&r.latency.hdr_base64));
            }
        }
    }
    order
        .into_iter()
        .map(|k| {
            let g = by_key.remove(&k).expect("gathered");
            g.finish(k, figures)
        })
        .collect()
}

fn shootout_key(target: &str, c: &crate::shootout::Cell) -> String {
    format!("{target}\u{1f}{}\u{1f}{}", c.scenario, c.level)
}

/// A load run's names: the method and path, and the shape of the load.
fn load_names(r: &LoadReport) -> (String, String) {
    let url = &r.target.url;
    let path = url.split_once("://").map_or(url.as_str(), |(_, rest)| {
        rest.find('/').map_or("/", |i| &rest[i..])
    });
    let c = &r.config;
    let mut cell = format!("c{}", c.connections);
    if let Some(rate) = c.rate_per_sec {
        cell.push_str(&format!(" R{rate}"));
    }
    if c.pipeline > 1 {
        cell.push_str(&format!(" pipeline {}", c.pipeline));
    }
    if !c.keepalive {
        cell.push_str(" no-keepalive");
    }
    (format!("{} {path}", r.target.method), cell)
}

/// Settings that count as hardware: a change of machine.
const HARDWARE: [&str; 2] = ["cpu_model", "nproc"];

/// A run's recorded protocol as flat `name → value` settings.
fn settings(run: &Run) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    match run {
        Run::Shootout(r) => {
            let mut p = serde_json::to_value(&r.protocol).expect("protocol serializes");
            if let Some(o) = p.as_object_mut() {
                // Not conditions of the measurement: when it ran, where it wrote, and the
                // plan, which follows from the suite's text and `quick`.
                for k in ["started_unix_s", "command", "plan"] {
                    o.remove(k);
                }
            }
            flatten("", &p, &mut out);
            out.insert("suite.text".into(), r.suite.text.clone());
            out.insert("suite.quick".into(), r.suite.quick.to_string());
        }
        Run::Load(r) => {
            out.insert("foxbench_version".into(), r.tool.version.clone());
            out.insert("target.url".into(), r.target.url.clone());
            out.insert("target.method".into(), r.target.method.clone());
            let config = serde_json::to_value(&r.config).expect("config serializes");
            flatten("config.", &config, &mut out);
            let table: Vec<String> = r
                .request_table
                .iter()
                .map(|s| format!("{} {}", s.method, s.path))
                .collect();
            out.insert("request_table".into(), table.join(", "));
        }
    }
    out
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                flatten(&format!("{prefix}{k}."), v, out);
            }
        }
        Value::String(s) => {
            out.insert(prefix.trim_end_matches('.').into(), s.clone());
        }
        other => {
            out.insert(prefix.trim_end_matches('.').into(), other.to_string());
        }
    }
}

/// Every setting whose values are not all the same over both sides' files.
pub(super) fn protocol_differences(base: &[Run], new: &[Run]) -> Vec<ProtocolDifference> {
    let a: Vec<_> = base.iter().map(settings).collect();
    let b: Vec<_> = new.iter().map(settings).collect();
    let names: BTreeSet<&String> = a.iter().chain(&b).flat_map(|s| s.keys()).collect();
    let values = |side: &[BTreeMap<String, String>], name: &str| {
        let mut v: Vec<String> = Vec::new();
        for s in side {
            let x = s.get(name).cloned().unwrap_or_else(|| "(none)".into());
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v
    };
    let mut out: Vec<ProtocolDifference> = names
        .into_iter()
        .filter_map(|name| {
            let (va, vb) = (values(&a, name), values(&b, name));
            (va.len() > 1 || vb.len() > 1 || va != vb).then(|| ProtocolDifference {
                field: name.clone(),
                hardware: HARDWARE.contains(&name.as_str()),
                base: va,
                new: vb,
            })
        })
        .collect();
    out.sort_by_key(|d| !d.hardware);
    out
}
