//! A suite's targets and services with their commands filled as the shootout fills them:
//! what `foxbench shootout --list --json` prints, so that other tools (the targets'
//! checkers in `targets/`) run a target exactly as the shootout would, without filling
//! placeholders themselves. It also says which scenarios each target implements (and which
//! of them speak HTTP/2) and where the build cache holds a target's finished build, so that
//! a checker can run the shootout's own builds (`targets/h2spec.py`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use report::listing::{Level, Listing as TextListing, Scenario, Service, Services, Target};

use crate::cache;
use crate::lifecycle::{cache_entry, Setup};
use crate::suite::{fill, service_vars, Multiplexed, Ready, Suite, TargetSpec, SERVICE_PREFIX};

/// The suite as listed: where it is, what was filled, and every target and service.
#[derive(Debug, Serialize)]
pub struct Listing {
    /// The suite's name.
    pub suite: String,
    /// What target `dir`s are relative to (absolute).
    pub root: PathBuf,
    /// The placeholders filled in every command, with their values: the suite's `images`
    /// and `template`, and those given by the caller (`port`, `out`, `service.NAME.port`,
    /// ...); `{dir}` is each entry's own `dir`. Placeholders without a value stay as written.
    pub filled: BTreeMap<String, String>,
    /// Every scenario, in suite order.
    pub scenarios: Vec<ListedScenario>,
    /// Every target, one entry per parameter row, in run order.
    pub targets: Vec<Listed>,
    /// Every `[[service]]`, in suite order.
    pub services: Vec<Listed>,
}

/// One scenario: its request, and how it is spoken.
#[derive(Debug, Serialize)]
pub struct ListedScenario {
    /// Its name.
    pub name: String,
    /// The request's method.
    pub method: String,
    /// The request's path as written (random parts such as `{hex:6}` included).
    pub path: String,
    /// Over TLS (`scheme = "https"`).
    pub tls: bool,
    /// Every level speaks HTTP/2 to it (`http2 = true`): h2c without `tls`, h2 with it.
    pub http2: bool,
    /// Every level speaks HTTP/3 to it (`http3 = true`).
    pub http3: bool,
}

/// One target (or parameter row) or service, its commands filled.
#[derive(Debug, Serialize)]
pub struct Listed {
    /// Its name (a parameter row's carries its parameters: `java-jdbc[pool=2]`).
    pub name: String,
    /// The `[[target]]`'s (or `[[service]]`'s) name.
    pub base: String,
    /// A parameter row's parameters.
    pub params: BTreeMap<String, String>,
    /// Its language ("service" for a service).
    pub language: String,
    /// Its directory (absolute): build and start run there.
    pub dir: PathBuf,
    /// The commands it requires.
    pub requires: Vec<String>,
    /// Those of `requires` not found: the shootout skips it.
    pub missing: Vec<String>,
    /// What to install when some are missing.
    pub install: Option<String>,
    /// The build command (`sh -c` in `dir`), filled.
    pub build: Option<String>,
    /// The start command (`sh -c 'exec START'` in `dir`, in its own process group), filled.
    pub start: String,
    /// The artifact whose size the report shows, filled.
    pub artifact: Option<String>,
    /// Its environment for build and start (the suite's `env`, and the PATH the shootout
    /// gives it: the required tools' directories, a glob's first).
    pub env: BTreeMap<String, String>,
    /// How readiness is checked: "http" or "tcp".
    pub ready: &'static str,
    /// The longest it may take to become ready, seconds.
    pub ready_timeout_s: f64,
    /// The services it uses (a target's `use`).
    pub uses: Vec<String>,
    /// The scenarios it implements, by name (none for a service).
    pub scenarios: Vec<String>,
    /// One of those scenarios speaks HTTP/2 to it at one of its levels (as the shootout
    /// verifies and loads it).
    pub http2: bool,
    /// One of those scenarios speaks HTTP/3 to it at one of its levels.
    pub http3: bool,
    /// The build cache's entry holding its finished build (what the shootout fills `{out}`
    /// with), if the cache has one; `null` until a shootout has built it.
    pub built: Option<PathBuf>,
}

