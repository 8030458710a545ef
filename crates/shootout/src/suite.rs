//! Suite files: targets, scenarios and the plan, parsed from TOML with errors that name
//! the line and the key.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use regex::Regex;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

/// The avatar challenge, the suite `foxbench shootout` runs with no argument.
pub const DEFAULT_SUITE: &str = include_str!("../../../suites/avatar.toml");

/// A suite file that could not be used. The message names the file, line and key.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SuiteError(pub String);

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
}

/// What `--quick` changes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanOverrides {
    levels: Option<Vec<Level>>,
    duration: Option<Dur>,
    repeats: Option<u32>,
    warmup: Option<Dur>,
    warmup_slice: Option<Dur>,
}

/// A request and what a correct response to it is.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// HTTP method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Keep connections alive.
    pub keepalive: bool,
    /// Requests pipelined per connection.
    pub pipeline: usize,
    /// The status a correct response has.
    pub status: u16,
    /// Headers a correct response has, by name, each matching its pattern.
    pub headers: Vec<(String, Regex)>,
    /// A pattern the body matches.
    pub body: Option<Regex>,
    /// Every one of the N images must be seen: the first capture group of the Location
    /// pattern is the image number.
    pub all_images: bool,
}

/// One server.
#[derive(Debug, Clone)]
pub struct TargetSpec {
    /// Its name.
    pub name: String,
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

// ---- raw TOML shapes ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: String,
    #[serde(default = "default_images")]
    images: u32,
    #[serde(default = "default_template")]
    template: String,
    #[serde(default)]
    plan: RawPlan,
    quick: Option<PlanOverrides>,
    #[serde(rename = "scenario")]
    scenarios: Vec<RawScenario>,
    #[serde(rename = "target")]
    targets: Vec<RawTarget>,
}

fn default_images() -> u32 {
    21
}
fn default_template() -> String {
    "https://avatar.example/Renard-{n}.png".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    levels: Option<Vec<Level>>,
    duration: Option<Dur>,
    repeats: Option<u32>,
    warmup: Option<Dur>,
    warmup_slice: Option<Dur>,
    timeout: Option<Dur>,
    sample_interval: Option<Dur>,
    stop_grace: Option<Dur>,
    client_cpus: Option<Cpus>,
    server_cpus: Option<Cpus>,
    build_timeout: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    #[serde(default = "default_method")]
    method: String,
    #[serde(default = "default_path")]
    path: String,
    #[serde(default = "default_true")]
    keepalive: bool,
    #[serde(default = "default_pipeline")]
    pipeline: usize,
    expect: RawExpect,
}

fn default_method() -> String {
    "GET".into()
}
fn default_path() -> String {
    "/".into()
}
fn default_true() -> bool {
    true
}
fn default_pipeline() -> usize {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExpect {
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, Pattern>,
    body: Option<Pattern>,
    #[serde(default)]
    all_images: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    name: String,
    language: String,
    dir: String,
    #[serde(default)]
    requires: Vec<String>,
    install: Option<String>,
    build: Option<Command>,
    start: Command,
    #[serde(default)]
    env: BTreeMap<String, String>,
    artifact: Option<Command>,
    #[serde(default = "default_ready")]
    ready: Ready,
    ready_timeout: Option<Dur>,
    #[serde(default)]
    inputs: Vec<String>,
    warmup: Option<Dur>,
}

fn default_ready() -> Ready {
    Ready::Http
}

/// A duration written as text: `2s`, `500ms`.
#[derive(Debug, Clone, Copy)]
struct Dur(Duration);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        load::parse_duration(&text)
            .map(Dur)
            .map_err(de::Error::custom)
    }
}

/// A regular expression, compiled when read.
#[derive(Debug, Clone)]
struct Pattern(Regex);

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Regex::new(&text).map(Pattern).map_err(|e| {
            de::Error::custom(format!(
                "invalid pattern {text:?}: {}",
                one_line(&e.to_string())
            ))
        })
    }
}

/// A command with `{placeholders}`, checked when read.
#[derive(Debug, Clone)]
struct Command(String);

