//! The results of `foxbench shootout`: their shape (`results.json`, schema
//! `schemas/shootout.schema.json`) and their renderings (Markdown, HTML with SVG charts).
//! `foxbench compare` is in [`crate::compare`].
//!
//! Everything here is plain data written by the shootout runner; the renderings read
//! nothing else, so `foxbench report results.json` reproduces them exactly.

pub mod capacity;
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

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use html::to_html;
pub use markdown::to_markdown;
pub use notes::{LimitNote, Settle};
pub use signature::{flat_and_rising, signatures, Signature, FLAT_RATIO, LESSON, RISE_RATIO};
pub use system::{
    busiest, CpuUse, SystemSummary, SystemWindow, ThreadDump, ThreadWaits, WchanCount, WAIT_NAMES,
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

/// One scenario at one level for one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cell {
    /// The scenario.
    pub scenario: String,
    /// The level's name.
    pub level: String,
    /// Concurrent connections.
    pub connections: u64,
    /// Keep-alive as run.
    pub keepalive: bool,
    /// Requests pipelined per connection.
    pub pipeline: u64,
    /// For a TLS scenario, whether sessions were resumed on reconnect; `None` = plain HTTP.
    #[serde(default)]
    pub tls_resume: Option<bool>,
    /// Where the cell ended.
    pub status: CellStatus,
    /// Why it was excluded or failed, in one line.
    pub message: Option<String>,
    /// Warm-up time spent before measuring, seconds.
    pub warmup_s: f64,
    /// Throughput of each warm-up slice, req/s.
    pub warmup_rps: Vec<f64>,
    /// Each measured repeat.
    pub repeats: Vec<Repeat>,
    /// The repeats combined (medians, spread, merged latency).
    pub summary: Option<CellSummary>,
    /// What limited the result.
    pub diagnosis: Option<Diagnosis>,
    /// Each tier's figures (the target, then each service it uses); empty without services.
    #[serde(default)]
    pub tiers: Vec<Tier>,
    /// Each counting service's requests over the level against foxbench's.
    #[serde(default)]
    pub counters: Vec<CounterCheck>,
    /// The tier that limited the cell, for a target with services: `client`, the
    /// target's name, `service NAME`, `neither` or `errors`.
    #[serde(default)]
    pub limiting_tier: Option<String>,
    /// JVM thread dumps taken in the middle of the level (`--thread-dump`, or when the
    /// cell was diagnosed as waiting). Empty in results from before they were taken.
    #[serde(default)]
    pub thread_dumps: Vec<ThreadDump>,
    /// The machine's limits that were short for this level when it started (the checks of
    /// `foxbench doctor`); empty when none was, and in results written before them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<LimitNote>,
    /// A capacity level's search: the rate found under the objective and every window;
    /// absent for other levels and in results written before capacity levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<capacity::CellCapacity>,
    /// The waits for the server to finish what an earlier load left it, before the
    /// level's loads began; absent when none had to wait, and in results written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
    /// The kernel's TCP counters over the repeats (system-wide, for the network namespace
    /// the shootout ran in), per response, and what the rules found; absent in results
    /// written before they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<crate::tcp::TcpReport>,
}

/// Where a cell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CellStatus {
    /// Measured.
    Measured,
    /// Not run: verification showed it does not apply (e.g. no keep-alive).
    Excluded,
    /// The target crashed or the load could not run.
    Failed,
    /// Ctrl-C arrived during it; repeats measured so far are kept.
    Interrupted,
}

