//! Suite files: the validated targets, scenarios and plan, and [`Suite::parse`], whose errors
//! name the file, the line and the key.
//!
//! The TOML shapes serde reads are in `raw`; turning them into these types, with the
//! error messages, is `validate`.

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;

mod params;
mod raw;
mod scenarios;
mod services;
mod tls;
mod validate;

pub use params::{row_name, PARAM_PREFIX};
pub use services::{service_vars, Counter, ServiceCheck, ServiceSpec, SERVICE_PREFIX};
pub use tls::{CertCheck, ScenarioTls};

/// The avatar challenge, the suite `foxbench shootout` runs with no argument.
pub const DEFAULT_SUITE: &str = include_str!("../../../../suites/avatar.toml");

/// A capacity level's search settings as the suite names them (its errors' wording).
pub const SEARCH_KEYS: measure::search::Keys = measure::search::Keys {
    start_rate: "start_rate",
    window: "window",
    budget: "max_duration",
};

/// A suite that could not be used, by kind of mistake. Each message is one line; those about
/// the file name the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The text is not TOML.
    #[error("{file}:{line}: {message}")]
    Syntax {
        /// The suite's source (a path, or `built-in`).
        file: String,
        /// 1-based.
        line: usize,
        /// The TOML parser's message, on one line.
        message: String,
    },
    /// The document lacks something it must have at the top level (a missing `name`).
    #[error("{file}:{line}: {problem}")]
    Document {
        /// The suite's source.
        file: String,
        /// 1-based.
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// A key is unknown in its table, or its value has the wrong type, is out of range or
    /// contradicts another.
    #[error("{file}:{line}: key `{key}`: {problem}")]
    Key {
        /// The suite's source.
        file: String,
        /// 1-based.
        line: usize,
        /// The key's path, such as `plan.duration` or `target[0].start`.
        key: String,
        /// What is wrong with it, and how to fix it.
        problem: String,
    },
    /// A target was asked for by name and the suite has none of that name.
    #[error("no target named {name:?} in suite {suite:?}: it has {}", .available.join(", "))]
    UnknownTarget {
        /// The name asked for.
        name: String,
        /// The suite's name.
        suite: String,
        /// The targets it has.
        available: Vec<String>,
    },
}

/// A parsed, validated suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The suite's name.
    pub name: String,
    /// Images each target serves (N).
    pub images: u32,
    /// The Location template the targets use; `{n}` runs over 1..=images.
    pub template: String,
    /// How to measure.
    pub plan: Plan,
    /// The plan's overrides for `--quick`.
    pub quick: Option<PlanOverrides>,
    /// What to request and what a correct answer is.
    pub scenarios: Vec<Scenario>,
    /// The servers.
    pub targets: Vec<TargetSpec>,
    /// The processes targets depend on (`[[service]]`), in suite order.
    pub services: Vec<ServiceSpec>,
}

/// How each target is measured.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Levels, run in order for each scenario.
    pub levels: Vec<Level>,
    /// Measured time per repeat of a timed level.
    pub duration: Duration,
    /// Repeats per level (a level may override).
    pub repeats: u32,
    /// Longest warm-up per level; it ends once throughput is steady.
    pub warmup: Duration,
    /// Warm-up slice: throughput is compared slice to slice.
    pub warmup_slice: Duration,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Probe sampling interval.
    pub sample_interval: Duration,
    /// SIGTERM to SIGKILL grace when stopping a target.
    pub stop_grace: Duration,
    /// CPUs for foxbench; `None` = automatic (the first half).
    pub client_cpus: Option<Vec<usize>>,
    /// CPUs for the targets; `None` = automatic (the second half).
    pub server_cpus: Option<Vec<usize>>,
    /// CPUs for the services; `None` = automatic (the last server CPU when there are two
    /// or more, else the server CPUs, beside the target).
    pub service_cpus: Option<Vec<usize>>,
    /// Longest a build may take.
    pub build_timeout: Duration,
}