/// The placeholders a command may use.
pub const PLACEHOLDERS: [&str; 5] = ["port", "images", "template", "out", "dir"];

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.trim().is_empty() {
            return Err(de::Error::custom("empty command"));
        }
        let mut rest = text.as_str();
        while let Some(i) = rest.find('{') {
            let after = &rest[i + 1..];
            let Some(j) = after.find('}') else { break };
            let name = &after[..j];
            if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.is_empty()
                && !PLACEHOLDERS.contains(&name)
            {
                return Err(de::Error::custom(format!(
                    "unknown placeholder {{{name}}} in {text:?}: use {}",
                    PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(", ")
                )));
            }
            rest = &after[j + 1..];
        }
        Ok(Command(text))
    }
}

/// A CPU list: `"0"`, `"2-3"`, `"0,2"`, or `"auto"`.
#[derive(Debug, Clone)]
struct Cpus(Option<Vec<usize>>);

impl<'de> Deserialize<'de> for Cpus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse_cpus(&text).map(Cpus).map_err(de::Error::custom)
    }
}

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

impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Level;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of connections, or a table like { name = \"ab\", connections = 10, requests = 100000, keepalive = false }")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Level, E> {
                if !(1..=1_000_000).contains(&v) {
                    return Err(E::custom(format!("{v} connections: use 1 to 1000000")));
                }
                Ok(Level {
                    name: format!("c{v}"),
                    connections: v as usize,
                    requests: None,
                    max_duration: Duration::from_secs(60),
                    keepalive: None,
                    repeats: None,
                })
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Level, E> {
                self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Level, A::Error> {
                let mut name = None;
                let mut connections = None;
                let mut requests = None;
                let mut max_duration = None;
                let mut keepalive = None;
                let mut repeats = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "name" => name = Some(map.next_value::<String>()?),
                        "connections" => connections = Some(map.next_value::<u32>()?),
                        "requests" => requests = Some(map.next_value::<u64>()?),
                        "max_duration" => max_duration = Some(map.next_value::<Dur>()?.0),
                        "keepalive" => keepalive = Some(map.next_value::<bool>()?),
                        "repeats" => repeats = Some(map.next_value::<u32>()?),
                        other => {
                            return Err(de::Error::unknown_field(
                                other,
                                &[
                                    "name",
                                    "connections",
                                    "requests",
                                    "max_duration",
                                    "keepalive",
                                    "repeats",
                                ],
                            ))
                        }
                    }
                }
                let connections =
                    connections.ok_or_else(|| de::Error::missing_field("connections"))?;
                if connections == 0 {
                    return Err(de::Error::custom("connections must be at least 1"));
                }
                if requests == Some(0) {
                    return Err(de::Error::custom("requests must be at least 1"));
                }
                if repeats == Some(0) {
                    return Err(de::Error::custom("repeats must be at least 1"));
                }
                Ok(Level {
                    name: name.unwrap_or_else(|| format!("c{connections}")),
                    connections: connections as usize,
                    requests,
                    max_duration: max_duration.unwrap_or(Duration::from_secs(60)),
                    keepalive,
                    repeats,
                })
            }
        }
        d.deserialize_any(V)
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The line (1-based) of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

/// The line of `key` in the nth `[[table]]` (or of the table's header, when the key is
/// not written there), for errors found after parsing.
fn line_of_key(text: &str, header: &str, n: usize, key: &str) -> usize {
    let mut seen = 0;
    let mut start = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(s) = start {
            if t.starts_with("[[") {
                // The next array table: the key was not written in this one.
                return s;
            }
            if t.split('=').next().unwrap_or("").trim() == key {
                return i + 1;
            }
        }
        if t == header {
            if seen == n {
                start = Some(i + 1);
            }
            seen += 1;
        }
    }
    start.unwrap_or(1)
}

