//! What a run is asked to do: the [`Plan`], its load model and stop, and the checks that
//! turn a bad plan into a [`PlanError`] before any network I/O.

use std::time::Duration;

use crate::h2::H2Options;
use crate::idle::{decide, Idle, IdleChoice, Placement};
use crate::setting::{Setting, Text};
use crate::shard::Shard;
use crate::table::Selection;
use crate::{Rate, RequestSpec, Target, TlsOptions};

/// When requests are sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrival {
    /// Each connection sends its next request as soon as a response frees a slot.
    Closed,
    /// Requests are due at a rate (constant, or ramping over time), whether or not earlier
    /// ones were answered. Latency is timed from when each request was due
    /// (coordinated-omission correct).
    Open {
        /// Requests per second across all threads, over time.
        rate: Rate,
    },
}

/// Closed model: how long a worker that finds nothing to read waits before it sleeps in
/// `epoll_wait`, so that one wake-up reads several responses. This is a network card's
/// interrupt moderation, which loopback lacks: there, each response the server sends wakes
/// a sleeping client in the server's own context, and the server pays for it
/// (docs/methodology.md, "Who pays for waking the client").
///
/// The wait never costs a server that is the bottleneck anything: its queue does not
/// drain in a wait that short, so throughput and mean latency stay as they are (Little's
/// law), and the wake-ups it saves are the server's CPU. Against a server with time to
/// spare, a response that arrives during a wait is read up to the wait late.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coalesce {
    /// Sleep as soon as nothing is ready.
    Off,
    /// Wait 1/[`COALESCE_LATENCY_SHARE`] of the recent mean latency, at most
    /// [`COALESCE_MAX`]; not at all below [`COALESCE_MIN`], nor when fewer than
    /// [`COALESCE_BATCH`] responses are due in the wait. A response read late by a wait so
    /// adds about 1/80 of the latency to the mean and 1/40 to the worst (a sleep can
    /// overshoot: each worker learns by how much and asks for that much less).
    #[default]
    Auto,
    /// Wait this long each time.
    Fixed(Duration),
}

impl Coalesce {
    /// `auto`, `off`, or a fixed wait such as `50us` (`0` is `off`).
    pub fn parse(text: &str) -> Result<Coalesce, String> {
        match text.trim() {
            "auto" => Ok(Coalesce::Auto),
            "off" | "0" => Ok(Coalesce::Off),
            t => match crate::parse_duration(t) {
                // Reported in whole microseconds: a shorter wait would read back as "0us".
                Ok(d) if d < Duration::from_micros(1) => Err(format!(
                    "invalid coalescing wait {text:?}: a wait under 1us is none, use off"
                )),
                Ok(d) => Ok(Coalesce::Fixed(Duration::from_micros(d.as_micros() as u64))),
                Err(_) => Err(format!(
                    "invalid coalescing wait {text:?}: expected auto, off or a duration such as 50us"
                )),
            },
        }
    }
}

impl Coalesce {
    /// Checks a fixed wait against [`COALESCE_LIMIT`]: the one check, for a plan and for a
    /// suite's scenario.
    pub fn check(self) -> Result<(), PlanError> {
        match self {
            Coalesce::Fixed(d) if d > COALESCE_LIMIT => Err(PlanError::Coalesce),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for Coalesce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Coalesce::Off => f.write_str("off"),
            Coalesce::Auto => f.write_str("auto"),
            Coalesce::Fixed(d) => write!(f, "{}us", d.as_micros()),
        }
    }
}

/// Which clock a response's latency is taken on: the one [`crate::RunResult::latency`] (and
/// `service`, the intervals, and everything judged from them) holds. Both are measured
/// either way; only which one leads changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LatencyClock {
    /// To the kernel's receive stamp of the read that completed the response: what the
    /// client adds after the bytes arrived is left out. A response whose read carries no
    /// stamp (the kernel or socket gives none) is taken to its read.
    #[default]
    Kernel,
    /// To the read that completed the response, as load generators measure it: includes
    /// whatever the client added before it read.
    Read,
}