/// A load level.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Name, such as `c100` or `ab`.
    pub name: String,
    /// Concurrent connections.
    pub connections: usize,
    /// Requests per repeat (ab's `-n`); `None` means timed by the plan's duration.
    pub requests: Option<u64>,
    /// The longest a counted level may run per repeat.
    pub max_duration: Duration,
    /// Overrides the scenario's keep-alive.
    pub keepalive: Option<bool>,
    /// Overrides the plan's repeats.
    pub repeats: Option<u32>,
    /// TLS session resumption on reconnect (`tls_resume`); `None` = on. No effect on a
    /// plain-HTTP scenario.
    pub tls_resume: Option<bool>,
    /// A capacity level (`capacity = "p99<10ms"`): instead of repeats, a search for the
    /// highest constant rate that holds the objective within `max_duration`. It runs only
    /// where a target's or scenario's `levels` names it.
    pub capacity: Option<measure::search::Capacity>,
    /// The open model's schedule (`rate`); `None` = the closed model.
    pub rate: Option<LevelRate>,
    /// HTTP/2 or HTTP/3 at this level (`http2 = true` or `http3 = true`, `streams = N`);
    /// `None` = the scenario's protocol. Such a level runs only for the scenarios that name
    /// it in their `levels`, or that speak its protocol themselves ([`Suite::levels_for`]).
    pub protocol: Option<LevelProtocol>,
}

/// A multiplexed HTTP version, as a level or a scenario asks for it (`http2 = true`,
/// `http3 = true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multiplexed {
    /// HTTP/2: h2 by ALPN over TLS, h2c with prior knowledge over plain TCP.
    Http2,
    /// HTTP/3: h3 over QUIC, which always runs TLS.
    Http3,
}

impl Multiplexed {
    /// The suite key that asks for it.
    pub fn key(self) -> &'static str {
        match self {
            Multiplexed::Http2 => "http2",
            Multiplexed::Http3 => "http3",
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Multiplexed::Http2 => "HTTP/2",
            Multiplexed::Http3 => "HTTP/3",
        }
    }

    /// The version with `streams` in flight per connection.
    pub fn with(self, streams: u32) -> HttpVersion {
        match self {
            Multiplexed::Http2 => HttpVersion::Http2 { streams },
            Multiplexed::Http3 => HttpVersion::Http3 { streams },
        }
    }
}

/// A level's protocol: HTTP/2 or HTTP/3, and its streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelProtocol {
    /// Which one (`http2 = true` or `http3 = true`).
    pub version: Multiplexed,
    /// Streams kept in flight on each connection (`streams`, h2load's `-m`); 1 by default.
    pub streams: u32,
}

/// The HTTP version a cell speaks: a scenario at a level ([`Scenario::version`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpVersion {
    /// HTTP/1.1, pipelined as the scenario says.
    Http1,
    /// HTTP/2: by ALPN over TLS (`h2`), with prior knowledge over plain TCP (`h2c`).
    Http2 {
        /// Streams in flight per connection.
        streams: u32,
    },
    /// HTTP/3: h3 over QUIC.
    Http3 {
        /// Streams in flight per connection.
        streams: u32,
    },
}

impl HttpVersion {
    /// The multiplexed version it is, if it is one.
    pub fn multiplexed(self) -> Option<Multiplexed> {
        match self {
            HttpVersion::Http1 => None,
            HttpVersion::Http2 { .. } => Some(Multiplexed::Http2),
            HttpVersion::Http3 { .. } => Some(Multiplexed::Http3),
        }
    }

    /// Streams in flight per connection; `None` for HTTP/1.1.
    pub fn streams(self) -> Option<u32> {
        match self {
            HttpVersion::Http1 => None,
            HttpVersion::Http2 { streams } | HttpVersion::Http3 { streams } => Some(streams),
        }
    }
}

/// An open-model level's request rate (`rate = 400` or `rate = "100..1000/10s"`, as
/// `foxbench load -R`): requests are sent when due whether or not earlier ones were
/// answered, and latency is timed from when each was due, so a queue in the server is not
/// hidden by coordinated omission. `connections` is then the most the level opens.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelRate {
    /// The rate as the suite wrote it, for the protocol.
    pub text: String,
    /// The parsed schedule.
    pub rate: load::Rate,
}

/// A level's `max_duration` when the suite gives none.
const LEVEL_MAX_DURATION: Duration = Duration::from_secs(60);

/// The level a bare number of connections stands for: timed, named `c<connections>`.
fn timed_level(c: usize) -> Level {
    Level {
        name: format!("c{c}"),
        connections: c,
        requests: None,
        max_duration: LEVEL_MAX_DURATION,
        keepalive: None,
        repeats: None,
        tls_resume: None,
        capacity: None,
        rate: None,
        protocol: None,
    }
}

