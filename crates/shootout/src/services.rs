//! The suite's services through a run: each is built and started (by the target lifecycle:
//! [`Setup`], [`Builder`], [`Running`]) before the first target that uses it, checked again
//! before each such target, and stopped after the last one, or at the end of the run.
//!
//! A service that fails to build or start, exits, or fails its check is down for the rest
//! of the run: the targets that use it are skipped with the reason, and the run goes on.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use report::shootout::{Outcome, ServiceResult};

use crate::failure::{stop_note, TargetFailure};
use crate::lifecycle::{Builder, Running, Setup};
use crate::suite::{service_vars, Counter, ServiceCheck, ServiceSpec, Suite, TargetSpec};
use crate::verify::Client;

/// What a service is doing.
#[derive(Debug)]
enum State {
    /// Not started yet (no target has needed it).
    Idle,
    /// Up, on this port.
    Up(Box<Running>),
    /// Down for the rest of the run, with the reason.
    Down(String),
    /// Stopped after its last target.
    Done,
}

/// One service and its record.
#[derive(Debug)]
struct Service<'a> {
    spec: &'a ServiceSpec,
    state: State,
    result: ServiceResult,
    /// The build's progress line (`cached`, `7.9 s`), until it is printed.
    built_line: Option<String>,
}

/// The run's services.
#[derive(Debug)]
pub struct Services<'a> {
    list: Vec<Service<'a>>,
    cpus: Vec<usize>,
    grace: Duration,
    timeout: Duration,
}

/// What the measurement of a cell needs of a service the target uses.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Its name.
    pub name: String,
    /// Its root process.
    pub pid: i32,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its request counter, if it has one.
    pub counter: Option<Counter>,
    /// Its `active` command with `{port}` filled in, if it has one.
    pub active: Option<String>,
}

impl Probe {
    /// Reads its counter once it stops moving (unchanged for [`QUIET`], within `timeout`):
    /// requests a previous load left in flight reach the service late, and must not count
    /// in the next level.
    pub fn settled_count(&self, timeout: Duration) -> Option<Result<u64, String>> {
        settle(|| self.count(timeout), QUIET, timeout)
    }

    /// Reads its counter now; `None` without a counter or when it cannot be read.
    pub fn count(&self, timeout: Duration) -> Option<Result<u64, String>> {
        let counter = self.counter.as_ref()?;
        Some(
            Client::connect(self.addr, timeout)
                .map_err(|e| format!("cannot connect to service {}: {e}", self.name))
                .and_then(|mut c| c.request("GET", &counter.path, true))
                .and_then(|r| {
                    if r.status == 200 {
                        counter.read(&r.body)
                    } else {
                        Err(format!("GET {}: status {}", counter.path, r.status))
                    }
                }),
        )
    }
}

/// How long a service's counter must stay still to be read as settled: longer than a JVM
/// front end's young collection with 10,000 threads (60-135 ms, targets/backend-call/
/// java-blocking), so a pause is not taken for the end of its backlog.
const QUIET: Duration = Duration::from_millis(200);

/// Polls `read` every 50 ms until its value has not changed for `quiet`, or `limit` has
/// passed, or a read fails; returns the last read.
fn settle(
    mut read: impl FnMut() -> Option<Result<u64, String>>,
    quiet: Duration,
    limit: Duration,
) -> Option<Result<u64, String>> {
    let end = std::time::Instant::now() + limit;
    let mut last = read()?;
    let mut since = std::time::Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let now = read()?;
        if now.is_err() || std::time::Instant::now() >= end {
            return Some(now);
        }
        if now != last {
            last = now;
            since = std::time::Instant::now();
        } else if since.elapsed() >= quiet {
            return Some(now);
        }
    }
}

/// How a service is started: where its builds go, the suite's images and template, the
/// logs and Ctrl-C.
#[derive(Debug, Clone, Copy)]
pub struct Start<'a> {
    /// The build cache and its bounds.
    pub builder: Builder<'a>,
    /// Where `dir`s are.
    pub root: &'a Path,
    /// Where logs go.
    pub logs: &'a Path,
    /// The suite's images and template, for `{images}` and `{template}`.
    pub images: u32,
    /// The suite's Location template.
    pub template: &'a str,
    /// Ctrl-C.
    pub interrupt: &'a AtomicBool,
}

