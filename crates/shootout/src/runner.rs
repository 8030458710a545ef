//! The run matrix: for each target, build, start, verify, then every scenario at every
//! level, with warm-up, repeats and the probe running, then stop. Partial results are
//! handed out after every target, so an interrupted run still leaves what it measured.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use load::{Arrival, Control, Plan as LoadPlan, RequestSpec, RunResult, StatusSet, Stop, Target};
use report::shootout::{
    BuildInfo, Cell, CellStatus, CellSummary, ClientWindow, LevelInfo, Outcome, PlanInfo,
    ProbePoint, Protocol, Repeat, ServerWindow, ShootoutResults, SuiteInfo, TargetResult,
    Verification, SHOOTOUT_SCHEMA,
};
use stats::Latency;

use crate::cache::{self, BuildError};
use crate::diagnosis::{diagnose, Figures};
use crate::process::{self, Spawned};
use crate::suite::{fill, Level, Ready, Scenario, Suite, TargetSpec};
use crate::verify;

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

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn level_info(l: &Level, plan: &crate::suite::Plan) -> LevelInfo {
    LevelInfo {
        name: l.name.clone(),
        connections: l.connections as u64,
        duration_s: l.requests.is_none().then(|| secs(plan.duration)),
        requests: l.requests,
        max_duration_s: l.requests.map(|_| secs(l.max_duration)),
        keepalive: l.keepalive,
        repeats: l.repeats.unwrap_or(plan.repeats),
    }
}

/// Runs the suite. Never fails as a whole: each target's problems are recorded in its
/// result and the run goes on.
pub fn run(suite: &Suite, opts: &Options, obs: &mut dyn Observer) -> ShootoutResults {
    let started = Instant::now();
    let all_cpus = process::allowed_cpus();
    let (client_cpus, server_cpus) = assign_cpus(suite);
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
    let client_threads = client_cpus.len().max(1);
    let mut tools: Vec<String> = suite
        .targets
        .iter()
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
    let mut results = ShootoutResults {
        schema: SHOOTOUT_SCHEMA.into(),
        suite: SuiteInfo {
            name: suite.name.clone(),
            source: opts.source.clone(),
            quick: opts.quick,
            text: opts.text.clone(),
        },
        protocol: Protocol {
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
            client_cpus: client_cpus.clone(),
            server_cpus: server_cpus.clone(),
            client_threads: client_threads as u64,
            toolchains,
            command: opts.command.clone(),
            plan: PlanInfo {
                levels: suite
                    .plan
                    .levels
                    .iter()
                    .map(|l| level_info(l, &suite.plan))
                    .collect(),
                repeats: suite.plan.repeats,
                warmup_max_s: secs(suite.plan.warmup),
                warmup_slice_s: secs(suite.plan.warmup_slice),
                sample_interval_s: secs(suite.plan.sample_interval),
                timeout_s: secs(suite.plan.timeout),
                stop_grace_s: secs(suite.plan.stop_grace),
            },
        },
        targets: Vec::new(),
        interrupted: false,
        elapsed_s: 0.0,
    };
    let _ = std::fs::create_dir_all(opts.out.join("logs"));
    let ctx = Ctx {
        all_cpus,
        client_cpus: client_cpus.clone(),
        suite,
        opts,
        server_cpus,
        client_threads,
    };
    for spec in &suite.targets {
        let r = if opts.interrupt.load(Ordering::Relaxed) {
            TargetResult {
                message: Some("the run was interrupted before this target".into()),
                ..empty(spec, Outcome::Interrupted)
            }
        } else {
            obs.line(&format!("{} ({})", spec.name, spec.language));
            ctx.target(spec, obs)
        };
        match r.outcome {
            Outcome::Measured => {}
            _ => obs.line(&format!(
                "  {}: {}",
                r.outcome.as_str(),
                r.message.as_deref().unwrap_or("")
            )),
        }
        results.targets.push(r);
        results.interrupted = opts.interrupt.load(Ordering::Relaxed);
        results.elapsed_s = secs(started.elapsed());
        obs.save(&results);
    }
    results.interrupted = opts.interrupt.load(Ordering::Relaxed);
    results.elapsed_s = secs(started.elapsed());
    results
}