/// What `--quick` changes.
#[derive(Debug, Clone, Default)]
pub struct PlanOverrides {
    levels: Option<Vec<Level>>,
    duration: Option<Duration>,
    repeats: Option<u32>,
    warmup: Option<Duration>,
    warmup_slice: Option<Duration>,
}

/// A request and what a correct response to it is.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// HTTP method.
    pub method: String,
    /// Request path as written, random parts (`{hex:6}`) included.
    pub path: String,
    /// The path parsed: literal pieces and random parts, filled per request.
    pub template: load::Template,
    /// Request headers (`headers`), by name, each value possibly with random parts,
    /// filled per request after the path's; in name order.
    pub request_headers: Vec<RequestHeader>,
    /// Keep connections alive.
    pub keepalive: bool,
    /// Requests pipelined per connection.
    pub pipeline: usize,
    /// Closed-model levels: the wait before sleeping that batches wake-ups (`coalesce`,
    /// `auto` by default, as `foxbench load --coalesce`). Rate levels never wait.
    pub coalesce: load::Coalesce,
    /// What foxbench's workers do when nothing is ready (`idle`, `auto` by default, as
    /// `foxbench load --idle`): `auto` spins where foxbench's CPUs are none of the
    /// server's, as the shootout pins them unless there are too few CPUs.
    pub idle: load::Idle,
    /// The status a correct response has.
    pub status: u16,
    /// Headers a correct response has, by name, each matching its pattern.
    pub headers: Vec<(String, Regex)>,
    /// Headers a correct response has whose pattern holds `{random.N}`: filled with the
    /// request's random parts (escaped), then matched.
    pub header_echoes: Vec<(String, Echo)>,
    /// A pattern the body matches.
    pub body: Option<Regex>,
    /// Every one of the N images must be seen: the first capture group of the Location
    /// pattern is the image number.
    pub all_images: bool,
    /// The body must be well-formed XML whose root element has this (local) name.
    pub xml_root: Option<String>,
    /// Text the body must contain, with the request's random parts filled in.
    pub body_contains: Option<Echo>,
    /// The targets (by `[[target]]` name) that implement the scenario; `None` = every one.
    pub targets: Option<Vec<String>>,
    /// The levels (by name) the scenario runs at; `None` = every level of the plan.
    pub levels: Option<Vec<String>>,
    /// TLS (`scheme = "https"`) and how the certificate is checked; `None` = plain HTTP.
    pub tls: Option<ScenarioTls>,
    /// Every level of this scenario speaks HTTP/2 (`http2 = true`) or HTTP/3 (`http3 =
    /// true`), with the level's streams (1 unless the level sets `streams`); `None` =
    /// HTTP/1.1 unless a level says otherwise.
    pub protocol: Option<Multiplexed>,
}

impl Scenario {
    /// Whether the target implements this scenario.
    pub fn applies_to(&self, target: &TargetSpec) -> bool {
        self.targets
            .as_ref()
            .is_none_or(|names| names.contains(&target.base))
    }

    /// The HTTP version this scenario speaks at `level`: the level's protocol, else the
    /// scenario's.
    pub fn version(&self, level: &Level) -> HttpVersion {
        match (level.protocol, self.protocol) {
            (Some(p), _) => p.version.with(p.streams),
            (None, Some(m)) => m.with(1),
            (None, None) => HttpVersion::Http1,
        }
    }

    /// Whether any level of the suite's `levels` speaks `m` for this scenario: its answers
    /// are then verified over `m` too.
    pub fn runs<'a>(&self, m: Multiplexed, mut levels: impl Iterator<Item = &'a Level>) -> bool {
        levels.any(|l| self.version(l).multiplexed() == Some(m))
    }
}

/// A request header of a scenario: its name and value, random parts (`{hex:16}`) included.
#[derive(Debug, Clone)]
pub struct RequestHeader {
    /// The header's name.
    pub name: String,
    /// Its value as written.
    pub value: String,
    /// The value parsed.
    pub template: load::Template,
}

impl Scenario {
    /// How many random parts a request has: the path's, then each request header's.
    pub fn random_parts(&self) -> usize {
        std::iter::once(&self.template)
            .chain(self.request_headers.iter().map(|h| &h.template))
            .flat_map(|t| &t.pieces)
            .filter(|p| matches!(p, load::Piece::Hole(_)))
            .count()
    }
}

