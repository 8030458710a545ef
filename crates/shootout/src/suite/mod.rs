//! Suite files: the validated targets, scenarios and plan, and [`Suite::parse`], whose errors
//! name the file, the line and the key.
//!
//! The TOML shapes serde reads are in `raw`; turning them into these types, with the
//! error messages, is `validate`.

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;

#[cfg(test)]
mod open_level_tests;
mod params;
mod raw;
mod services;
mod tls;
mod validate;

pub use params::{row_name, PARAM_PREFIX};
pub use services::{service_vars, Counter, ServiceCheck, ServiceSpec, SERVICE_PREFIX};
pub use tls::{CertCheck, ScenarioTls};

/// The avatar challenge, the suite `foxbench shootout` runs with no argument.
pub const DEFAULT_SUITE: &str = include_str!("../../../../suites/avatar.toml");

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
    pub capacity: Option<crate::capacity::CapacityLevel>,
    /// The open model's schedule (`rate`); `None` = the closed model.
    pub rate: Option<LevelRate>,
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
}

impl Scenario {
    /// Whether the target implements this scenario.
    pub fn applies_to(&self, target: &TargetSpec) -> bool {
        self.targets
            .as_ref()
            .is_none_or(|names| names.contains(&target.base))
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
                s_keeps && t_keeps && (l.capacity.is_none() || s_named || t_named)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small valid suite; the tests of `validate` break it one line at a time.
    pub(super) const GOOD: &str = r#"
name = "t"
images = 5

[plan]
levels = [10, { name = "ab", connections = 10, requests = 1000, keepalive = false }]
duration = "1s"

[[scenario]]
name = "redirect"
[scenario.expect]
status = 302
headers = { Location = '^https://avatar\.example/Renard-(\d+)\.png$' }
all_images = true

[[target]]
name = "c"
language = "C"
dir = "targets/c-epoll"
build = "cc -o {out}/server server.c"
start = "{out}/server {port} {images}"
"#;

    #[test]
    fn the_default_suite_parses() {
        let s = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
        assert!(s.targets.iter().any(|t| t.name == "avatar"));
        assert!(s
            .plan
            .levels
            .iter()
            .any(|l| l.name == "ab" && l.requests == Some(100_000) && l.keepalive == Some(false)));
    }

    /// The backend-call suite: one service every target uses, its URL in every start
    /// command, a request id per request that the answer must echo, and every row's
    /// levels kept by --quick.
    #[test]
    fn the_backend_suite_parses() {
        let text = include_str!("../../../../suites/backend.toml");
        let mut s = Suite::parse(text, "suites/backend.toml").unwrap();
        assert_eq!(s.services.len(), 1);
        let hello = &s.services[0];
        assert_eq!(hello.name(), "hello");
        assert_eq!(
            hello.counter,
            Some(Counter {
                path: "/stats".into(),
                field: Some("requests".into())
            })
        );
        let rows: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            rows,
            [
                "java-blocking[threads=200,nodelay=true]",
                "java-blocking[threads=200,nodelay=false]",
                "java-blocking[threads=10000,nodelay=true]",
                "java-blocking[threads=10000,nodelay=false]",
                "java-async[nodelay=true]",
                "java-async[nodelay=false]",
                "java-virtual-threads",
                "java-netty",
                "go-nethttp",
                "go-nethttp[idle=1024]",
                "node-fetch[client=agent]",
                "node-fetch[client=fetch]",
                "python-aiohttp",
                "rust-hyper"
            ]
        );
        for t in &s.targets {
            assert_eq!(t.uses, ["hello"], "{}", t.name);
            assert!(t.start.contains("{service.hello.url}"), "{}", t.name);
        }
        for sc in &s.scenarios {
            assert_eq!(sc.request_headers[0].name, "X-Request-Id");
            assert_eq!(sc.random_parts(), 1);
            assert_eq!(sc.header_echoes.len(), 1);
        }
        let levels: Vec<&str> = s.plan.levels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(levels, ["c10", "c100", "c1000", "ab", "c10000"]);
        s.make_quick();
        for sc in &s.scenarios {
            assert!(!s.levels_for(sc, &s.targets[0]).is_empty(), "{}", sc.name);
        }
    }

    #[test]
    fn a_good_suite_parses_with_defaults() {
        let s = Suite::parse(GOOD, "s.toml").unwrap();
        assert_eq!(s.images, 5);
        assert_eq!(s.plan.levels[0], timed_level(10));
        assert_eq!(s.plan.levels[1].requests, Some(1000));
        assert_eq!(s.plan.repeats, 3);
        assert_eq!(s.scenarios[0].method, "GET");
        assert!(s.scenarios[0].all_images);
        assert_eq!(s.targets[0].ready, Ready::Http);
    }

