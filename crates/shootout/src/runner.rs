//! The run matrix: for each target, its steps in order (set up, build, start, wait until
//! ready, verify, every scenario at every level, stop). Partial results are handed out
//! after every target, so an interrupted run still leaves what it measured.
//!
//! The steps themselves are in `lifecycle` (build, start, readiness, stop), `measure`
//! (warm-up and repeats of one cell), `window` and `summary` (the arithmetic); how a step
//! fails is `failure`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use report::shootout::{
    Cell, CellStatus, Check, LevelInfo, Outcome, Param, PlanInfo, Protocol, ShootoutResults,
    SuiteInfo, TargetResult, Verification, SHOOTOUT_SCHEMA,
};

use crate::cache;
use crate::failure::{stop_note, TargetFailure};
use crate::lifecycle::{Builder, Running, Setup};
use crate::measure::{Dumps, Meter, Task};
use crate::process;
use crate::services::{self, Services, Start};
use crate::suite::{Level, Scenario, Suite, TargetSpec};
use crate::summary;
use crate::tiers::{self, Layout};
use crate::verify;
use crate::watch::{self, column, now_of, CellAt, CellNow, Watch};

pub use crate::summary::spectrum_points;

/// Where and how a run happens.
#[derive(Debug, Clone)]
pub struct Options {
    /// The directory suite paths are relative to (the checkout).
    pub root: PathBuf,
    /// Build cache directory.
    pub cache: PathBuf,
    /// Output directory (logs go in `logs/`).
    pub out: PathBuf,
    /// Set by Ctrl-C: stop measuring, stop the target, keep what was measured.
    pub interrupt: Arc<AtomicBool>,
    /// The command line, for the protocol.
    pub command: String,
    /// The suite's source (a path or `built-in`) and text.
    pub source: String,
    /// The suite's text.
    pub text: String,
    /// `--quick` was given.
    pub quick: bool,
    /// `--thread-dump`: a JVM thread dump in the middle of every level (without it, only
    /// of levels whose threads mostly wait on a futex).
    pub thread_dump: bool,
    /// A live view told of every cell and load as the run goes (`--dashboard`).
    pub watch: Option<Arc<dyn Watch>>,
}

/// What the run tells its caller as it goes.
pub trait Observer {
    /// A line of progress for a human.
    fn line(&mut self, text: &str);
    /// Results so far, after each target (write them somewhere safe).
    fn save(&mut self, results: &ShootoutResults);
}

/// The CPUs for client and server: the suite's, or the two halves of what we may use.
pub fn assign_cpus(suite: &Suite) -> (Vec<usize>, Vec<usize>) {
    let allowed = process::allowed_cpus();
    let half = allowed.len() / 2;
    let client = suite.plan.client_cpus.clone().unwrap_or_else(|| {
        if allowed.len() >= 2 {
            allowed[..half].to_vec()
        } else {
            allowed.clone()
        }
    });
    let server = suite.plan.server_cpus.clone().unwrap_or_else(|| {
        if allowed.len() >= 2 {
            allowed[half..].to_vec()
        } else {
            allowed.clone()
        }
    });
    (client, server)
}

fn level_info(l: &Level, plan: &crate::suite::Plan) -> LevelInfo {
    LevelInfo {
        name: l.name.clone(),
        connections: l.connections as u64,
        duration_s: (l.requests.is_none() && l.capacity.is_none())
            .then_some(plan.duration.as_secs_f64()),
        requests: l.requests,
        max_duration_s: l.requests.map(|_| l.max_duration.as_secs_f64()),
        keepalive: l.keepalive,
        repeats: l.repeats.unwrap_or(plan.repeats),
        tls_resume: l.tls_resume,
        capacity: l.capacity.as_ref().map(|c| c.info(l.max_duration)),
        rate: l.rate.as_ref().map(|r| r.text.clone()),
        http2_streams: l.http2.map(|h| u64::from(h.streams)),
    }
}

