//! `foxbench load --dashboard`: wiring between the run and the dashboard crate. The
//! dashboard reads the bounded series the CLI fills anyway; a ticker thread samples the
//! client's CPU (one read of its own usage) and the engine's count of open connections
//! (`Control::snapshot`) once a second. Neither touches the engine's workers.

use std::net::SocketAddr;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use dashboard::{Dashboard, Gauge, Meta, Shared, SloLine};
use load::{Arrival, Control, Plan, Stop};
use report::slo::{Metric, Slo};

/// The dashboard of one run (its windows' tickers come and go with them).
pub struct Live {
    dash: Arc<Dashboard>,
}

/// Samples the client's CPU and connections once a second, from its start to its drop.
pub struct Ticker {
    /// Dropping the sender wakes the ticker at once, to end.
    stop: Option<mpsc::Sender<()>>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for Ticker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The page's view of the plan: the target schedule as points, the clauses as lines.
pub fn meta(plan: &Plan, slo: Option<&Slo>) -> Meta {
    let target = match (&plan.arrival, plan.stop) {
        (Arrival::Open { rate }, stop) => {
            let end_s = match stop {
                Stop::Duration(d) => d.as_secs_f64(),
                Stop::Requests(_) => rate
                    .stages_duration()
                    .map_or(60.0, |d| d.as_secs_f64())
                    .max(1.0),
            };
            let share = plan.shard.count as f64;
            (0..=200)
                .map(|k| {
                    let t_s = end_s * k as f64 / 200.0;
                    (t_s, rate.at(t_s * 1e9) / share)
                })
                .collect()
        }
        (Arrival::Closed, _) => Vec::new(),
    };
    let slo = slo.map_or_else(Vec::new, |s| {
        s.clauses
            .iter()
            .map(|c| {
                let (chart, percentile) = match c.metric {
                    Metric::Percentile { p, .. } => ("latency", Some(p)),
                    Metric::Rps => ("rate", None),
                    Metric::Errors => ("errors", None),
                };
                SloLine {
                    text: c.text.clone(),
                    chart,
                    percentile,
                    op: c.op.symbol(),
                    threshold: c.threshold,
                }
            })
            .collect()
    });
    Meta {
        kind: dashboard::Kind::Load,
        url: plan.target.url.clone(),
        model: match plan.arrival {
            Arrival::Closed => "closed".into(),
            Arrival::Open { .. } => "open".into(),
        },
        interval_s: plan.interval.as_secs_f64(),
        target,
        slo,
        saturated_percent: report::SATURATED_PERCENT,
        ..Meta::default()
    }
}

/// Open model: an interval's service time, for the page to draw beside its corrected
/// latency; None in the closed model (where the engine records none: it is the latency).
pub fn service_point(iv: &stats::Interval) -> Option<dashboard::ServicePoint> {
    let us = |p: f64| iv.service.percentile_ns(p) as f64 / 1e3;
    (!iv.service.is_empty()).then(|| dashboard::ServicePoint {
        start_s: iv.start.as_secs_f64(),
        p50_us: us(50.0),
        p99_us: us(99.0),
        max_us: us(100.0),
    })
}

impl Live {
    /// Binds the dashboard (a port in use is an error here, before the run) and prints its URL.
    pub fn bind(addr: SocketAddr, plan: &Plan, slo: Option<&Slo>, series: Shared) -> Result<Live> {
        Live::bind_meta(addr, &meta(plan, slo), series)
    }

    /// Binds the dashboard of a run whose plan the caller describes (a search, a shootout).
    pub fn bind_meta(addr: SocketAddr, meta: &Meta, series: Shared) -> Result<Live> {
        let dash = Dashboard::bind(addr, meta, series).context("--dashboard")?;
        eprintln!("foxbench: dashboard at {}", dash.url());
        Ok(Live {
            dash: Arc::new(dash),
        })
    }