    /// GOOD with a second scenario for one target only, and a plain target beside a
    /// parameterized one of the same name that runs at one level.
    fn with_params() -> Suite {
        let text = GOOD.replace(
            "[[target]]",
            r##"[[scenario]]
name = "svg"
path = "/{hex:6}.svg"
targets = ["j"]
levels = ["c10"]
[scenario.expect]
status = 200
body_xml_root = "svg"
body_contains = 'fill="#{random.1}"'

[[target]]
name = "j"
language = "Java"
dir = "targets/java-httpserver"
build = "javac -d {out} A.java"
start = "java -Xmx32m -cp {out} A {port}"

[[target]]
name = "j"
language = "Java"
dir = "targets/java-httpserver"
build = "javac -d {out} A.java"
start = "java {param.jvm} -Xss{param.stack} -cp {out} A {port}"
env = { JAVA_OPTS = "-D{param.stack}" }
params = { jvm = ["-Xmx8m", "-Xmx16m -XX:+UseZGC"], stack = ["256k", "1m"] }
levels = ["c10"]

[[target]]"##,
        );
        Suite::parse(&text, "p.toml").unwrap()
    }

    #[test]
    fn params_expand_into_named_rows_with_their_commands() {
        let s = with_params();
        let names: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "j",
                "j[jvm=-Xmx8m,stack=256k]",
                "j[jvm=-Xmx8m,stack=1m]",
                "j[jvm=-Xmx16m -XX:+UseZGC,stack=256k]",
                "j[jvm=-Xmx16m -XX:+UseZGC,stack=1m]",
                "c"
            ]
        );
        let row = &s.targets[3];
        assert_eq!(row.base, "j");
        assert_eq!(
            row.start,
            "java -Xmx16m -XX:+UseZGC -Xss256k -cp {out} A {port}"
        );
        assert_eq!(row.env["JAVA_OPTS"], "-D256k");
        assert_eq!(row.build.as_deref(), Some("javac -d {out} A.java"));
        assert_eq!(
            row.params,
            [
                ("jvm".to_string(), "-Xmx16m -XX:+UseZGC".to_string()),
                ("stack".to_string(), "256k".to_string())
            ]
        );
        assert_eq!(row.file_stem(), "j_jvm=-Xmx16m_-XX_+UseZGC_stack=256k_");
        // The plain row runs every level; the parameter rows only c10.
        let (redirect, svg) = (&s.scenarios[0], &s.scenarios[1]);
        let level_names =
            |sc, t| -> Vec<String> { s.levels_for(sc, t).iter().map(|l| l.name.clone()).collect() };
        assert_eq!(level_names(redirect, &s.targets[0]), ["c10", "ab"]);
        assert_eq!(level_names(redirect, row), ["c10"]);
        assert_eq!(level_names(svg, &s.targets[0]), ["c10"]);
        // The svg scenario is for j's rows only.
        assert!(svg.applies_to(row) && svg.applies_to(&s.targets[0]));
        assert!(!svg.applies_to(&s.targets[5]) && redirect.applies_to(&s.targets[5]));
        assert_eq!(
            svg.body_contains.as_ref().unwrap().fill(&["a8db7d".into()]),
            "fill=\"#a8db7d\""
        );
    }

    #[test]
    fn select_keeps_all_rows_of_a_target_or_one_row() {
        let mut s = with_params();
        s.select(&["j".into()]).unwrap();
        assert_eq!(s.targets.len(), 5);
        let mut s = with_params();
        s.select(&["j[jvm=-Xmx8m,stack=1m]".into(), "c".into()])
            .unwrap();
        let names: Vec<&str> = s.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["j[jvm=-Xmx8m,stack=1m]", "c"]);
        let e = with_params().select(&["k".into()]).unwrap_err().to_string();
        assert!(e.ends_with("it has j, c"), "{e}");
    }

    /// A suite with a capacity level in [plan] and another in [quick], opted into by some
    /// targets and not by a scenario that names its own levels.
    const WITH_CAPACITY: &str = r#"
name = "t"
images = 5

[plan]
levels = [10, 100, { name = "cap", connections = 50, capacity = "p99<10ms, errors<1%", max_duration = "20s", window = "1500ms", start_rate = 4000 }]

[quick]
levels = [10, { name = "cap-quick", connections = 50, capacity = "p99<10ms", max_duration = "10s" }]

[[scenario]]
name = "redirect"
[scenario.expect]
status = 302
headers = { Location = '^https://avatar\.example/Renard-(\d+)\.png$' }
all_images = true

[[scenario]]
name = "svg"
path = "/{hex:6}.svg"
levels = ["c10"]
[scenario.expect]
status = 200

[[target]]
name = "a"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port}"
levels = ["cap", "cap-quick"]

[[target]]
name = "b"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port}"
levels = ["cap"]

[[target]]
name = "c"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port}"