/// Text a response body must contain, where `{random.N}` stands for the Nth random part
/// of the request's path as it was sent (so `#{random.1}` is `#a8db7d` for `/a8db7d.svg`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Echo {
    pieces: Vec<EchoPiece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum EchoPiece {
    Text(String),
    /// 0-based index of a random part.
    Random(usize),
}

impl Echo {
    /// Parses text with `{random.N}` placeholders (N from 1).
    pub fn parse(text: &str) -> Result<Echo, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find("{random.") {
            let after = &rest[i + "{random.".len()..];
            let n = after
                .find('}')
                .and_then(|j| after[..j].parse::<usize>().ok().map(|n| (n, j)));
            let Some((n, j)) = n.filter(|(n, _)| *n >= 1) else {
                return Err(format!(
                    "{text:?}: write {{random.N}} with N from 1, the Nth random part of the path"
                ));
            };
            if i > 0 {
                pieces.push(EchoPiece::Text(rest[..i].to_string()));
            }
            pieces.push(EchoPiece::Random(n - 1));
            rest = &after[j + 1..];
        }
        if !rest.is_empty() {
            pieces.push(EchoPiece::Text(rest.to_string()));
        }
        if pieces.is_empty() {
            return Err("empty text: give what the body must contain".into());
        }
        Ok(Echo { pieces })
    }

    /// How many random parts it refers to (the highest N).
    pub fn parts_needed(&self) -> usize {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                EchoPiece::Random(i) => Some(i + 1),
                EchoPiece::Text(_) => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// As [`Echo::fill`], each part escaped for a regular expression (`{random.N}` in an
    /// expected header's pattern matches the part literally).
    pub fn fill_escaped(&self, parts: &[String]) -> String {
        let escaped: Vec<String> = parts.iter().map(|p| regex::escape(p)).collect();
        self.fill(&escaped)
    }

    /// The text for a request whose random parts were `parts`.
    pub fn fill(&self, parts: &[String]) -> String {
        self.pieces
            .iter()
            .map(|p| match p {
                EchoPiece::Text(t) => t.as_str(),
                EchoPiece::Random(i) => parts.get(*i).map(String::as_str).unwrap_or(""),
            })
            .collect()
    }
}

/// One server: a `[[target]]`, or one row of a target's `params`.
#[derive(Debug, Clone)]
pub struct TargetSpec {
    /// Its name: the `[[target]]`'s, with the row's parameters for a parameter row
    /// (`java-httpserver[jvm=-Xmx8m]`).
    pub name: String,
    /// The `[[target]]`'s name, shared by all its rows.
    pub base: String,
    /// The row's parameters, in the order written; empty for a target without `params`.
    pub params: Vec<(String, String)>,
    /// The levels (by name) this target runs at; `None` = every level of the plan.
    pub levels: Option<Vec<String>>,
    /// Levels (by name) it runs at but is not measured at, each with the suite's reason:
    /// their cells are excluded, the reason as their message.
    pub excluded_levels: BTreeMap<String, String>,
    /// Its language.
    pub language: String,
    /// Its directory, relative to the suite's root.
    pub dir: String,
    /// Commands that must exist, else the target is skipped.
    pub requires: Vec<String>,
    /// What to install when they are missing.
    pub install: Option<String>,
    /// The build command (`sh -c` in `dir`), with `{out}` and `{dir}`.
    pub build: Option<String>,
    /// The start command, with `{port}`, `{images}`, `{template}`, `{out}`, `{dir}`.
    pub start: String,
    /// Environment for build and start.
    pub env: BTreeMap<String, String>,
    /// The path whose size is reported (placeholders allowed).
    pub artifact: Option<String>,
    /// Readiness check.
    pub ready: Ready,
    /// The longest to wait for readiness.
    pub ready_timeout: Duration,
    /// Paths outside `dir` (relative to the root) that the build reads, for the cache key.
    pub inputs: Vec<String>,
    /// Longest warm-up for this target, overriding the plan's (JIT runtimes).
    pub warmup: Option<Duration>,
    /// The services (by name) it needs (`use`; every service of the suite when absent).
    pub uses: Vec<String>,
}

impl TargetSpec {
    /// Its name as a file name (logs): characters other than letters, digits and `.-_=+`
    /// become `_`.
    pub fn file_stem(&self) -> String {
        self.name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || ".-_=+".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }
}

/// How to tell that a target is ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ready {
    /// A TCP connection is accepted.
    Tcp,
    /// An HTTP request gets any response.
    Http,
}

/// The placeholders a command may use.
pub const PLACEHOLDERS: [&str; 5] = ["port", "images", "template", "out", "dir"];

