//! From the suite's text to a validated [`Suite`]: TOML to raw tables, raw tables to suite
//! types, each mistake a [`SuiteError`] naming the file, the line and the key.

use std::collections::BTreeMap;
use std::time::Duration;

use super::params::{self, check_param_use, row_name};
use super::raw::{one_line, RawPlan, RawQuick, RawSuite, RawTarget};
use super::scenarios::scenarios;
use super::services::{self, ServiceSpec};
use super::{timed_level, Level, Plan, PlanOverrides, Scenario, Suite, SuiteError, TargetSpec};

/// The suite's text and its name in errors, for locating mistakes found after parsing.
pub(super) struct Source<'a> {
    text: &'a str,
    file: &'a str,
}

impl Source<'_> {
    /// A mistake in the value of `key`, found at `line`.
    pub(super) fn key(&self, line: usize, key: &str, problem: String) -> SuiteError {
        SuiteError::Key {
            file: self.file.into(),
            line,
            key: key.into(),
            problem,
        }
    }

    /// The line of `key` in the nth `[[table]]`.
    pub(super) fn line(&self, header: &str, n: usize, key: &str) -> usize {
        line_of_key(self.text, header, n, key)
    }
}

/// Reads the TOML into the raw tables; type and shape errors name the key's path.
pub(super) fn read(text: &str, source: &str) -> Result<RawSuite, SuiteError> {
    let de = toml::de::Deserializer::parse(text).map_err(|e| SuiteError::Syntax {
        file: source.into(),
        line: e.span().map(|s| line_of(text, s.start)).unwrap_or(1),
        message: one_line(e.message()),
    })?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let line = inner.span().map(|s| line_of(text, s.start)).unwrap_or(1);
        let problem = one_line(inner.message());
        if path == "." {
            SuiteError::Document {
                file: source.into(),
                line,
                problem,
            }
        } else {
            SuiteError::Key {
                file: source.into(),
                line,
                key: path,
                problem,
            }
        }
    })
}

/// Checks what serde cannot and fills in the defaults.
pub(super) fn suite(raw: RawSuite, text: &str, source: &str) -> Result<Suite, SuiteError> {
    let src = Source { text, file: source };
    if raw.images == 0 || raw.images > 65535 {
        return Err(src.key(
            1,
            "images",
            format!("{} images: use 1 to 65535", raw.images),
        ));
    }
    if !raw.template.contains("{n}") {
        return Err(src.key(
            1,
            "template",
            format!("{:?} has no {{n}} for the image number", raw.template),
        ));
    }
    let plan = plan(raw.plan, &src)?;
    let quick = raw.quick.map(|q| quick(q, &src)).transpose()?;
    let levels = LevelNames {
        plan: &plan.levels,
        quick: quick.as_ref().and_then(|q| q.levels.as_deref()),
    };
    if raw.scenarios.is_empty() {
        return Err(src.key(1, "scenario", "no [[scenario]]: add one".into()));
    }
    let names: Vec<String> = raw.targets.iter().map(|t| t.name.clone()).collect();
    let services = services::services(raw.services, &src)?;
    let targets = targets(raw.targets, &src, &levels, &services)?;
    let scenarios = scenarios(raw.scenarios, &src, &levels, &targets)?;
    unused_multiplexed_level(&plan, quick.as_ref(), &scenarios, &src)?;
    for (i, name) in names.iter().enumerate() {
        if !scenarios
            .iter()
            .any(|s| s.targets.as_ref().is_none_or(|names| names.contains(name)))
        {
            return Err(src.key(
                src.line("[[target]]", i, "name"),
                &format!("target[{i}].name"),
                format!("{name:?} runs no scenario: each [[scenario]] lists its targets, and none lists {name:?}"),
            ));
        }
    }
    Ok(Suite {
        name: raw.name,
        images: raw.images,
        template: raw.template,
        plan,
        quick,
        scenarios,
        targets,
        services,
    })
}