fn empty(spec: &TargetSpec, outcome: Outcome) -> TargetResult {
    TargetResult {
        name: spec.name.clone(),
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
}

/// A free loopback port (the OS picks; the target binds it right after).
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Ctx<'_> {
    fn interrupted(&self) -> bool {
        self.opts.interrupt.load(Ordering::Relaxed)
    }

    fn target(&self, spec: &TargetSpec, obs: &mut dyn Observer) -> TargetResult {
        let mut r = empty(spec, Outcome::Skipped);
        // 0. Tools.
        let missing: Vec<&String> = spec
            .requires
            .iter()
            .filter(|t| cache::which(t).is_none())
            .collect();
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
            r.message = Some(format!(
                "{} not found on PATH; install {}",
                names.join(", "),
                spec.install.as_deref().unwrap_or("it")
            ));
            return r;
        }
        let dir = self.opts.root.join(&spec.dir);
        if !dir.is_dir() {
            r.outcome = Outcome::StartFailed;
            r.message = Some(format!(
                "directory {} not found: run from the foxbench checkout or pass --root",
                dir.display()
            ));
            return r;
        }
        let dir_s = dir.to_string_lossy().into_owned();
        let tools: Vec<PathBuf> = spec
            .requires
            .iter()
            .filter_map(|t| cache::which(t))
            .collect();
        let mut env: Vec<(String, String)> = spec
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(path) = cache::path_with(&tools) {
            if !spec.env.contains_key("PATH") {
                env.push(("PATH".into(), path));
            }
        }
        let logs = self.opts.out.join("logs");
        // 1. Build, cached by content.
        let mut inputs = vec![dir.clone()];
        inputs.extend(spec.inputs.iter().map(|i| self.opts.root.join(i)));
        let build_cmd = spec.build.clone().unwrap_or_else(|| "true".into());
        let key = match cache::key(&build_cmd, &env, &tools, &self.opts.root, &inputs) {
            Ok(k) => k,
            Err(e) => {
                r.outcome = Outcome::BuildFailed;
                r.message = Some(format!(
                    "cannot read the target's files for the build cache: {e}"
                ));
                return r;
            }
        };
        let out = self.opts.cache.join(format!("{}-{key}", spec.name));
        let out_s = out.to_string_lossy().into_owned();
        let vars_build = [("out", out_s.as_str()), ("dir", dir_s.as_str())];
        let build_filled = fill(&build_cmd, &vars_build);
        let build_log = logs.join(format!("{}.build.log", spec.name));
        let artifact = spec.artifact.as_ref().map(|a| fill(a, &vars_build));
        let mut info = BuildInfo {
            command: build_filled.clone(),
            key: key.clone(),
            cached: false,
            seconds: 0.0,
            artifact_bytes: None,
            artifact: artifact.clone(),
        };
        // Builds may use every CPU (foxbench's own thread is pinned to the client CPUs by
        // now, and a build inherits the mask of the thread that starts it).
        let _ = process::pin_current_thread(&self.all_cpus);
        let built = cache::build(
            &build_filled,
            &dir,
            &out,
            &env,
            &build_log,
            self.suite.plan.build_timeout,
            &self.opts.interrupt,
        );
        let _ = process::pin_current_thread(&self.client_cpus);
        match built {
            Ok((cached, took)) => {
                info.cached = cached;
                info.seconds = secs(took);
                if spec.build.is_some() {
                    obs.line(&format!(
                        "  build: {}",
                        if cached {
                            "cached".to_string()
                        } else {
                            format!("{:.1} s", secs(took))
                        }
                    ));
                }
            }
            Err(e) => {
                r.build = Some(info);
                r.outcome = if matches!(e, BuildError::Interrupted) {
                    Outcome::Interrupted
                } else {
                    Outcome::BuildFailed
                };
                r.message = Some(match e {
                    BuildError::Failed(m) => format!("{m} (log: {})", build_log.display()),
                    BuildError::TimedOut(d) => format!(
                        "build took longer than {d:?}: raise plan.build_timeout (log: {})",
                        build_log.display()
                    ),
                    BuildError::Interrupted => "interrupted during the build".into(),
                    BuildError::Io(e) => format!("cannot run the build: {e}"),
                });
                r.log_tail = Some(process::tail(&build_log, 20));
                return r;
            }
        }
        info.artifact_bytes = artifact.as_ref().and_then(|a| {
            let p = Path::new(a);
            cache::size(&if p.is_absolute() {
                p.to_path_buf()
            } else {
                dir.join(p)
            })
        });
        r.build = Some(info);
        // 2. Start, in its own process group, pinned.
        let port = match free_port() {
            Ok(p) => p,
            Err(e) => {
                r.outcome = Outcome::StartFailed;
                r.message = Some(format!("no free loopback port: {e}"));
                return r;
            }
        };
        let port_s = port.to_string();
        let images_s = self.suite.images.to_string();
        let start = fill(
            &spec.start,
            &[
                ("port", &port_s),
                ("images", &images_s),
                ("template", &self.suite.template),
                ("out", &out_s),
                ("dir", &dir_s),
            ],
        );
        r.start_command = Some(start.clone());
        let log = logs.join(format!("{}.log", spec.name));
        let _ = std::fs::remove_file(&log);
        let spawned_at = Instant::now();
        let mut server = match process::spawn(
            &start,
            process::Shell::Exec,
            &dir,
            &env,
            &self.server_cpus,
            &log,
        ) {
            Ok(s) => s,
            Err(e) => {
                r.outcome = Outcome::StartFailed;
                r.message = Some(format!("cannot start `{start}`: {e}"));
                return r;
            }
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        // 3. Readiness, bounded.
        match self.wait_ready(&mut server, addr, spec) {
            Ok(()) => {
                r.startup_ms = Some(spawned_at.elapsed().as_secs_f64() * 1e3);
                obs.line(&format!(
                    "  ready in {:.0} ms on port {port}",
                    spawned_at.elapsed().as_secs_f64() * 1e3
                ));
            }
            Err(m) => {
                let stop = server.stop(self.suite.plan.stop_grace);
                r.outcome = if self.interrupted() {
                    Outcome::Interrupted
                } else {
                    Outcome::StartFailed
                };
                r.message = Some(format!("{m}{}", stop_note(&stop)));
                r.log_tail = Some(process::tail(&log, 20));
                return r;
            }
        }
        r.idle = probe::sample(server.pid).ok().map(|s| point(0.0, 0.0, &s));
        // 4. Verify every scenario before any load.
        let mut verified: Vec<(Scenario, Verification)> = Vec::new();
        for s in &self.suite.scenarios {
            let v = verify::verify(addr, s, self.suite.images, self.suite.plan.timeout);
            obs.line(&format!(
                "  verify {}: {}",
                s.name,
                if v.passed {
                    match v.keepalive {
                        Some(false) => {
                            "ok, but it closes every connection: keep-alive levels excluded"
                                .to_string()
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
            ));
            verified.push((s.clone(), v));
        }
        r.verify = verified.iter().map(|(_, v)| v.clone()).collect();
        // A scenario whose answers are wrong is not loaded; one that only fails keep-alive
        // still runs its levels without keep-alive.
        let answers_ok =
            |v: &Verification| v.checks.iter().all(|c| c.passed || c.name == "keep-alive");
        if verified.iter().all(|(_, v)| !answers_ok(v)) {
            let stop = server.stop(self.suite.plan.stop_grace);
            r.outcome = Outcome::VerifyFailed;
            let first = verified
                .iter()
                .flat_map(|(_, v)| v.checks.iter())
                .find(|c| !c.passed);
            r.message = Some(format!(
                "verification failed: {}{}",
                first
                    .map(|c| format!("{}: {}", c.name, c.detail.as_deref().unwrap_or("")))
                    .unwrap_or_default(),
                stop_note(&stop)
            ));
            r.log_tail = Some(process::tail(&log, 20));
            return r;
        }
        // 5. Levels.
        r.outcome = Outcome::Measured;
        let warmup_max = spec.warmup.unwrap_or(self.suite.plan.warmup);
        'scenarios: for (s, v) in &verified {
            for level in &self.suite.plan.levels {
                let keepalive = level.keepalive.unwrap_or(s.keepalive);
                let mut cell = Cell {
                    scenario: s.name.clone(),
                    level: level.name.clone(),
                    connections: level.connections as u64,
                    keepalive,
                    pipeline: if keepalive { s.pipeline as u64 } else { 1 },
                    status: CellStatus::Excluded,
                    message: None,
                    warmup_s: 0.0,
                    warmup_rps: Vec::new(),
                    repeats: Vec::new(),
                    summary: None,
                    diagnosis: None,
                };
                if !answers_ok(v) {
                    cell.message = Some("verification failed: not measured".into());
                    r.cells.push(cell);
                    continue;
                }
                if keepalive && v.keepalive == Some(false) {
                    cell.message = Some("excluded: the target closes connections after each response (verified), so keep-alive levels do not apply".into());
                    r.cells.push(cell);
                    continue;
                }
                if self.interrupted() {
                    cell.status = CellStatus::Interrupted;
                    cell.message = Some("interrupted before this level".into());
                    r.cells.push(cell);
                    continue;
                }
                self.measure(
                    &mut server,
                    addr,
                    s,
                    level,
                    keepalive,
                    warmup_max,
                    &mut cell,
                    obs,
                );
                let failed = cell.status == CellStatus::Failed;
                r.cells.push(cell);
                if failed {
                    if let Some(status) = server.exited() {
                        r.outcome = Outcome::Crashed;
                        r.message = Some(format!(
                            "the target exited ({status}) during level {}",
                            level.name
                        ));
                        r.log_tail = Some(process::tail(&log, 20));
                        break 'scenarios;
                    }
                }
            }
        }
        if self.interrupted() && r.outcome == Outcome::Measured {
            r.outcome = Outcome::Interrupted;
            r.message = Some("interrupted: the levels measured so far are kept".into());
        }
        // 6. Stop: SIGTERM, then SIGKILL; nothing left behind.
        let stop = server.stop(self.suite.plan.stop_grace);
        let note = stop_note(&stop);
        if !note.is_empty() {
            obs.line(&format!("  stop: {}", note.trim_start_matches("; ")));
            r.message = Some(match r.message.take() {
                Some(m) => format!("{m}{note}"),
                None => note.trim_start_matches("; ").to_string(),
            });
        }
        r
    }

    fn wait_ready(
        &self,
        server: &mut Spawned,
        addr: SocketAddr,
        spec: &TargetSpec,
    ) -> Result<(), String> {
        let end = Instant::now() + spec.ready_timeout;
        let log = self
            .opts
            .out
            .join("logs")
            .join(format!("{}.log", spec.name));
        loop {
            if let Some(status) = server.exited() {
                let last = process::tail(&log, 1);
                return Err(format!(
                    "exited ({status}) before it was ready{}",
                    if last.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", last.chars().take(200).collect::<String>())
                    }
                ));
            }
            if self.interrupted() {
                return Err("interrupted while waiting for readiness".into());
            }
            if Instant::now() >= end {
                return Err(format!(
                    "not ready after {:?} ({} on {addr}): raise ready_timeout if it starts slowly",
                    spec.ready_timeout,
                    match spec.ready {
                        Ready::Tcp => "no TCP connection accepted",
                        Ready::Http => "no HTTP response",
                    }
                ));
            }
            let ok = match spec.ready {
                Ready::Tcp => TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok(),
                Ready::Http => verify::Client::connect(addr, Duration::from_millis(500))
                    .ok()
                    .and_then(|mut c| c.request("GET", "/", true).ok())
                    .is_some(),
            };
            if ok {
                return Ok(());
            }
            // Fine polling at first: startup time is a reported figure (most targets are
            // ready within tens of milliseconds), coarser later to stay cheap.
            let waited = end.saturating_duration_since(Instant::now());
            std::thread::sleep(
                if spec.ready_timeout.saturating_sub(waited) < Duration::from_millis(500) {
                    Duration::from_millis(2)
                } else {
                    Duration::from_millis(20)
                },
            );
        }
    }

    fn load_plan(
        &self,
        addr: SocketAddr,
        s: &Scenario,
        connections: usize,
        keepalive: bool,
        stop: Stop,
    ) -> LoadPlan {
        let url = format!("http://{addr}{}", s.path);
        let target = Target::parse(&url).expect("a loopback URL with a checked path parses");
        let requests = vec![RequestSpec {
            method: s.method.clone(),
            ..RequestSpec::get(&target)
        }];
        LoadPlan {
            requests,
            connections,
            threads: self.client_threads.min(connections),
            arrival: Arrival::Closed,
            stop,
            pipeline: if keepalive { s.pipeline } else { 1 },
            keepalive,
            timeout: self.suite.plan.timeout,
            connect_timeout: self.suite.plan.timeout,
            // Correctness was verified; during load any status counts, and the wrong ones
            // are reported as failed-status by the scenario's status below.
            fail_status: {
                let mut set = StatusSet::none();
                for c in 100..1000 {
                    if c != s.status {
                        set.insert(c);
                    }
                }
                set
            },
            ..LoadPlan::new(target)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn measure(
        &self,
        server: &mut Spawned,
        addr: SocketAddr,
        s: &Scenario,
        level: &Level,
        keepalive: bool,
        warmup_max: Duration,
        cell: &mut Cell,
        obs: &mut dyn Observer,
    ) {
        let plan = &self.suite.plan;
        // Warm-up: slices until two agree within 10%, or the maximum is spent.
        let warm_start = Instant::now();
        let slice = plan.warmup_slice;
        while !warmup_max.is_zero() && warm_start.elapsed() + slice <= warmup_max + slice / 2 {
            let lp = self.load_plan(addr, s, level.connections, keepalive, Stop::Duration(slice));
            match self.run_load(&lp, server.pid, Duration::ZERO, level.max_duration) {
                Ok((res, _, _)) => {
                    let rps = res.counts.completed() as f64 / secs(res.elapsed).max(1e-9);
                    cell.warmup_rps.push(rps);
                }
                Err(m) => {
                    cell.status = CellStatus::Failed;
                    cell.message = Some(m);
                    return;
                }
            }
            if server.exited().is_some() {
                cell.status = CellStatus::Failed;
                cell.message = Some("the target exited during warm-up".into());
                return;
            }
            if self.interrupted() {
                break;
            }
            let n = cell.warmup_rps.len();
            if n >= 2 {
                let (a, b) = (cell.warmup_rps[n - 2], cell.warmup_rps[n - 1]);
                if a > 0.0 && (b - a).abs() <= 0.1 * a {
                    break;
                }
            }
        }
        cell.warmup_s = secs(warm_start.elapsed());
        let repeats = level.repeats.unwrap_or(plan.repeats);
        for _ in 0..repeats {
            if self.interrupted() {
                cell.status = CellStatus::Interrupted;
                cell.message = Some("interrupted: repeats measured so far are kept".into());
                break;
            }
            let stop = match level.requests {
                Some(n) => Stop::Requests(n),
                None => Stop::Duration(plan.duration),
            };
            let lp = self.load_plan(addr, s, level.connections, keepalive, stop);
            let t0 = probe::threads(server.pid).unwrap_or_default();
            let s0 = probe::sample(server.pid).ok();
            let c0 = probe::own_usage();
            let cap = if level.requests.is_some() {
                level.max_duration
            } else {
                Duration::ZERO
            };
            let outcome = self.run_load(&lp, server.pid, plan.sample_interval, cap);
            let c1 = probe::own_usage();
            let s1 = probe::sample(server.pid).ok();
            let t1 = probe::threads(server.pid).unwrap_or_default();
            let (res, series, capped) = match outcome {
                Ok(x) => x,
                Err(m) => {
                    cell.status = CellStatus::Failed;
                    cell.message = Some(m);
                    return;
                }
            };
            let crashed = server.exited();
            let elapsed = secs(res.elapsed).max(1e-9);
            let completed = res.counts.completed();
            let per_req = |cpu_s: f64| (completed > 0).then(|| cpu_s * 1e6 / completed as f64);
            let server_w = match (s0, s1) {
                (Some(a), Some(b)) => {
                    let user = b.cpu_user_ns.saturating_sub(a.cpu_user_ns) as f64 / 1e9;
                    let sys = b.cpu_sys_ns.saturating_sub(a.cpu_sys_ns) as f64 / 1e9;
                    let mut rss: Vec<u64> = series.iter().map(|p| p.rss_bytes).collect();
                    rss.extend([a.rss_bytes, b.rss_bytes]);
                    let mut pss: Vec<u64> = series.iter().map(|p| p.pss_bytes).collect();
                    pss.extend([a.pss_bytes, b.pss_bytes]);
                    let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len().max(1) as u64;
                    ServerWindow {
                        cpu_user_s: user,
                        cpu_sys_s: sys,
                        cpu_percent: 100.0 * (user + sys)
                            / elapsed
                            / self.server_cpus.len().max(1) as f64,
                        busiest_thread_percent: 100.0 * t1.busiest_since(&t0) as f64
                            / 1e9
                            / elapsed,
                        cpu_us_per_request: per_req(user + sys),
                        rss_peak_bytes: rss.iter().copied().max().unwrap_or(0),
                        rss_mean_bytes: mean(&rss),
                        pss_peak_bytes: pss.iter().copied().max().unwrap_or(0),
                        pss_mean_bytes: mean(&pss),
                        threads_peak: series
                            .iter()
                            .map(|p| p.threads)
                            .chain([u64::from(a.threads), u64::from(b.threads)])
                            .max()
                            .unwrap_or(0),
                        processes_peak: series
                            .iter()
                            .map(|p| p.processes)
                            .chain([u64::from(a.processes), u64::from(b.processes)])
                            .max()
                            .unwrap_or(0),
                        fds_peak: series
                            .iter()
                            .map(|p| p.fds)
                            .chain([u64::from(a.fds), u64::from(b.fds)])
                            .max()
                            .unwrap_or(0),
                        voluntary_ctxt_per_s: t1.voluntary_ctxt.saturating_sub(t0.voluntary_ctxt)
                            as f64
                            / elapsed,
                        involuntary_ctxt_per_s: t1
                            .involuntary_ctxt
                            .saturating_sub(t0.involuntary_ctxt)
                            as f64
                            / elapsed,
                    }
                }
                _ => {
                    cell.status = CellStatus::Failed;
                    cell.message = Some(match crashed {
                        Some(st) => format!("the target exited ({st}) during the level"),
                        None => "the target's process could not be probed".into(),
                    });
                    cell.repeats.push(repeat(
                        &res,
                        capped,
                        zero_server(),
                        client_window(&c1.since(&c0), elapsed, self.client_threads, completed),
                        series,
                    ));
                    return;
                }
            };
            let client_w = client_window(&c1.since(&c0), elapsed, self.client_threads, completed);
            cell.repeats
                .push(repeat(&res, capped, server_w, client_w, series));
            if let Some(status) = crashed {
                cell.status = CellStatus::Failed;
                cell.message = Some(format!("the target exited ({status}) during the level"));
                return;
            }
        }
        if !cell.repeats.is_empty() {
            if cell.status == CellStatus::Excluded {
                cell.status = CellStatus::Measured;
            }
            let summary = summarize(&cell.repeats);
            let f = figures(&cell.repeats, &summary, self.server_cpus.len());
            let d = diagnose(&f);
            obs.line(&format!(
                "  {} {:>6}: {:>9.0} req/s  p99 {:>9}  server {:>6}  {}",
                s.name,
                level.name,
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
            ));
            cell.summary = Some(summary);
            cell.diagnosis = Some(d);
        } else if cell.status == CellStatus::Excluded {
            cell.status = CellStatus::Interrupted;
        }
    }

    /// Runs one load while a sampler thread probes the server every `interval` (0 = no
    /// samples), stops the load on Ctrl-C, when the server dies, or after `cap` (0 = none).
    fn run_load(
        &self,
        plan: &LoadPlan,
        root: i32,
        interval: Duration,
        cap: Duration,
    ) -> Result<(RunResult, Vec<ProbePoint>, bool), String> {
        let control = Control::new(plan.effective_threads());
        let done = Arc::new(AtomicBool::new(false));
        let interrupt = self.opts.interrupt.clone();
        let capped = Arc::new(AtomicBool::new(false));
        let servers = self.server_cpus.len().max(1) as f64;
        let sampler = {
            let (control, done, capped) = (control.clone(), done.clone(), capped.clone());
            std::thread::Builder::new()
                .name("foxbench-probe".into())
                .spawn(move || {
                    let start = Instant::now();
                    let mut series = Vec::new();
                    let mut next = Duration::ZERO;
                    let mut last: Option<(f64, u64)> = None;
                    while !done.load(Ordering::Relaxed) {
                        let t = start.elapsed();
                        if interrupt.load(Ordering::Relaxed) {
                            control.stop();
                        }
                        if !cap.is_zero() && t >= cap {
                            capped.store(true, Ordering::Relaxed);
                            control.stop();
                        }
                        if !interval.is_zero() && t >= next {
                            next += interval;
                            match probe::sample(root) {
                                Ok(s) => {
                                    let ts = t.as_secs_f64();
                                    let cpu = match last {
                                        Some((t0, c0)) if ts > t0 => {
                                            100.0 * (s.cpu_ns().saturating_sub(c0)) as f64
                                                / 1e9
                                                / (ts - t0)
                                                / servers
                                        }
                                        _ => 0.0,
                                    };
                                    last = Some((ts, s.cpu_ns()));
                                    series.push(point(ts, cpu, &s));
                                }
                                // The server died: stop loading a dead port.
                                Err(probe::ProbeError::Gone(_)) => control.stop(),
                                Err(_) => {}
                            }
                        } else if interval.is_zero() && probe::tree(root).is_err() {
                            control.stop();
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    series
                })
                .map_err(|e| format!("cannot start the probe thread: {e}"))?
        };
        let res = load::run(plan, &control);
        done.store(true, Ordering::Relaxed);
        let series = sampler.join().unwrap_or_default();
        let res = res.map_err(|e| format!("the load could not run: {e}"))?;
        Ok((res, series, capped.load(Ordering::Relaxed)))
    }
}

fn stop_note(s: &process::StopReport) -> String {
    let mut parts = Vec::new();
    if s.killed {
        parts.push("SIGTERM was ignored, so SIGKILL was sent".to_string());
    }
    if s.leftovers > 0 {
        parts.push(format!(
            "{} process{} of its own stopped with it",
            s.leftovers,
            if s.leftovers == 1 { "" } else { "es" }
        ));
    }
    if s.survivors > 0 {
        parts.push(format!(
            "{} process{} survived SIGKILL",
            s.survivors,
            if s.survivors == 1 { "" } else { "es" }
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    }
}

fn point(t_s: f64, cpu_percent: f64, s: &probe::Sample) -> ProbePoint {
    ProbePoint {
        t_s,
        cpu_percent,
        rss_bytes: s.rss_bytes,
        pss_bytes: s.pss_bytes,
        threads: u64::from(s.threads),
        processes: u64::from(s.processes),
        fds: u64::from(s.fds),
    }
}

fn zero_server() -> ServerWindow {
    ServerWindow {
        cpu_user_s: 0.0,
        cpu_sys_s: 0.0,
        cpu_percent: 0.0,
        busiest_thread_percent: 0.0,
        cpu_us_per_request: None,
        rss_peak_bytes: 0,
        rss_mean_bytes: 0,
        pss_peak_bytes: 0,
        pss_mean_bytes: 0,
        threads_peak: 0,
        processes_peak: 0,
        fds_peak: 0,
        voluntary_ctxt_per_s: 0.0,
        involuntary_ctxt_per_s: 0.0,
    }
}

fn client_window(
    used: &probe::OwnUsage,
    elapsed: f64,
    cpus: usize,
    completed: u64,
) -> ClientWindow {
    let c = report::Client::measure(
        cpus as u64,
        secs(used.user),
        secs(used.sys),
        elapsed,
        completed,
        used.max_rss_bytes,
    );
    ClientWindow {
        cpu_user_s: c.cpu_user_s,
        cpu_sys_s: c.cpu_sys_s,
        cpu_percent: c.cpu_percent,
        cpu_us_per_request: c.cpu_us_per_request,
    }
}

fn repeat(
    res: &RunResult,
    capped: bool,
    server: ServerWindow,
    client: ClientWindow,
    series: Vec<ProbePoint>,
) -> Repeat {
    let c = &res.counts;
    let elapsed = secs(res.elapsed).max(1e-9);
    Repeat {
        elapsed_s: secs(res.elapsed),
        capped,
        requests: c.into(),
        errors: c.into(),
        status: res
            .status
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        connections: c.into(),
        rps: c.completed() as f64 / elapsed,
        latency: res.latency.summary(),
        hdr_base64: res.latency.to_base64(),
        server,
        client,
        series,
    }
}

/// The percentiles the spectrum chart plots: 0, 50, 75, 87.5, ... towards 100, then 100.
pub fn spectrum_points() -> Vec<f64> {
    let mut v: Vec<f64> = (0..=17).map(|k| 100.0 * (1.0 - 0.5f64.powi(k))).collect();
    v.push(100.0);
    v
}

fn summarize(reps: &[Repeat]) -> CellSummary {
    let med = |f: &dyn Fn(&Repeat) -> Option<f64>| {
        let mut v: Vec<f64> = reps.iter().filter_map(f).collect();
        report::shootout::median(&mut v)
    };
    let mut merged = Latency::new();
    for r in reps {
        if let Ok(h) = Latency::from_base64(&r.hdr_base64) {
            let _ = merged.merge(&h);
        }
    }
    let rps: Vec<f64> = reps.iter().map(|r| r.rps).collect();
    CellSummary {
        rps_median: med(&|r| Some(r.rps)).unwrap_or(0.0),
        rps_min: rps.iter().copied().fold(f64::INFINITY, f64::min),
        rps_max: rps.iter().copied().fold(0.0, f64::max),
        latency: merged.summary(),
        hdr_base64: merged.to_base64(),
        spectrum: if merged.is_empty() {
            Vec::new()
        } else {
            spectrum_points()
                .into_iter()
                .map(|p| (p, merged.percentile_ns(p) as f64 / 1e3))
                .collect()
        },
        server_cpu_us_per_request: med(&|r| r.server.cpu_us_per_request),
        client_cpu_us_per_request: med(&|r| r.client.cpu_us_per_request),
        server_cpu_percent: med(&|r| Some(r.server.cpu_percent)).unwrap_or(0.0),
        busiest_thread_percent: med(&|r| Some(r.server.busiest_thread_percent)).unwrap_or(0.0),
        client_cpu_percent: med(&|r| Some(r.client.cpu_percent)).unwrap_or(0.0),
        rss_peak_bytes: reps
            .iter()
            .map(|r| r.server.rss_peak_bytes)
            .max()
            .unwrap_or(0),
        rss_mean_bytes: reps.iter().map(|r| r.server.rss_mean_bytes).sum::<u64>()
            / reps.len().max(1) as u64,
        pss_peak_bytes: reps
            .iter()
            .map(|r| r.server.pss_peak_bytes)
            .max()
            .unwrap_or(0),
        threads_peak: reps
            .iter()
            .map(|r| r.server.threads_peak)
            .max()
            .unwrap_or(0),
        fds_peak: reps.iter().map(|r| r.server.fds_peak).max().unwrap_or(0),
        errors: reps.iter().map(|r| r.requests.errors).sum(),
        failed_status: reps.iter().map(|r| r.requests.failed_status).sum(),
        sent: reps.iter().map(|r| r.requests.sent).sum(),
    }
}

fn figures(reps: &[Repeat], s: &CellSummary, server_cpus: usize) -> Figures {
    let sum = |f: &dyn Fn(&Repeat) -> u64| reps.iter().map(f).sum::<u64>();
    Figures {
        client_cpu_percent: s.client_cpu_percent,
        server_cpu_percent: s.server_cpu_percent,
        busiest_thread_percent: s.busiest_thread_percent,
        server_cpus,
        sent: s.sent,
        errors: s.errors,
        ports_exhausted: sum(&|r| r.errors.connect_ports_exhausted),
        refused: sum(&|r| r.errors.connect_refused),
        connect_timeouts: sum(&|r| r.errors.connect_timeout),
        connect_other: sum(&|r| {
            r.errors
                .connect
                .saturating_sub(r.errors.connect_refused)
                .saturating_sub(r.errors.connect_ports_exhausted)
                .saturating_sub(r.errors.connect_timeout)
        }),
        timeouts: sum(&|r| r.errors.timeout),
        resets: sum(&|r| r.errors.read + r.errors.write),
        parse: sum(&|r| r.errors.parse),
        failed_status: s.failed_status,
        p99_us: s.latency.at(99.0),
        completed: reps.iter().map(|r| r.requests.completed).sum(),
    }
}