impl LatencyClock {
    /// `kernel` or `read`.
    pub fn parse(text: &str) -> Result<LatencyClock, String> {
        match text.trim() {
            "kernel" => Ok(LatencyClock::Kernel),
            "read" => Ok(LatencyClock::Read),
            _ => Err(format!(
                "invalid latency clock {text:?}: expected kernel or read"
            )),
        }
    }
}

impl std::fmt::Display for LatencyClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LatencyClock::Kernel => "kernel",
            LatencyClock::Read => "read",
        })
    }
}

/// [`Coalesce::Auto`] waits this fraction (1/N) of the recent mean latency.
pub const COALESCE_LATENCY_SHARE: u64 = 40;
/// [`Coalesce::Auto`]'s longest wait.
pub const COALESCE_MAX: Duration = Duration::from_micros(200);
/// [`Coalesce::Auto`]'s shortest wait: below it, a timer costs what a wake-up does.
pub const COALESCE_MIN: Duration = Duration::from_micros(10);
/// [`Coalesce::Auto`] waits only when at least this many responses are due in the wait (the
/// requests in flight over the recent latency): a wait costs a timer and a poll.
pub const COALESCE_BATCH: u64 = 4;
/// The longest wait [`Coalesce::Fixed`] takes.
pub const COALESCE_LIMIT: Duration = Duration::from_millis(10);

/// When the run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// After exactly this many requests have been issued and answered (or failed).
    Requests(u64),
    /// After this long; requests still unanswered then are counted as in flight.
    Duration(Duration),
}

/// The HTTP version spoken on every connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// HTTP/1.1, with `pipeline` requests in flight per connection.
    #[default]
    Http1,
    /// HTTP/2 (`--http2`): h2 negotiated by ALPN over TLS, h2c with prior knowledge over
    /// plain TCP; streams and windows as set.
    Http2(H2Options),
    /// HTTP/3 over QUIC (`--http3`): https only, h3 negotiated by ALPN, a request per
    /// bidirectional stream.
    Http3(H3Options),
}

impl Protocol {
    /// Whether its TLS handshakes may resume a session (`--tls-resume`): not HTTP/3's, since
    /// `quinn-proto` does not say whether a QUIC handshake resumed, and each is counted as
    /// full.
    pub fn resumes_tls(&self) -> bool {
        !matches!(self, Protocol::Http3(_))
    }
}

/// HTTP/3's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct H3Options {
    /// Requests in flight per connection, each on its own stream, within the server's
    /// stream credit.
    pub streams: u32,
}

impl Default for H3Options {
    fn default() -> Self {
        Self { streams: 1 }
    }
}

/// Which status codes count as failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusSet {
    bits: [u64; 16],
}

impl StatusSet {
    /// The default: any status outside 200..=399 is a failure.
    pub fn outside_2xx_3xx() -> Self {
        let mut s = Self { bits: [0; 16] };
        for code in (0..200).chain(400..1000) {
            s.insert(code);
        }
        s
    }

    /// No status is a failure.
    pub fn none() -> Self {
        Self { bits: [0; 16] }
    }

    /// Marks `code` (0..=999) as a failure.
    pub fn insert(&mut self, code: u16) {
        if code < 1000 {
            self.bits[usize::from(code / 64)] |= 1 << (code % 64);
        }
    }

    /// True when `code` counts as a failure.
    #[inline]
    pub fn contains(&self, code: u16) -> bool {
        code >= 1000 || self.bits[usize::from(code / 64)] & (1 << (code % 64)) != 0
    }

    /// Parses a list such as `400-599,302` or `none`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut s = Self::none();
        if text.trim().eq_ignore_ascii_case("none") {
            return Ok(s);
        }
        for part in text.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let parse = |v: &str| -> Result<u16, String> {
                match v.parse::<u16>() {
                    Ok(n) if (100..=999).contains(&n) => Ok(n),
                    _ => Err(format!(
                        "invalid status {v:?} in {text:?}: expected codes 100-999 like \"400-599,302\" or \"none\""
                    )),
                }
            };
            let (lo, hi) = (parse(lo)?, parse(hi)?);
            if lo > hi {
                return Err(format!("invalid status range {part:?}: {lo} > {hi}"));
            }
            for c in lo..=hi {
                s.insert(c);
            }
        }
        Ok(s)
    }
}