impl<'a> Services<'a> {
    /// The suite's services, none started, pinned to `cpus` once they are.
    pub fn new(suite: &'a Suite, cpus: Vec<usize>) -> Self {
        let list = suite
            .services
            .iter()
            .map(|spec| Service {
                spec,
                state: State::Idle,
                built_line: None,
                result: ServiceResult {
                    name: spec.name().to_string(),
                    outcome: Outcome::Skipped,
                    message: Some("no target used it".into()),
                    build: None,
                    start_command: None,
                    startup_ms: None,
                    cpus: cpus.clone(),
                    used_by: Vec::new(),
                    idle: None,
                    log_tail: None,
                },
            })
            .collect();
        Services {
            list,
            cpus,
            grace: suite.plan.stop_grace,
            timeout: suite.plan.timeout,
        }
    }

    /// Makes every service `target` uses ready: starts those not started, checks those
    /// running (alive, and their `verify`). Returns the placeholders for the target's start
    /// command, or the first reason one is down.
    pub fn ready_for(
        &mut self,
        target: &TargetSpec,
        start: &Start,
        line: &mut dyn FnMut(&str),
    ) -> Result<Vec<(String, String)>, String> {
        let mut vars = Vec::new();
        for name in &target.uses {
            let Some(s) = self.list.iter_mut().find(|s| s.spec.name() == name) else {
                continue;
            };
            if !s.result.used_by.contains(&target.name) {
                s.result.used_by.push(target.name.clone());
            }
            if matches!(s.state, State::Idle | State::Done) {
                s.start(start, &self.cpus, self.grace, line);
            } else {
                s.recheck(self.grace, self.timeout);
            }
            match &s.state {
                State::Up(running) => vars.extend(service_vars(name, running.addr.port())),
                State::Down(why) => return Err(format!("service {name} is down: {why}")),
                State::Idle | State::Done => unreachable!("just started or down"),
            }
        }
        Ok(vars)
    }

    /// The services `target` uses that are up, for probing.
    pub fn probes(&self, target: &TargetSpec) -> Vec<Probe> {
        self.list
            .iter()
            .filter(|s| target.uses.iter().any(|u| u == s.spec.name()))
            .filter_map(|s| match &s.state {
                State::Up(r) => Some(Probe {
                    name: s.spec.name().to_string(),
                    pid: r.pid(),
                    addr: r.addr,
                    counter: s.spec.counter.clone(),
                    active: s
                        .spec
                        .active
                        .as_ref()
                        .map(|c| c.replace("{port}", &r.addr.port().to_string())),
                }),
                _ => None,
            })
            .collect()
    }

    /// The first service `target` uses that has exited since it was started: its name and
    /// how it exited. It is down from now on.
    pub fn crashed(&mut self, target: &TargetSpec) -> Option<(String, String)> {
        for s in &mut self.list {
            if !target.uses.iter().any(|u| u == s.spec.name()) {
                continue;
            }
            let State::Up(running) = &mut s.state else {
                continue;
            };
            if let Some(status) = running.exited() {
                let why = format!("exited ({status})");
                s.down(why.clone(), Outcome::Crashed, self.grace);
                return Some((s.spec.name().to_string(), why));
            }
        }
        None
    }

    /// Stops the services no target in `rest` uses.
    pub fn release(&mut self, rest: &[TargetSpec], line: &mut dyn FnMut(&str)) {
        for s in &mut self.list {
            let needed = rest
                .iter()
                .any(|t| t.uses.iter().any(|u| u == s.spec.name()));
            if !needed && matches!(s.state, State::Up(_)) {
                s.stop(self.grace, line);
            }
        }
    }

    /// Stops every service still running (the end of the run, Ctrl-C included).
    pub fn stop_all(&mut self, line: &mut dyn FnMut(&str)) {
        self.release(&[], line);
    }

    /// Each service's record so far.
    pub fn results(&self) -> Vec<ServiceResult> {
        self.list.iter().map(|s| s.result.clone()).collect()
    }
}