/// One measured repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Repeat {
    /// Wall time of the load, seconds.
    pub elapsed_s: f64,
    /// True when a counted level hit its time cap.
    pub capped: bool,
    /// Request accounting.
    pub requests: crate::Requests,
    /// Errors by kind.
    pub errors: crate::Errors,
    /// The same errors by reason, most frequent first (empty before issue 23).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors_by_reason: Vec<crate::reasons::ReasonRow>,
    /// Responses by status code.
    pub status: BTreeMap<String, u64>,
    /// Connections opened, reopened and closed by the server.
    pub connections: crate::Connections,
    /// Completed responses per second.
    pub rps: f64,
    /// Latency percentiles of this repeat, µs.
    pub latency: stats::Summary,
    /// This repeat's latency histogram (HdrHistogram compressed V2, base64, ns).
    pub hdr_base64: String,
    /// The server tree over the repeat.
    pub server: ServerWindow,
    /// The load generator's own CPU over the repeat.
    pub client: ClientWindow,
    /// Probe samples taken during the repeat.
    pub series: Vec<ProbePoint>,
    /// TLS handshakes the server completed during the repeat; `None` for plain HTTP.
    #[serde(default)]
    pub handshakes: Option<Handshakes>,
    /// What completed in each interval of the repeat (the plan's `sample_interval`), in
    /// order: requests, errors by kind, p50, p99 and max; empty in files written before
    /// issue 12 and for levels without sampling.
    #[serde(default)]
    pub intervals: Vec<crate::IntervalRow>,
    /// The client's and the server's CPUs from `/proc/stat`; `None` in results from
    /// before they were read.
    #[serde(default)]
    pub system: Option<SystemWindow>,
    /// What the target tree's threads waited on, sampled through the repeat; `None` in
    /// results from before they were sampled.
    #[serde(default)]
    pub waits: Option<ThreadWaits>,
    /// Each service the target uses, over the repeat.
    #[serde(default)]
    pub services: Vec<TierWindow>,
    /// The target's connections to each service it uses, sampled through the repeat;
    /// empty in results from before they were sampled.
    #[serde(default)]
    pub service_connections: Vec<pool::ServiceConnections>,
    /// How much the kernel's TCP counters grew over the repeat (system-wide, the network
    /// namespace's); absent in results written before they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<crate::tcp::TcpCounts<u64>>,
    /// This repeat's connect times (HdrHistogram compressed V2, base64, ns); absent when no
    /// connection was opened, and in results written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_hdr_base64: Option<String>,
}

/// The TLS handshakes of one repeat, as the load generator completed them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Handshakes {
    /// Full handshakes (key exchange and certificate).
    pub full: u64,
    /// Resumed sessions.
    pub resumed: u64,
    /// Full handshakes per second the server sustained.
    pub full_per_s: f64,
    /// Resumed handshakes per second the server sustained.
    pub resumed_per_s: f64,
}

/// The CPU of the server tree's processes of one name (`comm`) over a window: nginx's
/// master and worker together, the app behind it apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessCpu {
    /// The processes' name, as `/proc/PID/comm` has it (`nginx`, `avatar`, `java`).
    pub name: String,
    /// How many processes of that name the tree had at the window's end.
    pub processes: u64,
    /// Their CPU (user + system, reaped children included), seconds.
    pub cpu_s: f64,
    /// Their CPU µs per completed response.
    pub cpu_us_per_request: Option<f64>,
}

/// The server's process tree over one measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerWindow {
    /// User CPU, seconds.
    pub cpu_user_s: f64,
    /// System CPU, seconds.
    pub cpu_sys_s: f64,
    /// CPU share of the server's CPUs, percent.
    pub cpu_percent: f64,
    /// The busiest thread's share of one CPU, percent.
    pub busiest_thread_percent: f64,
    /// CPU µs per completed response.
    pub cpu_us_per_request: Option<f64>,
    /// Peak RSS of the tree, bytes.
    pub rss_peak_bytes: u64,
    /// Mean RSS of the tree, bytes.
    pub rss_mean_bytes: u64,
    /// Peak PSS of the tree, bytes.
    pub pss_peak_bytes: u64,
    /// Mean PSS of the tree, bytes.
    pub pss_mean_bytes: u64,
    /// Peak thread count.
    pub threads_peak: u64,
    /// Peak process count.
    pub processes_peak: u64,
    /// Peak open fds.
    pub fds_peak: u64,
    /// Voluntary context switches per second.
    pub voluntary_ctxt_per_s: f64,
    /// Involuntary context switches per second.
    pub involuntary_ctxt_per_s: f64,
    /// The tree's CPU by process name, most first: for a proxied target, the proxy's and
    /// the app's apart. Empty in results from before it was measured.
    #[serde(default)]
    pub processes: Vec<ProcessCpu>,
}

