//! The run matrix: for each target, its steps in order (set up, build, start, wait until
//! ready, verify, every scenario at every level, stop). Partial results are handed out
//! after every target, so an interrupted run still leaves what it measured.
//!
//! The steps themselves are in `lifecycle` (build, start, readiness, stop), `measure`
//! (warm-up and repeats of one cell), `window` and `summary` (the arithmetic); how a step
//! fails is `failure`.
//!
//! This file holds the run and a target's steps; `levels` verifies a target's scenarios and
//! measures the cells their verification lets through, `record` builds the protocol and a
//! target's empty result, `lines` words the progress lines.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use report::shootout::{Outcome, ShootoutResults, SuiteInfo, TargetResult, SHOOTOUT_SCHEMA};

use crate::failure::{stop_note, TargetFailure};
use crate::lifecycle::{Builder, Running, Setup};
use crate::process;
use crate::services::{self, Services, Start};
use crate::suite::{Scenario, Suite, TargetSpec};
use crate::tiers::Layout;
use crate::watch::{self, Watch};

use levels::answers;
use lines::build_line;
use record::{empty, protocol};

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
    /// `--thread-dump`: JVM thread dumps of every level, in an unmeasured slice after its
    /// repeats (without it, only of levels whose threads mostly waited on a futex while
    /// neither side's CPUs were the limit).
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

mod levels;
mod lines;
mod record;

#[cfg(test)]
mod tests;