/// Runs the suite. Never fails as a whole: each target's problems are recorded in its
/// result and the run goes on.
pub fn run(suite: &Suite, opts: &Options, obs: &mut dyn Observer) -> ShootoutResults {
    let started = Instant::now();
    let all_cpus = process::allowed_cpus();
    let (client_cpus, mut server_cpus) = assign_cpus(suite);
    let service_cpus = services::assign_cpus(suite, &mut server_cpus);
    let cpu_sharing = services::sharing(&client_cpus, &server_cpus, &service_cpus);
    let overlap = client_cpus.iter().any(|c| server_cpus.contains(c));
    if overlap {
        obs.line(&format!(
            "note: client CPUs {client_cpus:?} and server CPUs {server_cpus:?} overlap: client and server compete for CPU (give plan.client_cpus and plan.server_cpus)"
        ));
    }
    // foxbench's own threads (load workers, the sampler) inherit this.
    if let Err(e) = process::pin_current_thread(&client_cpus) {
        obs.line(&format!(
            "note: cannot pin foxbench to CPUs {client_cpus:?}: {e}"
        ));
    }
    if let Some(w) = &opts.watch {
        w.pinned(&client_cpus);
    }
    let client_threads = client_cpus.len().max(1);
    if !suite.services.is_empty() {
        obs.line(&format!(
            "services on CPU {service_cpus:?}, targets on CPU {server_cpus:?}, foxbench on CPU {client_cpus:?}"
        ));
        for note in &cpu_sharing {
            obs.line(&format!("note: {note}"));
        }
    }
    let layout = Layout {
        client: client_cpus.clone(),
        server: server_cpus.clone(),
        services: service_cpus.clone(),
    };
    let mut protocol = protocol(suite, opts, &client_cpus, &server_cpus, client_threads);
    protocol.service_cpus = service_cpus.clone();
    protocol.cpu_sharing = cpu_sharing;
    let mut results = ShootoutResults {
        schema: SHOOTOUT_SCHEMA.into(),
        suite: SuiteInfo {
            name: suite.name.clone(),
            source: opts.source.clone(),
            quick: opts.quick,
            text: opts.text.clone(),
        },
        protocol,
        targets: Vec::new(),
        services: Vec::new(),
        interrupted: false,
        elapsed_s: 0.0,
    };
    let _ = std::fs::create_dir_all(opts.out.join("logs"));
    let ctx = Ctx {
        all_cpus,
        client_cpus,
        suite,
        opts,
        server_cpus,
        client_threads,
        layout,
    };
    let mut services = Services::new(suite, service_cpus);
    if let Some(w) = &opts.watch {
        watch::waiting(suite, w.as_ref());
    }
    for (i, spec) in suite.targets.iter().enumerate() {
        let r = if ctx.interrupted() {
            TargetResult {
                message: Some("the run was interrupted before this target".into()),
                ..empty(spec, Outcome::Interrupted)
            }
        } else {
            obs.line(&format!("{} ({})", spec.name, spec.language));
            ctx.target(spec, &mut services, obs)
        };
        match r.outcome {
            Outcome::Measured => {}
            _ => obs.line(&format!(
                "  {}: {}",
                r.outcome.as_str(),
                r.message.as_deref().unwrap_or("")
            )),
        }
        if let Some(w) = &opts.watch {
            watch::ended(suite, &r, w.as_ref());
        }
        results.targets.push(r);
        // Services no later target uses stop now; Ctrl-C stops them all.
        let rest = if ctx.interrupted() {
            &[][..]
        } else {
            &suite.targets[i + 1..]
        };
        services.release(rest, &mut |l| obs.line(l));
        results.services = services.results();
        results.interrupted = ctx.interrupted();
        results.elapsed_s = started.elapsed().as_secs_f64();
        obs.save(&results);
    }
    services.stop_all(&mut |l| obs.line(l));
    results.services = services.results();
    results.interrupted = ctx.interrupted();
    results.elapsed_s = started.elapsed().as_secs_f64();
    results
}

