//! The results of `foxbench shootout`: their shape (`results.json`, schema
//! `schemas/shootout.schema.json`) and their renderings (Markdown, HTML with SVG charts).
//! `foxbench compare` is in [`crate::compare`].
//!
//! Everything here is plain data written by the shootout runner; the renderings read
//! nothing else, so `foxbench report results.json` reproduces them exactly.

pub mod capacity;
mod cell;
pub(crate) mod html;
pub(crate) mod markdown;
mod notes;
pub mod pool;
mod production;
mod rows;
mod signature;
pub(crate) mod svg;
mod system;
pub mod tiers;
mod versions;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use cell::{
    Bottleneck, Cell, CellStatus, CellSummary, Diagnosis, Handshakes, ProbePoint, ProcessCost,
    ProcessCpu, Repeat, ServerWindow,
};
pub use html::to_html;
pub use markdown::{headline_markdown, to_markdown};
pub use notes::{LimitNote, Settle};
pub use signature::{flat_and_rising, signatures, Signature, FLAT_RATIO, LESSON, RISE_RATIO};
pub use system::{
    busiest, CpuUse, DumpSlice, SystemSummary, SystemWindow, ThreadDump, ThreadWaits, WchanCount,
    WAIT_NAMES,
};
pub use tiers::{CounterCheck, ServiceResult, Tier, TierRole, TierWindow, POST_GOAL_RPS};

/// The schema identifier written into every `results.json`.
pub const SHOOTOUT_SCHEMA: &str = "foxbench.shootout/1";

/// A whole shootout run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShootoutResults {
    /// Always [`SHOOTOUT_SCHEMA`].
    pub schema: String,
    /// Which suite ran.
    pub suite: SuiteInfo,
    /// How it was measured: the machine, its settings, the tools and the exact commands.
    pub protocol: Protocol,
    /// One entry per target of the suite, in suite order, including skipped ones.
    pub targets: Vec<TargetResult>,
    /// One entry per `[[service]]` of the suite; empty for a suite without services.
    #[serde(default)]
    pub services: Vec<ServiceResult>,
    /// True when the run was stopped early (Ctrl-C); what was measured is kept.
    pub interrupted: bool,
    /// Wall time of the whole run, seconds.
    pub elapsed_s: f64,
}

/// The suite that ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteInfo {
    /// The suite's name.
    pub name: String,
    /// The file it came from, or `built-in`.
    pub source: String,
    /// True with `--quick`.
    pub quick: bool,
    /// The suite file's full text, so the run can be repeated.
    pub text: String,
}

/// The conditions of the measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Protocol {
    /// When the run started, seconds since the Unix epoch.
    pub started_unix_s: u64,
    /// foxbench's version.
    pub foxbench_version: String,
    /// `/proc/cpuinfo` model name.
    pub cpu_model: String,
    /// `uname -r`.
    pub kernel: String,
    /// CPUs online.
    pub nproc: u64,
    /// MemTotal, bytes.
    pub mem_total_bytes: u64,
    /// Kernel settings that change results (`net.core.somaxconn`, ...), as read.
    pub sysctl: BTreeMap<String, String>,
    /// RLIMIT_NOFILE (soft, hard) that foxbench and its targets ran with.
    pub ulimit_nofile: (u64, u64),
    /// CPUs the load generator was pinned to.
    pub client_cpus: Vec<usize>,
    /// CPUs the targets were pinned to.
    pub server_cpus: Vec<usize>,
    /// CPUs the services were pinned to; empty without services.
    #[serde(default)]
    pub service_cpus: Vec<usize>,
    /// What shares a CPU with what, in plain sentences (on 2 CPUs the services run beside
    /// the target, or beside foxbench); empty when nothing does.
    #[serde(default)]
    pub cpu_sharing: Vec<String>,
    /// Load generator threads.
    pub client_threads: u64,
    /// Each toolchain's version line, by command.
    pub toolchains: BTreeMap<String, String>,
    /// The command line that ran the shootout.
    pub command: String,
    /// The plan as resolved (after `--quick`).
    pub plan: PlanInfo,
}

/// The measurement plan as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanInfo {
    /// The levels, in order.
    pub levels: Vec<LevelInfo>,
    /// Repeats of each level.
    pub repeats: u32,
    /// Longest warm-up of a level, seconds (it ends early once throughput is steady).
    pub warmup_max_s: f64,
    /// Warm-up slice, seconds: throughput is compared slice to slice.
    pub warmup_slice_s: f64,
    /// Probe sampling interval, seconds.
    pub sample_interval_s: f64,
    /// Request timeout, seconds.
    pub timeout_s: f64,
    /// Grace between SIGTERM and SIGKILL when stopping a target, seconds.
    pub stop_grace_s: f64,
}