    /// Samples the client once a second, from now until the ticker is dropped: a window's
    /// run (`foxbench load`'s one, or a `--find-max` window, whose gauges start empty with
    /// it).
    pub fn ticker(&self, threads: usize, control: Arc<Control>) -> Option<Ticker> {
        let (stop, stopped) = mpsc::channel();
        let dash = self.dash.clone();
        let handle = std::thread::Builder::new()
            .name("foxbench-dashboard-ticker".into())
            .spawn(move || tick(&dash, &stopped, threads, &control))
            .ok()?;
        Some(Ticker {
            stop: Some(stop),
            handle: Some(handle),
        })
    }

    /// The dashboard itself, for the runs it shows one after another.
    pub fn dashboard(&self) -> &Dashboard {
        &self.dash
    }

    /// One more row in the series, `iv`'s.
    pub fn pushed(&self, iv: &stats::Interval) {
        if let Some(p) = service_point(iv) {
            self.dash.push(dashboard::Feed::Service, &p);
        }
        self.dash.pushed();
    }

    /// Turns the pages into the final report; says what the
    /// dashboard's threads cost (`requests` completed, for the per-request figure).
    pub fn finish(self, html: &str, json: &str, requests: u64) {
        if let Ok(dash) = Arc::try_unwrap(self.dash) {
            // Long enough for a loaded browser to take a large report; only a connected
            // page can hold the exit up.
            let cpu = dash.finish(html, json, Duration::from_secs(10));
            eprintln!(
                "foxbench: the dashboard's threads used {:.3} s of CPU ({:.2} µs per request)",
                cpu.as_secs_f64(),
                cpu.as_secs_f64() * 1e6 / requests.max(1) as f64
            );
        }
    }
}

/// Samples once a second until `stop`'s sender is dropped. One wake-up a second, not 20
/// polls of a flag; and the connections are the engine's count, where reading the kernel's
/// tables (/proc/net/tcp and tcp6, and every fd's link) cost in proportion to every socket
/// on the machine (issue 25: 1.39x the client's CPU with --dashboard).
///
/// The CPU is the load generator's, by the report's one subtraction
/// (`measure::window::load_usage`): the dashboard's threads' left out, this one's too (it
/// reports its own before each reading). The window's helpers (the socket reader, the
/// signal watcher) know their CPU only when they end, so the gauge still holds theirs: a
/// read of the kernel's socket table every 250 ms and a poll every 50 ms.
fn tick(dash: &Dashboard, stop: &mpsc::Receiver<()>, threads: usize, control: &Control) {
    let start = Instant::now();
    let mut told = probe::OwnUsage::default();
    let mut report = |dash: &Dashboard| {
        let now = probe::thread_usage();
        dash.add_cpu(&now.since(&told));
        told = now;
    };
    let mut last = (Instant::now(), probe::own_usage(), dash.cpu());
    let mut last_spin_ns = control.snapshot().spin_ns;
    loop {
        let next = last.0 + Duration::from_secs(1);
        match stop.recv_timeout(next.saturating_duration_since(Instant::now())) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
        report(dash);
        let now = (Instant::now(), probe::own_usage(), dash.cpu());
        let wall_s = now.0.duration_since(last.0).as_secs_f64().max(1e-9);
        let beside = now.2.since(&last.2);
        let helpers = probe::OwnUsage::default();
        let cpu_s = measure::window::load_usage(&now.1.since(&last.1), Some(&beside), &helpers)
            .cpu()
            .as_secs_f64();
        let snapshot = control.snapshot();
        let spin_s = snapshot.spin_ns.saturating_sub(last_spin_ns) as f64 / 1e9;
        last_spin_ns = snapshot.spin_ns;
        let cpu_percent = 100.0 * cpu_s / (wall_s * threads.max(1) as f64);
        dash.gauge(Gauge {
            t_s: start.elapsed().as_secs_f64(),
            cpu_percent,
            spin_percent: report::spin_percent(cpu_percent, cpu_s, spin_s),
            connections_open: snapshot.connections_open,
        });
        last = now;
    }
    report(dash);
}

/// A series shared with the dashboard (or kept by the CLI alone without one).
pub fn series() -> Shared {
    Arc::new(Mutex::new(report::series::Series::for_load()))
}