impl Suite {
    /// Parses and validates a suite. `source` names it in errors (a path, or `built-in`).
    pub fn parse(text: &str, source: &str) -> Result<Suite, SuiteError> {
        let de = toml::de::Deserializer::parse(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            SuiteError(format!("{source}:{line}: {}", one_line(e.message())))
        })?;
        let raw: RawSuite = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let line = inner.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            let key = if path == "." {
                String::new()
            } else {
                format!(" key `{path}`:")
            };
            SuiteError(format!(
                "{source}:{line}:{key} {}",
                one_line(inner.message())
            ))
        })?;
        Self::validate(raw, text, source)
    }

    fn validate(raw: RawSuite, text: &str, source: &str) -> Result<Suite, SuiteError> {
        let err = |line: usize, key: &str, msg: String| {
            SuiteError(format!("{source}:{line}: key `{key}`: {msg}"))
        };
        if raw.images == 0 || raw.images > 65535 {
            return Err(err(
                1,
                "images",
                format!("{} images: use 1 to 65535", raw.images),
            ));
        }
        if !raw.template.contains("{n}") {
            return Err(err(
                1,
                "template",
                format!("{:?} has no {{n}} for the image number", raw.template),
            ));
        }
        let p = raw.plan;
        let plan = Plan {
            levels: p.levels.unwrap_or_else(|| {
                [10, 100, 1000, 5000]
                    .iter()
                    .map(|&c| timed_level(c))
                    .collect()
            }),
            duration: p.duration.map(|d| d.0).unwrap_or(Duration::from_secs(2)),
            repeats: p.repeats.unwrap_or(3),
            warmup: p.warmup.map(|d| d.0).unwrap_or(Duration::from_secs(3)),
            warmup_slice: p
                .warmup_slice
                .map(|d| d.0)
                .unwrap_or(Duration::from_millis(500)),
            timeout: p.timeout.map(|d| d.0).unwrap_or(Duration::from_secs(5)),
            sample_interval: p
                .sample_interval
                .map(|d| d.0)
                .unwrap_or(Duration::from_millis(250)),
            stop_grace: p.stop_grace.map(|d| d.0).unwrap_or(Duration::from_secs(2)),
            client_cpus: p.client_cpus.and_then(|c| c.0),
            server_cpus: p.server_cpus.and_then(|c| c.0),
            build_timeout: p
                .build_timeout
                .map(|d| d.0)
                .unwrap_or(Duration::from_secs(600)),
        };
        if plan.levels.is_empty() {
            return Err(err(
                1,
                "plan.levels",
                "no levels: give at least one, e.g. [10, 100]".into(),
            ));
        }
        if plan.repeats == 0 {
            return Err(err(1, "plan.repeats", "must be at least 1".into()));
        }
        check_level_names(&plan.levels).map_err(|m| err(1, "plan.levels", m))?;
        if let Some(q) = &raw.quick {
            if let Some(levels) = &q.levels {
                check_level_names(levels).map_err(|m| err(1, "quick.levels", m))?;
            }
            if q.repeats == Some(0) {
                return Err(err(1, "quick.repeats", "must be at least 1".into()));
            }
        }
        if raw.scenarios.is_empty() {
            return Err(err(1, "scenario", "no [[scenario]]: add one".into()));
        }
        let mut scenarios = Vec::new();
        for (i, s) in raw.scenarios.into_iter().enumerate() {
            let at = |k: &str| line_of_key(text, "[[scenario]]", i, k);
            let key = |k: &str| format!("scenario[{i}].{k}");
            if scenarios.iter().any(|o: &Scenario| o.name == s.name) {
                return Err(err(
                    at("name"),
                    &key("name"),
                    format!("scenario {:?} is defined twice", s.name),
                ));
            }
            if s.pipeline == 0 || s.pipeline > 1024 {
                return Err(err(
                    at("pipeline"),
                    &key("pipeline"),
                    format!("{}: use 1 to 1024", s.pipeline),
                ));
            }
            if !s.path.starts_with('/') {
                return Err(err(
                    at("path"),
                    &key("path"),
                    format!("{:?} must start with /", s.path),
                ));
            }
            if s.method.is_empty() || !s.method.bytes().all(|b| b.is_ascii_uppercase()) {
                return Err(err(
                    at("method"),
                    &key("method"),
                    format!("{:?} is not an HTTP method like GET", s.method),
                ));
            }
            if !(100..=599).contains(&s.expect.status) {
                return Err(err(
                    at("status"),
                    &key("expect.status"),
                    format!("{} is not an HTTP status", s.expect.status),
                ));
            }
            let headers: Vec<(String, Regex)> = s
                .expect
                .headers
                .into_iter()
                .map(|(k, v)| (k, v.0))
                .collect();
            if s.expect.all_images {
                let loc = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"));
                match loc {
                    Some((_, re)) if re.captures_len() > 1 => {}
                    _ => {
                        return Err(err(at("all_images"), &key("expect.all_images"),
                            "needs a Location pattern in expect.headers whose first group captures the image number, e.g. '^https://avatar\\.example/Renard-(\\d+)\\.png$'".into(),
                        ))
                    }
                }
            }
            scenarios.push(Scenario {
                name: s.name,
                method: s.method,
                path: s.path,
                keepalive: s.keepalive,
                pipeline: s.pipeline,
                status: s.expect.status,
                headers,
                body: s.expect.body.map(|p| p.0),
                all_images: s.expect.all_images,
            });
        }
        if raw.targets.is_empty() {
            return Err(err(1, "target", "no [[target]]: add one".into()));
        }
        let mut targets: Vec<TargetSpec> = Vec::new();
        for (i, t) in raw.targets.into_iter().enumerate() {
            let at = |k: &str| line_of_key(text, "[[target]]", i, k);
            let key = |k: &str| format!("target[{i}].{k}");
            if t.name.is_empty()
                || !t
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            {
                return Err(err(
                    at("name"),
                    &key("name"),
                    format!("{:?}: use letters, digits, '-', '_' or '.'", t.name),
                ));
            }
            if targets.iter().any(|o| o.name == t.name) {
                return Err(err(
                    at("name"),
                    &key("name"),
                    format!("target {:?} is defined twice", t.name),
                ));
            }
            if !t.start.0.contains("{port}") {
                return Err(err(
                    at("start"),
                    &key("start"),
                    format!(
                        "{:?} has no {{port}}: the target must listen where foxbench says",
                        t.start.0
                    ),
                ));
            }
            if let Some(b) = &t.build {
                if b.0.contains("{port}") {
                    return Err(err(
                        at("build"),
                        &key("build"),
                        "{port} is only known at start".into(),
                    ));
                }
            }
            if t.dir.is_empty()
                || std::path::Path::new(&t.dir).is_absolute()
                || t.dir.split('/').any(|c| c == "..")
            {
                return Err(err(
                    at("dir"),
                    &key("dir"),
                    format!(
                        "{:?}: give a path inside the suite's root, like targets/{}",
                        t.dir, t.name
                    ),
                ));
            }
            targets.push(TargetSpec {
                name: t.name,
                language: t.language,
                dir: t.dir,
                requires: t.requires,
                install: t.install,
                build: t.build.map(|c| c.0),
                start: t.start.0,
                env: t.env,
                artifact: t.artifact.map(|c| c.0),
                ready: t.ready,
                ready_timeout: t
                    .ready_timeout
                    .map(|d| d.0)
                    .unwrap_or(Duration::from_secs(30)),
                inputs: t.inputs,
                warmup: t.warmup.map(|d| d.0),
            });
        }
        Ok(Suite {
            name: raw.name,
            images: raw.images,
            template: raw.template,
            plan,
            quick: raw.quick,
            scenarios,
            targets,
        })
    }

    /// Applies the `[quick]` overrides (or halves everything when there are none).
    pub fn make_quick(&mut self) {
        let q = self.quick.clone().unwrap_or_default();
        let p = &mut self.plan;
        if let Some(levels) = q.levels {
            p.levels = levels;
        }
        p.duration = q.duration.map(|d| d.0).unwrap_or(Duration::from_secs(1));
        p.repeats = q.repeats.unwrap_or(1);
        p.warmup = q.warmup.map(|d| d.0).unwrap_or(Duration::from_secs(1));
        if let Some(s) = q.warmup_slice {
            p.warmup_slice = s.0;
        }
        for t in &mut self.targets {
            t.warmup = t.warmup.map(|w| w.min(p.warmup * 2));
        }
    }

    /// Keeps only the named targets; fails naming any that the suite lacks.
    pub fn select(&mut self, names: &[String]) -> Result<(), SuiteError> {
        for n in names {
            if !self.targets.iter().any(|t| &t.name == n) {
                let all: Vec<&str> = self.targets.iter().map(|t| t.name.as_str()).collect();
                return Err(SuiteError(format!(
                    "no target named {n:?} in suite {:?}: it has {}",
                    self.name,
                    all.join(", ")
                )));
            }
        }
        self.targets.retain(|t| names.contains(&t.name));
        Ok(())
    }
}