/// One level of the plan: how many connections, and for how long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LevelInfo {
    /// Name, such as `c100` or `ab`.
    pub name: String,
    /// Concurrent connections.
    pub connections: u64,
    /// Measured seconds per repeat, for a timed level.
    pub duration_s: Option<f64>,
    /// Requests per repeat, for a counted level (ab's `-n`).
    pub requests: Option<u64>,
    /// Longest a counted level may run, seconds; it is marked capped if it hits this.
    pub max_duration_s: Option<f64>,
    /// Keep-alive override (`false` for the ab-style level); `None` uses the scenario's.
    pub keepalive: Option<bool>,
    /// Repeats of this level.
    pub repeats: u32,
    /// TLS session resumption on reconnect for https scenarios (`false`: a full handshake
    /// per connection); `None` = on.
    #[serde(default)]
    pub tls_resume: Option<bool>,
    /// A capacity level's objective, window and budget; absent for other levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<capacity::LevelCapacity>,
    /// The open model's request rate (the suite's `rate`, as `foxbench load -R`): requests
    /// sent when due, latency timed from then (coordinated-omission corrected). `None`: the
    /// closed model, and in results written before open-model levels.
    #[serde(default)]
    pub rate: Option<String>,
    /// HTTP/2 streams per connection for an HTTP/2 level (`http2 = true`, `streams`);
    /// absent for a level of the scenario's protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2_streams: Option<u64>,
    /// HTTP/3 streams per connection for an HTTP/3 level (`http3 = true`, `streams`);
    /// absent for a level of the scenario's protocol, and in results written before
    /// 2026-11-29.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http3_streams: Option<u64>,
}

/// What happened to one target (or one row of a target's parameters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetResult {
    /// The target's name; a parameter row's is `base[key=value,...]`.
    pub name: String,
    /// For a parameter row, the `[[target]]` it was expanded from; rows of one base are
    /// reported together, with a plain target of the same name.
    #[serde(default)]
    pub base: Option<String>,
    /// For a parameter row, its parameters in the order the suite wrote them.
    #[serde(default)]
    pub params: Vec<Param>,
    /// Scenarios the target does not implement (the scenario's `targets` leaves it out).
    #[serde(default)]
    pub skipped_scenarios: Vec<String>,
    /// The services it uses (its `use`).
    #[serde(default)]
    pub services: Vec<String>,
    /// Its language.
    pub language: String,
    /// Where it ended: see [`Outcome`].
    pub outcome: Outcome,
    /// Why it was skipped or failed, in one line.
    pub message: Option<String>,
    /// The build.
    pub build: Option<BuildInfo>,
    /// The start command as run (placeholders filled in).
    pub start_command: Option<String>,
    /// From spawn to the first good response, milliseconds.
    pub startup_ms: Option<f64>,
    /// The tree's memory and threads once ready, before any load.
    pub idle: Option<ProbePoint>,
    /// One verification per scenario.
    pub verify: Vec<Verification>,
    /// One cell per scenario and level.
    pub cells: Vec<Cell>,
    /// The last lines the target printed (stdout and stderr), when it failed.
    pub log_tail: Option<String>,
}

/// One parameter of a row, such as `jvm` = `-Xmx8m`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Param {
    /// The parameter's name.
    pub name: String,
    /// Its value in this row.
    pub value: String,
}

/// Where a target's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// A required tool is missing.
    Skipped,
    /// The build command failed.
    BuildFailed,
    /// It did not start, or did not become ready in time.
    StartFailed,
    /// It answered wrongly; it took no load and is not ranked.
    VerifyFailed,
    /// It was measured (some cells may still have failed).
    Measured,
    /// It exited while being measured.
    Crashed,
    /// The run was interrupted before or while it ran.
    Interrupted,
}

impl Outcome {
    /// True when the target failed to build, start or verify, or crashed: a run with one
    /// exits 1. Skipped and interrupted targets are not failures.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Outcome::BuildFailed | Outcome::StartFailed | Outcome::VerifyFailed | Outcome::Crashed
        )
    }
}

impl CellStatus {
    /// The kebab-case name used in JSON and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CellStatus::Measured => "measured",
            CellStatus::Excluded => "excluded",
            CellStatus::Failed => "failed",
            CellStatus::Interrupted => "interrupted",
        }
    }
}

