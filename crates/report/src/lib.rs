//! Result data and its renderings: what `foxbench load` prints and writes as JSON.
//!
//! This crate owns the shape of results ([`LoadReport`], whose JSON schema is committed
//! at `schemas/load.schema.json`) and how they read as text, and the comparison of runs
//! ([`compare`], with its schema at `schemas/compare.schema.json`), a load result's HTML page
//! ([`load_html`]), its `--slo` verdicts ([`slo`]), a `--find-max` result ([`capacity`]),
//! the errors by reason in plain words ([`reasons`]),
//! and the exact merge of several agents' results into one ([`merge`], with the `agents`,
//! `shard` and `start` sections of [`agents`]). It renders from result data
//! only: it runs nothing and measures nothing, and depends on no internal crate but
//! `stats`.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

pub mod agents;
pub mod capacity;
pub mod compare;
pub mod http2;
pub mod load_html;
pub mod merge;
mod open;
pub mod reasons;
pub mod series;
pub mod shootout;
pub mod slo;
pub mod tcp;
pub mod time;
mod tls;
pub use http2::Http2Report;
pub use open::{OpenMeasured, OpenReport};
pub use stats::{Percentile, Summary};
pub use tls::{ClientCertificate, TlsMeasured, TlsReport};

/// The schema identifier written into every load result.
pub const LOAD_SCHEMA: &str = "foxbench.load/1";

/// The client CPU share above which a run is called client-bound.
pub const SATURATED_PERCENT: f64 = 90.0;

/// One `foxbench load` run, as written by `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadReport {
    /// Always [`LOAD_SCHEMA`].
    pub schema: String,
    /// The tool that produced it.
    pub tool: Tool,
    /// What was loaded.
    pub target: TargetInfo,
    /// How it was loaded.
    pub config: LoadConfig,
    /// Wall time of the run, seconds.
    pub elapsed_s: f64,
    /// True when the run was stopped early (Ctrl-C).
    pub interrupted: bool,
    /// Every request issued and its outcome.
    pub requests: Requests,
    /// Requests that failed with an error, by kind.
    pub errors: Errors,
    /// The same errors by reason, most frequent first; for each kind the counts sum to
    /// its count in `errors` (empty in files written before issue 23).
    #[serde(default)]
    pub errors_by_reason: Vec<reasons::ReasonRow>,
    /// Complete responses by status code.
    pub status: BTreeMap<String, u64>,
    /// Rates and bytes.
    pub throughput: Throughput,
    /// Request latency.
    pub latency: Distribution,
    /// Connection establishment time; absent when no connection was opened.
    pub connect: Option<Distribution>,
    /// Connection counters.
    pub connections: Connections,
    /// Open model: schedule against sent, service time, send lateness, late requests and
    /// warnings; absent for the closed model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenReport>,
    /// The HTTP version spoken: "http/1.1", "h2" (over TLS) or "h2c".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// `--http2`: streams, retries, resets and GOAWAYs, header bytes; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<http2::Http2Report>,
    /// TLS: what was negotiated and the handshakes; absent for http:// runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsReport>,
    /// What the load generator itself cost.
    pub client: Client,
    /// The request table: every request shape and what it carried, in table order.
    #[serde(default)]
    pub request_table: Vec<RequestShape>,
    /// What completed in each interval of the run (`config.interval_s`), in order.
    #[serde(default)]
    pub intervals: Vec<IntervalRow>,
    /// The stretches of `intervals` at one resolution each: a long run keeps its newest
    /// intervals at `config.interval_s` and merges older ones into coarser rows, so that the
    /// series stays bounded ([`series`]). Absent in files written before issue 25, whose
    /// rows are all at `config.interval_s`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interval_segments: Vec<series::Segment>,
    /// `--slo`: each clause's verdict and observed value; absent when no objective was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<slo::SloReport>,
    /// `--shard I/N`: which share of a plan run by several agents this run was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<agents::ShardInfo>,
    /// The wall-clock instant the run really started (and the `--start-at` it waited for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<agents::StartInfo>,
    /// `foxbench merge`: the agents whose results this one merges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<agents::Agents>,
    /// `--find-max`: the capacity search (the rest of the result is its window at the rate
    /// found, or at the lowest rate tried when none held); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<capacity::CapacityReport>,
    /// The kernel's TCP counters over the run (system-wide for the client's network
    /// namespace, read before and after), per response, and the warnings their rules gave
    /// (Nagle, a full accept queue, drops); absent when they could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<tcp::TcpReport>,
}

/// The load model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// Each connection sends its next request when a response frees it.
    Closed,
    /// Requests are due at a fixed rate, answered or not.
    Open,
}

/// How each request picked its shape from the request table.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Selection {
    /// In table order.
    #[default]
    RoundRobin,
    /// Uniformly at random, from the seeded generator.
    Random,
}