fn timed_level(c: usize) -> Level {
    Level {
        name: format!("c{c}"),
        connections: c,
        requests: None,
        max_duration: Duration::from_secs(60),
        keepalive: None,
        repeats: None,
    }
}

fn check_level_names(levels: &[Level]) -> Result<(), String> {
    for (i, l) in levels.iter().enumerate() {
        if levels[..i].iter().any(|o| o.name == l.name) {
            return Err(format!("level {:?} appears twice: give one a name", l.name));
        }
    }
    Ok(())
}

/// Fills a command's placeholders.
pub fn fill(cmd: &str, vars: &[(&str, &str)]) -> String {
    let mut out = cmd.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
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

    /// Each bad suite gets one line naming the file, the line and the key.
    #[test]
    fn bad_suites_name_the_line_and_key() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "duration = \"1s\"",
                "duration = \"1x\"",
                &["s.toml:7:", "plan.duration", "invalid duration unit"],
            ),
            (
                "build = \"cc",
                "biuld = \"cc",
                &["s.toml:20:", "target[0]", "unknown field `biuld`"],
            ),
            (
                "status = 302",
                "status = \"302\"",
                &["s.toml:12:", "scenario[0].expect.status"],
            ),
            (
                "(\\d+)\\.png$'",
                "(\\d+\\.png$'",
                &[
                    "s.toml:13:",
                    "scenario[0].expect.headers.Location",
                    "invalid pattern",
                ],
            ),
            (
                "{out}/server {port} {images}",
                "{out}/server {prot} {images}",
                &[
                    "s.toml:21:",
                    "target[0].start",
                    "unknown placeholder {prot}",
                ],
            ),
            (
                "{out}/server {port} {images}",
                "{out}/server {images}",
                &["s.toml:21:", "target[0].start", "no {port}"],
            ),
            (
                "connections = 10, requests",
                "connections = 0, requests",
                &["s.toml:6:", "plan.levels", "at least 1"],
            ),
            (
                "name = \"redirect\"",
                "name = \"redirect\"\npipeline = 0",
                &["s.toml:11:", "scenario[0].pipeline"],
            ),
            (
                "all_images = true",
                "all_images = true\n[scenario.expect.x]",
                &["s.toml:", "scenario[0].expect"],
            ),
            (
                "dir = \"targets/c-epoll\"",
                "dir = \"../etc\"",
                &["s.toml:19:", "target[0].dir"],
            ),
            (
                "images = 5",
                "images = 5\nimages = 6",
                &["s.toml:4:", "duplicate key"],
            ),
        ];
        for (from, to, want) in cases {
            assert!(GOOD.contains(from), "{from}");
            let text = GOOD.replacen(from, to, 1);
            let e = Suite::parse(&text, "s.toml").unwrap_err().0;
            assert!(!e.contains('\n'), "one line: {e}");
            for w in *want {
                assert!(e.contains(w), "{to:?}: want {w:?} in {e:?}");
            }
        }
    }

    #[test]
    fn all_images_needs_a_capturing_location_pattern() {
        let text = GOOD.replace(r"(\d+)", r"\d+");
        let e = Suite::parse(&text, "s.toml").unwrap_err().0;
        assert!(
            e.contains("scenario[0].expect.all_images") && e.contains("s.toml:14:"),
            "{e}"
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
        let e = s.select(&["nope".into()]).unwrap_err().0;
        assert!(e.contains("nope") && e.contains("it has c"), "{e}");
        s.select(&["c".into()]).unwrap();
        assert_eq!(s.targets.len(), 1);
    }
}
