//! The suite file's tables as serde reads them, with the values checked as they are read:
//! durations, patterns, commands, CPU lists and levels.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use regex::Regex;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use super::params::{Params, PARAM_PREFIX};
use super::services::SERVICE_PREFIX;
use super::{
    parse_cpus, timed_level, Level, LevelProtocol, LevelRate, Multiplexed, Ready,
    LEVEL_MAX_DURATION, PLACEHOLDERS,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSuite {
    pub(super) name: String,
    #[serde(default = "default_images")]
    pub(super) images: u32,
    #[serde(default = "default_template")]
    pub(super) template: String,
    #[serde(default)]
    pub(super) plan: RawPlan,
    pub(super) quick: Option<RawQuick>,
    #[serde(rename = "scenario")]
    pub(super) scenarios: Vec<RawScenario>,
    #[serde(rename = "target")]
    pub(super) targets: Vec<RawTarget>,
    #[serde(rename = "service", default)]
    pub(super) services: Vec<RawService>,
}

fn default_images() -> u32 {
    21
}
fn default_template() -> String {
    "https://avatar.example/Renard-{n}.png".into()
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlan {
    pub(super) levels: Option<Vec<Level>>,
    pub(super) duration: Option<Dur>,
    pub(super) repeats: Option<u32>,
    pub(super) warmup: Option<Dur>,
    pub(super) warmup_slice: Option<Dur>,
    pub(super) timeout: Option<Dur>,
    pub(super) sample_interval: Option<Dur>,
    pub(super) stop_grace: Option<Dur>,
    pub(super) client_cpus: Option<Cpus>,
    pub(super) server_cpus: Option<Cpus>,
    pub(super) service_cpus: Option<Cpus>,
    pub(super) build_timeout: Option<Dur>,
}

/// `[quick]`: what `--quick` changes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQuick {
    pub(super) levels: Option<Vec<Level>>,
    pub(super) duration: Option<Dur>,
    pub(super) repeats: Option<u32>,
    pub(super) warmup: Option<Dur>,
    pub(super) warmup_slice: Option<Dur>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    pub(super) name: String,
    #[serde(default = "default_method")]
    pub(super) method: String,
    #[serde(default = "default_path")]
    pub(super) path: String,
    #[serde(default = "default_true")]
    pub(super) keepalive: bool,
    #[serde(default = "default_pipeline")]
    pub(super) pipeline: usize,
    #[serde(default)]
    pub(super) http2: bool,
    #[serde(default)]
    pub(super) http3: bool,
    /// The closed model's wait before sleeping (`load::Coalesce`): "auto", "off" or a
    /// duration such as "50us".
    pub(super) coalesce: Option<String>,
    /// What foxbench's workers do when nothing is ready (`load::Idle`): "auto", "spin" or
    /// "sleep".
    pub(super) idle: Option<String>,
    pub(super) targets: Option<Vec<String>>,
    pub(super) levels: Option<Vec<String>>,
    pub(super) scheme: Option<String>,
    pub(super) insecure: Option<bool>,
    pub(super) cacert: Option<Command>,
    /// A client certificate and its key (mutual TLS), PEM files.
    pub(super) cert: Option<Command>,
    pub(super) key: Option<Command>,
    #[serde(default)]
    pub(super) headers: BTreeMap<String, String>,
    pub(super) expect: RawExpect,
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
pub(super) struct RawExpect {
    pub(super) status: u16,
    #[serde(default)]
    pub(super) headers: BTreeMap<String, HeaderPattern>,
    pub(super) body: Option<Pattern>,
    #[serde(default)]
    pub(super) all_images: bool,
    pub(super) body_xml_root: Option<String>,
    pub(super) body_contains: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTarget {
    pub(super) name: String,
    pub(super) language: String,
    pub(super) dir: String,
    #[serde(default)]
    pub(super) requires: Vec<String>,
    pub(super) install: Option<String>,
    pub(super) build: Option<Command>,
    pub(super) start: Command,
    #[serde(default)]
    pub(super) env: BTreeMap<String, String>,
    pub(super) artifact: Option<Command>,
    #[serde(default = "default_ready")]
    pub(super) ready: Ready,
    pub(super) ready_timeout: Option<Dur>,
    #[serde(default)]
    pub(super) inputs: Vec<String>,
    pub(super) warmup: Option<Dur>,
    pub(super) params: Option<Params>,
    pub(super) levels: Option<Vec<String>>,
    /// Levels it is not measured at, each with the reason the report gives.
    #[serde(default)]
    pub(super) excluded_levels: BTreeMap<String, String>,
    #[serde(rename = "use")]
    pub(super) uses: Option<Vec<String>>,
}

/// A `[[service]]`: built and started as a target is, with an optional check and counter.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawService {
    pub(super) name: String,
    pub(super) dir: String,
    #[serde(default)]
    pub(super) requires: Vec<String>,
    pub(super) install: Option<String>,
    pub(super) build: Option<Command>,
    pub(super) start: Command,
    #[serde(default)]
    pub(super) env: BTreeMap<String, String>,
    pub(super) artifact: Option<Command>,
    #[serde(default = "default_ready")]
    pub(super) ready: Ready,
    pub(super) ready_timeout: Option<Dur>,
    #[serde(default)]
    pub(super) inputs: Vec<String>,
    pub(super) verify: Option<RawServiceVerify>,
    pub(super) counter: Option<RawCounter>,
    pub(super) active: Option<Command>,
}

/// A service's `verify`: one GET and what its answer must be.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServiceVerify {
    #[serde(default = "default_path")]
    pub(super) path: String,
    #[serde(default = "default_status")]
    pub(super) status: u16,
    pub(super) body: Option<Pattern>,
}

fn default_status() -> u16 {
    200
}

/// A service's `counter`: an integer read over HTTP, the whole body or a JSON field.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCounter {
    pub(super) path: String,
    pub(super) field: Option<String>,
}

