//! The shape of one `foxbench load` result ([`LoadReport`]), as written by `--json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{
    agents, errors_by_reason, http2, search, series, slo, tcp, udp, Client, OpenMeasured,
    OpenReport, Summary, TlsMeasured, TlsReport,
};

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
    /// its count in `errors` (empty in files written before 2026-11-25).
    #[serde(default)]
    pub errors_by_reason: Vec<errors_by_reason::ReasonRow>,
    /// Complete responses by status code.
    pub status: BTreeMap<String, u64>,
    /// Rates and bytes.
    pub throughput: Throughput,
    /// Request latency.
    pub latency: Distribution,
    /// The same responses' latency to their read by the client, whichever clock `latency`
    /// holds (`client.client_delay.latency_clock`): with the kernel's receive stamps
    /// leading, `latency` leaves out what the client added and this keeps it in. Absent in
    /// results from before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_latency: Option<Distribution>,
    /// The same responses' latency to the kernel's receive stamp, when `latency` does not
    /// hold it (`--latency-clock read`, or agents merged from different clocks) and some
    /// read carried a stamp. Absent when `latency` is it (the kernel's clock leads), when
    /// no read was stamped, and in results written before 2026-11-29;
    /// [`LoadReport::latency_to_stamps`] answers for any clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_latency: Option<Distribution>,
    /// Connection establishment time; absent when no connection was opened.
    pub connect: Option<Distribution>,
    /// Connection counters.
    pub connections: Connections,
    /// Open model: schedule against sent, service time, send lateness, late requests and
    /// warnings; absent for the closed model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenReport>,
    /// The HTTP version spoken: "http/1.1", "h2" (over TLS) or "h2c", as its builder names
    /// it (`measure::rules::protocol_name`); absent in results from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// `--http2`: streams, retries, resets and GOAWAYs, header bytes; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<http2::Http2Report>,
    /// `--http3`: its retries and QUIC's figures; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http3: Option<Http3Report>,
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
    /// series stays bounded ([`series`]). Absent in files written before 2026-11-25, whose
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
    pub capacity: Option<search::CapacityReport>,
    /// The kernel's TCP counters over the run (system-wide for the client's network
    /// namespace, read before and after), per response, and the warnings their rules gave
    /// (Nagle, a full accept queue, drops); absent when they could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<tcp::TcpReport>,
    /// The kernel's UDP counters over the run (the client's network namespace, read before
    /// and after), and a warning when a run over UDP saw datagrams dropped; absent when
    /// they could not be read, and in results written before 2026-11-29.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<udp::UdpReport>,
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
    /// Those errors by kind (all zero in files written before 2026-11-24).
    #[serde(default)]
    pub errors_by_kind: Errors,
    /// Those errors by reason (absent when there were none, and before 2026-11-25).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors_by_reason: Vec<errors_by_reason::ReasonRow>,
    /// Complete responses per second.
    pub requests_per_sec: f64,
    /// Median latency of the responses in it, µs (0 when there were none).
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Longest, µs.
    pub max_us: f64,
    /// The interval's latency histogram (compressed V2, base64, ns), so that agents'
    /// series merge exactly; absent in files written before 2026-11-24.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdr_base64: Option<String>,
    /// How many intervals of `config.interval_s` its block spans (a power of two): 1 at
    /// full resolution, more where a long run's older intervals were merged ([`series`]).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub span_intervals: u64,
    /// The 99th percentile of what the client itself added to the latencies in it, µs
    /// (`client.client_delay`'s figure, per interval). A row merged from several is the
    /// largest of theirs, an upper bound. Absent in files written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_delay_p99_us: Option<f64>,
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
        self.errors_by_reason =
            errors_by_reason::merge(&[&self.errors_by_reason, &other.errors_by_reason]);
        self.client_delay_p99_us = match (self.client_delay_p99_us, other.client_delay_p99_us) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
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
            errors_by_reason: errors_by_reason::rows(&iv.counts.reasons),
            requests_per_sec: iv.rate_per_sec(),
            p50_us: us(iv.latency.percentile_ns(50.0)),
            p99_us: us(iv.latency.percentile_ns(99.0)),
            max_us: us(iv.latency.percentile_ns(100.0)),
            hdr_base64: Some(iv.latency.to_base64()),
            span_intervals: 1,
            client_delay_p99_us: (!iv.client_delay.is_empty())
                .then(|| us(iv.client_delay.percentile_ns(99.0))),
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