/// The load generator over one measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientWindow {
    /// User CPU, seconds.
    pub cpu_user_s: f64,
    /// System CPU, seconds.
    pub cpu_sys_s: f64,
    /// CPU share of the client's CPUs, percent.
    pub cpu_percent: f64,
    /// CPU µs per completed response.
    pub cpu_us_per_request: Option<f64>,
    /// foxbench's probe over the window (its threads sampling the server and the services,
    /// running `active` commands, taking thread dumps), CPU seconds. Left out of the
    /// figures above, which are the load generator's; it ran on the client's CPUs, so
    /// their per-CPU busy share holds it. `None` in results from before it was told apart.
    #[serde(default)]
    pub probe_cpu_s: Option<f64>,
}

/// One probe sample of the server tree.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbePoint {
    /// Seconds since the window started.
    pub t_s: f64,
    /// CPU share of the server's CPUs since the previous sample, percent.
    pub cpu_percent: f64,
    /// RSS, bytes.
    pub rss_bytes: u64,
    /// PSS, bytes.
    pub pss_bytes: u64,
    /// Threads.
    pub threads: u64,
    /// Processes.
    pub processes: u64,
    /// Open fds.
    pub fds: u64,
}

/// The repeats of a cell combined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellSummary {
    /// Median req/s over the repeats.
    pub rps_median: f64,
    /// Lowest req/s of a repeat.
    pub rps_min: f64,
    /// Highest req/s of a repeat.
    pub rps_max: f64,
    /// Latency of all repeats merged, µs.
    pub latency: stats::Summary,
    /// The merged histogram (HdrHistogram compressed V2, base64, ns).
    pub hdr_base64: String,
    /// Latency at log-spaced percentiles, for the spectrum chart: (percentile, µs).
    pub spectrum: Vec<(f64, f64)>,
    /// Median server CPU µs per request.
    pub server_cpu_us_per_request: Option<f64>,
    /// Median client CPU µs per request.
    pub client_cpu_us_per_request: Option<f64>,
    /// Median server CPU share, percent.
    pub server_cpu_percent: f64,
    /// Median busiest-thread share, percent.
    pub busiest_thread_percent: f64,
    /// Median client CPU share, percent.
    pub client_cpu_percent: f64,
    /// Peak RSS over all repeats, bytes.
    pub rss_peak_bytes: u64,
    /// Mean RSS over all repeats, bytes.
    pub rss_mean_bytes: u64,
    /// Peak PSS over all repeats, bytes.
    pub pss_peak_bytes: u64,
    /// Peak threads.
    pub threads_peak: u64,
    /// Peak open fds.
    pub fds_peak: u64,
    /// Requests that ended in an error, all repeats.
    pub errors: u64,
    /// Those errors by reason, all repeats added exactly, most frequent first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors_by_reason: Vec<crate::reasons::ReasonRow>,
    /// Responses with a failing status, all repeats.
    pub failed_status: u64,
    /// Requests issued, all repeats.
    pub sent: u64,
    /// Median full TLS handshakes per second over the repeats; `None` for plain HTTP.
    #[serde(default)]
    pub handshakes_full_per_s: Option<f64>,
    /// Median resumed TLS handshakes per second over the repeats; `None` for plain HTTP.
    #[serde(default)]
    pub handshakes_resumed_per_s: Option<f64>,
    /// Median CPU µs per request of each process name of the server tree, most first.
    #[serde(default)]
    pub processes: Vec<ProcessCost>,
    /// Per-CPU figures, medians over the repeats; `None` in results from before.
    #[serde(default)]
    pub system: Option<SystemSummary>,
    /// The repeats' thread samples merged; `None` in results from before.
    #[serde(default)]
    pub waits: Option<ThreadWaits>,
}

/// One process name's median CPU per request over a cell's repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessCost {
    /// The processes' name (`comm`).
    pub name: String,
    /// Median CPU µs per completed response.
    pub cpu_us_per_request: f64,
}

/// What limited a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnosis {
    /// The verdict.
    pub bottleneck: Bottleneck,
    /// The figures behind it, in one line.
    pub detail: String,
}