/// Everything that describes one load run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Where requests go: the address to connect to and the Host header.
    pub target: Target,
    /// The request table: one or more request shapes, each encoded once.
    pub requests: Vec<RequestSpec>,
    /// How each request picks its shape.
    pub selection: Selection,
    /// Seeds the random parts of URL templates and random selection (`--seed`).
    pub seed: u64,
    /// Connections, spread evenly over the threads.
    pub connections: usize,
    /// Worker threads, each with its own event loop.
    pub threads: usize,
    /// The load model.
    pub arrival: Arrival,
    /// When to stop.
    pub stop: Stop,
    /// Requests in flight per connection (1 = no pipelining).
    pub pipeline: usize,
    /// Reuse connections (HTTP/1.1 keep-alive); otherwise one connection per request.
    pub keepalive: bool,
    /// A request with no complete response after this long fails as a timeout.
    pub timeout: Duration,
    /// A connection not established after this long fails as a connect error.
    pub connect_timeout: Duration,
    /// Which statuses count as failed.
    pub fail_status: StatusSet,
    /// The length of the intervals handed to the caller during the run.
    pub interval: Duration,
    /// Certificate verification and resumption, for an https:// target.
    pub tls: TlsOptions,
    /// HTTP/1.1 or HTTP/2.
    pub protocol: Protocol,
    /// Which share of a plan run by several agents this is ([`Plan::shard`]); the whole
    /// plan by default. Connections and `-n` above are already this shard's.
    pub shard: Shard,
    /// Closed model: the wait before sleeping that batches wake-ups. The open model never
    /// waits: it sends on its schedule.
    pub coalesce: Coalesce,
    /// What a worker does when nothing is ready: spin, sleep, or choose (`--idle`).
    pub idle: Idle,
    /// Where the client and the target's server run, for [`Idle::Auto`]'s choice; not
    /// looked for by default (then `auto` sleeps).
    pub placement: Placement,
    /// Which clock `latency` is taken on.
    pub latency_clock: LatencyClock,
    /// Which kernel stamps to ask for: on what each socket receives, and on a sample of
    /// what it sends. Off, reads carry no stamps and every latency is taken to the read, as
    /// on a kernel without them (a testing and diagnosis switch: `FOXBENCH_KERNEL_STAMPS`).
    pub kernel_stamps: KernelStamps,
}

/// Which kernel stamps a run asks for ([`Plan::kernel_stamps`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelStamps {
    /// None: every latency is taken to the read, and no send is stamped.
    Off,
    /// Every read's receive stamp only.
    Receive,
    /// Every read's receive stamp, and the send stamp of one request in
    /// [`crate::SEND_SAMPLE_EVERY`].
    ReceiveAndSend,
}

impl KernelStamps {
    /// Reads are stamped.
    pub fn receive(self) -> bool {
        !matches!(self, KernelStamps::Off)
    }

    /// A sample of the sends is stamped.
    pub fn send(self) -> bool {
        matches!(self, KernelStamps::ReceiveAndSend)
    }
}

/// The most requests in flight per connection.
pub const MAX_PIPELINE: usize = 1024;