impl Service<'_> {
    /// Builds and starts it, waits until it is ready and checks it; down on any failure.
    fn start(&mut self, st: &Start, cpus: &[usize], grace: Duration, line: &mut dyn FnMut(&str)) {
        let name = self.spec.name().to_string();
        match self.try_start(st, cpus, grace) {
            Ok(running) => {
                if let Some(b) = self.built_line.take() {
                    line(&format!("  service {name}: build: {b}"));
                }
                line(&format!(
                    "  service {name}: ready in {:.0} ms on port {}",
                    self.result.startup_ms.unwrap_or(0.0),
                    running.addr.port()
                ));
                self.result.outcome = Outcome::Measured;
                self.result.message = None;
                self.state = State::Up(Box::new(running));
                self.recheck(grace, Duration::from_secs(5));
            }
            Err(failure) => {
                let outcome =
                    failure.outcome(st.interrupt.load(std::sync::atomic::Ordering::Relaxed));
                let why = failure.to_string();
                line(&format!("  service {name}: {}: {why}", outcome.as_str()));
                self.result.outcome = outcome;
                self.result.message = Some(why.clone());
                self.state = State::Down(why);
            }
        }
    }

    fn try_start(
        &mut self,
        st: &Start,
        cpus: &[usize],
        grace: Duration,
    ) -> Result<Running, TargetFailure> {
        let spec = &self.spec.target;
        let setup = Setup::new(spec, st.root, st.logs.to_path_buf())?;
        let built = st.builder.build(&setup)?;
        self.result.build = Some(built.info.clone());
        if spec.build.is_some() {
            self.built_line = Some(if built.info.cached {
                "cached".to_string()
            } else {
                format!("{:.1} s", built.info.seconds)
            });
        }
        let (running, command, startup) = setup.start(
            &|port| setup.start_command(&built, port, st.images, st.template, &[]),
            cpus,
            (spec.ready, spec.ready_timeout),
            st.interrupt,
            grace,
        )?;
        self.result.start_command = Some(command);
        self.result.startup_ms = Some(startup.as_secs_f64() * 1e3);
        self.result.idle = running.idle();
        Ok(running)
    }

    /// Alive, and its `verify` answered as given; down (and stopped) otherwise.
    fn recheck(&mut self, grace: Duration, timeout: Duration) {
        let State::Up(running) = &mut self.state else {
            return;
        };
        if let Some(status) = running.exited() {
            self.down(format!("exited ({status})"), Outcome::Crashed, grace);
            return;
        }
        let Some(check) = &self.spec.check else {
            return;
        };
        if let Err(why) = check_answer(running.addr, check, timeout) {
            self.down(
                format!("its check failed: {why}"),
                Outcome::VerifyFailed,
                grace,
            );
        }
    }

    /// Down for the rest of the run: stopped, with the reason and the end of its log.
    fn down(&mut self, why: String, outcome: Outcome, grace: Duration) {
        if let State::Up(running) = &mut self.state {
            let left = running.abandon(grace);
            self.result.log_tail = Some(left.log_tail);
        }
        self.result.outcome = outcome;
        self.result.message = Some(why.clone());
        self.state = State::Down(why);
    }

    fn stop(&mut self, grace: Duration, line: &mut dyn FnMut(&str)) {
        if let State::Up(running) = &mut self.state {
            let note = stop_note(&running.stop(grace));
            if !note.is_empty() {
                let bare = note.trim_start_matches("; ").to_string();
                line(&format!("  service {}: stop: {bare}", self.spec.name()));
                self.result.message = Some(bare);
            }
            self.state = State::Done;
        }
    }
}

/// One GET of the check's path, judged by status and body.
fn check_answer(addr: SocketAddr, check: &ServiceCheck, timeout: Duration) -> Result<(), String> {
    let r = Client::connect(addr, timeout)
        .map_err(|e| format!("cannot connect: {e}"))?
        .request("GET", &check.path, true)?;
    if r.status != check.status {
        return Err(format!(
            "GET {}: status {} (expected {})",
            check.path, r.status, check.status
        ));
    }
    if let Some(re) = &check.body {
        let body = String::from_utf8_lossy(&r.body);
        if !re.is_match(&body) {
            let shown: String = body.chars().take(60).collect();
            return Err(format!(
                "GET {}: body {shown:?} does not match {:?}",
                check.path,
                re.as_str()
            ));
        }
    }
    Ok(())
}

/// The services' CPUs: the plan's, or by default the last server CPU when the targets
/// have two or more (the target keeps the rest), else the server CPUs themselves.
pub fn assign_cpus(suite: &Suite, server: &mut Vec<usize>) -> Vec<usize> {
    if suite.services.is_empty() {
        return Vec::new();
    }
    match &suite.plan.service_cpus {
        Some(c) => c.clone(),
        None if server.len() >= 2 => vec![server.pop().expect("two or more")],
        None => server.clone(),
    }
}

/// What shares a CPU with what, in plain sentences, for the protocol and the report.
pub fn sharing(client: &[usize], server: &[usize], services: &[usize]) -> Vec<String> {
    let overlap = |a: &[usize], b: &[usize]| -> Vec<usize> {
        a.iter().copied().filter(|c| b.contains(c)).collect()
    };
    let mut out = Vec::new();
    let pairs = [
        (
            "the load generator (foxbench)",
            client,
            "the targets",
            server,
        ),
        ("the services", services, "the targets", server),
        (
            "the services",
            services,
            "the load generator (foxbench)",
            client,
        ),
    ];
    for (a, ca, b, cb) in pairs {
        let both = overlap(ca, cb);
        if !both.is_empty() && !ca.is_empty() && !cb.is_empty() {
            out.push(format!(
                "{a} and {b} share CPU {}: their CPU time adds up there, and each slows the other",
                both.iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests;
