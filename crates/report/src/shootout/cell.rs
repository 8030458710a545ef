//! One cell of the matrix (a scenario at a level on a target) as `results.json` holds it:
//! its repeats, the windows probed on each side, its summary and its diagnosis.

use super::*;

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
    /// The protocol spoken: `http/1.1`, `h2` (HTTP/2 by ALPN over TLS), `h2c` (HTTP/2
    /// with prior knowledge over plain TCP) or `h3` (HTTP/3 over QUIC, since 2026-11-29);
    /// `http/1.1` in results written before HTTP/2.
    #[serde(default = "http1")]
    pub protocol: String,
    /// HTTP/2 or HTTP/3 streams in flight per connection (the level's `streams`); `None`
    /// for HTTP/1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u64>,
    /// What foxbench's workers did when nothing was ready, and why: `spin (foxbench on
    /// CPU 0, the server on CPU 1)` or `sleep (the server shares CPU 0)` (the suite's
    /// `idle`, `auto` by default). Absent before a repeat ran, and in results from before
    /// it was recorded (they slept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<String>,
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
    /// JVM thread dumps of the level under load (`--thread-dump`, or when it was diagnosed
    /// as waiting: its CPUs not its limit, most of its waiting threads on a futex), taken in
    /// an unmeasured slice after its repeats (each dump's `slice`). Empty in results from
    /// before they were taken.
    #[serde(default)]
    pub thread_dumps: Vec<ThreadDump>,
    /// The machine's limits that were short for this level when it started (the checks of
    /// `foxbench doctor`); empty when none was, and in results written before them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<LimitNote>,
    /// A capacity level's search: the rate found under the objective and every window;
    /// absent for other levels and in results written before capacity levels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::search::CapacityReport>,
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

fn http1() -> String {
    "http/1.1".into()
}

impl Cell {
    /// Whether the cell spoke HTTP/2: `h2`, or its cleartext name, which the engine's
    /// rules alone spell (`measure::rules`); both begin `h2`, and no other protocol does
    /// (`http/1.1`, `h3`).
    pub fn is_http2(&self) -> bool {
        self.protocol.starts_with("h2")
    }
}

/// One measured repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Repeat {
    /// When the load started, nanoseconds since the Unix epoch (it ends `elapsed_s`
    /// later); absent in results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ns: Option<u64>,
    /// Wall time of the load, seconds.
    pub elapsed_s: f64,
    /// True when a counted level hit its time cap.
    pub capped: bool,
    /// Request accounting.
    pub requests: crate::Requests,
    /// Errors by kind.
    pub errors: crate::Errors,
    /// The same errors by reason, most frequent first (empty in files written before 2026-11-25).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors_by_reason: Vec<crate::errors_by_reason::ReasonRow>,
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
    /// The load generator's own cost over the repeat: the record a `foxbench load` run
    /// holds too.
    pub client: crate::Client,
    /// Probe samples taken during the repeat.
    pub series: Vec<ProbePoint>,
    /// TLS handshakes the server completed during the repeat; `None` for plain HTTP.
    #[serde(default)]
    pub handshakes: Option<Handshakes>,
    /// What completed in each interval of the repeat (the plan's `sample_interval`), in
    /// order: requests, errors by kind, p50, p99 and max; empty in files written before
    /// 2026-11-24 and for levels without sampling.
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
    /// Each link's own figures from its sockets (`tcp_info`, read by the probe through the
    /// repeat): foxbench's connections to the target, and the target's to each service.
    /// Empty in results from before the sockets were read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_links: Vec<crate::tcp::TcpLink>,
    /// This repeat's connect times (HdrHistogram compressed V2, base64, ns); absent when no
    /// connection was opened, and in results written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_hdr_base64: Option<String>,
    /// Open model (`rate` levels, capacity windows): this repeat's service times, from when
    /// each request was handed to its connection to its response (HdrHistogram compressed
    /// V2, base64, ns). The TCP rules read it rather than `hdr_base64`, whose wait for a
    /// free connection would hide a Nagle stall above capacity. Absent in the closed model
    /// and in results written before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_hdr_base64: Option<String>,
    /// What the engine saw of HTTP/2 over the repeat (streams allowed and used, GOAWAY and
    /// RST_STREAM by code, retries, HPACK), as `foxbench load --http2` reports it; absent
    /// for HTTP/1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<crate::Http2Report>,
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
    /// Median client work µs per request: its CPU less the spin (`Client::spin_s`). Absent
    /// in results from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_work_us_per_request: Option<f64>,
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
    pub errors_by_reason: Vec<crate::errors_by_reason::ReasonRow>,
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