fn plan(p: RawPlan, src: &Source) -> Result<Plan, SuiteError> {
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
        service_cpus: p.service_cpus.and_then(|c| c.0),
        build_timeout: p
            .build_timeout
            .map(|d| d.0)
            .unwrap_or(Duration::from_secs(600)),
    };
    if plan.levels.is_empty() {
        return Err(src.key(
            1,
            "plan.levels",
            "no levels: give at least one, e.g. [10, 100]".into(),
        ));
    }
    if plan.repeats == 0 {
        return Err(src.key(1, "plan.repeats", "must be at least 1".into()));
    }
    check_level_names(&plan.levels).map_err(|m| src.key(1, "plan.levels", m))?;
    Ok(plan)
}

fn quick(q: RawQuick, src: &Source) -> Result<PlanOverrides, SuiteError> {
    if let Some(levels) = &q.levels {
        check_level_names(levels).map_err(|m| src.key(1, "quick.levels", m))?;
    }
    if q.repeats == Some(0) {
        return Err(src.key(1, "quick.repeats", "must be at least 1".into()));
    }
    Ok(PlanOverrides {
        levels: q.levels,
        duration: q.duration.map(|d| d.0),
        repeats: q.repeats,
        warmup: q.warmup.map(|d| d.0),
        warmup_slice: q.warmup_slice.map(|d| d.0),
    })
}

/// The levels a scenario's or a target's `levels` may name.
pub(super) struct LevelNames<'a> {
    plan: &'a [Level],
    /// `[quick]`'s levels, when it has its own.
    quick: Option<&'a [Level]>,
}

