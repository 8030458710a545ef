//! Measuring one cell (a scenario at a level): warm-up until throughput is steady, then the
//! level's repeats, with a sampler thread probing the server throughout.

use std::io;
use std::net::SocketAddr;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use load::{Arrival, Control, Plan as LoadPlan, RequestSpec, RunResult, StatusSet, Stop, Target};
use report::shootout::{Cell, CellStatus, ProbePoint, Repeat};

use crate::lifecycle::Running;
use crate::suite::{Level, Plan, Scenario};
use crate::summary;
use crate::window::{self, client_window, server_window, zero_server, Edge};

/// Why a cell failed; its message is the cell's.
#[derive(Debug, thiserror::Error)]
pub enum CellFailure {
    /// The sampler thread could not be started.
    #[error("cannot start the probe thread: {0}")]
    ProbeThread(io::Error),
    /// The load generator refused the plan.
    #[error("the load could not run: {0}")]
    Load(load::LoadError),
    /// The target exited while warming up.
    #[error("the target exited during warm-up")]
    ExitedInWarmUp,
    /// The target exited during a repeat (which is kept).
    #[error("the target exited ({0}) during the level")]
    Exited(ExitStatus),
    /// The target's process tree could not be read around a repeat (which is kept).
    #[error("the target's process could not be probed")]
    Unprobed,
    /// A capacity level's search could not be set up.
    #[error("the capacity search cannot run: {0}")]
    Capacity(String),
}

/// A scenario at a level: what one cell loads.
#[derive(Debug, Clone)]
pub struct Task<'a> {
    /// What to request.
    pub scenario: &'a Scenario,
    /// How hard and how long.
    pub level: &'a Level,
    /// The level's keep-alive, else the scenario's.
    pub keepalive: bool,
    /// The longest warm-up.
    pub warmup_max: Duration,
    /// For a TLS scenario, the engine's settings: the certificate check with the target's
    /// paths filled in, and the level's resumption.
    pub tls: Option<load::TlsOptions>,
}

impl<'a> Task<'a> {
    /// The scenario at the level, warming up for at most `warmup_max`, for a target built
    /// into `out` from `dir` (what a TLS scenario's `cacert` may name).
    pub fn new(
        scenario: &'a Scenario,
        level: &'a Level,
        warmup_max: Duration,
        (out, dir): (&str, &str),
    ) -> Self {
        Task {
            scenario,
            level,
            keepalive: level.keepalive.unwrap_or(scenario.keepalive),
            warmup_max,
            tls: scenario
                .tls
                .as_ref()
                .map(|t| t.options(out, dir, level.tls_resume.unwrap_or(true))),
        }
    }

    /// Requests pipelined per connection: the scenario's, and only with keep-alive.
    pub fn pipeline(&self) -> usize {
        if self.keepalive {
            self.scenario.pipeline
        } else {
            1
        }
    }

    /// The cell before it is measured: excluded until it is.
    pub fn cell(&self) -> Cell {
        Cell {
            scenario: self.scenario.name.clone(),
            level: self.level.name.clone(),
            connections: self.level.connections as u64,
            keepalive: self.keepalive,
            pipeline: self.pipeline() as u64,
            tls_resume: self.tls.as_ref().map(|t| t.resume),
            status: CellStatus::Excluded,
            message: None,
            warmup_s: 0.0,
            warmup_rps: Vec::new(),
            repeats: Vec::new(),
            summary: None,
            diagnosis: None,
            limits: Vec::new(),
            capacity: None,
        }
    }
}

/// What measuring needs from the run: the plan, the CPUs on each side, and Ctrl-C.
#[derive(Debug, Clone, Copy)]
pub struct Meter<'a> {
    /// The suite's plan.
    pub plan: &'a Plan,
    /// Load generator threads (one per client CPU).
    pub client_threads: usize,
    /// CPUs the server may use.
    pub server_cpus: usize,
    /// Set by Ctrl-C.
    pub interrupt: &'a Arc<AtomicBool>,
}

/// One load's result with the probe samples taken during it.
struct Probed {
    result: RunResult,
    series: Vec<ProbePoint>,
    /// The load's intervals of `plan.interval`.
    intervals: Vec<report::IntervalRow>,
    /// A counted level hit its time cap.
    capped: bool,
}