fn default_ready() -> Ready {
    Ready::Http
}

/// A duration written as text: `2s`, `500ms`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dur(pub(super) Duration);

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
pub(super) struct Pattern(pub(super) Regex);

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Pattern::compile(&text).map_err(de::Error::custom)
    }
}

/// An expected header's pattern: a regex, or one holding `{random.N}` (the request's Nth
/// random part, matched literally), compiled per request.
#[derive(Debug, Clone)]
pub(super) enum HeaderPattern {
    Fixed(Regex),
    Echo(super::Echo),
}

impl<'de> Deserialize<'de> for HeaderPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if !text.contains("{random.") {
            return Pattern::compile(&text)
                .map(|p| HeaderPattern::Fixed(p.0))
                .map_err(de::Error::custom);
        }
        let echo = super::Echo::parse(&text).map_err(de::Error::custom)?;
        // The pattern around the random parts must compile once they are filled in.
        let sample: Vec<String> = (0..echo.parts_needed()).map(|_| "0".into()).collect();
        Pattern::compile(&echo.fill_escaped(&sample)).map_err(de::Error::custom)?;
        Ok(HeaderPattern::Echo(echo))
    }
}

impl Pattern {
    fn compile(text: &str) -> Result<Pattern, String> {
        Regex::new(text)
            .map(Pattern)
            .map_err(|e| format!("invalid pattern {text:?}: {}", one_line(&e.to_string())))
    }
}