/// Lists `suite` with `values` (placeholder name, value) filled in every command, and
/// each entry's finished build in `cache` (the shootout's build cache).
///
/// A `service.NAME.port` value also fills that service's `host` and `url`, as the
/// shootout does once the service is up.
pub fn listing(suite: &Suite, root: &Path, cache: &Path, values: &[(String, String)]) -> Listing {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut filled: BTreeMap<String, String> = BTreeMap::new();
    filled.insert("images".into(), suite.images.to_string());
    filled.insert("template".into(), suite.template.clone());
    for (name, value) in values {
        filled.insert(name.clone(), value.clone());
        let service_port = name
            .strip_prefix(SERVICE_PREFIX)
            .and_then(|rest| rest.strip_suffix(".port"));
        if let (Some(service), Ok(port)) = (service_port, value.parse::<u16>()) {
            for (k, v) in service_vars(service, port) {
                filled.entry(k).or_insert(v);
            }
        }
    }
    let cache = cache.canonicalize().unwrap_or_else(|_| cache.to_path_buf());
    let entry = |spec: &TargetSpec| listed(spec, &root, &cache, &filled);
    let implemented = |spec: &TargetSpec| {
        let mine: Vec<_> = suite
            .scenarios
            .iter()
            .filter(|s| s.applies_to(spec))
            .collect();
        let runs = |m| {
            mine.iter()
                .any(|s| s.runs(m, suite.levels_for(s, spec).into_iter()))
        };
        let names = mine.iter().map(|s| s.name.clone()).collect();
        (names, runs(Multiplexed::Http2), runs(Multiplexed::Http3))
    };
    Listing {
        suite: suite.name.clone(),
        root: root.clone(),
        scenarios: suite
            .scenarios
            .iter()
            .map(|s| ListedScenario {
                name: s.name.clone(),
                method: s.method.clone(),
                path: s.path.clone(),
                tls: s.tls.is_some(),
                http2: s.protocol == Some(Multiplexed::Http2),
                http3: s.protocol == Some(Multiplexed::Http3),
            })
            .collect(),
        targets: suite
            .targets
            .iter()
            .map(|t| {
                let (scenarios, http2, http3) = implemented(t);
                Listed {
                    scenarios,
                    http2,
                    http3,
                    ..entry(t)
                }
            })
            .collect(),
        services: suite.services.iter().map(|s| entry(&s.target)).collect(),
        filled,
    }
}

/// The cache entry holding `spec`'s finished build, found as the shootout's builder finds
/// it (the same key); `None` when the cache has none, or its tools or directory are missing.
fn built(spec: &TargetSpec, root: &Path, cache: &Path) -> Option<PathBuf> {
    let setup = Setup::new(spec, root, PathBuf::new()).ok()?;
    let (out, _) = cache_entry(cache, &setup).ok()?;
    cache::is_built(&out).then_some(out)
}