impl LevelNames<'_> {
    /// Every level of [plan] and [quick].
    pub(super) fn all(&self) -> impl Iterator<Item = &Level> {
        self.plan.iter().chain(self.quick.into_iter().flatten())
    }

    /// Checks a `levels` restriction: each name is a level of the plan, and `--quick` keeps
    /// at least one of them, so that every row and scenario is measured in quick mode too.
    pub(super) fn check(&self, names: &[String]) -> Result<(), String> {
        let list = |ls: &[Level]| {
            ls.iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if names.is_empty() {
            return Err(format!(
                "no levels: name at least one of {}, or leave the key out for all",
                list(self.plan)
            ));
        }
        // A capacity level may be named from [plan] or [quick] alone (the quick run's may
        // differ); a list naming only capacity levels leaves no ordinary level out.
        let all = || self.plan.iter().chain(self.quick.into_iter().flatten());
        let capacity = |n: &String| all().any(|l| &l.name == n && l.capacity.is_some());
        if let Some(n) = names
            .iter()
            .find(|n| !self.plan.iter().any(|l| &l.name == *n) && !capacity(n))
        {
            return Err(format!(
                "{n:?} is not a level of [plan]: use {}",
                list(self.plan)
            ));
        }
        if let Some(quick) = self.quick {
            if !names.iter().all(capacity)
                && !names.iter().any(|n| quick.iter().any(|l| &l.name == n))
            {
                return Err(format!(
                    "none of {names:?} is a level of [quick], so a quick run would not measure it: add one of {}",
                    list(quick)
                ));
            }
        }
        Ok(())
    }

    /// Checks a target's `excluded_levels`: each names a level, gives a reason, and
    /// `--quick` still measures one of the levels `kept` (its `levels`; all when `None`).
    pub(super) fn check_excluded(
        &self,
        kept: Option<&[String]>,
        excluded: &BTreeMap<String, String>,
    ) -> Result<(), String> {
        let names = || {
            self.all()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        for (name, why) in excluded {
            if !self.all().any(|l| &l.name == name) {
                return Err(format!(
                    "{name:?} is not a level of [plan]: use {}",
                    names()
                ));
            }
            if why.trim().is_empty() {
                return Err(format!(
                    "{name:?} has no reason: say why it is not measured, as the report will"
                ));
            }
        }
        let Some(quick) = self.quick.filter(|_| !excluded.is_empty()) else {
            return Ok(());
        };
        let measured = |l: &&Level| {
            kept.is_none_or(|k| k.contains(&l.name)) && !excluded.contains_key(&l.name)
        };
        if !quick.iter().any(|l| l.capacity.is_none() && measured(&l)) {
            return Err(format!(
                "it leaves no ordinary level of [quick] to measure, so a quick run would not measure this target: keep one of {}",
                quick
                    .iter()
                    .map(|l| l.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }
}

fn targets(
    raw: Vec<RawTarget>,
    src: &Source,
    levels: &LevelNames,
    services: &[ServiceSpec],
) -> Result<Vec<TargetSpec>, SuiteError> {
    if raw.is_empty() {
        return Err(src.key(1, "target", "no [[target]]: add one".into()));
    }
    let mut targets: Vec<TargetSpec> = Vec::new();
    for (i, t) in raw.into_iter().enumerate() {
        let err = |k: &str, problem: String| {
            src.key(
                src.line("[[target]]", i, k),
                &format!("target[{i}].{k}"),
                problem,
            )
        };
        if t.name.is_empty()
            || !t
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            return Err(err(
                "name",
                format!("{:?}: use letters, digits, '-', '_' or '.'", t.name),
            ));
        }
        // A parameterized target may share its name with a plain one (whose row is then
        // the reference of the group); rows must not collide.
        if t.params.is_none() && targets.iter().any(|o| o.name == t.name) {
            return Err(err("name", format!("target {:?} is defined twice", t.name)));
        }
        // A service and a target of one name would share a build cache entry and a log file.
        if services.iter().any(|s| s.name() == t.name) {
            return Err(err(
                "name",
                format!("{:?} is a service's name too: rename one of them", t.name),
            ));
        }
        if !t.start.0.contains("{port}") {
            return Err(err(
                "start",
                format!(
                    "{:?} has no {{port}}: the target must listen where foxbench says",
                    t.start.0
                ),
            ));
        }
        if t.build.as_ref().is_some_and(|b| b.0.contains("{port}")) {
            return Err(err("build", "{port} is only known at start".into()));
        }
        if t.dir.is_empty()
            || std::path::Path::new(&t.dir).is_absolute()
            || t.dir.split('/').any(|c| c == "..")
        {
            return Err(err(
                "dir",
                format!(
                    "{:?}: give a path inside the suite's root, like targets/{}",
                    t.dir, t.name
                ),
            ));
        }
        if let Some(names) = &t.levels {
            levels.check(names).map_err(|m| err("levels", m))?;
        }
        levels
            .check_excluded(t.levels.as_deref(), &t.excluded_levels)
            .map_err(|m| err("excluded_levels", m))?;
        let uses = services::uses(&t, services).map_err(|(key, m)| {
            src.key(
                src.line("[[target]]", i, key.split('.').next().unwrap_or(&key)),
                &format!("target[{i}].{key}"),
                m,
            )
        })?;
        let params = t.params.clone().unwrap_or_default();
        if let Some(p) = &t.params {
            p.check().map_err(|(key, m)| {
                src.key(
                    src.line("[[target]]", i, "params"),
                    &format!("target[{i}].params.{key}"),
                    m,
                )
            })?;
            if p.0.is_empty() {
                return Err(err(
                    "params",
                    "no parameters: give e.g. params = { heap = [\"8m\", \"16m\"] }, or leave the key out".into(),
                ));
            }
            // Counted before anything is expanded: a cross product can outgrow memory.
            if p.row_count().is_none_or(|n| n > params::MAX_ROWS) {
                let sizes: Vec<String> = p.0.iter().map(|(_, v)| v.len().to_string()).collect();
                return Err(err(
                    "params",
                    format!(
                        "{} rows (the cross product of {} values) is more than {}: give fewer values, or list the rows wanted under one key",
                        p.row_count().map_or("too many".into(), |n| n.to_string()),
                        sizes.join(" × "),
                        params::MAX_ROWS
                    ),
                ));
            }
        }
        check_param_use(&t, &params).map_err(|(line_key, key, m)| {
            src.key(
                src.line("[[target]]", i, line_key),
                &format!("target[{i}].{key}"),
                m,
            )
        })?;
        for row in params.rows() {
            let name = row_name(&t.name, &row);
            if targets.iter().any(|o| o.name == name) {
                return Err(err("params", format!("row {name:?} is defined twice")));
            }
            targets.push(TargetSpec {
                name,
                base: t.name.clone(),
                language: t.language.clone(),
                dir: t.dir.clone(),
                requires: t.requires.clone(),
                install: t.install.clone(),
                build: t.build.as_ref().map(|c| params::fill(&c.0, &row)),
                start: params::fill(&t.start.0, &row),
                env: t
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), params::fill(v, &row)))
                    .collect(),
                artifact: t.artifact.as_ref().map(|c| params::fill(&c.0, &row)),
                ready: t.ready,
                ready_timeout: t
                    .ready_timeout
                    .map(|d| d.0)
                    .unwrap_or(Duration::from_secs(30)),
                inputs: t.inputs.clone(),
                warmup: t.warmup.map(|d| d.0),
                params: row,
                levels: t.levels.clone(),
                excluded_levels: t.excluded_levels.clone(),
                uses: uses.clone(),
            });
        }
    }
    Ok(targets)
}

/// Refuses an HTTP/2 or HTTP/3 level that no scenario runs: one runs only for scenarios
/// that name it in `levels` or speak its protocol ([`Suite::levels_for`]).
fn unused_multiplexed_level(
    plan: &Plan,
    quick: Option<&PlanOverrides>,
    scenarios: &[Scenario],
    src: &Source,
) -> Result<(), SuiteError> {
    let lists = [
        ("plan", Some(plan.levels.as_slice())),
        ("quick", quick.and_then(|q| q.levels.as_deref())),
    ];
    for (table, levels) in lists {
        for (i, l) in levels.into_iter().flatten().enumerate() {
            let Some(p) = l.protocol else { continue };
            let runs = |s: &Scenario| {
                s.protocol == Some(p.version)
                    || s.levels.as_ref().is_some_and(|n| n.contains(&l.name))
            };
            if !scenarios.iter().any(runs) {
                let (name, key) = (p.version.name(), p.version.key());
                return Err(src.key(
                    line_of_level(src.text, table, &l.name),
                    &format!("{table}.levels[{i}]"),
                    format!(
                        "{name} level {:?} runs for no scenario: name it in the levels of the scenarios whose targets speak {name}, or set {key} = true on one",
                        l.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The line of the level named `name` in `[table]` (where its `name = "..."` is written),
/// else of the table's header.
fn line_of_level(text: &str, table: &str, name: &str) -> usize {
    let header = format!("[{table}]");
    let mut inside = false;
    let mut at = 1;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('[') {
            inside = t == header;
            if inside {
                at = i + 1;
            }
            continue;
        }
        if inside
            && (t.contains(&format!("name = \"{name}\""))
                || t.contains(&format!("name = '{name}'")))
        {
            return i + 1;
        }
    }
    at
}

/// The key whose line a scenario's mistake is on: `status` for `expect.status`, `headers`
/// for `headers.X-Id` and `expect.headers.X-Id` (written inline on that line).
pub(super) fn line_key(k: &str) -> &str {
    let k = k.strip_prefix("expect.").unwrap_or(k);
    k.split('.').next().unwrap_or(k)
}

fn check_level_names(levels: &[Level]) -> Result<(), String> {
    for (i, l) in levels.iter().enumerate() {
        if levels[..i].iter().any(|o| o.name == l.name) {
            return Err(format!("level {:?} appears twice: give one a name", l.name));
        }
    }
    Ok(())
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

#[cfg(test)]
mod tests;