/// The verdicts of [`Diagnosis`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Bottleneck {
    /// foxbench's CPUs were saturated: the server may be faster than shown.
    ClientBound,
    /// The server's CPUs were saturated.
    ServerCpuBound,
    /// One server thread was saturated while other CPU was free.
    ServerThreadBound,
    /// A service's CPUs were saturated (its own, or shared with the target's or the
    /// client's): the tier behind the target limited it.
    ServiceCpuBound,
    /// Neither side's CPU was saturated while requests waited: contention, a pool or lock.
    Neither,
    /// Requests failed: ports, fds, timeouts or resets.
    Errors,
    /// CPUs not busy while most of the target's threads waited on a futex: a lock or a
    /// pool held the requests.
    LockBound,
    /// CPUs not busy while the target's connections to a service sat at a small constant
    /// number, busy, with more requests in flight than connections: its pool held them.
    PoolBound,
    /// CPUs not busy, the service idle-ish, while the target's threads (or event loop)
    /// waited on its sockets to the service: the service's latency held the requests.
    #[serde(rename = "waiting-on-the-backend")]
    BackendWait,
    /// Responses waited for the client's delayed ACK: the server writes them in several
    /// segments without TCP_NODELAY (the kernel's TCP counters, [`crate::tcp`]).
    Nagle,
    /// The server's accept queue overflowed: connects paid SYN retry times.
    ListenOverflow,
    /// TCP was short of socket memory: the kernel's waits, not the server's CPU.
    MemoryPressure,
    /// Segments were retransmitted (on loopback, dropped by the kernel).
    Retransmits,
}

impl From<crate::tcp::TcpFinding> for Bottleneck {
    fn from(f: crate::tcp::TcpFinding) -> Self {
        use crate::tcp::TcpFinding;
        match f {
            TcpFinding::Nagle => Bottleneck::Nagle,
            TcpFinding::ListenOverflow => Bottleneck::ListenOverflow,
            TcpFinding::MemoryPressure => Bottleneck::MemoryPressure,
            TcpFinding::Retransmits => Bottleneck::Retransmits,
        }
    }
}

impl Bottleneck {
    /// The kebab-case name used in JSON and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Bottleneck::ClientBound => "client-bound",
            Bottleneck::ServerCpuBound => "server-CPU-bound",
            Bottleneck::ServerThreadBound => "server-thread-bound",
            Bottleneck::ServiceCpuBound => "service-CPU-bound",
            Bottleneck::Neither => "neither",
            Bottleneck::Errors => "errors",
            Bottleneck::LockBound => "lock-bound",
            Bottleneck::PoolBound => "pool-bound",
            Bottleneck::BackendWait => "waiting-on-the-backend",
            Bottleneck::Nagle => "nagle",
            Bottleneck::ListenOverflow => "listen-overflow",
            Bottleneck::MemoryPressure => "memory-pressure",
            Bottleneck::Retransmits => "retransmits",
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed schema is the one the types generate. To update it after changing
    /// the types: `FOXBENCH_WRITE_SCHEMA=1 cargo test -p foxbench-report schema`.
    #[test]
    fn the_committed_schema_matches_the_types() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../schemas/shootout.schema.json"
        );
        let generated = ShootoutResults::json_schema();
        if std::env::var_os("FOXBENCH_WRITE_SCHEMA").is_some() {
            std::fs::write(path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(committed == generated, "schemas/shootout.schema.json is stale: run FOXBENCH_WRITE_SCHEMA=1 cargo test -p foxbench-report schema");
    }

    #[test]
    fn from_json_names_the_wrong_schema() {
        let e = ShootoutResults::from_json("{\"schema\": \"foxbench.load/1\"}").unwrap_err();
        assert!(e.contains("foxbench.shootout/1"), "{e}");
        assert!(ShootoutResults::from_json("nope")
            .unwrap_err()
            .contains("not JSON"));
    }

    #[test]
    fn which_outcomes_fail_a_run() {
        use Outcome::*;
        for (o, fails) in [
            (Skipped, false),
            (BuildFailed, true),
            (StartFailed, true),
            (VerifyFailed, true),
            (Measured, false),
            (Crashed, true),
            (Interrupted, false),
        ] {
            assert_eq!(o.is_failure(), fails, "{o:?}");
        }
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