/// The HTTP/3 section of a load report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Http3Report {
    /// Requests sent again: left unprocessed by a GOAWAY, or rejected
    /// (H3_REQUEST_REJECTED).
    pub retries: u64,
    /// QUIC's own figures: datagrams, system calls and bytes per request, losses, the
    /// paths at the end, failed handshakes. Absent in results written before 2026-11-29.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic: Option<crate::quic::QuicReport>,
}

impl Http3Report {
    /// Several shards' sections as one run's: retries summed, QUIC's figures merged with
    /// their ratios recomputed for `completed` (the merged requests completed). QUIC's
    /// figures are left out unless every shard has them: a shard written before them would
    /// leave its requests in `completed` and its datagrams out of the sums. `None` when no
    /// shard has an HTTP/3 section.
    pub fn merge<'a>(
        parts: impl Iterator<Item = &'a Http3Report>,
        completed: u64,
    ) -> Option<Http3Report> {
        let parts: Vec<&Http3Report> = parts.collect();
        if parts.is_empty() {
            return None;
        }
        let quic = match parts.iter().all(|p| p.quic.is_some()) {
            true => {
                crate::QuicReport::merge(parts.iter().filter_map(|p| p.quic.as_ref()), completed)
            }
            false => None,
        };
        Some(Http3Report {
            retries: parts.iter().fold(0u64, |a, p| a.saturating_add(p.retries)),
            quic,
        })
    }

    /// Its lines of the text report; `tls` holds the QUIC handshakes completed.
    pub fn write_text(&self, o: &mut String, tls: Option<&TlsReport>) {
        use std::fmt::Write as _;
        let _ = writeln!(o, "HTTP/3:        {} retries", self.retries);
        if let Some(q) = &self.quic {
            q.write_text(o, tls);
        }
    }
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
    /// HTTP/1.1's pipeline depth: requests in flight per connection (1 under HTTP/2 and
    /// HTTP/3, whose streams say it).
    pub pipeline: u64,
    /// `--http3`: the streams each connection carries at once (`--streams`); absent
    /// otherwise (HTTP/2's are in its own section).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u64>,
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
    /// Closed model: the wait before sleeping that batches wake-ups (`--coalesce`): `auto`,
    /// `off` or a fixed wait such as `50us`. `off` in results from before it existed.
    #[serde(default = "coalesce_off")]
    pub coalesce: String,
    /// What the workers did when nothing was ready (`--idle`): `spin` (polled without
    /// sleeping) or `sleep`. `sleep` in results from before it existed.
    #[serde(default = "idle_sleep")]
    pub idle: String,
    /// Why that mode: `asked`, or `auto`'s reason, such as `foxbench on CPU 0, the server on
    /// CPU 1` or `the server shares CPU 0`. Empty in results from before it existed.
    #[serde(default)]
    pub idle_reason: String,
}

fn idle_sleep() -> String {
    "sleep".into()
}

impl LoadConfig {
    /// `spin (foxbench on CPU 0, the server on CPU 1)`, the idle mode and why; with
    /// `, coalescing not in effect` when the workers spun.
    pub fn idle_text(&self) -> String {
        let mut t = self.idle.clone();
        if !self.idle_reason.is_empty() {
            t.push_str(&format!(" ({})", self.idle_reason));
        }
        if self.idle == "spin" {
            t.push_str(", coalescing not in effect");
        }
        t
    }
}

fn coalesce_off() -> String {
    "off".into()
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
            errors_by_reason: errors_by_reason::rows(&c.reasons),
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
            read_latency: None,
            kernel_latency: None,
            connect: (!run.connect.is_empty()).then(|| dist(run.connect)),
            connections: c.into(),
            protocol: None,
            http2: None,
            http3: None,
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
            udp: None,
        }
    }
}