[[target]]
name = "d"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port}"
levels = ["c10", "cap"]
"#;

    #[test]
    fn capacity_levels_parse_and_run_only_where_named() {
        let s = Suite::parse(WITH_CAPACITY, "s.toml").unwrap();
        let cap = s.plan.levels[2].capacity.as_ref().unwrap();
        assert_eq!(cap.objective, "p99<10ms, errors<1%");
        assert_eq!(cap.slo.clauses.len(), 2);
        assert_eq!(cap.window, Duration::from_millis(1500));
        assert_eq!(cap.start_per_sec, 4000.0);
        assert_eq!(s.plan.levels[2].max_duration, Duration::from_secs(20));
        assert!(s.plan.levels[..2].iter().all(|l| l.capacity.is_none()));
        let names = |s: &Suite, sc: usize, t: usize| -> Vec<String> {
            s.levels_for(&s.scenarios[sc], &s.targets[t])
                .iter()
                .map(|l| l.name.clone())
                .collect()
        };
        // (scenario, target) → levels, in the full run then in --quick.
        type Case<'a> = ((usize, usize), &'a [&'a str], &'a [&'a str]);
        let cases: [Case; 8] = [
            ((0, 0), &["c10", "c100", "cap"], &["c10", "cap-quick"]),
            ((0, 1), &["c10", "c100", "cap"], &["c10"]),
            ((0, 2), &["c10", "c100"], &["c10"]),
            ((0, 3), &["c10", "cap"], &["c10"]),
            ((1, 0), &["c10"], &["c10"]),
            ((1, 1), &["c10"], &["c10"]),
            ((1, 2), &["c10"], &["c10"]),
            ((1, 3), &["c10"], &["c10"]),
        ];
        let mut quick = s.clone();
        quick.make_quick();
        let q = quick.plan.levels[1].capacity.as_ref().unwrap();
        assert_eq!(
            (q.window, q.start_per_sec),
            (Duration::from_secs(1), 1000.0),
            "the defaults"
        );
        for ((sc, t), full, short) in cases {
            assert_eq!(names(&s, sc, t), full, "scenario {sc}, target {t}");
            assert_eq!(
                names(&quick, sc, t),
                short,
                "--quick: scenario {sc}, target {t}"
            );
        }
    }

    /// The avatar challenge searches the capacity of issue 12's five servers, on the
    /// redirect only; --quick of avatar alone.
    #[test]
    fn the_default_suite_searches_the_capacity_of_five_servers() {
        let full = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
        let mut quick = full.clone();
        quick.make_quick();
        let running = |s: &Suite, level: &str| -> Vec<(String, String)> {
            let mut v = Vec::new();
            for sc in &s.scenarios {
                for t in s.targets.iter().filter(|t| sc.applies_to(t)) {
                    if s.levels_for(sc, t).iter().any(|l| l.name == level) {
                        v.push((sc.name.clone(), t.name.clone()));
                    }
                }
            }
            v
        };
        let five = [
            "avatar",
            "c-epoll",
            "nginx",
            "go-nethttp",
            "java-httpserver",
        ];
        let want = |names: &[&str]| -> Vec<(String, String)> {
            names
                .iter()
                .map(|n| ("redirect".to_string(), n.to_string()))
                .collect()
        };
        assert_eq!(running(&full, "cap"), want(&five));
        assert_eq!(running(&quick, "cap-quick"), want(&["avatar"]));
        let cap = full.plan.levels.iter().find(|l| l.name == "cap").unwrap();
        assert_eq!(cap.capacity.as_ref().unwrap().objective, "p99<10ms");
        // Every other level still runs for the five.
        let avatar = full.targets.iter().find(|t| t.name == "avatar").unwrap();
        assert_eq!(
            full.levels_for(&full.scenarios[0], avatar).len(),
            full.plan.levels.len()
        );
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpus("auto").unwrap(), None);
        assert_eq!(parse_cpus("0").unwrap(), Some(vec![0]));
        assert_eq!(parse_cpus("2-3,0").unwrap(), Some(vec![0, 2, 3]));
        for bad in ["", "a", "3-1", "-1", "1,,2"] {
            assert!(parse_cpus(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn quick_mode_shortens_the_plan() {
        let mut s = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
        let full = s.plan.clone();
        s.make_quick();
        assert!(s.plan.duration <= full.duration && s.plan.repeats <= full.repeats);
        assert!(s.plan.levels.len() <= full.levels.len());
    }

    #[test]
    fn select_names_missing_targets() {
        let mut s = Suite::parse(GOOD, "s.toml").unwrap();
        let e = s.select(&["nope".into()]).unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("it has c"), "{e}");
        s.select(&["c".into()]).unwrap();
        assert_eq!(s.targets.len(), 1);
    }

    #[test]
    fn an_unknown_target_is_its_own_kind_with_the_same_line() {
        let mut s = Suite::parse(GOOD, "s.toml").unwrap();
        let e = s.select(&["c".into(), "nope".into()]).unwrap_err();
        assert!(matches!(&e, SuiteError::UnknownTarget { name, .. } if name == "nope"));
        assert_eq!(
            e.to_string(),
            r#"no target named "nope" in suite "t": it has c"#
        );
    }
}
