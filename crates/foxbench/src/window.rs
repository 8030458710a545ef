//! One measured window of `foxbench load` and of each `--find-max` window: the binary's own
//! threads (the signal watcher and its progress bar, the dashboard's ticker and page) wired
//! around `measure::window::run`, and its result made the one record. It lives here, not in
//! `measure`, because all it adds is the wiring of threads only the binary has.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use load::{Control, Interval, Plan, Stop};
use report::LoadReport;

use crate::live::Live;

/// What runs beside one window.
pub struct Around<'a> {
    /// Ctrl-C's (or SIGTERM's) flag: the watcher stops the load once it is set.
    pub interrupted: &'a Arc<AtomicBool>,
    /// Draw the progress bar on stderr.
    pub progress: bool,
    /// The dashboard that shows this window: a ticker samples the client while it runs.
    pub live: Option<&'a Live>,
    /// The interval rows, shared with the dashboard when there is one.
    pub series: &'a dashboard::Shared,
}

/// A window's record, and what the engine asks the CLI to warn about.
pub struct Measured {
    pub report: LoadReport,
    /// How often the workers waited for the interval sinks to catch up.
    pub interval_waits: u64,
}

/// Runs `plan` as one window ([`measure::window::run`]) with the watcher, the interval
/// series and the dashboard around it; `observe` sees each interval after the series and
/// the page have it, and stops the load by returning true.
pub fn run(
    plan: &Plan,
    around: Around,
    observe: &mut dyn FnMut(&Interval) -> bool,
) -> Result<Measured> {
    let threads = plan.effective_threads();
    let control = Control::new(threads);
    // The last complete interval's p99 in ns, for the progress line.
    let live_p99_ns = Arc::new(AtomicU64::new(0));
    let watcher = {
        let (control, interrupted) = (control.clone(), around.interrupted.clone());
        let (live_p99_ns, stop, show) = (live_p99_ns.clone(), plan.stop, around.progress);
        std::thread::Builder::new()
            .name("foxbench-signals".into())
            .spawn(move || watch(&control, &interrupted, &live_p99_ns, stop, show))
            .context("cannot start the signal watcher")?
    };
    let mut watcher = Some(watcher);
    // The client's gauges (CPU, connections, the client-bound warning) until the window ends.
    let mut ticker = around.live.and_then(|l| l.ticker(threads, control.clone()));
    let dashboard_cpu = || around.live.map(|l| l.dashboard().cpu()).unwrap_or_default();
    let mut series_error = None;
    let window = measure::window::run(
        plan,
        &control,
        around
            .live
            .map(|_| &dashboard_cpu as &dyn Fn() -> probe::OwnUsage),
        measure::window::Sockets::Watch,
        // The watcher, started before, only sleeps until the load runs.
        &mut || {},
        &mut |iv| {
            live_p99_ns.store(iv.latency.percentile_ns(99.0), Ordering::Relaxed);
            if series_error.is_none() {
                let mut rows = around.series.lock().unwrap_or_else(|e| e.into_inner());
                series_error = rows.push(iv.index, report::IntervalRow::from(iv)).err();
            }
            if let Some(live) = around.live {
                live.pushed(iv);
            }
            if observe(iv) {
                control.stop();
            }
        },
        // The watcher ends with the load (the control is stopped): its CPU and context
        // switches (a 50 ms poll, the progress bar) are a helper's, not the load's.
        &mut || {
            drop(ticker.take());
            (watcher.take())
                .and_then(|h| h.join().ok())
                .unwrap_or_default()
        },
    );
    if let Some(e) = series_error {
        // Cannot happen with the rows made above; said rather than hidden if it does.
        eprintln!("foxbench: warning: the interval series is incomplete: {e}");
    }
    // Copied, not taken: a dashboard shows this window's charts until the next begins.
    let intervals: Vec<report::IntervalRow> = around
        .series
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .rows()
        .cloned()
        .collect();
    let result =
        (window.result.as_ref()).map_err(|e| anyhow!(e.text().worded(&crate::cli::Flags)))?;
    let report = measure::record::load_report(
        plan,
        threads,
        result,
        intervals,
        &window,
        &crate::cli::Flags,
    );
    Ok(Measured {
        report,
        interval_waits: result.interval_waits,
    })
}

/// Polls for signals and draws the progress bar until the run ends; its thread's usage,
/// which is not the load generator's.
fn watch(
    control: &Control,
    interrupted: &AtomicBool,
    live_p99_ns: &AtomicU64,
    stop: Stop,
    show: bool,
) -> probe::OwnUsage {
    let bar = show.then(|| {
        let (len, template) = match stop {
            Stop::Requests(n) => (
                n,
                "{elapsed_precise} [{bar:30}] {pos}/{len} requests  {msg}",
            ),
            Stop::Duration(d) => (d.as_millis() as u64, "{elapsed_precise} [{bar:30}] {msg}"),
        };
        let b = indicatif::ProgressBar::with_draw_target(
            Some(len),
            indicatif::ProgressDrawTarget::stderr(),
        );
        b.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        b
    });
    let start = Instant::now();
    let mut last = (Instant::now(), 0u64);
    let mut rate = 0.0;
    while !control.stopped() {
        if interrupted.load(Ordering::Relaxed) {
            control.stop();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        if let Some(b) = &bar {
            let s = control.snapshot();
            let dt = last.0.elapsed().as_secs_f64();
            if dt >= 0.5 {
                rate = (s.completed - last.1) as f64 / dt;
                last = (Instant::now(), s.completed);
            }
            match stop {
                Stop::Requests(_) => b.set_position(s.completed + s.errors),
                Stop::Duration(_) => b.set_position(start.elapsed().as_millis() as u64),
            }
            let p99 = live_p99_ns.load(Ordering::Relaxed);
            b.set_message(format!(
                "{} requests, {:.0} req/s, p99 {}, {} errors",
                s.completed,
                rate,
                if p99 == 0 {
                    "-".to_string()
                } else {
                    report::human_us(p99 as f64 / 1e3)
                },
                s.errors
            ));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    probe::thread_usage()
}