/// The run's protocol: the machine, the CPUs on each side, the toolchains and the plan.
fn protocol(
    suite: &Suite,
    opts: &Options,
    client_cpus: &[usize],
    server_cpus: &[usize],
    client_threads: usize,
) -> Protocol {
    let mut tools: Vec<String> = suite
        .targets
        .iter()
        .chain(suite.services.iter().map(|s| &s.target))
        .flat_map(|t| t.requires.clone())
        .collect();
    tools.sort();
    tools.dedup();
    let toolchains = tools
        .iter()
        .filter(|t| cache::which(t).is_some())
        .filter_map(|t| Some((t.clone(), crate::protocol::tool_version(t)?)))
        .collect();
    let nofile = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .unwrap_or((0, 0));
    let plan = &suite.plan;
    Protocol {
        started_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        foxbench_version: env!("CARGO_PKG_VERSION").into(),
        cpu_model: crate::protocol::cpu_model(),
        kernel: crate::protocol::kernel(),
        nproc: crate::protocol::nproc(),
        mem_total_bytes: crate::protocol::mem_total_bytes(),
        sysctl: crate::protocol::sysctls(),
        ulimit_nofile: (nofile.0, nofile.1),
        client_cpus: client_cpus.to_vec(),
        server_cpus: server_cpus.to_vec(),
        service_cpus: Vec::new(),
        cpu_sharing: Vec::new(),
        client_threads: client_threads as u64,
        toolchains,
        command: opts.command.clone(),
        plan: PlanInfo {
            levels: plan.levels.iter().map(|l| level_info(l, plan)).collect(),
            repeats: plan.repeats,
            warmup_max_s: plan.warmup.as_secs_f64(),
            warmup_slice_s: plan.warmup_slice.as_secs_f64(),
            sample_interval_s: plan.sample_interval.as_secs_f64(),
            timeout_s: plan.timeout.as_secs_f64(),
            stop_grace_s: plan.stop_grace.as_secs_f64(),
        },
    }
}

