//! Measuring one cell (a scenario at a level): warm-up until throughput is steady, then the
//! level's repeats, each load begun once the server has finished the last one's abandoned
//! requests (`settle`), probed throughout (`sampler`: its tree, its threads' wait states),
//! with `/proc/stat` read at each repeat's edges; then, when asked for or when its threads
//! waited on a futex, JVM thread dumps in an unmeasured slice of the same load after the
//! repeats (`jcmd` is a JVM of its own on the client's CPUs: inside a repeat, it would be
//! measured as the load generator's or the server's).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use load::{Arrival, Plan as LoadPlan, RequestSpec, RunResult, StatusSet, Stop, Target};
use report::shootout::{Cell, CellStatus, CounterCheck, Repeat, ThreadWaits, TierWindow};

use crate::lifecycle::Running;
use crate::meter::{CellFailure, Dumps, Meter};
use crate::sampler::{file_safe, DumpPlan, Probed};
use crate::suite::{HttpVersion, Level, Scenario};
use crate::summary;
use crate::window::{self, server_window, system_window, zero_server, Edge};

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
    /// HTTP/1.1, or HTTP/2 or HTTP/3 with its streams: the level's, else the scenario's.
    pub version: HttpVersion,
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
            version: scenario.version(level),
        }
    }

    /// The engine's protocol: HTTP/2 or HTTP/3 with the level's streams and the engine's
    /// defaults, or HTTP/1.1.
    pub fn protocol(&self) -> load::Protocol {
        match self.version {
            HttpVersion::Http1 => load::Protocol::Http1,
            HttpVersion::Http2 { streams } => load::Protocol::Http2(load::H2Options {
                streams,
                ..load::H2Options::default()
            }),
            HttpVersion::Http3 { streams } => load::Protocol::Http3(load::H3Options { streams }),
        }
    }

    /// The protocol as results name it ([`measure::rules::protocol_name`]).
    pub fn protocol_name(&self) -> &'static str {
        measure::rules::protocol_name(&self.protocol(), self.tls.is_some())
    }

    /// Requests pipelined per connection: the scenario's, and only with keep-alive over
    /// HTTP/1.1 (HTTP/2 multiplexes streams instead).
    pub fn pipeline(&self) -> usize {
        if self.keepalive && self.version == HttpVersion::Http1 {
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
            protocol: self.protocol_name().into(),
            streams: self.version.streams().map(u64::from),
            idle: None,
            status: CellStatus::Excluded,
            message: None,
            warmup_s: 0.0,
            warmup_rps: Vec::new(),
            repeats: Vec::new(),
            summary: None,
            diagnosis: None,
            limits: Vec::new(),
            thread_dumps: Vec::new(),
            tiers: Vec::new(),
            counters: Vec::new(),
            limiting_tier: None,
            capacity: None,
            settle: None,
            tcp: None,
        }
    }
}

/// Requests foxbench completed and sent over a level, warm-up included: what the
/// services' counters are checked against.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Tally {
    completed: u64,
    failed_status: u64,
    sent: u64,
}

impl Tally {
    fn add(&mut self, r: &RunResult) {
        self.completed += r.counts.completed();
        self.failed_status += r.counts.failed_status;
        self.sent += r.counts.sent;
    }
}