/// One row of the request table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestShape {
    /// Its method.
    pub method: String,
    /// Its path and query, random parts (`{hex:6}`) as written.
    pub path: String,
    /// Requests of this shape issued.
    pub sent: u64,
    /// Of those, complete responses (any status).
    pub completed: u64,
}

/// What completed in one interval of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalRow {
    /// When it began, seconds from the start of the run.
    pub start_s: f64,
    /// Its length, seconds (the last one may be shorter).
    pub duration_s: f64,
    /// Complete responses in it, any status.
    pub requests: u64,
    /// Requests that ended in an error in it.
    pub errors: u64,
    /// Those errors by kind (all zero in files written before issue 12).
    #[serde(default)]
    pub errors_by_kind: Errors,
    /// Those errors by reason (absent when there were none, and before issue 23).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors_by_reason: Vec<reasons::ReasonRow>,
    /// Complete responses per second.
    pub requests_per_sec: f64,
    /// Median latency of the responses in it, µs (0 when there were none).
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Longest, µs.
    pub max_us: f64,
    /// The interval's latency histogram (compressed V2, base64, ns), so that agents'
    /// series merge exactly; absent in files written before issue 13.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdr_base64: Option<String>,
    /// How many intervals of `config.interval_s` its block spans (a power of two): 1 at
    /// full resolution, more where a long run's older intervals were merged ([`series`]).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub span_intervals: u64,
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

impl IntervalRow {
    /// Adds `other` into this row exactly: counts summed, histograms added, the time covered
    /// the union of both (so that consecutive rows of one run and concurrent rows of several
    /// agents merge by the same rule), percentiles recomputed. A new field joins here.
    pub fn merge(&mut self, other: &IntervalRow) -> Result<(), series::RowMergeError> {
        use series::RowMergeError;
        let decode = |h: &Option<String>| {
            let h = h.as_deref().ok_or(RowMergeError::NoHistogram)?;
            stats::Latency::from_base64_exact(h)
                .map_err(|e| RowMergeError::Histogram(e.to_string()))
        };
        let mut hist = decode(&self.hdr_base64)?;
        hist.merge(&decode(&other.hdr_base64)?)
            .map_err(|e| RowMergeError::Histogram(e.to_string()))?;
        let end_s = (self.start_s + self.duration_s).max(other.start_s + other.duration_s);
        self.start_s = self.start_s.min(other.start_s);
        self.duration_s = end_s - self.start_s;
        self.span_intervals = self.span_intervals.max(other.span_intervals);
        self.requests = self.requests.saturating_add(other.requests);
        self.errors = self.errors.saturating_add(other.errors);
        self.errors_by_kind.add(&other.errors_by_kind);
        self.errors_by_reason = reasons::merge(&[&self.errors_by_reason, &other.errors_by_reason]);
        self.set_histogram(&hist);
        Ok(())
    }

    /// Sets the figures read from the row's histogram, and the rate from its count.
    fn set_histogram(&mut self, hist: &stats::Latency) {
        let us = |p: f64| hist.percentile_ns(p) as f64 / 1e3;
        self.requests_per_sec = self.requests as f64 / self.duration_s.max(1e-9);
        self.p50_us = us(50.0);
        self.p99_us = us(99.0);
        self.max_us = us(100.0);
        self.hdr_base64 = Some(hist.to_base64());
    }
}

impl From<&stats::Interval> for IntervalRow {
    fn from(iv: &stats::Interval) -> Self {
        let us = |ns: u64| ns as f64 / 1e3;
        Self {
            start_s: iv.start.as_secs_f64(),
            duration_s: iv.duration.as_secs_f64(),
            requests: iv.counts.completed(),
            errors: iv.counts.errors(),
            errors_by_kind: (&iv.counts).into(),
            errors_by_reason: reasons::rows(&iv.counts.reasons),
            requests_per_sec: iv.rate_per_sec(),
            p50_us: us(iv.latency.percentile_ns(50.0)),
            p99_us: us(iv.latency.percentile_ns(99.0)),
            max_us: us(iv.latency.percentile_ns(100.0)),
            hdr_base64: Some(iv.latency.to_base64()),
            span_intervals: 1,
        }
    }
}

/// What one run measured, in the engine's terms: the input of [`LoadReport::new`].
#[derive(Debug, Clone, Copy)]
pub struct Measured<'a> {
    /// Outcome counters.
    pub counts: &'a stats::Counts,
    /// Request latency.
    pub latency: &'a stats::Latency,
    /// Connect time.
    pub connect: &'a stats::Latency,
    /// TLS, for https:// runs.
    pub tls: Option<TlsMeasured<'a>>,
    /// The open model's figures.
    pub open: Option<OpenMeasured<'a>>,
    /// Responses by status code.
    pub status: &'a [(u16, u64)],
    /// Wall time of the run.
    pub elapsed: std::time::Duration,
    /// Stopped early.
    pub interrupted: bool,
}

/// Name and version of the tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tool {
    /// "foxbench".
    pub name: String,
    /// Its version.
    pub version: String,
}

