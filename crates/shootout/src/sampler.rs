//! The probe during one load: a sampler thread that reads the server's tree (CPU, memory,
//! threads' wait states), its connections to each service and each service's tree while
//! the load runs, stops the load when the server dies, on Ctrl-C or at a counted level's
//! cap, and takes the JVM thread dumps of a load planned for them (the unmeasured slice
//! after a level's repeats), ending that load when they are done. Its threads' own CPU is
//! measured (`RUSAGE_THREAD`) so that it is never charged to the load generator.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use load::{Control, Plan as LoadPlan, RunResult};
use report::shootout::{DumpSlice, ProbePoint, ThreadDump};

use crate::meter::{CellFailure, Meter};
use crate::window;

/// The dumps to take during one load, which ends when they are done.
#[derive(Debug, Clone)]
pub(crate) struct DumpPlan {
    /// When, since the load started.
    pub(crate) at: Duration,
    /// The results directory, and the file name's stem (`target-scenario-level`).
    pub(crate) dir: PathBuf,
    pub(crate) stem: String,
}

/// The CPU time the calling thread has used.
fn thread_cpu() -> Duration {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(Duration::from)
        .unwrap_or_default()
}

/// Now, in nanoseconds since the Unix epoch (0 if the clock is before it).
pub(crate) fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A file-name-safe version of `s`.
pub(crate) fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Dumps every JVM of the tree into `plan.dir/thread-dumps/`, at `t_s` into the unmeasured
/// slice.
fn take_dumps(root: i32, plan: &DumpPlan, t_s: f64) -> Vec<ThreadDump> {
    let sub = plan.dir.join("thread-dumps");
    if let Err(e) = std::fs::create_dir_all(&sub) {
        eprintln!("note: cannot create {}: {e}", sub.display());
        return Vec::new();
    }
    crate::dump::jvms(root)
        .into_iter()
        .filter_map(|(pid, jcmd)| {
            let name = format!("{}-{pid}.txt", plan.stem);
            let started = unix_ns();
            match crate::dump::thread_dump(pid, &jcmd, &sub.join(&name)) {
                Ok(()) => Some(ThreadDump {
                    pid: pid as u64,
                    path: format!("thread-dumps/{name}"),
                    t_s,
                    slice: DumpSlice::Unmeasured,
                    started_unix_ns: Some(started),
                }),
                Err(e) => {
                    eprintln!("note: no thread dump of JVM {pid}: {e}");
                    None
                }
            }
        })
        .collect()
}

/// One load's result with the probe samples taken during it.
pub(crate) struct Probed {
    pub(crate) result: RunResult,
    pub(crate) series: Vec<ProbePoint>,
    /// The load's intervals of `plan.interval`.
    pub(crate) intervals: Vec<report::IntervalRow>,
    /// The target's threads' wait states, sampled through the load.
    pub(crate) waits: probe::WaitHistogram,
    /// JVM thread dumps taken during it (only in a load planned for them).
    pub(crate) dumps: Vec<ThreadDump>,
    /// A counted level hit its time cap.
    pub(crate) capped: bool,
    /// Each service's peak (RSS bytes, threads) over the samples.
    pub(crate) service_peaks: Vec<(u64, u64)>,
    /// The target's connections to each service's port over the samples.
    pub(crate) service_connections: Vec<probe::ConnectionSeries>,
    /// The sockets of foxbench's link to the target, then of the target's link to each
    /// service, over the samples (their `tcp_info`).
    pub(crate) tcp_links: Vec<probe::LinkSeries>,
    /// Each service's `active` readings (empty without the command).
    pub(crate) service_active: Vec<Vec<u64>>,
    /// What the window spent ([`measure::window::run`]): the probe's threads (sampler,
    /// `active` reader, thread dumps) as its helpers, the live view's threads and its work
    /// on the load's calling thread (`--dashboard`) beside it.
    pub(crate) spent: measure::window::Spent,
}