impl Meter<'_> {
    pub(crate) fn interrupted(&self) -> bool {
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
        let before: Vec<Option<Result<u64, String>>> = self
            .services
            .iter()
            .map(|p| p.settled_count(self.plan.timeout))
            .collect();
        // The threads parked on a futex before any load: a runtime's own, not waiters.
        let futex_idle = probe::thread_waits(target.pid())
            .map(|w| w.iter().filter(|t| t.wait == probe::Wait::Futex).count() as u64)
            .unwrap_or(0);
        let mut tally = Tally::default();
        let measured = self.warm_up(target, task, cell, &mut tally).and_then(|()| {
            let repeats = task.level.repeats.unwrap_or(self.plan.repeats);
            for _ in 0..repeats {
                if self.interrupted() {
                    cell.status = CellStatus::Interrupted;
                    cell.message = Some("interrupted: repeats measured so far are kept".into());
                    break;
                }
                self.repeat(target, task, cell, futex_idle, &mut tally)?;
            }
            self.dump_slice(target, task, cell, &mut tally)
        });
        for (p, before) in self.services.iter().zip(before) {
            let after = p.settled_count(self.plan.timeout);
            match (before, after) {
                (Some(Ok(a)), Some(Ok(b))) => cell.counters.push(CounterCheck::new(
                    &p.name,
                    b.saturating_sub(a),
                    (tally.completed, tally.failed_status),
                    tally.sent,
                )),
                (Some(Err(e)), _) | (_, Some(Err(e))) => {
                    let note = format!("counter of service {}: {e}", p.name);
                    cell.message = Some(match cell.message.take() {
                        Some(m) => format!("{m}; {note}"),
                        None => note,
                    });
                }
                _ => {}
            }
        }
        measured
    }

    /// The thread dumps of a level, when it has a results directory for them and was
    /// measured whole, with `--thread-dump` or when its repeats show it waiting on a futex
    /// ([`summary::waited_on_futex`]): taken in an extra slice of the level's load after
    /// its repeats, recorded in none of them, which ends when the dumps are done. Its
    /// requests count in `tally` (the services' counters see them).
    fn dump_slice(
        &self,
        target: &mut Running,
        task: &Task,
        cell: &mut Cell,
        tally: &mut Tally,
    ) -> Result<(), CellFailure> {
        let Some(d) = self.dumps else {
            return Ok(());
        };
        let waiting = || summary::waited_on_futex(&cell.repeats, self.server_cpus);
        let repeats = task.level.repeats.unwrap_or(self.plan.repeats) as usize;
        if self.interrupted() || cell.repeats.len() < repeats || !(d.always || waiting()) {
            return Ok(());
        }
        let plan = self.dump_plan(d, task, cell);
        // Time enough to reach the dump's moment and finish it; the dump ends it sooner.
        let stop = Stop::Duration(plan.at + crate::dump::DUMP_TIMEOUT);
        let load = self.load_plan(target.addr, task, stop);
        let probed = self.run_load(
            &load,
            target.pid(),
            Duration::ZERO,
            Duration::ZERO,
            Some(plan),
        )?;
        tally.add(&probed.result);
        cell.thread_dumps.extend(probed.dumps);
        Ok(())
    }

    /// When in the slice the dumps are taken: where the middle of a repeat would be, half
    /// the plan's duration, or for a counted level half the time its requests take at the
    /// warm-up's last throughput (a level of many connections spends it opening them).
    fn dump_plan(&self, d: Dumps, task: &Task, cell: &Cell) -> DumpPlan {
        let expected = match task.level.requests {
            Some(n) => {
                let rps = cell.warmup_rps.last().copied().filter(|r| *r > 0.0);
                rps.map_or(task.level.max_duration / 2, |r| {
                    Duration::from_secs_f64(n as f64 / r).min(task.level.max_duration)
                })
            }
            None => self.plan.duration,
        };
        DumpPlan {
            at: expected / 2,
            dir: d.dir.to_path_buf(),
            stem: file_safe(&format!("{}-{}-{}", d.target, cell.scenario, cell.level)),
        }
    }

    /// Slices of load until two agree within 10%, or the maximum is spent.
    fn warm_up(
        &self,
        target: &mut Running,
        task: &Task,
        cell: &mut Cell,
        tally: &mut Tally,
    ) -> Result<(), CellFailure> {
        let start = Instant::now();
        let slice = self.plan.warmup_slice;
        let max = task.warmup_max;
        while !max.is_zero() && start.elapsed() + slice <= max + slice / 2 {
            self.settle(target, cell);
            let plan = self.load_plan(target.addr, task, Stop::Duration(slice));
            let res = self
                .run_load(
                    &plan,
                    target.pid(),
                    Duration::ZERO,
                    task.level.max_duration,
                    None,
                )?
                .result;
            tally.add(&res);
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
        futex_idle: u64,
        tally: &mut Tally,
    ) -> Result<(), CellFailure> {
        let (stop, cap) = match task.level.requests {
            Some(n) => (Stop::Requests(n), task.level.max_duration),
            None => (Stop::Duration(self.plan.duration), Duration::ZERO),
        };
        self.settle(target, cell);
        cell.idle = Some(self.idle_of(target.addr, task));
        let (repeat, failure) =
            self.probed_repeat(target, task, None, (stop, cap), futex_idle, tally)?;
        cell.repeats.push(repeat);
        failure.map_or(Ok(()), Err)
    }

    /// One load of `arrival` until `stop` (or `cap`, 0 = none) with the server tree and the
    /// services probed around and during it, its threads' waits sampled (`futex_idle`
    /// threads were parked before the load) and foxbench's own CPU measured: its repeat,
    /// and the failure that ends the cell after it (the target exited, or could not be
    /// probed), if any; `tally` counts its requests. The window runner of both the repeats
    /// and the capacity search's windows.
    pub(crate) fn probed_repeat(
        &self,
        target: &mut Running,
        task: &Task,
        arrival: Option<Arrival>,
        (stop, cap): (Stop, Duration),
        futex_idle: u64,
        tally: &mut Tally,
    ) -> Result<(Repeat, Option<CellFailure>), CellFailure> {
        let plan = self.window_plan(target.addr, task, arrival, stop);
        let pid = target.pid();
        let n0 = probe::by_name(pid).unwrap_or_default();
        let t0 = probe::threads(pid).unwrap_or_default();
        let s0 = probe::sample(pid).ok();
        let sys0 = probe::system().ok();
        let v0: Vec<Option<probe::Sample>> = self
            .services
            .iter()
            .map(|p| probe::sample(p.pid).ok())
            .collect();
        let started_unix_ns = crate::sampler::unix_ns();
        let loaded = self.run_load(&plan, pid, self.plan.sample_interval, cap, None);
        let sys1 = probe::system().ok();
        let v1: Vec<Option<probe::Sample>> = self
            .services
            .iter()
            .map(|p| probe::sample(p.pid).ok())
            .collect();
        let s1 = probe::sample(pid).ok();
        let t1 = probe::threads(pid).unwrap_or_default();
        let n1 = probe::by_name(pid).unwrap_or_default();
        let Probed {
            result,
            series,
            intervals,
            waits,
            dumps: _,
            capped,
            service_peaks,
            service_connections,
            tcp_links,
            service_active,
            spent,
        } = loaded?;
        tally.add(&result);
        let crashed = target.exited();
        let elapsed_s = result.elapsed.as_secs_f64().max(1e-9);
        let completed = result.counts.completed();
        let services = self.tier_windows(&v0, &v1, &service_peaks, elapsed_s, completed);
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
        // Over the window's time base, as `foxbench load`'s.
        let client = measure::record::client(&result, &spent, self.client_threads);
        let mut rep = window::repeat(
            &result,
            task.tls.is_some(),
            capped,
            server.unwrap_or_else(zero_server),
            client,
            series,
            intervals,
        );
        rep.started_unix_ns = Some(started_unix_ns);
        rep.http2 = measure::record::http2_report(&result, task.protocol());
        rep.system = sys0
            .zip(sys1)
            .map(|(a, b)| system_window(&a, &b, self.cpu_ids, elapsed_s));
        rep.waits = (waits.samples > 0).then(|| ThreadWaits {
            futex_idle,
            ..window::thread_waits(&waits)
        });
        rep.services = services;
        rep.tcp = spent.tcp;
        // foxbench's link first, then each service's, in the services' order.
        let names =
            std::iter::once(None).chain(self.services.iter().map(|p| Some(p.name.as_str())));
        rep.tcp_links = names
            .zip(&tcp_links)
            .filter_map(|(name, link)| measure::record::tcp_link(name, link))
            .collect();
        rep.service_connections = self
            .services
            .iter()
            .zip(&service_connections)
            .enumerate()
            .filter(|(_, (_, c))| c.samples > 0)
            .map(|(i, (p, c))| report::shootout::pool::ServiceConnections {
                service: p.name.clone(),
                port: p.addr.port(),
                samples: c.samples,
                min: c.min,
                mean: c.mean().unwrap_or(0.0),
                max: c.max,
                busy_share: c.busy_fraction(),
                active_mean: service_active
                    .get(i)
                    .filter(|v| !v.is_empty())
                    .map(|v| v.iter().sum::<u64>() as f64 / v.len() as f64),
                active_max: service_active.get(i).and_then(|v| v.iter().max().copied()),
            })
            .collect();
        let failure = match crashed {
            Some(status) => Some(CellFailure::Exited(status)),
            None if !probed => Some(CellFailure::Unprobed),
            None => None,
        };
        Ok((rep, failure))
    }

    /// Each service's window: CPU between the edges, peaks from the edges and the samples.
    fn tier_windows(
        &self,
        before: &[Option<probe::Sample>],
        after: &[Option<probe::Sample>],
        peaks: &[(u64, u64)],
        elapsed_s: f64,
        completed: u64,
    ) -> Vec<TierWindow> {
        let cpus = self.service_cpus.max(1) as f64;
        self.services
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (a, b) = (
                    before.get(i).cloned().flatten(),
                    after.get(i).cloned().flatten(),
                );
                let cpu_s = match (&a, &b) {
                    (Some(a), Some(b)) => b.cpu_ns().saturating_sub(a.cpu_ns()) as f64 / 1e9,
                    _ => 0.0,
                };
                let (mut rss, mut threads) = peaks.get(i).copied().unwrap_or((0, 0));
                for s in [&a, &b].into_iter().flatten() {
                    rss = rss.max(s.rss_bytes);
                    threads = threads.max(u64::from(s.threads));
                }
                TierWindow {
                    name: p.name.clone(),
                    cpu_s,
                    cpu_percent: 100.0 * cpu_s / elapsed_s / cpus,
                    cpu_us_per_request: (completed > 0).then(|| cpu_s * 1e6 / completed as f64),
                    rss_peak_bytes: rss,
                    threads_peak: threads,
                }
            })
            .collect()
    }

    /// A measured window's load: the level's own (closed, or a `rate` level's open model)
    /// unless `arrival` replaces it (a capacity search's constant rate), with the interval
    /// series of the results and the report's charts over time.
    fn window_plan(
        &self,
        addr: SocketAddr,
        task: &Task,
        arrival: Option<Arrival>,
        stop: Stop,
    ) -> LoadPlan {
        let mut plan = self.load_plan(addr, task, stop);
        if let Some(a) = arrival {
            plan = measure::rules::with_arrival(plan, a);
        }
        if !self.plan.sample_interval.is_zero() {
            plan.interval = self.plan.sample_interval;
        }
        plan
    }

    /// The idle mode the task's loads run in, and why (`Cell::idle`).
    pub(crate) fn idle_of(&self, addr: SocketAddr, task: &Task) -> String {
        let plan = self.load_plan(addr, task, Stop::Requests(1));
        plan.idle_in_effect().to_string()
    }

    fn load_plan(&self, addr: SocketAddr, task: &Task, stop: Stop) -> LoadPlan {
        let s = task.scenario;
        let connections = task.level.connections;
        let scheme = if task.tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{addr}{}", s.path);
        let target = Target::parse(&url).expect("a loopback URL with a checked path parses");
        let requests = vec![RequestSpec {
            method: s.method.clone(),
            random_headers: s
                .request_headers
                .iter()
                .map(|h| (h.name.clone(), h.value.clone()))
                .collect(),
            ..RequestSpec::get(&target)
        }];
        let arrival = task
            .level
            .rate
            .as_ref()
            .map_or(Arrival::Closed, |r| Arrival::Open {
                rate: r.rate.clone(),
            });
        let plan = LoadPlan {
            requests,
            connections,
            threads: self.client_threads.min(connections),
            stop,
            pipeline: task.pipeline(),
            keepalive: task.keepalive,
            protocol: task.protocol(),
            coalesce: s.coalesce,
            idle: s.idle,
            // The runner pins foxbench and the target: their CPU sets are known.
            placement: load::Placement {
                client: probe::CpuList::of(self.cpu_ids.0.iter().copied()),
                server: probe::Server::Found {
                    cpus: probe::CpuList::of(self.cpu_ids.1.iter().copied()),
                },
            },
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
        };
        // Rate levels send on their schedule: the scenario's coalescing is for closed ones.
        measure::rules::with_arrival(plan, arrival)
    }
}

#[cfg(test)]
mod tests;