/// The target URL and the address it resolved to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetInfo {
    /// The URL as given.
    pub url: String,
    /// The socket address used.
    pub address: String,
    /// The request method.
    pub method: String,
}

/// The load shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadConfig {
    /// The load model.
    pub model: Model,
    /// Open model: the arrival rate, requests per second.
    pub rate_per_sec: Option<f64>,
    /// Open model with a rate that changes over time (`-R 1000..20000/60s`): the schedule
    /// in words; `rate_per_sec` is then absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_schedule: Option<String>,
    /// Connections.
    pub connections: u64,
    /// Worker threads.
    pub threads: u64,
    /// Requests in flight per connection.
    pub pipeline: u64,
    /// Whether connections were reused.
    pub keepalive: bool,
    /// `-n`, if the run stopped after a number of requests.
    pub requests: Option<u64>,
    /// `-d` in seconds, if the run stopped after a duration.
    pub duration_s: Option<f64>,
    /// Response timeout, seconds.
    pub timeout_s: f64,
    /// Connect timeout, seconds.
    pub connect_timeout_s: f64,
    /// How requests picked their shape from the request table.
    #[serde(default)]
    pub selection: Selection,
    /// The seed of URL templates' random parts and of random selection (`--seed`).
    #[serde(default)]
    pub seed: u64,
    /// The length of each entry of `intervals`, seconds.
    #[serde(default = "one_second")]
    pub interval_s: f64,
}

fn one_second() -> f64 {
    1.0
}

/// Outcomes. Always `sent = ok + failed_status + errors + in_flight`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Requests {
    /// Requests issued.
    pub sent: u64,
    /// Complete responses with a status that is not a failure.
    pub ok: u64,
    /// Complete responses with a failure status.
    pub failed_status: u64,
    /// `ok + failed_status`.
    pub completed: u64,
    /// Requests that ended in an error (sum of `errors`' kinds).
    pub errors: u64,
    /// Requests unanswered when the run stopped.
    pub in_flight: u64,
    /// Open model: requests that fell due but were never sent (no free connection).
    pub unsent: u64,
}

/// Errors by kind; the `connect_*` fields break `connect` down.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Errors {
    /// Connection could not be established.
    pub connect: u64,
    /// Of `connect`: refused.
    pub connect_refused: u64,
    /// Of `connect`: EADDRNOTAVAIL, ephemeral ports exhausted.
    pub connect_ports_exhausted: u64,
    /// Of `connect`: not established within the connect timeout.
    pub connect_timeout: u64,
    /// Writing the request failed.
    pub write: u64,
    /// Reset, or EOF before the response was complete.
    pub read: u64,
    /// Malformed response.
    pub parse: u64,
    /// No complete response within the timeout.
    pub timeout: u64,
    /// TLS: a failed or stalled handshake, an alert, a bad record.
    #[serde(default)]
    pub tls: u64,
    /// HTTP/2: the server reset the stream.
    #[serde(default)]
    pub reset: u64,
    /// HTTP/2: a connection error, or a response without `:status`.
    #[serde(default)]
    pub protocol: u64,
}

/// Rates and traffic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Throughput {
    /// Complete responses per second of wall time.
    pub requests_per_sec: f64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes read per second.
    pub read_bytes_per_sec: f64,
}

/// A latency distribution: its summary and the full histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Distribution {
    /// Mean, stdev, extremes, percentiles (µs).
    #[serde(flatten)]
    pub summary: Summary,
    /// The HdrHistogram (compressed V2 encoding, base64, values in ns).
    pub hdr_base64: String,
    /// A coarse histogram for display: (upper bound µs, count).
    pub buckets: Vec<(f64, u64)>,
}

impl Distribution {
    /// The summary, the encoded histogram and display buckets of `h`.
    pub fn of(h: &stats::Latency) -> Self {
        Distribution {
            summary: h.summary(),
            hdr_base64: h.to_base64(),
            buckets: h.buckets(20),
        }
    }
}

/// Connection counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Connections {
    /// Connections established.
    pub opened: u64,
    /// Connections opened to replace a closed one.
    pub reconnects: u64,
    /// Idle connections closed by the server.
    pub closed_by_server: u64,
}

/// The load generator's own cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Client {
    /// CPUs it could use (threads).
    pub cpus: u64,
    /// User CPU seconds.
    pub cpu_user_s: f64,
    /// System CPU seconds.
    pub cpu_sys_s: f64,
    /// Share of its CPUs used over the run, percent.
    pub cpu_percent: f64,
    /// CPU microseconds per completed request.
    pub cpu_us_per_request: Option<f64>,
    /// Peak resident memory, bytes.
    pub max_rss_bytes: u64,
    /// True when `cpu_percent` ≥ [`SATURATED_PERCENT`]: the result may be client-bound.
    pub saturated: bool,
}