/// A plan that cannot run, by the setting at fault. Its message is the setting's name and
/// [`PlanError::problem`]; the CLI puts its flag in place of the name.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanError {
    /// No connection.
    Connections,
    /// No worker thread.
    Threads,
    /// Pipeline depth out of range.
    Pipeline,
    /// Pipelining asked for without keep-alive.
    PipelineWithoutKeepalive,
    /// The open model's rate is not a positive number.
    Rate(f64),
    /// `-n 0`.
    Requests,
    /// A zero duration.
    Duration,
    /// A zero response timeout.
    Timeout,
    /// A zero connect timeout.
    ConnectTimeout,
    /// A zero interval.
    Interval,
    /// An empty request table.
    NoRequests,
    /// Pipelining asked for under HTTP/2, where streams take its place.
    PipelineWithHttp2,
    /// Pipelining asked for under HTTP/3, where streams take its place.
    PipelineWithHttp3,
    /// HTTP/3 asked for with an `http://` URL: QUIC always runs TLS.
    Http3WithoutTls,
    /// Streams out of range.
    Streams,
    /// More than one stream per connection without keep-alive.
    StreamsWithoutKeepalive,
    /// A stream window out of range.
    Window,
    /// A connection window out of range.
    ConnectionWindow,
    /// A fixed coalescing wait longer than [`COALESCE_LIMIT`].
    Coalesce,
    /// A fixed coalescing wait in the open model, which sends on its schedule.
    CoalesceWithRate,
    /// Coalescing set (`off` or a fixed wait) with `--idle spin`, which never sleeps.
    CoalesceWithSpin,
    /// A whole-number setting too small to give every shard at least one.
    Shard {
        /// The setting: connections or requests.
        setting: Setting,
        /// Its value for the whole plan.
        total: u64,
        /// The number of shards.
        count: u64,
    },
}

impl PlanError {
    /// The setting at fault.
    pub fn setting(&self) -> Setting {
        match self {
            PlanError::Connections => Setting::Connections,
            PlanError::Threads => Setting::Threads,
            PlanError::Pipeline
            | PlanError::PipelineWithoutKeepalive
            | PlanError::PipelineWithHttp2
            | PlanError::PipelineWithHttp3 => Setting::Pipeline,
            PlanError::Http3WithoutTls => Setting::Http3,
            PlanError::Streams | PlanError::StreamsWithoutKeepalive => Setting::Streams,
            PlanError::Window => Setting::Window,
            PlanError::ConnectionWindow => Setting::ConnectionWindow,
            PlanError::Coalesce | PlanError::CoalesceWithRate | PlanError::CoalesceWithSpin => {
                Setting::Coalesce
            }
            PlanError::Rate(_) => Setting::Rate,
            PlanError::Requests => Setting::Requests,
            PlanError::Duration => Setting::Duration,
            PlanError::Timeout => Setting::Timeout,
            PlanError::ConnectTimeout => Setting::ConnectTimeout,
            PlanError::Interval => Setting::Interval,
            PlanError::NoRequests => Setting::Urls,
            PlanError::Shard { setting, .. } => *setting,
        }
    }

    /// The setting's name and its problem, for the caller to word.
    pub fn text(&self) -> Text {
        Text::default()
            .name(self.setting())
            .then(" ")
            .and(self.problem())
    }

