//! A suite's `[[service]]` entries: processes its targets depend on (a backend, a
//! database), built and started the way targets are, and the `{service.NAME.port|host|url}`
//! placeholders a target's start command fills from them.
//!
//! A target's `use` names the services it needs (every service of the suite when absent);
//! a placeholder may name only a service the target uses.

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;

use super::raw::{RawService, RawTarget};
use super::validate::Source;
use super::{SuiteError, TargetSpec};

/// What a service placeholder starts with: `{service.hello.url}`.
pub const SERVICE_PREFIX: &str = "service.";

/// What a service placeholder may ask for.
const ATTRIBUTES: [&str; 3] = ["port", "host", "url"];

/// One `[[service]]`.
#[derive(Debug, Clone)]
pub struct ServiceSpec {
    /// How it is built and started: a target's keys (its `language` is "service").
    pub target: TargetSpec,
    /// A request that must be answered as given, checked once ready and before each target
    /// that uses it.
    pub check: Option<ServiceCheck>,
    /// Its own count of the requests it served, read over HTTP.
    pub counter: Option<Counter>,
    /// `active`: a shell command whose stdout is an integer, run a few times per measured
    /// repeat with `{port}` filled in: how busy the service is by its own account (for
    /// PostgreSQL, the client backends running a query, from `pg_stat_activity`).
    pub active: Option<String>,
}

impl ServiceSpec {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.target.name
    }
}

/// A service's `verify`: `GET path` answers `status`, with a body matching `body`.
#[derive(Debug, Clone)]
pub struct ServiceCheck {
    /// The path requested.
    pub path: String,
    /// The status expected.
    pub status: u16,
    /// A pattern the body matches.
    pub body: Option<Regex>,
}

/// A service's `counter`: `GET path` answers an integer, the whole body or a top-level
/// JSON field of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    /// The path requested.
    pub path: String,
    /// The JSON field holding the count; `None` = the whole body is the number.
    pub field: Option<String>,
}

impl Counter {
    /// The count in a response body.
    pub fn read(&self, body: &[u8]) -> Result<u64, String> {
        let text = String::from_utf8_lossy(body);
        let shown: String = text.chars().take(60).collect();
        match &self.field {
            None => text
                .trim()
                .parse()
                .map_err(|_| format!("GET {}: {shown:?} is not a count", self.path)),
            Some(field) => {
                let v: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|e| format!("GET {}: not JSON ({e}): {shown:?}", self.path))?;
                v.get(field).and_then(|n| n.as_u64()).ok_or_else(|| {
                    format!("GET {}: no integer field {field:?} in {shown:?}", self.path)
                })
            }
        }
    }
}

/// The placeholders of a service listening on `port`: `service.NAME.port`, `.host`, `.url`.
pub fn service_vars(name: &str, port: u16) -> Vec<(String, String)> {
    let host = "127.0.0.1";
    vec![
        (format!("{SERVICE_PREFIX}{name}.port"), port.to_string()),
        (format!("{SERVICE_PREFIX}{name}.host"), host.to_string()),
        (
            format!("{SERVICE_PREFIX}{name}.url"),
            format!("http://{host}:{port}"),
        ),
    ]
}

/// The service placeholders of a command, as (service, attribute), in order.
pub(super) fn refs(cmd: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = cmd;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        let Some(j) = after.find('}') else { break };
        if let Some(inner) = after[..j].strip_prefix(SERVICE_PREFIX) {
            let (name, attr) = inner.rsplit_once('.').unwrap_or((inner, ""));
            out.push((name, attr));
        }
        rest = &after[j + 1..];
    }
    out
}