impl From<&stats::Counts> for Requests {
    fn from(c: &stats::Counts) -> Self {
        Self {
            sent: c.sent,
            ok: c.ok,
            failed_status: c.failed_status,
            completed: c.completed(),
            errors: c.errors(),
            in_flight: c.in_flight,
            unsent: c.unsent,
        }
    }
}

impl Errors {
    /// Adds `other`'s counts into these.
    pub fn add(&mut self, other: &Errors) {
        // Destructured so that a new kind cannot be forgotten here.
        let Errors {
            connect,
            connect_refused,
            connect_ports_exhausted,
            connect_timeout,
            write,
            read,
            parse,
            timeout,
            tls,
            reset,
            protocol,
        } = other;
        let add = |a: &mut u64, b: &u64| *a = a.saturating_add(*b);
        add(&mut self.connect, connect);
        add(&mut self.connect_refused, connect_refused);
        add(&mut self.connect_ports_exhausted, connect_ports_exhausted);
        add(&mut self.connect_timeout, connect_timeout);
        add(&mut self.write, write);
        add(&mut self.read, read);
        add(&mut self.parse, parse);
        add(&mut self.timeout, timeout);
        add(&mut self.tls, tls);
        add(&mut self.reset, reset);
        add(&mut self.protocol, protocol);
    }
}

impl From<&stats::Counts> for Errors {
    fn from(c: &stats::Counts) -> Self {
        Self {
            connect: c.connect,
            connect_refused: c.connect_refused,
            connect_ports_exhausted: c.connect_ports_exhausted,
            connect_timeout: c.connect_timeout,
            write: c.write,
            read: c.read,
            parse: c.parse,
            timeout: c.timeout,
            tls: c.tls,
            reset: c.reset,
            protocol: c.protocol,
        }
    }
}

impl From<&stats::Counts> for Connections {
    fn from(c: &stats::Counts) -> Self {
        Self {
            opened: c.connections_opened,
            reconnects: c.reconnects,
            closed_by_server: c.closed_by_server,
        }
    }
}

impl Client {
    /// The client's cost over a run: `cpu_user_s` and `cpu_sys_s` spent by `cpus` worker
    /// threads in `wall_s`, for `completed` responses. Holds the one rule that calls a
    /// client saturated ([`SATURATED_PERCENT`]), for `foxbench load` and the shootout.
    pub fn measure(
        cpus: u64,
        cpu_user_s: f64,
        cpu_sys_s: f64,
        wall_s: f64,
        completed: u64,
        max_rss_bytes: u64,
    ) -> Client {
        let cpu = cpu_user_s + cpu_sys_s;
        let cpu_percent = 100.0 * cpu / (wall_s.max(1e-9) * cpus.max(1) as f64);
        Client {
            cpus,
            cpu_user_s,
            cpu_sys_s,
            cpu_percent,
            cpu_us_per_request: (completed > 0).then(|| cpu * 1e6 / completed as f64),
            max_rss_bytes,
            saturated: cpu_percent >= SATURATED_PERCENT,
        }
    }
}