    /// What is wrong with the setting, and how to set it instead.
    pub fn problem(&self) -> Text {
        match self {
            PlanError::Connections | PlanError::Threads | PlanError::Requests => {
                "must be at least 1".into()
            }
            PlanError::Pipeline => format!("must be between 1 and {MAX_PIPELINE}").into(),
            PlanError::PipelineWithoutKeepalive => {
                "needs keep-alive: a new connection per request carries one request".into()
            }
            PlanError::PipelineWithHttp2 => {
                Text::plain("has no meaning under HTTP/2: streams multiplex requests instead (")
                    .name(Setting::Streams)
                    .then(")")
            }
            PlanError::PipelineWithHttp3 => {
                Text::plain("has no meaning under HTTP/3: streams multiplex requests instead (")
                    .name(Setting::Streams)
                    .then(")")
            }
            PlanError::Http3WithoutTls => {
                "needs an https:// URL: QUIC always runs TLS (use https://, or drop it for HTTP/1.1 over plain TCP)".into()
            }
            PlanError::Streams => format!("must be between 1 and {MAX_PIPELINE}").into(),
            PlanError::StreamsWithoutKeepalive => {
                "above 1 needs keep-alive: a new connection per request carries one stream".into()
            }
            PlanError::Window => "must be between 1 and 2147483647 bytes".into(),
            PlanError::ConnectionWindow => "must be between 65535 and 2147483647 bytes".into(),
            PlanError::Coalesce => format!(
                "must be at most {} ms: a longer wait than that delays responses, it batches no more",
                COALESCE_LIMIT.as_millis()
            )
            .into(),
            PlanError::CoalesceWithRate => Text::plain(
                "has no meaning in the open model, which sends on its schedule: drop it or ",
            )
            .drop(Setting::Rate),
            PlanError::CoalesceWithSpin => Text::plain(
                "has no meaning when workers spin, which never sleep: drop it, or use ",
            )
            .name(Setting::Idle)
            .then(" auto"),
            PlanError::Rate(r) => {
                format!("must be a positive number of requests per second, not {r}").into()
            }
            PlanError::Duration
            | PlanError::Timeout
            | PlanError::ConnectTimeout
            | PlanError::Interval => "must be longer than 0".into(),
            PlanError::NoRequests => Text::plain("is empty: give a URL, or a ")
                .name(Setting::Urls)
                .then(" file with at least one line"),
            PlanError::Shard {
                setting,
                total,
                count,
            } => format!(
                "{total} cannot be shared by {count} agents: every shard needs at least one, so use at least {count} {}",
                setting.name()
            )
            .into(),
        }
    }
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.setting().name(), self.problem())
    }
}

impl std::error::Error for PlanError {}

impl Plan {
    /// Whether TLS sessions are resumed on reconnect: `--tls-resume`, where the protocol
    /// allows it ([`Protocol::resumes_tls`]). The engine's TLS configuration and the
    /// report's `tls.resumption` both take it from here.
    pub fn tls_resumption(&self) -> bool {
        self.tls.resume && self.protocol.resumes_tls()
    }

    /// A closed-model keep-alive plan with the defaults of `foxbench load`: a GET of the
    /// target's URL.
    pub fn new(target: Target) -> Self {
        Self {
            requests: vec![RequestSpec::get(&target)],
            target,
            selection: Selection::RoundRobin,
            seed: 0,
            connections: 10,
            threads: 1,
            arrival: Arrival::Closed,
            stop: Stop::Duration(Duration::from_secs(10)),
            pipeline: 1,
            keepalive: true,
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            fail_status: StatusSet::outside_2xx_3xx(),
            interval: Duration::from_secs(1),
            tls: TlsOptions::default(),
            protocol: Protocol::Http1,
            shard: Shard::WHOLE,
            coalesce: Coalesce::Auto,
            idle: Idle::Auto,
            placement: Placement::default(),
            latency_clock: LatencyClock::Kernel,
            kernel_stamps: KernelStamps::ReceiveAndSend,
        }
    }

    /// The idle mode its workers apply, and why: [`decide`] on the plan's `idle`, threads
    /// and placement. The one decision.
    pub fn idle_in_effect(&self) -> IdleChoice {
        let threads = self.effective_threads();
        let batched = match self.arrival {
            Arrival::Closed if self.coalesce == Coalesce::Auto => {
                let per_worker = (self.connections * self.per_connection() / threads) as u64;
                (per_worker >= crate::idle::BATCHED_IN_FLIGHT).then_some(per_worker)
            }
            _ => None,
        };
        decide(self.idle, threads, batched, &self.placement)
    }

    /// The coalescing its workers apply: the plan's in the closed model, `Off` in the open
    /// one, which sends on its schedule, and `Off` for workers that spin, which never sleep.
    pub fn coalesce_in_effect(&self) -> Coalesce {
        match self.arrival {
            _ if self.idle_in_effect().spin => Coalesce::Off,
            Arrival::Closed => self.coalesce,
            Arrival::Open { .. } => Coalesce::Off,
        }
    }

