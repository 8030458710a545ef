//! The flags of `foxbench load`.

use std::path::PathBuf;
use std::sync::LazyLock;
use std::time::Duration;

use clap::Args;
use load::parse_duration;

/// Flags of `foxbench load`. ab's and wrk's spellings are accepted where they agree.
#[derive(Args, Debug)]
#[command(
    group = clap::ArgGroup::new("multiplexed").args(["http2", "http3"]),
    after_help = "Examples:\n  foxbench load -c 100 -d 10s http://127.0.0.1:8080/\n  foxbench load -n 100000 -c 10 http://127.0.0.1:6666/     (the ab protocol)\n  foxbench load --rate 20000 -c 200 -d 30s http://[::1]:8080/   (open model)"
)]
pub struct LoadArgs {
    /// The http:// or https:// URL to load (IPv4, [IPv6] or a host name resolved once). Its path may
    /// hold random parts filled per request: `/{hex:6}.svg`, `/doc/{int:1-10000}`. With
    /// --urls, paths in the file resolve against it.
    #[arg(required_unless_present = "urls")]
    pub url: Option<String>,

    /// A request list: one request per line, `[METHOD] URL [@bodyfile]`, or plain URLs,
    /// all to one host and port; `#` starts a comment.
    #[arg(long = "urls", value_name = "FILE")]
    pub urls: Option<PathBuf>,

    /// How each request picks its line of --urls: round-robin or random.
    #[arg(long = "select", value_enum, default_value = "round-robin")]
    pub select: SelectArg,

    /// Seed of the random parts and of random selection, to reproduce a run's requests
    /// (default: a fresh seed, shown in the report).
    #[arg(long = "seed")]
    pub seed: Option<u64>,

    /// The length of the intervals of the per-second series (JSON `intervals`, progress p99).
    #[arg(long = "interval", value_parser = parse_duration, default_value = "1s")]
    pub interval: Duration,

    /// Concurrent connections.
    #[arg(short = 'c', long = "connections", default_value_t = 10)]
    pub connections: usize,

    /// Stop after this many requests (ab's -n).
    #[arg(short = 'n', long = "requests", conflicts_with = "duration")]
    pub requests: Option<u64>,

    /// Stop after this long: 10s, 500ms, 2m (default 10s).
    #[arg(short = 'd', long = "duration", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Worker threads (default: the CPUs this process may run on).
    #[arg(short = 't', long = "threads")]
    pub threads: Option<usize>,

    /// Requests in flight per connection (HTTP/1.1 pipelining).
    #[arg(long = "pipeline", default_value_t = 1)]
    pub pipeline: usize,

    /// Speak HTTP/2: h2 negotiated by ALPN for https://, h2c with prior knowledge for
    /// http://. A server that cannot is one line and exit 2.
    #[arg(long = "http2")]
    pub http2: bool,

    /// Speak HTTP/3 over QUIC (UDP): https:// only, h3 negotiated by ALPN, TLS 1.3. A
    /// server that does not answer QUIC or speak h3 is one line and exit 2.
    #[arg(long = "http3", conflicts_with = "http2")]
    pub http3: bool,

    /// --http2 and --http3: streams kept in flight on each connection (h2load's -m), never
    /// more than the server allows (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS; QUIC's
    /// stream credit, past which requests wait for the server's MAX_STREAMS).
    #[arg(long = "streams", default_value_t = 1, requires = "multiplexed")]
    pub streams: u32,

    /// --http2: the receive window of each stream, in bytes (default 2^30-1, as h2load's).
    /// (--window is --find-max's.)
    #[arg(long = "stream-window", value_name = "BYTES", requires = "http2")]
    pub stream_window: Option<u32>,

    /// --http2: the receive window of each connection, in bytes (default 2^30-1).
    #[arg(long = "connection-window", value_name = "BYTES", requires = "http2")]
    pub connection_window: Option<u32>,

    /// Open model: send this many requests per second in total, answered or not, and
    /// time each from when it was due (corrects coordinated omission). A ramp:
    /// `1000..20000/60s`; stages `1000/10s,5000/30s` (each reached at its end); steps
    /// `1000+1000/10s..10000`. A ramp without -d or -n runs for its stages.
    #[arg(short = 'R', long = "rate", value_parser = load::Rate::parse)]
    pub rate: Option<load::Rate>,

