//! Suite files: the validated targets, scenarios and plan, and [`Suite::parse`], whose errors
//! name the file, the line and the key.
//!
//! The TOML shapes serde reads are in `raw`; turning them into these types, with the
//! error messages, is `validate`.

use std::collections::BTreeMap;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;

mod raw;
mod validate;

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

    /// Keeps only the named targets; fails naming any that the suite lacks.
    pub fn select(&mut self, names: &[String]) -> Result<(), SuiteError> {
        for n in names {
            if !self.targets.iter().any(|t| &t.name == n) {
                return Err(SuiteError::UnknownTarget {
                    name: n.clone(),
                    suite: self.name.clone(),
                    available: self.targets.iter().map(|t| t.name.clone()).collect(),
                });
            }
        }
        self.targets.retain(|t| names.contains(&t.name));
        Ok(())
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