/// A command with `{placeholders}`, checked when read.
#[derive(Debug, Clone)]
pub(super) struct Command(pub(super) String);

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text.trim().is_empty() {
            return Err(de::Error::custom("empty command"));
        }
        let mut rest = text.as_str();
        while let Some(i) = rest.find('{') {
            let after = &rest[i + 1..];
            let Some(j) = after.find('}') else {
                // A shell brace group (`{ cmd; }`) may stay open here; a placeholder may not,
                // or the command would get its text literally.
                let word: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
                    .collect();
                let head = word.split('.').next().unwrap_or("");
                if PLACEHOLDERS.contains(&head)
                    || word.starts_with(PARAM_PREFIX)
                    || word.starts_with(SERVICE_PREFIX)
                {
                    return Err(de::Error::custom(format!(
                        "unclosed placeholder {{{word} in {text:?}: close it with }}"
                    )));
                }
                break;
            };
            let name = &after[..j];
            // `{param.NAME}` is checked against the target's params once they are known.
            if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.is_empty()
                && !PLACEHOLDERS.contains(&name)
            {
                return Err(de::Error::custom(format!(
                    "unknown placeholder {{{name}}} in {text:?}: use {}, or {{{PARAM_PREFIX}NAME}} for a parameter",
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
pub(super) struct Cpus(pub(super) Option<Vec<usize>>);

impl<'de> Deserialize<'de> for Cpus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse_cpus(&text).map(Cpus).map_err(de::Error::custom)
    }
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
                Ok(timed_level(v as usize))
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
                let mut tls_resume = None;
                let mut objective = None;
                let mut window = None;
                let mut start_rate = None;
                let mut rate = None;
                let mut http2 = None;
                let mut http3 = None;
                let mut streams = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "name" => name = Some(map.next_value::<String>()?),
                        "connections" => connections = Some(map.next_value::<u32>()?),
                        "requests" => requests = Some(map.next_value::<u64>()?),
                        "max_duration" => max_duration = Some(map.next_value::<Dur>()?.0),
                        "keepalive" => keepalive = Some(map.next_value::<bool>()?),
                        "repeats" => repeats = Some(map.next_value::<u32>()?),
                        "tls_resume" => tls_resume = Some(map.next_value::<bool>()?),
                        "capacity" => objective = Some(map.next_value::<String>()?),
                        "window" => window = Some(map.next_value::<Dur>()?.0),
                        "start_rate" => start_rate = Some(map.next_value::<f64>()?),
                        "rate" => rate = Some(map.next_value::<RateText>()?.0),
                        "http2" => http2 = Some(map.next_value::<bool>()?),
                        "http3" => http3 = Some(map.next_value::<bool>()?),
                        "streams" => streams = Some(map.next_value::<u32>()?),
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
                                    "tls_resume",
                                    "capacity",
                                    "window",
                                    "start_rate",
                                    "rate",
                                    "http2",
                                    "http3",
                                    "streams",
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
                let max_duration = max_duration.unwrap_or(LEVEL_MAX_DURATION);
                let capacity = match objective {
                    None => {
                        if window.is_some() || start_rate.is_some() {
                            return Err(de::Error::custom(
                                "window and start_rate belong to a capacity level: add capacity = \"p99<10ms\" or drop them",
                            ));
                        }
                        None
                    }
                    Some(objective) => Some(capacity_level(
                        objective,
                        window,
                        start_rate,
                        max_duration,
                        requests.is_some() || repeats.is_some(),
                    )?),
                };
                if capacity.is_some() && rate.is_some() {
                    return Err(de::Error::custom(
                        "a capacity level searches for its own rates: drop rate, or capacity",
                    ));
                }
                let name = name.unwrap_or_else(|| format!("c{connections}"));
                let protocol = level_protocol(&name, (http2, http3), streams, keepalive)?;
                Ok(Level {
                    name,
                    connections: connections as usize,
                    requests,
                    max_duration,
                    keepalive,
                    repeats,
                    tls_resume,
                    capacity,
                    rate,
                    protocol,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// A level's `http2`, `http3` and `streams`, checked as `foxbench load` checks `--http2`,
/// `--http3` and `--streams`: one protocol at most, streams only under HTTP/2 or HTTP/3,
/// within the engine's range, and more than one only with keep-alive. `name` is the
/// level's, for the message.
fn level_protocol<E: de::Error>(
    name: &str,
    (http2, http3): (Option<bool>, Option<bool>),
    streams: Option<u32>,
    keepalive: Option<bool>,
) -> Result<Option<LevelProtocol>, E> {
    let version = match (http2 == Some(true), http3 == Some(true)) {
        (true, true) => {
            return Err(E::custom(format!(
                "level {name:?} sets both http2 and http3: a level speaks one protocol; drop one, and add a level for the other"
            )))
        }
        (true, false) => Multiplexed::Http2,
        (false, true) => Multiplexed::Http3,
        (false, false) => {
            return match streams {
                Some(_) => Err(E::custom(
                    "streams belong to an HTTP/2 or HTTP/3 level: add http2 = true or http3 = true, or drop streams (HTTP/1.1 pipelines with the scenario's pipeline)",
                )),
                None => Ok(None),
            };
        }
    };
    let streams = streams.unwrap_or(1);
    if streams == 0 || streams as usize > load::MAX_PIPELINE {
        return Err(E::custom(format!(
            "streams = {streams}: use 1 to {}",
            load::MAX_PIPELINE
        )));
    }
    if keepalive == Some(false) && streams > 1 {
        return Err(E::custom(format!(
            "streams = {streams} with keepalive = false: a new connection per request carries one stream; set streams = 1 or drop keepalive = false"
        )));
    }
    Ok(Some(LevelProtocol { version, streams }))
}

/// A capacity level's search, checked: the objective in `--slo`'s syntax, a window that
/// fits the budget (`max_duration`), no `requests` or `repeats` (a search runs windows).
fn capacity_level<E: de::Error>(
    objective: String,
    window: Option<Duration>,
    start_rate: Option<f64>,
    budget: Duration,
    counted: bool,
) -> Result<measure::search::Capacity, E> {
    if counted {
        return Err(E::custom(
            "a capacity level runs timed windows of a search: drop requests and repeats",
        ));
    }
    let slo = objective
        .parse::<report::slo::Slo>()
        .map_err(|e| E::custom(format!("capacity: {e}")))?;
    if let Some(c) = slo.clauses.iter().find(|c| {
        matches!(
            c.metric,
            report::slo::Metric::Percentile {
                series: report::slo::Series::Service,
                ..
            }
        )
    }) {
        return Err(E::custom(format!(
            "capacity: {:?}: the shootout judges the corrected latency only: drop [service]",
            c.text
        )));
    }
    let level = measure::search::Capacity {
        objective: objective.trim().to_string(),
        slo,
        window: window.unwrap_or(measure::search::DEFAULT_WINDOW),
        start_per_sec: start_rate.unwrap_or(measure::search::DEFAULT_START_RATE),
    };
    level
        .config(budget, measure::search::After::Nothing)
        .map_err(|e| E::custom(e.worded(&super::SEARCH_KEYS)))?;
    Ok(level)
}

/// A level's `rate`: a number of requests per second, or any `foxbench load -R` text.
struct RateText(LevelRate);

impl<'de> Deserialize<'de> for RateText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RateText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("requests per second, like 400, or a schedule like \"100..1000/10s\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RateText, E> {
                // Rate::parse refuses a rate that never sends a request.
                let rate = load::Rate::parse(v).map_err(|e| E::custom(e.to_string()))?;
                Ok(RateText(LevelRate {
                    text: v.trim().to_string(),
                    rate,
                }))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RateText, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RateText, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RateText, E> {
                self.visit_str(&v.to_string())
            }
        }
        d.deserialize_any(V)
    }
}

/// A message folded onto one line (regex and TOML errors span several).
pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