fn empty(spec: &TargetSpec, outcome: Outcome) -> TargetResult {
    TargetResult {
        name: spec.name.clone(),
        base: (!spec.params.is_empty()).then(|| spec.base.clone()),
        params: spec
            .params
            .iter()
            .map(|(name, value)| Param {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        skipped_scenarios: Vec::new(),
        services: spec.uses.clone(),
        language: spec.language.clone(),
        outcome,
        message: None,
        build: None,
        start_command: None,
        startup_ms: None,
        idle: None,
        verify: Vec::new(),
        cells: Vec::new(),
        log_tail: None,
    }
}

struct Ctx<'a> {
    /// Every CPU foxbench could use when it started (builds run on them).
    all_cpus: Vec<usize>,
    /// The load generator's CPUs.
    client_cpus: Vec<usize>,
    suite: &'a Suite,
    opts: &'a Options,
    server_cpus: Vec<usize>,
    client_threads: usize,
    /// Where client, targets and services are pinned, for the tiers' diagnosis.
    layout: Layout,
}

impl<'a> Ctx<'a> {
    fn interrupted(&self) -> bool {
        self.opts.interrupt.load(Ordering::Relaxed)
    }

    /// One target, start to stop; whatever went wrong is in the result.
    fn target(
        &self,
        spec: &TargetSpec,
        services: &mut Services,
        obs: &mut dyn Observer,
    ) -> TargetResult {
        let mut r = empty(spec, Outcome::Skipped);
        if let Err(failure) = self.steps(spec, services, &mut r, obs) {
            failure.record(&mut r, self.interrupted());
        }
        r
    }

    /// The target's steps in order. Each records what it learned in `r`; the first that
    /// fails ends them, and its failure becomes the result's outcome and message.
    fn steps(
        &self,
        spec: &TargetSpec,
        services: &mut Services,
        r: &mut TargetResult,
        obs: &mut dyn Observer,
    ) -> Result<(), TargetFailure> {
        let grace = self.suite.plan.stop_grace;
        let logs = self.opts.out.join("logs");
        let start = Start {
            builder: self.builder(),
            root: &self.opts.root,
            logs: &logs,
            images: self.suite.images,
            template: &self.suite.template,
            interrupt: &self.opts.interrupt,
        };
        let vars = services
            .ready_for(spec, &start, &mut |l| obs.line(l))
            .map_err(TargetFailure::ServiceDown)?;
        let setup = Setup::new(spec, &self.opts.root, logs.clone())?;
        let built = self.builder().build(&setup)?;
        if spec.build.is_some() {
            obs.line(&build_line(&built.info));
        }
        r.build = Some(built.info.clone());
        let (mut running, command, startup) = setup.start(
            &|port| {
                setup.start_command(&built, port, self.suite.images, &self.suite.template, &vars)
            },
            &self.server_cpus,
            (spec.ready, spec.ready_timeout),
            &self.opts.interrupt,
            grace,
        )?;
        r.start_command = Some(command);
        let port = running.addr.port();
        let startup_ms = startup.as_secs_f64() * 1e3;
        r.startup_ms = Some(startup_ms);
        obs.line(&format!("  ready in {startup_ms:.0} ms on port {port}"));
        r.idle = running.idle();
        let (scenarios, skipped) = self.scenarios(spec);
        for s in &skipped {
            obs.line(&format!(
                "  {}: skipped, not implemented by this target (the scenario's targets leave it out)",
                s.name
            ));
        }
        // A scenario none of whose levels runs here (an h2c-only row that keeps only the
        // HTTP/2 levels) is neither verified nor loaded.
        let (scenarios, idle): (Vec<&Scenario>, Vec<&Scenario>) = scenarios
            .into_iter()
            .partition(|s| !self.suite.levels_for(s, spec).is_empty());
        for s in &idle {
            obs.line(&format!(
                "  {}: skipped, none of its levels runs on this target (the target's levels leave them out)",
                s.name
            ));
        }
        r.skipped_scenarios = skipped
            .iter()
            .chain(&idle)
            .map(|s| s.name.clone())
            .collect();
        let (out, dir) = (built.out.to_string_lossy(), setup.dir.to_string_lossy());
        let paths = (out.as_ref(), dir.as_ref());
        r.verify = self.verify(&running, spec, &scenarios, paths, obs);
        answers(&r.verify).map_err(|first| TargetFailure::WrongAnswers {
            first,
            left: running.abandon(grace),
        })?;
        r.outcome = Outcome::Measured;
        let levels = self.levels(
            &mut running,
            services,
            spec,
            (&scenarios, &r.verify),
            paths,
            &mut r.cells,
            obs,
        );
        if let Some(reference) = self.suite.scenarios.first() {
            for ratio in r.cost_ratios(&reference.name) {
                obs.line(&format!("  {}", ratio.line()));
            }
        }
        self.finish(running, levels, r, obs);
        Ok(())
    }

    /// The scenarios the target implements, and those it does not.
    fn scenarios(&self, spec: &TargetSpec) -> (Vec<&'a Scenario>, Vec<&'a Scenario>) {
        self.suite
            .scenarios
            .iter()
            .partition(|s| s.applies_to(spec))
    }

    fn builder(&self) -> Builder<'_> {
        Builder {
            cache: &self.opts.cache,
            timeout: self.suite.plan.build_timeout,
            interrupt: &self.opts.interrupt,
            build_cpus: &self.all_cpus,
            client_cpus: &self.client_cpus,
        }
    }

    /// Verifies every scenario the target implements before any load: over HTTP/1.1,
    /// and over HTTP/2 too when the scenario runs HTTP/2 levels here (only over HTTP/2 when
    /// all of them are).
    fn verify(
        &self,
        running: &Running,
        spec: &TargetSpec,
        scenarios: &[&Scenario],
        (out, dir): (&str, &str),
        obs: &mut dyn Observer,
    ) -> Vec<Verification> {
        let suite = self.suite;
        scenarios
            .iter()
            .map(|s| {
                let endpoint = |http2| verify::Endpoint {
                    addr: running.addr,
                    tls: s.tls.as_ref().map(|t| t.options(out, dir, true)),
                    http2,
                    name: spec.name.clone(),
                };
                let run =
                    |http2| verify::verify(&endpoint(http2), s, suite.images, suite.plan.timeout);
                let levels = suite.levels_for(s, spec);
                let v = match (s.http2, s.runs_http2(levels.into_iter())) {
                    (true, _) => verify::over_http2_only(run(true)),
                    (false, true) => verify::with_http2(run(false), &run(true)),
                    (false, false) => run(false),
                };
                obs.line(&format!("  verify {}: {}", s.name, verdict(&v)));
                v
            })
            .collect()
    }

    /// Every scenario at each of its levels, a cell each; ends early if the target crashes.
    #[allow(clippy::too_many_arguments)]
    fn levels(
        &self,
        running: &mut Running,
        services: &mut Services,
        spec: &TargetSpec,
        (scenarios, verified): (&[&Scenario], &[Verification]),
        paths: (&str, &str),
        cells: &mut Vec<Cell>,
        obs: &mut dyn Observer,
    ) -> Result<(), TargetFailure> {
        let warmup_max = spec.warmup.unwrap_or(self.suite.plan.warmup);
        let probes = services.probes(spec);
        let net = summary::Net {
            runtime: match spec.language.as_str() {
                "java" | "kotlin" | "scala" | "clojure" => report::tcp::Runtime::Jvm,
                _ => report::tcp::Runtime::Other,
            },
            somaxconn: load::limits::Machine::read().somaxconn,
        };
        let meter = Meter {
            plan: &self.suite.plan,
            client_threads: self.client_threads,
            server_cpus: self.server_cpus.len(),
            interrupt: &self.opts.interrupt,
            cpu_ids: (&self.client_cpus, &self.server_cpus),
            dumps: Some(Dumps {
                dir: &self.opts.out,
                always: self.opts.thread_dump,
                target: &spec.name,
            }),
            services: &probes,
            service_cpus: self.layout.services.len(),
            watch: self.opts.watch.as_deref(),
            net,
        };
        for (s, v) in scenarios.iter().zip(verified) {
            for level in self.suite.levels_for(s, spec) {
                let task = Task::new(s, level, warmup_max, paths);
                let mut cell = task.cell();
                let http2 = task.version != crate::suite::HttpVersion::Http1;
                if let Some((status, why)) =
                    excluded(v, (task.keepalive, http2), self.interrupted())
                {
                    cell.status = status;
                    cell.message = Some(why.into());
                    cells.push(cell);
                    continue;
                }
                crate::limits::before_level(&mut cell, obs);
                let column = column(self.suite, &s.name, &level.name);
                let at = CellAt {
                    target: &spec.name,
                    column: &column,
                };
                if let Some(w) = &self.opts.watch {
                    w.cell(at, &CellNow::Running);
                }
                match meter.measure(running, &task, &mut cell) {
                    Ok(()) => {
                        summary::conclude(&mut cell, meter.server_cpus, &net);
                        tiers::conclude(&mut cell, &spec.name, &self.layout);
                        if let Some(line) = cell_line(&cell) {
                            obs.line(&line);
                        }
                    }
                    Err(failure) => {
                        cell.status = CellStatus::Failed;
                        cell.message = Some(failure.to_string());
                    }
                }
                let failed = cell.status == CellStatus::Failed;
                let service = services.crashed(spec);
                if let Some((name, why)) = &service {
                    let note = format!("service {name} {why} during this level");
                    obs.line(&format!("  {note}"));
                    cell.message = Some(match cell.message.take() {
                        Some(m) => format!("{m}; {note}"),
                        None => note,
                    });
                }
                if let Some(w) = &self.opts.watch {
                    w.cell(at, &now_of(&cell));
                }
                cells.push(cell);
                if let Some((service, why)) = service {
                    return Err(TargetFailure::ServiceDied {
                        service,
                        why,
                        level: level.name.clone(),
                    });
                }
                if let Some(status) = failed.then(|| running.exited()).flatten() {
                    return Err(TargetFailure::Crashed {
                        status,
                        level: level.name.clone(),
                        log_tail: running.log_tail(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Records how the levels ended, then stops the target: SIGTERM, then SIGKILL; nothing
    /// left behind.
    fn finish(
        &self,
        mut running: Running,
        levels: Result<(), TargetFailure>,
        r: &mut TargetResult,
        obs: &mut dyn Observer,
    ) {
        match levels {
            Err(crash) => crash.record(r, self.interrupted()),
            Ok(()) if self.interrupted() => {
                r.outcome = Outcome::Interrupted;
                r.message = Some("interrupted: the levels measured so far are kept".into());
            }
            Ok(()) => {}
        }
        let note = stop_note(&running.stop(self.suite.plan.stop_grace));
        if !note.is_empty() {
            let bare = note.trim_start_matches("; ");
            obs.line(&format!("  stop: {bare}"));
            r.message = Some(match r.message.take() {
                Some(m) => format!("{m}{note}"),
                None => bare.to_string(),
            });
        }
    }
}

fn build_line(info: &report::shootout::BuildInfo) -> String {
    format!(
        "  build: {}",
        if info.cached {
            "cached".to_string()
        } else {
            format!("{:.1} s", info.seconds)
        }
    )
}

/// One scenario's verification in a few words: ok, or the checks that failed.
fn verdict(v: &Verification) -> String {
    if v.passed {
        let h2 = v
            .checks
            .iter()
            .find(|c| !c.passed && c.name == crate::check::CheckKind::Http2.name())
            .and_then(|c| c.detail.as_deref());
        match (v.keepalive, h2) {
            (_, Some(why)) => format!("ok over HTTP/1.1, but {why}: HTTP/2 levels excluded"),
            (Some(false), None) => {
                "ok, but it closes every connection: keep-alive levels excluded".to_string()
            }
            _ => "ok".to_string(),
        }
    } else {
        v.checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.name, c.detail.as_deref().unwrap_or("failed")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Fails, with the first failed check, when no scenario was answered correctly. A scenario
/// whose answers are wrong is not loaded; one that only fails keep-alive still runs its
/// levels without keep-alive (`Verification::passed` already leaves keep-alive out).
fn answers(verified: &[Verification]) -> Result<(), Option<Check>> {
    if verified.iter().any(|v| v.passed) {
        return Ok(());
    }
    Err(verified
        .iter()
        .flat_map(|v| v.checks.iter())
        .find(|c| !c.passed)
        .cloned())
}

/// Why a cell is not measured, if it is not: its status and message. `(keepalive, http2)`
/// is how the cell connects.
fn excluded(
    v: &Verification,
    (keepalive, http2): (bool, bool),
    interrupted: bool,
) -> Option<(CellStatus, &'static str)> {
    if !v.passed {
        Some((CellStatus::Excluded, "verification failed: not measured"))
    } else if http2 && v.http2 != Some(true) {
        Some((
            CellStatus::Excluded,
            "verification over HTTP/2 failed: this HTTP/2 level is not measured",
        ))
    } else if keepalive && v.keepalive == Some(false) {
        Some((CellStatus::Excluded, "excluded: the target closes connections after each response (verified), so keep-alive levels do not apply"))
    } else if interrupted {
        Some((CellStatus::Interrupted, "interrupted before this level"))
    } else {
        None
    }
}

/// A measured cell's progress line: throughput, p99, server CPU per request, bottleneck.
fn cell_line(cell: &Cell) -> Option<String> {
    let (summary, d) = (cell.summary.as_ref()?, cell.diagnosis.as_ref()?);
    Some(
        format!(
            "  {} {:>6}: {:>9.0} req/s  p99 {:>9}  server {:>6}  {}",
            cell.scenario,
            cell.level,
            summary.rps_median,
            summary
                .latency
                .at(99.0)
                .map(report::human_us)
                .unwrap_or_default(),
            summary
                .server_cpu_us_per_request
                .map(|u| format!("{u:.1} µs/req"))
                .unwrap_or_default(),
            d.bottleneck.as_str()
        ) + &[
            summary.handshake_line(),
            summary.process_line(),
            cell.capacity.as_ref().map(|c| c.line()),
        ]
        .into_iter()
        .flatten()
        .map(|l| format!("\n      {l}"))
        .collect::<String>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, passed: bool) -> Check {
        Check {
            name: name.into(),
            passed,
            detail: (!passed).then(|| format!("{name} broke")),
        }
    }

    fn verification(passed: bool, keepalive: Option<bool>, checks: Vec<Check>) -> Verification {
        Verification {
            scenario: "s".into(),
            passed,
            checks,
            images_seen: None,
            images_expected: None,
            keepalive,
            http2: None,
        }
    }

    #[test]
    fn verdicts() {
        let cases = [
            (verification(true, Some(true), vec![]), "ok"),
            (
                verification(true, Some(false), vec![check("keep-alive", false)]),
                "ok, but it closes every connection: keep-alive levels excluded",
            ),
            (
                verification(
                    false,
                    None,
                    vec![check("response", false), check("all images", false)],
                ),
                "response: response broke; all images: all images broke",
            ),
            (
                Verification {
                    http2: Some(false),
                    ..verification(true, Some(true), vec![check("http/2", false)])
                },
                "ok over HTTP/1.1, but http/2 broke: HTTP/2 levels excluded",
            ),
        ];
        for (v, want) in cases {
            assert_eq!(verdict(&v), want);
        }
    }

    #[test]
    fn a_target_is_loaded_when_any_scenario_is_answered_right() {
        let right = verification(true, Some(false), vec![check("keep-alive", false)]);
        let wrong = verification(false, None, vec![check("response", false)]);
        assert_eq!(answers(&[wrong.clone(), right]), Ok(()));
        assert_eq!(
            answers(&[wrong.clone(), wrong]),
            Err(Some(check("response", false)))
        );
        assert_eq!(answers(&[]), Err(None));
    }

    #[test]
    fn cells_are_excluded_for_wrong_answers_closed_connections_http1_only_or_ctrl_c() {
        let right = verification(true, Some(true), vec![]);
        let closes = verification(true, Some(false), vec![]);
        let wrong = verification(false, Some(true), vec![]);
        let h2 = |passed| Verification {
            http2: Some(passed),
            ..right.clone()
        };
        let (h2_right, h2_wrong) = (h2(true), h2(false));
        let cases = [
            // (verification, level keep-alive, HTTP/2 level, interrupted) → status
            ((&right, true, false, false), None),
            ((&wrong, false, false, true), Some(CellStatus::Excluded)),
            ((&closes, true, false, true), Some(CellStatus::Excluded)),
            ((&closes, false, false, false), None),
            ((&right, true, false, true), Some(CellStatus::Interrupted)),
            // An HTTP/2 level runs only where HTTP/2 was verified.
            ((&right, true, true, false), Some(CellStatus::Excluded)),
            ((&h2_wrong, true, true, false), Some(CellStatus::Excluded)),
            ((&h2_wrong, true, false, false), None),
            ((&h2_right, true, true, false), None),
        ];
        for ((v, keepalive, http2, interrupted), want) in cases {
            assert_eq!(
                excluded(v, (keepalive, http2), interrupted).map(|(s, _)| s),
                want,
                "{v:?} {keepalive} {http2} {interrupted}"
            );
        }
    }
}