impl Meter<'_> {
    /// Runs one load while a sampler thread probes the server every `interval` (0 = no
    /// samples) and its threads' waits five times as often (at most a tenth of the time),
    /// stops the load on Ctrl-C, when the server dies, or after `cap` (0 = none), and
    /// takes the thread dumps of `dump`, stopping the load once they are done.
    pub(crate) fn run_load(
        &self,
        plan: &LoadPlan,
        root: i32,
        interval: Duration,
        cap: Duration,
        dump: Option<DumpPlan>,
    ) -> Result<Probed, CellFailure> {
        let control = Control::new(plan.effective_threads());
        let done = Arc::new(AtomicBool::new(false));
        let interrupt = self.interrupt.clone();
        let capped = Arc::new(AtomicBool::new(false));
        let servers = self.server_cpus.max(1) as f64;
        let service_pids: Vec<i32> = self.services.iter().map(|p| p.pid).collect();
        let service_ports: Vec<u16> = self.services.iter().map(|p| p.addr.port()).collect();
        let mut links: Vec<probe::LinkSeries> = std::iter::once(plan.target.addr.port())
            .chain(service_ports.iter().copied())
            .map(probe::LinkSeries::new)
            .collect();
        // The sampler waits for the window's opening edge, so that all the CPU it is left
        // out for lies inside the window.
        let (go, opened) = std::sync::mpsc::channel::<()>();
        let sampler = {
            let (control, done, capped) = (control.clone(), done.clone(), capped.clone());
            std::thread::Builder::new()
                .name("foxbench-probe".into())
                .spawn(move || {
                    let _ = opened.recv();
                    let start = Instant::now();
                    let mut series = Vec::new();
                    let mut next = Duration::ZERO;
                    let mut last: Option<(f64, u64)> = None;
                    let mut waits = probe::WaitHistogram::default();
                    let mut next_wait = Duration::ZERO;
                    let mut dump = dump;
                    let mut dumper = None;
                    let mut peaks = vec![(0u64, 0u64); service_pids.len()];
                    let mut pools = vec![probe::ConnectionSeries::default(); service_ports.len()];
                    while !done.load(Ordering::Relaxed) {
                        let t = start.elapsed();
                        if !interval.is_zero() && t >= next_wait {
                            let cpu0 = thread_cpu();
                            if let Ok(w) = probe::thread_waits(root) {
                                waits.add(&w);
                            }
                            // A tree of thousands of threads costs milliseconds a sample:
                            // keep sampling it to a tenth of the client's CPU (CPU time, not
                            // wall time, which a busy machine stretches).
                            let cost = thread_cpu().saturating_sub(cpu0);
                            next_wait = start.elapsed() + (interval / 5).max(cost * 10);
                        }
                        if dump.as_ref().is_some_and(|d| t >= d.at) {
                            let d = dump.take().expect("checked");
                            let t_s = t.as_secs_f64();
                            dumper = std::thread::Builder::new()
                                .name("foxbench-dump".into())
                                .spawn(move || (take_dumps(root, &d, t_s), probe::thread_usage()))
                                .ok();
                            if dumper.is_none() {
                                control.stop();
                            }
                        }
                        // The load was there for the dumps: it ends with them.
                        if dumper.as_ref().is_some_and(|h| h.is_finished()) {
                            control.stop();
                        }
                        if interrupt.load(Ordering::Relaxed) {
                            control.stop();
                        }
                        if !cap.is_zero() && t >= cap {
                            capped.store(true, Ordering::Relaxed);
                            control.stop();
                        }
                        if !interval.is_zero() && t >= next {
                            next += interval;
                            for (peak, &pid) in peaks.iter_mut().zip(&service_pids) {
                                if let Ok(s) = probe::sample(pid) {
                                    peak.0 = peak.0.max(s.rss_bytes);
                                    peak.1 = peak.1.max(u64::from(s.threads));
                                }
                            }
                            // Each link's sockets, by the kernel (one dump for all).
                            if let Ok(sockets) = probe::tcp_sockets() {
                                for link in &mut links {
                                    link.push(&sockets);
                                }
                            }
                            // How full the target's pool to each service is.
                            for (pool, &port) in pools.iter_mut().zip(&service_ports) {
                                if let Ok(c) = probe::connections(root, probe::Peer::Remote(port)) {
                                    pool.push(c);
                                }
                            }
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
                    let (dumps, dump_usage) =
                        dumper.and_then(|h| h.join().ok()).unwrap_or_default();
                    let usage = probe::thread_usage().plus(&dump_usage);
                    (series, waits, dumps, peaks, pools, links, usage)
                })
                .map_err(CellFailure::ProbeThread)?
        };
        // Bounded however long the cell runs (report::series): exact, coarser when old.
        let mut intervals = report::series::Series::for_load();
        // The live view's threads run beside the load: their CPU is not the client's.
        let view_cpu = || self.watch.map(|w| w.cpu()).unwrap_or_default();
        let view = self
            .watch
            .map(|_| &view_cpu as &dyn Fn() -> probe::OwnUsage);
        // The view is told of the load before the window's opening edge, outside it; its
        // work on each interval, on this thread (the engine's caller), is measured around
        // each call and left out of the client's CPU as the probe's is.
        if let Some(w) = self.watch {
            w.load(plan);
        }
        let mut view_usage = probe::OwnUsage::default();
        let mut probed = None;
        // Started by one hook, joined by the other.
        let active = std::cell::RefCell::new(None);
        let mut sampler = Some(sampler);
        let window = measure::window::run(
            plan,
            &control,
            view,
            // The sampler reads foxbench's link with the target's to each service.
            measure::window::Sockets::Caller,
            // The probe's threads start at the opening edge: the sampler is told to, the
            // `active` reader is started.
            &mut || {
                let _ = go.send(());
                *active.borrow_mut() = crate::active::sample(
                    self.services.iter().map(|p| p.active.clone()).collect(),
                    interval,
                    done.clone(),
                );
            },
            &mut |iv| {
                let row = report::IntervalRow::from(iv);
                if let Some(w) = self.watch {
                    let before = probe::thread_usage();
                    w.interval(iv, &row);
                    view_usage = view_usage.plus(&probe::thread_usage().since(&before));
                }
                // Rows made here always carry their histogram, so merging them cannot fail.
                let _ = intervals.push(iv.index, row);
            },
            // The probe's threads served the measurement: they end before the closing edge.
            &mut || {
                done.store(true, Ordering::Relaxed);
                let sampled = sampler.take().and_then(|h| h.join().ok());
                let active = active.borrow_mut().take().and_then(|h| h.join().ok());
                let (service_active, active_usage) = active.unwrap_or_default();
                let sampled = sampled.unwrap_or_default();
                let usage = sampled.6.plus(&active_usage);
                probed = Some((sampled, service_active));
                usage
            },
        );
        let intervals = intervals.into_rows();
        let (
            (series, waits, dumps, service_peaks, service_connections, tcp_links, _),
            service_active,
        ) = probed.unwrap_or_default();
        let spent = match self.watch {
            Some(_) => window.spent.also_beside(&view_usage),
            None => window.spent,
        };
        Ok(Probed {
            result: window.result.map_err(CellFailure::Load)?,
            series,
            intervals,
            waits,
            dumps,
            capped: capped.load(Ordering::Relaxed),
            service_peaks,
            service_connections,
            tcp_links,
            service_active,
            spent,
        })
    }
}