fn listed(
    spec: &TargetSpec,
    root: &Path,
    cache: &Path,
    filled: &BTreeMap<String, String>,
) -> Listed {
    let dir = root.join(&spec.dir);
    let dir_s = dir.to_string_lossy().into_owned();
    let mut vars: Vec<(&str, &str)> = filled
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if !filled.contains_key("dir") {
        vars.push(("dir", &dir_s));
    }
    // `{template}` holds `{n}`, which is no placeholder: filling it last changes nothing else.
    vars.sort_by_key(|(k, _)| *k == "template");
    let fill = |cmd: &String| fill(cmd, &vars);
    let found: Vec<(&String, Option<PathBuf>)> =
        spec.requires.iter().map(|t| (t, cache::which(t))).collect();
    let missing = found
        .iter()
        .filter(|(_, p)| p.is_none())
        .map(|(t, _)| t.to_string())
        .collect();
    let mut env = spec.env.clone();
    // As lifecycle::Setup does: a tool found by a glob (a JDK beside the system's) goes first.
    let tools: Vec<PathBuf> = found.iter().filter_map(|(_, p)| p.clone()).collect();
    let first: Vec<PathBuf> = found
        .iter()
        .filter(|(t, _)| cache::is_glob(t))
        .filter_map(|(_, p)| p.clone())
        .collect();
    if let Some(path) = cache::path_with_first(&first, &tools) {
        env.entry("PATH".into()).or_insert(path);
    }
    Listed {
        name: spec.name.clone(),
        base: spec.base.clone(),
        params: spec.params.iter().cloned().collect(),
        language: spec.language.clone(),
        dir,
        requires: spec.requires.clone(),
        missing,
        install: spec.install.clone(),
        build: spec.build.as_ref().map(fill),
        start: fill(&spec.start),
        artifact: spec.artifact.as_ref().map(fill),
        env,
        ready: match spec.ready {
            Ready::Http => "http",
            Ready::Tcp => "tcp",
        },
        ready_timeout_s: spec.ready_timeout.as_secs_f64(),
        uses: spec.uses.clone(),
        scenarios: Vec::new(),
        http2: false,
        http3: false,
        built: built(spec, root, cache),
    }
}

/// What `--list` prints of `suite` (read from `source`, its commands run in `root`), as
/// `report`'s typed listing: which programs are missing, which CPUs each side gets.
pub fn text_listing(suite: &Suite, source: &str, root: &Path) -> TextListing {
    let (client_cpus, mut server_cpus) = crate::runner::assign_cpus(suite);
    let service_cpus = crate::services::assign_cpus(suite, &mut server_cpus);
    let missing = |requires: &[String]| -> Vec<String> {
        requires
            .iter()
            .filter(|r| crate::cache::which(r).is_none())
            .cloned()
            .collect()
    };
    let services = (!suite.services.is_empty()).then(|| Services {
        notes: crate::services::sharing(&client_cpus, &server_cpus, &service_cpus),
        cpus: service_cpus.clone(),
        rows: suite
            .services
            .iter()
            .map(|sv| Service {
                name: sv.name().to_string(),
                missing: missing(&sv.target.requires),
            })
            .collect(),
    });
    TextListing {
        suite: suite.name.clone(),
        source: source.to_string(),
        root: root.display().to_string(),
        client_cpus,
        server_cpus,
        services,
        levels: suite
            .plan
            .levels
            .iter()
            .map(|l| Level {
                name: l.name.clone(),
                connections: l.connections,
                rate: l.rate.as_ref().map(|r| r.text.clone()),
                requests: l.requests,
                no_tls_resumption: l.tls_resume == Some(false),
                streams: l.protocol.map(|p| (p.version.name(), p.streams)),
            })
            .collect(),
        scenarios: suite
            .scenarios
            .iter()
            .map(|s| Scenario {
                name: s.name.clone(),
                method: s.method.clone(),
                path: s.path.clone(),
                https: s.tls.as_ref().map(|t| cert_words(&t.cert)),
                every_level: s.protocol.map(Multiplexed::name),
                levels: s.levels.clone(),
                targets: s.targets.clone(),
            })
            .collect(),
        targets: suite
            .targets
            .iter()
            .map(|t| Target {
                name: t.name.clone(),
                language: t.language.clone(),
                levels: t.levels.clone(),
                missing: missing(&t.requires),
                install: t.install.clone(),
            })
            .collect(),
    }
}

/// How a scenario checks the server's certificate, in the listing's words.
fn cert_words(cert: &crate::suite::CertCheck) -> String {
    match cert {
        crate::suite::CertCheck::System => "system roots".into(),
        crate::suite::CertCheck::CaFile(path) => format!("cacert {path}"),
        crate::suite::CertCheck::Insecure => "insecure".into(),
    }
}

#[cfg(test)]
mod tests;