    /// Closed model: when a worker finds nothing to read, wait this long before sleeping,
    /// so that one wake-up reads several responses (a network card's interrupt
    /// moderation, which loopback lacks). auto: 1/40 of the recent latency, at most 200us,
    /// only when 4 or more responses are due in it; off; or a fixed wait such as 50us.
    #[arg(long = "coalesce", value_name = "auto|off|D", value_parser = load::Coalesce::parse, default_value = "auto")]
    pub coalesce: load::Coalesce,

    /// What a worker does when nothing is ready. spin: poll without sleeping (the polls
    /// that find nothing are counted as spin, not work), so that no response has to wake
    /// it in the server's CPU time; sleep: sleep in epoll_wait; auto: spin only when the
    /// target's server is a local process whose CPUs are none of foxbench's and each
    /// worker thread has a CPU (pin them apart with taskset), else sleep. Spin leaves
    /// --coalesce out.
    #[arg(long = "idle", value_name = "spin|sleep|auto", value_parser = load::Idle::parse, default_value = "auto")]
    pub idle: load::Idle,
    /// Which clock latencies are taken on. kernel: to the kernel's receive stamp of the
    /// read that completed each response, leaving out what the client itself adds (a busy
    /// event loop, a preempted or slow-waking thread, a coalescing wait); falls back to
    /// the read when the kernel gives no stamps. read: to the read, as other load
    /// generators measure. Both are measured either way; the report gives the client's
    /// delay (read minus kernel). FOXBENCH_KERNEL_STAMPS=off (testing and diagnosis) does
    /// not ask the kernel for stamps, as on a kernel without them; =rx asks for receive
    /// stamps but not the sampled send stamps.
    #[arg(long = "latency-clock", value_name = "kernel|read", value_parser = load::LatencyClock::parse, default_value = "kernel")]
    pub latency_clock: load::LatencyClock,

    /// Keep connections alive (the default; accepted for ab compatibility).
    #[arg(short = 'k', long = "keepalive", conflicts_with = "no_keepalive")]
    pub keepalive: bool,

    /// Open a new connection for every request and send Connection: close.
    #[arg(long = "no-keepalive")]
    pub no_keepalive: bool,

    /// Request method (default GET, or POST with -p, PUT with -u).
    #[arg(short = 'm', long = "method")]
    pub method: Option<String>,

    /// Send HEAD requests (ab's -i).
    #[arg(short = 'i', long = "head", conflicts_with = "method")]
    pub head: bool,

    /// Extra header, "Name: value"; repeatable.
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,

    /// Request body.
    #[arg(short = 'b', long = "body", conflicts_with_all = ["post_file", "put_file"])]
    pub body: Option<String>,

    /// POST the contents of FILE (ab's -p).
    #[arg(short = 'p', long = "post-file", conflicts_with = "put_file")]
    pub post_file: Option<PathBuf>,

    /// PUT the contents of FILE (ab's -u).
    #[arg(short = 'u', long = "put-file")]
    pub put_file: Option<PathBuf>,

    /// Content-Type of the body (ab's -T).
    #[arg(short = 'T', long = "content-type")]
    pub content_type: Option<String>,

    /// A request with no complete response after this long fails as a timeout.
    #[arg(short = 's', long = "timeout", value_parser = parse_duration, default_value = "10s")]
    pub timeout: Duration,

    /// A connection not established after this long fails as a connect error.
    #[arg(long = "connect-timeout", value_parser = parse_duration, default_value = "5s")]
    pub connect_timeout: Duration,

    /// Statuses counted as failures: "400-599,302", or "none" (default: outside 200-399).
    #[arg(long = "fail-status")]
    pub fail_status: Option<String>,

    /// https: trust the CA certificates in this PEM file instead of the system's roots.
    #[arg(long = "cacert", value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,

    /// https: do not verify the server's certificate (shown in the report).
    #[arg(long = "insecure")]
    pub insecure: bool,

    /// https: present this client certificate (PEM, leaf first) when the server asks for one.
    #[arg(long = "cert", value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,

    /// https: the private key of --cert (PEM: PKCS#8, RSA or EC; RSA, ECDSA or Ed25519).
    #[arg(long = "key", value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,

    /// https: resume TLS sessions on reconnect (tickets or session IDs). No effect over
    /// --http3: every QUIC handshake is full (the report's `tls.resumption` says false).
    #[arg(long = "tls-resume", value_enum, default_value = "on")]
    pub tls_resume: OnOff,

    /// Write the result as JSON to FILE, or "-" for stdout (the text report then goes to stderr).
    #[arg(long = "json")]
    pub json: Option<String>,