/// Validates the `[[service]]` tables.
pub(super) fn services(raw: Vec<RawService>, src: &Source) -> Result<Vec<ServiceSpec>, SuiteError> {
    let mut out: Vec<ServiceSpec> = Vec::new();
    for (i, s) in raw.into_iter().enumerate() {
        let err = |k: &str, problem: String| {
            src.key(
                src.line("[[service]]", i, k.split('.').next().unwrap_or(k)),
                &format!("service[{i}].{k}"),
                problem,
            )
        };
        if s.name.is_empty()
            || !s
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(err(
                "name",
                format!("{:?}: use letters, digits, '-' or '_'", s.name),
            ));
        }
        if out.iter().any(|o| o.name() == s.name) {
            return Err(err(
                "name",
                format!("service {:?} is defined twice", s.name),
            ));
        }
        if !s.start.0.contains("{port}") {
            return Err(err(
                "start",
                format!(
                    "{:?} has no {{port}}: the service must listen where foxbench says",
                    s.start.0
                ),
            ));
        }
        let mut commands: Vec<(&str, &str)> = vec![("start", &s.start.0)];
        if let Some(b) = &s.build {
            if b.0.contains("{port}") {
                return Err(err("build", "{port} is only known at start".into()));
            }
            commands.push(("build", &b.0));
        }
        for v in s.env.values() {
            commands.push(("env", v));
        }
        if let Some(a) = &s.active {
            commands.push(("active", &a.0));
        }
        for (key, cmd) in commands {
            if cmd.contains(&format!("{{{SERVICE_PREFIX}")) || cmd.contains("{param.") {
                return Err(err(
                    key,
                    format!("{cmd:?}: a service's commands take no {{service.*}} or {{param.*}} placeholders"),
                ));
            }
        }
        check_dir(&s.dir, &s.name).map_err(|m| err("dir", m))?;
        let check = match s.verify {
            Some(v) => {
                if !v.path.starts_with('/') {
                    return Err(err(
                        "verify",
                        format!("path {:?} must start with /", v.path),
                    ));
                }
                if !(100..=599).contains(&v.status) {
                    return Err(err("verify", format!("{} is not an HTTP status", v.status)));
                }
                Some(ServiceCheck {
                    path: v.path,
                    status: v.status,
                    body: v.body.map(|p| p.0),
                })
            }
            None => None,
        };
        if let Some(c) = &s.counter {
            if !c.path.starts_with('/') {
                return Err(err(
                    "counter",
                    format!("path {:?} must start with /", c.path),
                ));
            }
        }
        out.push(ServiceSpec {
            target: TargetSpec {
                name: s.name.clone(),
                base: s.name,
                params: Vec::new(),
                levels: None,
                excluded_levels: BTreeMap::new(),
                language: "service".into(),
                dir: s.dir,
                requires: s.requires,
                install: s.install,
                build: s.build.map(|c| c.0),
                start: s.start.0,
                env: s.env,
                artifact: s.artifact.map(|c| c.0),
                ready: s.ready,
                ready_timeout: s
                    .ready_timeout
                    .map(|d| d.0)
                    .unwrap_or(Duration::from_secs(30)),
                inputs: s.inputs,
                warmup: None,
                uses: Vec::new(),
            },
            check,
            counter: s.counter.map(|c| Counter {
                path: c.path,
                field: c.field,
            }),
            active: s.active.map(|c| c.0),
        });
    }
    Ok(out)
}

/// A `dir` inside the suite's root.
pub(super) fn check_dir(dir: &str, name: &str) -> Result<(), String> {
    if dir.is_empty()
        || std::path::Path::new(dir).is_absolute()
        || dir.split('/').any(|c| c == "..")
    {
        return Err(format!(
            "{dir:?}: give a path inside the suite's root, like targets/{name}"
        ));
    }
    Ok(())
}

/// The services a target uses: its `use`, each a service of the suite, or all of them.
/// A mistake is (the key, what is wrong).
pub(super) fn uses(
    t: &RawTarget,
    services: &[ServiceSpec],
) -> Result<Vec<String>, (String, String)> {
    let names: Vec<&str> = services.iter().map(|s| s.name()).collect();
    let have = || {
        if names.is_empty() {
            "the suite has no [[service]]".to_string()
        } else {
            format!("the suite's services are {}", names.join(", "))
        }
    };
    let uses = match &t.uses {
        None => names.iter().map(|n| n.to_string()).collect(),
        Some(list) => {
            for (i, n) in list.iter().enumerate() {
                if !names.contains(&n.as_str()) {
                    return Err(("use".into(), format!("no service named {n:?}: {}", have())));
                }
                if list[..i].contains(n) {
                    return Err(("use".into(), format!("{n:?} is listed twice")));
                }
            }
            list.clone()
        }
    };
    let mut commands: Vec<(String, &str)> = vec![("start".into(), &t.start.0)];
    if let Some(b) = &t.build {
        commands.push(("build".into(), &b.0));
    }
    if let Some(a) = &t.artifact {
        commands.push(("artifact".into(), &a.0));
    }
    for (k, v) in &t.env {
        commands.push((format!("env.{k}"), v));
    }
    for (key, cmd) in commands {
        for (name, attr) in refs(cmd) {
            let placeholder = format!("{{{SERVICE_PREFIX}{name}.{attr}}}");
            if !names.contains(&name) {
                return Err((
                    key,
                    format!("unknown service in {placeholder} in {cmd:?}: {}", have()),
                ));
            }
            if !ATTRIBUTES.contains(&attr) {
                return Err((
                    key,
                    format!(
                        "{placeholder} in {cmd:?}: a service placeholder is {{{SERVICE_PREFIX}{name}.port}}, .host or .url"
                    ),
                ));
            }
            if key != "start" {
                return Err((
                    key,
                    format!("{placeholder}: a service's port is only known at start, so it may appear only in start"),
                ));
            }
            if !uses.iter().any(|u| u == name) {
                return Err((
                    key,
                    format!("{placeholder} but the target's use leaves out {name:?}: add it, e.g. use = [\"{name}\"]"),
                ));
            }
        }
    }
    Ok(uses)
}

#[cfg(test)]
mod tests;