impl Meter<'_> {
    fn interrupted(&self) -> bool {
        self.interrupt.load(Ordering::Relaxed)
    }

    /// Warms the target up, then runs the level's repeats into `cell` (a capacity level: its
    /// search, without warm-up). Ctrl-C ends it early
    /// with the repeats so far; a failure leaves the repeats so far for the caller to mark.
    pub fn measure(
        &self,
        target: &mut Running,
        task: &Task,
        cell: &mut Cell,
    ) -> Result<(), CellFailure> {
        // A capacity level has no warm-up: its search starts low, and its first windows
        // (doubling from the start rate) warm the target as the slices would.
        if let Some(capacity) = &task.level.capacity {
            return self.capacity(target, task, capacity, cell);
        }
        self.warm_up(target, task, cell)?;
        let repeats = task.level.repeats.unwrap_or(self.plan.repeats);
        for _ in 0..repeats {
            if self.interrupted() {
                cell.status = CellStatus::Interrupted;
                cell.message = Some("interrupted: repeats measured so far are kept".into());
                break;
            }
            self.repeat(target, task, cell)?;
        }
        Ok(())
    }

    /// Slices of load until two agree within 10%, or the maximum is spent.
    fn warm_up(
        &self,
        target: &mut Running,
        task: &Task,
        cell: &mut Cell,
    ) -> Result<(), CellFailure> {
        let start = Instant::now();
        let slice = self.plan.warmup_slice;
        let max = task.warmup_max;
        while !max.is_zero() && start.elapsed() + slice <= max + slice / 2 {
            let plan = self.load_plan(target.addr, task, Stop::Duration(slice));
            let res = self
                .run_load(&plan, target.pid(), Duration::ZERO, task.level.max_duration)?
                .result;
            cell.warmup_rps
                .push(res.counts.completed() as f64 / res.elapsed.as_secs_f64().max(1e-9));
            if target.exited().is_some() {
                return Err(CellFailure::ExitedInWarmUp);
            }
            if self.interrupted() || summary::steady(&cell.warmup_rps) {
                break;
            }
        }
        cell.warmup_s = start.elapsed().as_secs_f64();
        Ok(())
    }

    /// One measured repeat into `cell`, with the server and client windows around it.
    fn repeat(
        &self,
        target: &mut Running,
        task: &Task,
        cell: &mut Cell,
    ) -> Result<(), CellFailure> {
        let (stop, cap) = match task.level.requests {
            Some(n) => (Stop::Requests(n), task.level.max_duration),
            None => (Stop::Duration(self.plan.duration), Duration::ZERO),
        };
        let (repeat, failure) = self.probed_repeat(target, task, Arrival::Closed, stop, cap)?;
        cell.repeats.push(repeat);
        failure.map_or(Ok(()), Err)
    }

    /// One load of `arrival` until `stop` (or `cap`, 0 = none) with the server tree probed
    /// around and during it and foxbench's own CPU measured: its repeat, and the failure
    /// that ends the cell after it (the target exited, or could not be probed), if any.
    /// The window runner of both the repeats and the capacity search's windows.
    pub(crate) fn probed_repeat(
        &self,
        target: &mut Running,
        task: &Task,
        arrival: Arrival,
        stop: Stop,
        cap: Duration,
    ) -> Result<(Repeat, Option<CellFailure>), CellFailure> {
        let mut plan = self.load_plan(target.addr, task, stop);
        plan.arrival = arrival;
        // The per-repeat series of the results and the report's charts over time.
        if !self.plan.sample_interval.is_zero() {
            plan.interval = self.plan.sample_interval;
        }
        let pid = target.pid();
        let n0 = probe::by_name(pid).unwrap_or_default();
        let t0 = probe::threads(pid).unwrap_or_default();
        let s0 = probe::sample(pid).ok();
        let c0 = probe::own_usage();
        let loaded = self.run_load(&plan, pid, self.plan.sample_interval, cap);
        let c1 = probe::own_usage();
        let s1 = probe::sample(pid).ok();
        let t1 = probe::threads(pid).unwrap_or_default();
        let n1 = probe::by_name(pid).unwrap_or_default();
        let Probed {
            result,
            series,
            intervals,
            capped,
        } = loaded?;
        let crashed = target.exited();
        let elapsed_s = result.elapsed.as_secs_f64().max(1e-9);
        let completed = result.counts.completed();
        let server = s0.zip(s1).map(|(a, b)| {
            let from = Edge {
                sample: a,
                threads: t0,
                by_name: n0,
            };
            let to = Edge {
                sample: b,
                threads: t1,
                by_name: n1,
            };
            server_window(&from, &to, &series, elapsed_s, completed, self.server_cpus)
        });
        let probed = server.is_some();
        let client = client_window(&c1.since(&c0), elapsed_s, self.client_threads, completed);
        let repeat = window::repeat(
            &result,
            task.tls.is_some(),
            capped,
            server.unwrap_or_else(zero_server),
            client,
            series,
            intervals,
        );
        let failure = match crashed {
            Some(status) => Some(CellFailure::Exited(status)),
            None if !probed => Some(CellFailure::Unprobed),
            None => None,
        };
        Ok((repeat, failure))
    }

    fn load_plan(&self, addr: SocketAddr, task: &Task, stop: Stop) -> LoadPlan {
        let s = task.scenario;
        let connections = task.level.connections;
        let scheme = if task.tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{addr}{}", s.path);
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
            pipeline: task.pipeline(),
            keepalive: task.keepalive,
            timeout: self.plan.timeout,
            connect_timeout: self.plan.timeout,
            // Correctness was verified; during load any status counts, and the wrong ones
            // are reported as failed-status by the scenario's status below.
            tls: task.tls.clone().unwrap_or_default(),
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

    /// Runs one load while a sampler thread probes the server every `interval` (0 = no
    /// samples), stops the load on Ctrl-C, when the server dies, or after `cap` (0 = none).
    fn run_load(
        &self,
        plan: &LoadPlan,
        root: i32,
        interval: Duration,
        cap: Duration,
    ) -> Result<Probed, CellFailure> {
        let control = Control::new(plan.effective_threads());
        let done = Arc::new(AtomicBool::new(false));
        let interrupt = self.interrupt.clone();
        let capped = Arc::new(AtomicBool::new(false));
        let servers = self.server_cpus.max(1) as f64;
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
                                    series.push(window::point(ts, cpu, &s));
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
                .map_err(CellFailure::ProbeThread)?
        };
        let mut intervals = Vec::new();
        let result = load::run_with_intervals(plan, &control, &mut |iv| {
            intervals.push(report::IntervalRow::from(iv));
        });
        done.store(true, Ordering::Relaxed);
        let series = sampler.join().unwrap_or_default();
        Ok(Probed {
            result: result.map_err(CellFailure::Load)?,
            series,
            intervals,
            capped: capped.load(Ordering::Relaxed),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::{Suite, DEFAULT_SUITE};

    #[test]
    fn a_task_pipelines_only_with_keepalive() {
        let suite = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
        let mut s = suite.scenarios[0].clone();
        s.pipeline = 8;
        let level = |keepalive| Level {
            keepalive,
            ..suite.plan.levels[0].clone()
        };
        let cases = [
            // (scenario keep-alive, level's) → (keep-alive, pipeline)
            ((true, None), (true, 8)),
            ((true, Some(false)), (false, 1)),
            ((false, None), (false, 1)),
            ((false, Some(true)), (true, 8)),
        ];
        for ((scenario_ka, level_ka), (keepalive, pipeline)) in cases {
            s.keepalive = scenario_ka;
            let l = level(level_ka);
            let task = Task::new(&s, &l, Duration::ZERO, ("out", "dir"));
            let cell = task.cell();
            assert_eq!((task.keepalive, task.pipeline()), (keepalive, pipeline));
            assert_eq!(
                (cell.keepalive, cell.pipeline),
                (keepalive, pipeline as u64)
            );
            assert_eq!(cell.status, CellStatus::Excluded);
            assert_eq!((task.tls, cell.tls_resume), (None, None), "plain HTTP");
        }
    }

    #[test]
    fn a_tls_task_loads_https_with_the_levels_resumption_and_the_targets_cacert() {
        let suite = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
        let mut s = suite.scenarios[0].clone();
        s.tls = Some(crate::suite::ScenarioTls {
            cert: crate::suite::CertCheck::CaFile("{out}/cert.pem".into()),
        });
        let full = Level {
            tls_resume: Some(false),
            ..suite.plan.levels[0].clone()
        };
        let task = Task::new(&s, &full, Duration::ZERO, ("/o", "/d"));
        let want = load::TlsOptions {
            verify: load::Verify::CaFile("/o/cert.pem".into()),
            resume: false,
        };
        assert_eq!(task.tls.as_ref(), Some(&want));
        assert_eq!(task.cell().tls_resume, Some(false));
        let interrupt = Arc::new(AtomicBool::new(false));
        let meter = Meter {
            plan: &suite.plan,
            client_threads: 1,
            server_cpus: 1,
            interrupt: &interrupt,
        };
        let addr: SocketAddr = "127.0.0.1:8443".parse().unwrap();
        let plan = meter.load_plan(addr, &task, Stop::Requests(1));
        assert_eq!(plan.target.scheme, load::Scheme::Https);
        assert!(
            plan.target.url.starts_with("https://127.0.0.1:8443/"),
            "{}",
            plan.target.url
        );
        assert_eq!(plan.tls, want);
        let resumed = Task::new(&s, &suite.plan.levels[0], Duration::ZERO, ("/o", "/d"));
        assert!(
            resumed.tls.unwrap().resume,
            "resumption is on unless the level turns it off"
        );
    }
}