impl Outcome {
    /// The kebab-case name used in JSON and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Skipped => "skipped",
            Outcome::BuildFailed => "build-failed",
            Outcome::StartFailed => "start-failed",
            Outcome::VerifyFailed => "verify-failed",
            Outcome::Measured => "measured",
            Outcome::Crashed => "crashed",
            Outcome::Interrupted => "interrupted",
        }
    }
}

/// The build step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BuildInfo {
    /// The command as run.
    pub command: String,
    /// Content hash of the target's inputs and build command: the cache key.
    pub key: String,
    /// True when a cached build with this key was reused.
    pub cached: bool,
    /// Build time, seconds (0 when cached).
    pub seconds: f64,
    /// Size of the artifact (binary, class directory or source), bytes.
    pub artifact_bytes: Option<u64>,
    /// What the artifact is.
    pub artifact: Option<String>,
}

/// The outcome of verifying a target for one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verification {
    /// The scenario.
    pub scenario: String,
    /// True when every required check passed.
    pub passed: bool,
    /// Each check in order.
    pub checks: Vec<Check>,
    /// Distinct images seen, when the scenario expects all N.
    pub images_seen: Option<u64>,
    /// N, when the scenario expects all N.
    pub images_expected: Option<u64>,
    /// Whether the target kept a connection open across requests; `None` if not checked.
    pub keepalive: Option<bool>,
    /// Whether the target answered right over HTTP/2 (h2 or h2c, as its levels speak it);
    /// `None` when the scenario runs no HTTP/2 level here. Its HTTP/2 cells are measured
    /// only when true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<bool>,
    /// Whether the target answered right over HTTP/3 (h3); `None` when the scenario runs
    /// no HTTP/3 level here, and in results written before 2026-11-29. Its HTTP/3 cells are
    /// measured only when true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http3: Option<bool>,
}

/// One verification check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// What was seen, when it failed (or a note).
    pub detail: Option<String>,
}

impl ShootoutResults {
    /// Reads a `results.json`, checking the schema identifier.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        match v.get("schema").and_then(|s| s.as_str()) {
            Some(SHOOTOUT_SCHEMA) => {}
            Some(other) => {
                return Err(format!(
                    "schema is {other:?}, expected {SHOOTOUT_SCHEMA:?}: is this a foxbench shootout results.json?"
                ))
            }
            None => {
                return Err(format!(
                    "no \"schema\" field: expected a foxbench shootout results.json ({SHOOTOUT_SCHEMA})"
                ))
            }
        }
        serde_json::from_value(v).map_err(|e| format!("does not match {SHOOTOUT_SCHEMA}: {e}"))
    }

    /// The JSON schema of `results.json`, as committed at `schemas/shootout.schema.json`.
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(ShootoutResults);
        serde_json::to_string_pretty(&schema).expect("schema serializes") + "\n"
    }

    /// Targets that passed verification and were measured, for rankings.
    pub fn ranked(&self) -> impl Iterator<Item = &TargetResult> {
        self.targets
            .iter()
            .filter(|t| {
                matches!(
                    t.outcome,
                    Outcome::Measured | Outcome::Crashed | Outcome::Interrupted
                )
            })
            .filter(|t| t.cells.iter().any(|c| c.summary.is_some()))
    }

    /// Each scenario some targets do not implement, with those targets, in run order.
    pub fn not_implemented(&self) -> Vec<(String, Vec<&str>)> {
        let mut out: Vec<(String, Vec<&str>)> = Vec::new();
        for t in &self.targets {
            for s in &t.skipped_scenarios {
                match out.iter_mut().find(|(name, _)| name == s) {
                    Some((_, names)) => names.push(&t.name),
                    None => out.push((s.clone(), vec![&t.name])),
                }
            }
        }
        out
    }

    /// The distinct (scenario, level) columns, in run order.
    pub fn columns(&self) -> Vec<(String, String, u64)> {
        let mut cols: Vec<(String, String, u64)> = Vec::new();
        for t in &self.targets {
            for c in &t.cells {
                if !cols
                    .iter()
                    .any(|(s, l, _)| *s == c.scenario && *l == c.level)
                {
                    cols.push((c.scenario.clone(), c.level.clone(), c.connections));
                }
            }
        }
        cols
    }

    /// A column heading: the level, and the scenario when the suite has several.
    pub(crate) fn column_name(&self, scenario: &str, level: &str) -> String {
        let cols = self.columns();
        let scenarios: std::collections::BTreeSet<&str> =
            cols.iter().map(|(s, _, _)| s.as_str()).collect();
        if scenarios.len() > 1 {
            format!("{scenario} {level}")
        } else {
            level.to_string()
        }
    }
}