    /// Narrows the whole plan to `shard`'s share: its part of the connections and of `-n`
    /// ([`crate::shard::share`]), and, in the open model, every `N`th arrival of the whole
    /// schedule from the `I`th. Fails when a share would be empty.
    pub fn shard(&mut self, shard: Shard) -> Result<(), PlanError> {
        let whole = |setting, total: u64| {
            if total < shard.count {
                Err(PlanError::Shard {
                    setting,
                    total,
                    count: shard.count,
                })
            } else {
                Ok(shard.share(total))
            }
        };
        self.connections = whole(Setting::Connections, self.connections as u64)? as usize;
        if let Stop::Requests(n) = self.stop {
            self.stop = Stop::Requests(whole(Setting::Requests, n)?);
        }
        self.shard = shard;
        Ok(())
    }

    /// Checks the plan's settings, without touching the network or encoding requests.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.connections == 0 {
            return Err(PlanError::Connections);
        }
        if self.threads == 0 {
            return Err(PlanError::Threads);
        }
        if self.pipeline == 0 || self.pipeline > MAX_PIPELINE {
            return Err(PlanError::Pipeline);
        }
        if !self.keepalive && self.pipeline > 1 {
            return Err(PlanError::PipelineWithoutKeepalive);
        }
        if let Protocol::Http2(h2) = &self.protocol {
            if self.pipeline > 1 {
                return Err(PlanError::PipelineWithHttp2);
            }
            if h2.streams == 0 || h2.streams as usize > MAX_PIPELINE {
                return Err(PlanError::Streams);
            }
            if !self.keepalive && h2.streams > 1 {
                return Err(PlanError::StreamsWithoutKeepalive);
            }
            if h2.window == 0 || h2.window > crate::h2::frame::MAX_WINDOW {
                return Err(PlanError::Window);
            }
            if !(65_535..=crate::h2::frame::MAX_WINDOW).contains(&h2.connection_window) {
                return Err(PlanError::ConnectionWindow);
            }
        }
        if let Protocol::Http3(h3) = &self.protocol {
            if self.target.scheme != crate::Scheme::Https {
                return Err(PlanError::Http3WithoutTls);
            }
            if self.pipeline > 1 {
                return Err(PlanError::PipelineWithHttp3);
            }
            if h3.streams == 0 || h3.streams as usize > MAX_PIPELINE {
                return Err(PlanError::Streams);
            }
            if !self.keepalive && h3.streams > 1 {
                return Err(PlanError::StreamsWithoutKeepalive);
            }
        }
        if let Arrival::Open { rate } = &self.arrival {
            let peak = rate.peak_per_sec();
            if !(peak.is_finite() && peak > 0.0) {
                return Err(PlanError::Rate(peak));
            }
            if matches!(self.coalesce, Coalesce::Fixed(_)) {
                return Err(PlanError::CoalesceWithRate);
            }
        }
        self.coalesce.check()?;
        if self.idle == Idle::Spin && self.coalesce != Coalesce::Auto {
            return Err(PlanError::CoalesceWithSpin);
        }
        match self.stop {
            Stop::Requests(0) => return Err(PlanError::Requests),
            Stop::Duration(d) if d.is_zero() => return Err(PlanError::Duration),
            _ => {}
        }
        if self.timeout.is_zero() {
            return Err(PlanError::Timeout);
        }
        if self.connect_timeout.is_zero() {
            return Err(PlanError::ConnectTimeout);
        }
        if self.interval.is_zero() {
            return Err(PlanError::Interval);
        }
        if self.requests.is_empty() {
            return Err(PlanError::NoRequests);
        }
        Ok(())
    }

    /// Requests one connection may carry at once: the pipeline depth, or the streams.
    pub fn per_connection(&self) -> usize {
        match self.protocol {
            Protocol::Http1 => self.pipeline,
            Protocol::Http2(h2) => h2.streams as usize,
            Protocol::Http3(h3) => h3.streams as usize,
        }
    }

    /// The number of worker threads the plan really uses: never more than its connections.
    pub fn effective_threads(&self) -> usize {
        self.threads.clamp(1, self.connections.max(1))
    }
}

#[cfg(test)]
mod tests;