impl LoadReport {
    /// Builds the report of one run from what the engine measured and what it cost.
    pub fn new(
        target: TargetInfo,
        config: LoadConfig,
        run: Measured<'_>,
        request_table: Vec<RequestShape>,
        intervals: Vec<IntervalRow>,
        client: Client,
    ) -> LoadReport {
        let interval_segments = series::segments(&intervals, config.interval_s);
        let c = run.counts;
        let elapsed_s = run.elapsed.as_secs_f64().max(1e-9);
        let dist = Distribution::of;
        LoadReport {
            schema: LOAD_SCHEMA.into(),
            tool: Tool {
                name: "foxbench".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            target,
            config,
            elapsed_s,
            interrupted: run.interrupted,
            requests: c.into(),
            errors: c.into(),
            errors_by_reason: reasons::rows(&c.reasons),
            status: run
                .status
                .iter()
                .map(|(code, n)| (code.to_string(), *n))
                .collect(),
            throughput: Throughput {
                requests_per_sec: c.completed() as f64 / elapsed_s,
                bytes_read: c.bytes_read,
                bytes_written: c.bytes_written,
                read_bytes_per_sec: c.bytes_read as f64 / elapsed_s,
            },
            latency: dist(run.latency),
            connect: (!run.connect.is_empty()).then(|| dist(run.connect)),
            connections: c.into(),
            protocol: Some("http/1.1".into()),
            http2: None,
            tls: run.tls.map(|t| TlsReport::new(t, c)),
            open: run.open.map(|o| OpenReport::new(o, c)),
            client,
            request_table,
            interval_segments,
            intervals,
            slo: None,
            shard: None,
            start: None,
            agents: None,
            capacity: None,
            tcp: None,
        }
    }
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// A duration in µs, with a unit that keeps 3-4 significant digits.
pub fn human_us(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.1}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

impl LoadReport {
    /// The one-line warning printed when the client was saturated.
    pub fn saturation_warning(&self) -> Option<String> {
        self.client.saturated.then(|| {
            format!(
                "foxbench used {:.0}% of its CPUs: the result may be limited by the load generator, not the server",
                self.client.cpu_percent
            )
        })
    }

    /// The warnings of the kernel's TCP counters ([`tcp::findings`]), one line each.
    pub fn tcp_warnings(&self) -> impl Iterator<Item = &str> {
        self.tcp
            .iter()
            .flat_map(|t| &t.warnings)
            .map(|w| w.detail.as_str())
    }

    /// When requests were sent and none succeeded, one line that says so with the top
    /// reason: the run completed and measured nothing (exit status 1).
    pub fn no_success(&self) -> Option<String> {
        let r = &self.requests;
        if r.sent == 0 || r.ok > 0 {
            return None;
        }
        let top_error = self.errors_by_reason.first();
        let top_status = self
            .status
            .iter()
            .max_by_key(|(_, n)| **n)
            .filter(|_| r.failed_status > 0);
        let top = match (top_error, top_status) {
            (Some(e), Some((code, n))) if *n > e.count => {
                format!("status {code} {n} of {}", r.sent)
            }
            (Some(e), _) => e.line(r.sent),
            (None, Some((code, n))) => format!("status {code} {n} of {}", r.sent),
            (None, None) if r.in_flight == r.sent => {
                format!("all {} requests were still unanswered at the stop", r.sent)
            }
            (None, None) => format!("{} errors", r.errors),
        };
        let asked = self
            .tls
            .as_ref()
            .is_some_and(|t| t.client_certificate == ClientCertificate::AskedNoneGiven);
        Some(match asked {
            true => format!(
                "No request succeeded: {top}; {}",
                ClientCertificate::NONE_GIVEN
            ),
            false => format!("No request succeeded: {top}"),
        })
    }

    /// What each connection carries at once: `pipeline N` over HTTP/1.1, `streams N` (as
    /// asked for) over HTTP/2, where pipelining has no meaning.
    pub fn depth(&self) -> String {
        match &self.http2 {
            Some(h) => format!("streams {}", h.streams),
            None => format!("pipeline {}", self.config.pipeline),
        }
    }

    /// The human report, with the figures ab and wrk users look for.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let c = &self.config;
        let r = &self.requests;
        if let Some(line) = self.no_success() {
            let _ = writeln!(o, "{line}");
        }
        let _ = writeln!(
            o,
            "foxbench load {} {}",
            self.target.method, self.target.url
        );
        let stop = match (c.requests, c.duration_s) {
            (Some(n), _) => format!("{n} requests"),
            (None, Some(d)) => format!("{d}s"),
            _ => String::new(),
        };
        let model = match (c.rate_per_sec, &c.rate_schedule) {
            (Some(rate), _) => format!("open model at {rate} req/s"),
            (None, Some(schedule)) => format!("open model at {schedule}"),
            (None, None) => "closed model".into(),
        };
        let _ = writeln!(
            o,
            "  {model}, {}, {} connection{}, {} thread{}, {}, {stop}{}",
            if c.keepalive {
                "keep-alive"
            } else {
                "new connection per request"
            },
            c.connections,
            if c.connections == 1 { "" } else { "s" },
            c.threads,
            if c.threads == 1 { "" } else { "s" },
            self.depth(),
            if self.interrupted {
                " (interrupted)"
            } else {
                ""
            }
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "Server address:         {}", self.target.address);
        if let Some(shard) = &self.shard {
            shard.write_text(&mut o);
        }
        if let Some(start) = &self.start {
            start.write_text(&mut o);
        }
        if let Some(agents) = &self.agents {
            agents.write_text(&mut o);
        }
        let _ = writeln!(o, "Time taken for tests:   {:.3} seconds", self.elapsed_s);
        let _ = writeln!(o, "Complete requests:      {}", r.completed);
        let _ = writeln!(o, "Failed requests:        {}", r.failed_status + r.errors);
        if r.failed_status > 0 {
            let _ = writeln!(o, "Non-2xx/3xx responses:  {}", r.failed_status);
        }
        let _ = writeln!(
            o,
            "Requests:               {} sent = {} ok + {} failed status + {} errors + {} in flight",
            r.sent, r.ok, r.failed_status, r.errors, r.in_flight
        );
        if r.unsent > 0 {
            let _ = writeln!(
                o,
                "Unsent:                 {} requests fell due but found every connection busy",
                r.unsent
            );
        }
        let t = &self.throughput;
        let _ = writeln!(
            o,
            "Requests per second:    {:.2} [#/sec] (mean)",
            t.requests_per_sec
        );
        let l = &self.latency.summary;
        if l.count > 0 {
            let _ = writeln!(o, "Time per request:       {} [ms] (mean)", ms(l.mean_us));
            if t.requests_per_sec > 0.0 {
                let _ = writeln!(
                    o,
                    "Time per request:       {:.3} [ms] (mean, across all concurrent requests)",
                    1000.0 / t.requests_per_sec
                );
            }
        }
        let _ = writeln!(
            o,
            "Transfer rate:          {:.2} [Kbytes/sec] received ({} read, {} written)",
            t.read_bytes_per_sec / 1024.0,
            human_bytes(t.bytes_read as f64),
            human_bytes(t.bytes_written as f64)
        );
        let _ = writeln!(o);
        if l.count > 0 {
            let _ = writeln!(
                o,
                "Latency   {:>10} {:>10} {:>10} {:>10}",
                "mean", "stdev", "min", "max"
            );
            let _ = writeln!(
                o,
                "          {:>10} {:>10} {:>10} {:>10}",
                human_us(l.mean_us),
                human_us(l.stdev_us),
                human_us(l.min_us),
                human_us(l.max_us)
            );
            let _ = writeln!(o);
            let _ = writeln!(
                o,
                "Percentage of the requests served within a certain time (ms)"
            );
            for p in &l.percentiles {
                let _ = writeln!(
                    o,
                    "  {:>6}%  {:>10}",
                    trim_pct(p.percentile),
                    ms(p.value_us)
                );
            }
            let _ = writeln!(o, "    100%  {:>10} (longest request)", ms(l.max_us));
            let _ = writeln!(o);
            let total: u64 = self.latency.buckets.iter().map(|b| b.1).sum();
            if total > 0 {
                let _ = writeln!(o, "Latency histogram");
                let peak = self
                    .latency
                    .buckets
                    .iter()
                    .map(|b| b.1)
                    .max()
                    .unwrap_or(1)
                    .max(1);
                for (upper, n) in &self.latency.buckets {
                    let bar = "■".repeat(((*n as f64 / peak as f64) * 40.0).round() as usize);
                    let _ = writeln!(o, "  ≤{:>10} {:>10} |{bar}", human_us(*upper), n);
                }
                let _ = writeln!(o);
            }
        }
        if let Some(cd) = &self.connect {
            if cd.summary.count > 0 && (!c.keepalive || self.connections.reconnects > 0) {
                let s = &cd.summary;
                let _ = writeln!(
                    o,
                    "Connect time: {} connections, mean {}, p50 {}, p99 {}, max {}",
                    s.count,
                    human_us(s.mean_us),
                    human_us(s.at(50.0).unwrap_or(0.0)),
                    human_us(s.at(99.0).unwrap_or(0.0)),
                    human_us(s.max_us)
                );
            }
        }
        let table = &self.request_table;
        if table.len() > 1 || table.iter().any(|r| r.path.contains('{')) {
            let _ = writeln!(
                o,
                "Request table: {} shape{}, {} selection, seed {}",
                table.len(),
                if table.len() == 1 { "" } else { "s" },
                match c.selection {
                    Selection::RoundRobin => "round-robin",
                    Selection::Random => "random",
                },
                c.seed
            );
            for r in table {
                let _ = writeln!(
                    o,
                    "  {:>10} sent {:>10} completed  {} {}",
                    r.sent, r.completed, r.method, r.path
                );
            }
        }
        if let Some(line) = self.interval_line() {
            let _ = writeln!(o, "{line}");
        }
        let codes: Vec<String> = self
            .status
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let _ = writeln!(
            o,
            "Status codes:  {}",
            if codes.is_empty() {
                "none".into()
            } else {
                codes.join(", ")
            }
        );
        let e = &self.errors;
        let _ = writeln!(
            o,
            "Errors:        connect {} (refused {}, ports exhausted {}, timeout {}), write {}, read {}, parse {}, timeout {}{}",
            e.connect, e.connect_refused, e.connect_ports_exhausted, e.connect_timeout, e.write, e.read, e.parse, e.timeout,
            if self.tls.is_some() || e.tls > 0 { format!(", tls {}", e.tls) } else { String::new() }
        );
        if self.http2.is_some() || e.reset + e.protocol > 0 {
            let _ = writeln!(
                o,
                "               reset {}, protocol {}",
                e.reset, e.protocol
            );
        }
        if e.connect_ports_exhausted > 0 {
            let _ = writeln!(
                o,
                "               EADDRNOTAVAIL: the client ran out of ephemeral ports (see net.ipv4.ip_local_port_range); not a server failure"
            );
        }
        reasons::write_text(&mut o, &self.errors_by_reason, r.sent);
        let cn = &self.connections;
        let _ = writeln!(
            o,
            "Connections:   {} opened, {} reconnects, {} closed idle by the server",
            cn.opened, cn.reconnects, cn.closed_by_server
        );
        if let Some(tls) = &self.tls {
            tls.write_text(&mut o, c.keepalive);
        }
        if let Some(h2) = &self.http2 {
            h2.write_text(&mut o, self.protocol.as_deref().unwrap_or("h2"));
        }
        if let Some(open) = &self.open {
            open.write_text(&mut o);
        }
        let cl = &self.client;
        let _ = writeln!(
            o,
            "foxbench CPU:  {:.2}s user, {:.2}s sys, {:.0}% of {} CPU{}{}, max RSS {}",
            cl.cpu_user_s,
            cl.cpu_sys_s,
            cl.cpu_percent,
            cl.cpus,
            if cl.cpus == 1 { "" } else { "s" },
            cl.cpu_us_per_request
                .map(|v| format!(", {v:.2}µs per request"))
                .unwrap_or_default(),
            human_bytes(cl.max_rss_bytes as f64)
        );
        if let Some(w) = self.saturation_warning() {
            let _ = writeln!(o, "warning: {w}");
        }
        for w in self.tcp_warnings() {
            let _ = writeln!(o, "warning: {w}");
        }
        if let Some(slo) = &self.slo {
            slo.write_text(&mut o);
        }
        if let Some(c) = &self.capacity {
            o.push('\n');
            o.push_str(&c.to_text());
        }
        o
    }
}

impl LoadReport {
    /// One line on the interval series: the spread of per-interval p99 and the worst
    /// interval, which is where a stall shows. None for runs of fewer than two intervals.
    pub fn interval_line(&self) -> Option<String> {
        let live: Vec<&IntervalRow> = self.intervals.iter().filter(|i| i.requests > 0).collect();
        if self.intervals.len() < 2 || live.is_empty() {
            return None;
        }
        let mut p99: Vec<f64> = live.iter().map(|i| i.p99_us).collect();
        p99.sort_by(f64::total_cmp);
        let worst = live
            .iter()
            .max_by(|a, b| a.p99_us.total_cmp(&b.p99_us))
            .expect("not empty");
        let idle = self.intervals.len() - live.len();
        Some(format!(
            "Intervals:     {} of {}s; p99 per interval min {}, median {}, max {} (at {:.0}s){}",
            self.intervals.len(),
            self.config.interval_s,
            human_us(p99[0]),
            human_us(p99[p99.len() / 2]),
            human_us(worst.p99_us),
            worst.start_s,
            if idle > 0 {
                format!("; {idle} with no response")
            } else {
                String::new()
            }
        ))
    }
}

fn trim_pct(p: f64) -> String {
    let s = format!("{p}");
    s.trim_end_matches(".0").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> LoadReport {
        LoadReport {
            schema: LOAD_SCHEMA.into(),
            tool: Tool {
                name: "foxbench".into(),
                version: "0".into(),
            },
            target: TargetInfo {
                url: "http://127.0.0.1:1/".into(),
                address: "127.0.0.1:1".into(),
                method: "GET".into(),
            },
            config: LoadConfig {
                model: Model::Closed,
                rate_per_sec: None,
                rate_schedule: None,
                connections: 10,
                threads: 1,
                pipeline: 1,
                keepalive: false,
                requests: Some(10),
                duration_s: None,
                timeout_s: 1.0,
                connect_timeout_s: 1.0,
                selection: Selection::Random,
                seed: 7,
                interval_s: 1.0,
            },
            elapsed_s: 1.0,
            interrupted: false,
            requests: Requests {
                sent: 10,
                ok: 8,
                failed_status: 1,
                completed: 9,
                errors: 1,
                in_flight: 0,
                unsent: 0,
            },
            errors: Errors {
                connect: 1,
                connect_refused: 0,
                connect_ports_exhausted: 1,
                connect_timeout: 0,
                write: 0,
                read: 0,
                parse: 0,
                timeout: 0,
                tls: 0,
                reset: 0,
                protocol: 0,
            },
            errors_by_reason: vec![reasons::ReasonRow::new(
                stats::Reason::new(
                    stats::reason::Kind::Connect,
                    stats::reason::Cause::Errno(stats::reason::EADDRNOTAVAIL),
                ),
                1,
            )],
            status: [("302".to_string(), 8), ("500".to_string(), 1)].into(),
            throughput: Throughput {
                requests_per_sec: 9.0,
                bytes_read: 900,
                bytes_written: 800,
                read_bytes_per_sec: 900.0,
            },
            latency: Distribution {
                summary: Summary {
                    count: 9,
                    mean_us: 100.0,
                    stdev_us: 1.0,
                    min_us: 90.0,
                    max_us: 120.0,
                    percentiles: vec![Percentile {
                        percentile: 99.9,
                        value_us: 119.0,
                    }],
                },
                hdr_base64: String::new(),
                buckets: vec![(100.0, 5), (120.0, 4)],
            },
            connect: None,
            connections: Connections {
                opened: 10,
                reconnects: 9,
                closed_by_server: 0,
            },
            protocol: None,
            http2: None,
            tls: None,
            open: None,
            client: Client {
                cpus: 1,
                cpu_user_s: 0.5,
                cpu_sys_s: 0.47,
                cpu_percent: 97.0,
                cpu_us_per_request: Some(1.0),
                max_rss_bytes: 4 << 20,
                saturated: true,
            },
            request_table: vec![
                RequestShape {
                    method: "GET".into(),
                    path: "/{hex:6}.svg".into(),
                    sent: 6,
                    completed: 5,
                },
                RequestShape {
                    method: "GET".into(),
                    path: "/".into(),
                    sent: 4,
                    completed: 4,
                },
            ],
            intervals: [(0.0, 300.0), (1.0, 0.0), (2.0, 1_200_000.0), (3.0, 250.0)]
                .iter()
                .map(|&(start_s, p99_us)| IntervalRow {
                    start_s,
                    duration_s: 1.0,
                    requests: u64::from(p99_us > 0.0) * 3,
                    errors: 0,
                    errors_by_kind: Errors::default(),
                    errors_by_reason: Vec::new(),
                    requests_per_sec: 3.0,
                    p50_us: p99_us / 2.0,
                    p99_us,
                    max_us: p99_us,
                    hdr_base64: None,
                    span_intervals: 1,
                })
                .collect(),
            interval_segments: Vec::new(),
            slo: None,
            shard: None,
            start: None,
            agents: None,
            capacity: None,
            tcp: None,
        }
    }

    #[test]
    fn text_has_the_figures_ab_users_look_for() {
        let t = sample().to_text();
        for needle in [
            "Requests per second:    9.00 [#/sec] (mean)",
            "Time per request:       0.100 [ms] (mean)",
            "Percentage of the requests served within a certain time (ms)",
            "  99.9%       0.119",
            "(longest request)",
            "Complete requests:      9",
            "Failed requests:        2",
            "10 sent = 8 ok + 1 failed status + 1 errors + 0 in flight",
            "302: 8, 500: 1",
            "ports exhausted 1",
            "EADDRNOTAVAIL",
            "warning: foxbench used 97% of its CPUs: the result may be limited by the load generator, not the server",
            "Request table: 2 shapes, random selection, seed 7",
            "         6 sent          5 completed  GET /{hex:6}.svg",
            "Intervals:     4 of 1s; p99 per interval min 250.0µs, median 300.0µs, max 1.20s (at 2s); 1 with no response",
        ] {
            assert!(t.contains(needle), "missing {needle:?} in\n{t}");
        }
    }

    /// Under HTTP/2 the config line said "pipeline 1", which has no meaning there.
    #[test]
    fn config_line_says_streams_under_http2_not_pipeline() {
        let mut r = sample();
        assert!(r.to_text().contains(", pipeline 1, "), "{}", r.to_text());
        let json = serde_json::json!({
            "alpn": null, "streams": 10, "server_max_streams": 5, "streams_used_max": 5,
            "connections": 1, "retries": 0, "id_rollovers": 0, "pings_answered": 0,
            "header_bytes_sent": 1, "header_bytes_sent_decoded": 2,
            "header_bytes_received": 1, "header_bytes_received_decoded": 2,
            "hpack_saving_sent_percent": 50.0, "hpack_saving_received_percent": 50.0,
            "rst_stream": {}, "goaway": {}, "stream_window": 1, "connection_window": 1
        });
        r.http2 = Some(serde_json::from_value(json).unwrap());
        let t = r.to_text();
        let config = t.lines().nth(1).unwrap();
        assert!(config.contains(", streams 10, "), "{config}");
        assert!(!t.contains("pipeline"), "{t}");
    }

    #[test]
    fn json_round_trips() {
        let r = sample();
        let text = serde_json::to_string(&r).unwrap();
        let back: LoadReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn client_measure_holds_the_saturation_rule() {
        let c = Client::measure(2, 0.9, 0.9, 2.0, 1000, 0);
        assert!((c.cpu_percent - 45.0).abs() < 1e-9);
        assert_eq!(c.cpu_us_per_request, Some(1800.0));
        assert!(!c.saturated);
        let c = Client::measure(1, 0.5, 0.4, 1.0, 0, 0);
        assert!(c.saturated, "90% of one CPU is the threshold");
        assert_eq!(c.cpu_us_per_request, None);
    }

    #[test]
    fn old_results_without_the_table_or_intervals_still_load() {
        let mut v: serde_json::Value = serde_json::to_value(sample()).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("request_table");
        o.remove("intervals");
        let mut old_interval = serde_json::to_value(&sample().intervals[0]).unwrap();
        old_interval
            .as_object_mut()
            .unwrap()
            .remove("errors_by_kind");
        let iv: IntervalRow = serde_json::from_value(old_interval).unwrap();
        assert_eq!(iv.errors_by_kind, Errors::default());
        for k in ["selection", "seed", "interval_s"] {
            o["config"].as_object_mut().unwrap().remove(k);
        }
        let r: LoadReport = serde_json::from_value(v).unwrap();
        assert!(r.intervals.is_empty() && r.request_table.is_empty());
        assert_eq!(r.config.interval_s, 1.0);
        assert_eq!(r.interval_line(), None);
    }

    #[test]
    fn human_units() {
        assert_eq!(human_us(12.34), "12.3µs");
        assert_eq!(human_us(1234.0), "1.23ms");
        assert_eq!(human_us(2_500_000.0), "2.50s");
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
    }
}