impl TargetResult {
    /// The name its rows are grouped under: the base of a parameter row, else its name.
    pub fn group(&self) -> &str {
        self.base.as_deref().unwrap_or(&self.name)
    }

    /// The parameters as `key=value, key=value`, or `None` for a row without any.
    pub fn params_text(&self) -> Option<String> {
        (!self.params.is_empty()).then(|| {
            self.params
                .iter()
                .map(|p| format!("{}={}", p.name, p.value))
                .collect::<Vec<_>>()
                .join(", ")
        })
    }

    /// Server CPU per request of each other scenario beside `reference`'s, at each level
    /// where both were measured, in cell order.
    pub fn cost_ratios<'a>(&'a self, reference: &'a str) -> Vec<CostRatio<'a>> {
        self.cells
            .iter()
            .filter(|c| c.scenario != reference)
            .filter_map(|c| {
                let us = c.summary.as_ref()?.server_cpu_us_per_request?;
                let reference_us = self
                    .cell(reference, &c.level)?
                    .summary
                    .as_ref()?
                    .server_cpu_us_per_request?;
                Some(CostRatio {
                    reference,
                    scenario: &c.scenario,
                    level: &c.level,
                    reference_us,
                    us,
                })
            })
            .collect()
    }

    /// The cell for a scenario and level.
    pub fn cell(&self, scenario: &str, level: &str) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.scenario == scenario && c.level == level)
    }

    /// Peak RSS over every measured cell.
    pub fn rss_peak_bytes(&self) -> Option<u64> {
        self.cells
            .iter()
            .filter_map(|c| c.summary.as_ref())
            .map(|s| s.rss_peak_bytes)
            .max()
    }

    /// Server CPU µs per request: the median over the target's measured keep-alive cells
    /// of its first scenario (the redirect). Cells without keep-alive (a connection per
    /// request, about 5× the cost) and other scenarios (which not every target runs) are
    /// left out, so that every target's figure is for the same kind of request; a target
    /// measured only without keep-alive has none (its figure is in the per-level table).
    pub fn cpu_us_per_request_median(&self) -> Option<f64> {
        let first = self.cells.first().map(|c| c.scenario.as_str());
        let mut v: Vec<f64> = self
            .cells
            .iter()
            .filter(|c| c.keepalive && Some(c.scenario.as_str()) == first)
            .filter_map(|c| c.summary.as_ref()?.server_cpu_us_per_request)
            .collect();
        median(&mut v)
    }
}

/// A scenario's server CPU per request beside the reference scenario's, for one target at
/// one level: what the SVG route costs against the redirect.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostRatio<'a> {
    /// The reference scenario (the suite's first, `redirect`).
    pub reference: &'a str,
    /// The scenario compared with it.
    pub scenario: &'a str,
    /// The level both were measured at.
    pub level: &'a str,
    /// The reference's server CPU µs per request.
    pub reference_us: f64,
    /// The scenario's server CPU µs per request.
    pub us: f64,
}

impl CostRatio<'_> {
    /// The scenario's cost over the reference's.
    pub fn ratio(&self) -> f64 {
        self.us / self.reference_us.max(1e-9)
    }

    /// `svg/redirect at c10: 1.31× server CPU per request (9.1 / 6.9 µs)`.
    pub fn line(&self) -> String {
        format!(
            "{}/{} at {}: {:.2}× server CPU per request ({:.1} / {:.1} µs)",
            self.scenario,
            self.reference,
            self.level,
            self.ratio(),
            self.us,
            self.reference_us
        )
    }
}

impl ShootoutResults {
    /// The scenario other scenarios are compared with: the first one run.
    pub fn reference_scenario(&self) -> Option<String> {
        self.columns().into_iter().next().map(|(s, _, _)| s)
    }
}

/// The median of `v` (sorted in place); `None` when empty.
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The results files the rendering tests read: the fixture, and every committed run's.
#[cfg(test)]
pub(crate) fn committed_results() -> Vec<String> {
    let runs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/runs");
    let mut paths =
        vec![concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/results.json").to_string()];
    for e in std::fs::read_dir(runs).unwrap().flatten() {
        let p = e.path().join("results.json");
        if p.exists() {
            paths.push(p.to_string_lossy().into_owned());
        }
    }
    assert!(paths.len() >= 2, "{paths:?}");
    paths
}

#[cfg(test)]
mod tests;