    /// Also write every interval's latency histogram to FILE as an HdrHistogram interval log
    /// (`.hlog`, tag `corrected`), for HdrHistogram's HistogramLogProcessor and plotters.
    #[arg(long = "hlog", value_name = "FILE")]
    pub hlog: Option<PathBuf>,

    /// Service-level objective: comma-separated clauses such as
    /// 'p99<5ms,p99.9<=20ms,errors<0.1%,rps>=9500'; each verdict is printed and in the JSON,
    /// and the run exits 1 when one fails.
    #[arg(long = "slo", value_name = "CLAUSES")]
    pub slo: Option<String>,

    /// Stop the run as soon as a --slo clause can no longer be met: a latency percentile
    /// broken in any interval, or (with -n) more errors than the whole run may have.
    #[arg(long = "slo-abort", requires = "slo")]
    pub slo_abort: bool,

    /// Capacity search: find the highest constant rate at which every clause of this
    /// objective holds ('p99<10ms', in --slo's syntax), judging whole windows of the open
    /// model: doubling from --start-rate to bracket the knee, then bisecting. Reports the
    /// rate, every window, the latency spectrum at 50/80/100/110% of it and whether the
    /// client bounded it. Exits 0 when found, 1 when the objective fails at every rate tried.
    #[arg(long = "find-max", value_name = "OBJECTIVE", conflicts_with_all = ["rate", "requests", "duration", "slo", "shard", "start_at", "hlog", "coalesce"])]
    pub find_max: Option<String>,

    /// --find-max: the whole search's time budget, spectrum included; when it runs out the
    /// report gives the best bracket found.
    #[arg(long = "max-time", value_parser = parse_duration, default_value = BUDGET_TEXT.as_str(), requires = "find_max")]
    pub max_time: Duration,

    /// --find-max: the length of each constant-rate window judged.
    #[arg(long = "window", value_parser = parse_duration, default_value = WINDOW_TEXT.as_str(), requires = "find_max")]
    pub window: Duration,

    /// --find-max: the first rate tried, requests per second.
    #[arg(long = "start-rate", default_value_t = measure::search::DEFAULT_START_RATE, requires = "find_max")]
    pub start_rate: f64,

    /// No progress bar and no text report (errors and warnings still print).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Run shard I of N agents sharing this plan (I from 0): its share of the connections,
    /// of -n, and every Nth arrival of the open model's schedule. `foxbench merge` adds
    /// the agents' results up exactly.
    #[arg(long = "shard", value_name = "I/N", value_parser = load::Shard::parse)]
    pub shard: Option<load::Shard>,

    /// Prepare (resolve, check the target, raise limits), then start at this instant:
    /// RFC 3339 (2026-11-24T23:30:00Z) or +DURATION from $FOXBENCH_START_BASE (RFC 3339)
    /// or, without it, from now. Ready only after it: exit 2, unless --late-ok.
    #[arg(long = "start-at", value_name = "TIME")]
    pub start_at: Option<String>,

    /// With --start-at: start at once when ready after the instant, rather than fail.
    #[arg(long = "late-ok", requires = "start_at")]
    pub late_ok: bool,

    /// Serve a live page of the run at ADDR (default 127.0.0.1:0, a free loopback port):
    /// the URL, with an unguessable token in its path, is printed at the start; when the run
    /// ends the page becomes the final report. Give an address beyond loopback explicitly.
    #[arg(long = "dashboard", value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = "127.0.0.1:0")]
    pub dashboard: Option<std::net::SocketAddr>,

    /// Print the latency distribution (always printed; accepted for wrk compatibility).
    #[arg(long = "latency", hide = true)]
    pub latency: bool,
}

/// A switch given as a value: `--tls-resume off`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    /// Enabled.
    On,
    /// Disabled.
    Off,
}

/// `--select`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectArg {
    /// In the file's order.
    RoundRobin,
    /// Uniformly at random.
    Random,
}

/// `--max-time`'s default as the flag writes it: the constant is its one definition.
static BUDGET_TEXT: LazyLock<String> = LazyLock::new(|| seconds(measure::search::FIND_MAX_BUDGET));
/// `--window`'s default as the flag writes it.
static WINDOW_TEXT: LazyLock<String> = LazyLock::new(|| seconds(measure::search::FIND_MAX_WINDOW));

/// A duration as a flag writes it (`2s`), for clap, which shows and parses it.
fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests;