/// Parses a CPU list such as `0`, `0-1`, `0,2-3`, or `auto` (`None`).
pub fn parse_cpus(text: &str) -> Result<Option<Vec<usize>>, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok(None);
    }
    let bad =
        || format!("invalid CPU list {text:?}: expected e.g. \"0\", \"0-1\", \"0,2\" or \"auto\"");
    let mut out = Vec::new();
    for part in t.split(',') {
        let part = part.trim();
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: usize = a.trim().parse().map_err(|_| bad())?;
        let b: usize = b.trim().parse().map_err(|_| bad())?;
        if a > b || b >= 4096 {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(Some(out))
}

/// Fills a command's placeholders.
pub fn fill(cmd: &str, vars: &[(&str, &str)]) -> String {
    let mut out = cmd.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

impl Suite {
    /// Parses and validates a suite. `source` names it in errors (a path, or `built-in`).
    pub fn parse(text: &str, source: &str) -> Result<Suite, SuiteError> {
        let raw = validate::read(text, source)?;
        validate::suite(raw, text, source)
    }

    /// Applies the `[quick]` overrides (or halves everything when there are none).
    pub fn make_quick(&mut self) {
        let q = self.quick.clone().unwrap_or_default();
        let p = &mut self.plan;
        if let Some(levels) = q.levels {
            p.levels = levels;
        }
        p.duration = q.duration.unwrap_or(Duration::from_secs(1));
        p.repeats = q.repeats.unwrap_or(1);
        p.warmup = q.warmup.unwrap_or(Duration::from_secs(1));
        if let Some(s) = q.warmup_slice {
            p.warmup_slice = s;
        }
        for t in &mut self.targets {
            t.warmup = t.warmup.map(|w| w.min(p.warmup * 2));
        }
    }

    /// Keeps only the named targets (a `[[target]]`'s name keeps all its rows, a row's
    /// name that row); fails naming any that the suite lacks.
    pub fn select(&mut self, names: &[String]) -> Result<(), SuiteError> {
        let named = |t: &TargetSpec, n: &String| &t.name == n || &t.base == n;
        for n in names {
            if !self.targets.iter().any(|t| named(t, n)) {
                let mut available: Vec<String> = Vec::new();
                for t in &self.targets {
                    if !available.contains(&t.base) {
                        available.push(t.base.clone());
                    }
                }
                return Err(SuiteError::UnknownTarget {
                    name: n.clone(),
                    suite: self.name.clone(),
                    available,
                });
            }
        }
        self.targets.retain(|t| names.iter().any(|n| named(t, n)));
        Ok(())
    }

    /// The levels a target runs a scenario at: the plan's, less those the scenario's or
    /// the target's `levels` leave out. Capacity levels are opt-in: one runs only when the
    /// scenario's or the target's `levels` names it and the other's does not leave it out.
    /// A `levels` list that names only capacity levels leaves no ordinary level out.
    /// HTTP/2 and HTTP/3 levels are opt-in as well, by the scenario alone: one runs only
    /// where the scenario's `levels` names it or the scenario speaks its protocol (`http2 =
    /// true`, `http3 = true`), so a scenario without a `levels` filter never loads an
    /// HTTP/1-only target over HTTP/2 or HTTP/3.
    pub fn levels_for(&self, scenario: &Scenario, target: &TargetSpec) -> Vec<&Level> {
        // Names of no ordinary level here: capacity levels, or [quick]'s / [plan]'s own.
        let not_ordinary = |name: &String| {
            !self
                .plan
                .levels
                .iter()
                .any(|l| &l.name == name && l.capacity.is_none())
        };
        // Whether a list keeps a level, and whether it named it.
        let keeps = |only: &Option<Vec<String>>, l: &Level| match only {
            None => (true, false),
            Some(names) if names.contains(&l.name) => (true, true),
            Some(_) if l.capacity.is_some() => (false, false),
            Some(names) => (names.iter().all(not_ordinary), false),
        };
        self.plan
            .levels
            .iter()
            .filter(|l| {
                let (s_keeps, s_named) = keeps(&scenario.levels, l);
                let (t_keeps, t_named) = keeps(&target.levels, l);
                s_keeps
                    && t_keeps
                    && (l.capacity.is_none() || s_named || t_named)
                    && l.protocol
                        .is_none_or(|p| scenario.protocol == Some(p.version) || s_named)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
