//! `foxbench load --find-max OBJECTIVE`: wires `load::capacity`'s search to the engine.
//!
//! Each window the search asks for is one constant-rate open-model run of `--window`,
//! judged whole by the objective (`report::slo`); the verdict goes back to the search.
//! After it, windows at 50%, 80% and 110% of the rate found give the spectrum (100% is the
//! window that found it). Each window reads the kernel's TCP counters around it and
//! carries their report (`tcp`: deltas, per response, the rules' warnings), as one
//! `foxbench load` run does; the result's own `tcp` is its body window's.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use load::capacity::{Search, SearchConfig};
use load::{Arrival, Control, Plan, Stop};
use report::capacity::{
    Bracket, CapacityReport, CapacityWindow, SpectrumRow, WindowPhase, SPECTRUM_SHARES,
};
use report::slo::Slo;
use report::LoadReport;

use crate::load_cmd::{build_plan, watch, LoadArgs};
use crate::load_result::{build_report, tcp_report, SocketWatch};

/// The lowest rate the search tries, requests per second (or --start-rate if lower).
const FLOOR_PER_SEC: f64 = 10.0;
/// The highest rate the search tries, requests per second.
const CEILING_PER_SEC: f64 = 10_000_000.0;
/// The bisection stops when the bracket is this narrow (relative).
const PRECISION: f64 = 0.02;
/// Setup time a window costs beyond its length (connecting, starting the workers).
const WINDOW_SLACK: Duration = Duration::from_millis(250);

/// Runs the capacity search.
pub fn run(args: &LoadArgs, objective: &str) -> Result<ExitCode> {
    let slo: Slo = objective
        .parse()
        .map_err(|e: report::slo::SloError| anyhow!("--find-max {e}"))?;
    let base = build_plan(args)?;
    let window = args.window;
    // The spectrum's 50%, 80% and 110% windows run after the search.
    let spectrum_windows = SPECTRUM_SHARES.iter().filter(|s| **s != 100.0).count() as u32;
    let config = SearchConfig {
        start_per_sec: args.start_rate,
        floor_per_sec: FLOOR_PER_SEC.min(args.start_rate),
        ceiling_per_sec: CEILING_PER_SEC.max(args.start_rate),
        precision: PRECISION,
        window: window + WINDOW_SLACK,
        budget: args.max_time,
        reserve: (window + WINDOW_SLACK) * spectrum_windows,
    };
    let mut search = Search::new(config).map_err(|e| match e {
        load::capacity::SearchError::Rate => anyhow!(
            "--start-rate {} is not a rate: give a positive number of requests per second",
            args.start_rate
        ),
        load::capacity::SearchError::Window => anyhow!("--window must be longer than zero"),
        load::capacity::SearchError::Budget => anyhow!(
            "--max-time {:?} does not hold one --window of {:?} and the spectrum after it: raise --max-time or shorten --window",
            args.max_time,
            window
        ),
        e => anyhow!("--find-max: {e}"),
    })?;
    load::raise_fd_limit(base.connections)?;
    crate::load_cmd::preflight(&base)?;

    let live = args
        .dashboard
        .map(|addr| {
            let meta = dashboard::Meta {
                kind: dashboard::Kind::FindMax,
                title: "waiting for the first window".into(),
                ..crate::live::meta(&base, Some(&slo))
            };
            crate::live::Live::bind_meta(addr, &meta, crate::live::series())
        })
        .transpose()?;
    let interrupted = crate::cli::interrupt_flag(crate::cli::RUN)?;
    let is_interrupted = || interrupted.load(std::sync::atomic::Ordering::Relaxed);

    let started = Instant::now();
    let mut trials = Trials {
        base: &base,
        slo: &slo,
        window,
        interrupted: &interrupted,
        quiet: args.quiet,
        live: live.as_ref(),
        windows: Vec::new(),
        runs: Vec::new(),
    };

    let ended = load::capacity::drive(
        &mut search,
        || started.elapsed(),
        is_interrupted,
        |rate_per_sec, phase| {
            trials
                .judge(rate_per_sec, shootout::capacity::window_phase(phase))
                .map(Some)
        },
    )?;
    let stopped = match ended {
        _ if is_interrupted() => report::capacity::Stopped::Interrupted,
        ended => shootout::capacity::stopped(ended),
    };
    let (held, failed) = search.bracket();
    let bracket = Bracket {
        held_per_sec: held,
        failed_per_sec: failed,
    };

    // The spectrum around the rate found.
    let mut spectra = Vec::new();
    if let Some(rate) = held {
        for share in SPECTRUM_SHARES {
            let index = if share == 100.0 {
                trials.found_at(rate)
            } else if !is_interrupted()
                && started.elapsed() + window + WINDOW_SLACK <= args.max_time
            {
                trials.judge(
                    (rate * share / 100.0).round().max(1.0),
                    WindowPhase::Spectrum,
                )?;
                Some(trials.windows.len() - 1)
            } else {
                None
            };
            if let Some(window) = index {
                spectra.push(SpectrumRow {
                    share_percent: share,
                    window,
                });
            }
        }
    }
    let elapsed = started.elapsed();

    // The result's body is the window at the rate found, or the lowest rate tried.
    let Trials {
        mut runs, windows, ..
    } = trials;
    let rates: Vec<(f64, bool)> = windows
        .iter()
        .map(|w| (w.rate_per_sec, w.phase == WindowPhase::Spectrum))
        .collect();
    let body = load::capacity::body_window(&rates, held);
    let Some(body) = body else {
        return Err(anyhow!(
            "--find-max: no window ran (interrupted before the first ended)"
        ));
    };
    let capacity = CapacityReport {
        objective: objective.trim().to_string(),
        rate_per_sec: held,
        bracket,
        stopped,
        client_bound: CapacityReport::client_bound_of(&windows, &spectra, bracket),
        window_s: window.as_secs_f64(),
        budget_s: args.max_time.as_secs_f64(),
        elapsed_s: elapsed.as_secs_f64(),
        windows,
        spectra,
    };
    let requests: u64 = runs.iter().map(|r| r.requests.completed).sum();
    let mut report = runs.swap_remove(body);
    report.capacity = Some(capacity);
    write(args, &report)?;
    if args.quiet {
        // The text (hidden) holds them; quiet still says what the kernel's counters showed.
        for w in report.capacity.iter().flat_map(|c| c.tcp_warnings()) {
            crate::cli::say(&format!("warning: {w}"));
        }
    }
    if let Some(live) = live {
        let json = serde_json::to_string_pretty(&report).expect("report serializes");
        live.finish(&report::load_html::to_html(&report), &json, requests);
    }
    Ok(if held.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::cli::exit::FAILED)
    })
}

/// The windows run so far, and what runs the next.
struct Trials<'a> {
    base: &'a Plan,
    slo: &'a Slo,
    window: Duration,
    interrupted: &'a Arc<AtomicBool>,
    quiet: bool,
    /// `--dashboard`: each window is a run of the page, and a point of its windows' chart.
    live: Option<&'a crate::live::Live>,
    windows: Vec<CapacityWindow>,
    runs: Vec<LoadReport>,
}

impl Trials<'_> {
    /// Runs and judges one window at `rate`; true when it held the objective.
    fn judge(&mut self, rate: f64, phase: WindowPhase) -> Result<bool> {
        let dash = self.live.map(|l| {
            let title = format!(
                "window {} ({}): {rate:.0} req/s offered",
                self.windows.len() + 1,
                phase.name()
            );
            (l, title)
        });
        let (mut run, verdict) = run_window(
            self.base,
            self.slo,
            rate,
            self.window,
            self.interrupted,
            dash.as_ref()
                .map(|(d, t)| (*d, t.as_str(), self.windows.len() as u64 + 1)),
        )?;
        let w = CapacityWindow::new(rate, phase, &run, &verdict);
        if let Some(live) = self.live {
            live.dashboard().push(
                dashboard::Feed::Windows,
                &dashboard::WindowPoint {
                    offered_per_sec: rate,
                    achieved_per_sec: w.achieved_per_sec,
                    p99_us: w.corrected.map(|s| s.p99_us),
                    passed: w.passed,
                    phase,
                },
            );
        }
        if !self.quiet {
            let _ = writeln!(
                std::io::stderr(),
                "window {:>2}: {:>9.0} req/s asked, {:>9.0} achieved, p99 {:>9}, client {:>3.0}%{}: {}{}",
                self.windows.len() + 1,
                rate,
                w.achieved_per_sec,
                w.corrected.map_or("-".into(), |s| report::human_us(s.p99_us)),
                w.client_cpu_percent,
                if w.client_spin_percent >= 0.5 {
                    format!(" ({:.0}% spin)", w.client_spin_percent)
                } else {
                    String::new()
                },
                if w.passed { "held" } else { "failed" },
                tcp_kinds(&w)
            );
        }
        let passed = w.passed;
        self.windows.push(w);
        run.slo = Some(verdict);
        self.runs.push(run);
        Ok(passed)
    }

    /// The search's own window at `rate`.
    fn found_at(&self, rate: f64) -> Option<usize> {
        self.windows
            .iter()
            .position(|w| w.rate_per_sec == rate && w.phase != WindowPhase::Spectrum)
    }
}

/// The rules the window's TCP counters crossed, for its progress line: `, tcp: nagle`.
fn tcp_kinds(w: &CapacityWindow) -> String {
    let kinds: Vec<&str> = w
        .tcp
        .iter()
        .flat_map(|t| &t.warnings)
        .map(|f| f.kind.as_str())
        .collect();
    if kinds.is_empty() {
        String::new()
    } else {
        format!(" (tcp: {})", kinds.join(", "))
    }
}

/// One constant-rate window at `rate`: its report and the objective's verdict on it whole.
/// With a dashboard (and the window's title), the window is its current run.
fn run_window(
    base: &Plan,
    slo: &Slo,
    rate: f64,
    window: Duration,
    interrupted: &Arc<AtomicBool>,
    dash: Option<(&crate::live::Live, &str, u64)>,
) -> Result<(LoadReport, report::slo::SloReport)> {
    let mut plan = base.clone();
    plan.arrival = Arrival::Open {
        rate: load::Rate::constant(rate),
    };
    plan.stop = Stop::Duration(window);
    let threads = plan.effective_threads();
    let control = Control::new(threads);
    let watcher = {
        let control = control.clone();
        let interrupted = interrupted.clone();
        std::thread::Builder::new()
            .name("foxbench-signals".into())
            .spawn(move || {
                watch(
                    &control,
                    &interrupted,
                    &AtomicU64::new(0),
                    Stop::Duration(window),
                    false,
                )
            })
            .context("cannot start the signal watcher")?
    };
    // Bounded however long the window (report::series): exact, coarser when old.
    let series = crate::live::series();
    if let Some((d, title, run)) = dash {
        let meta = dashboard::Meta {
            kind: dashboard::Kind::FindMax,
            run,
            title: title.into(),
            ..crate::live::meta(&plan, Some(slo))
        };
        d.dashboard().begin_run(&meta, series.clone());
    }
    // The window's gauges (client CPU, connections, the client-bound warning), until the
    // window ends: a ticker per window, as the gauges are per run.
    let ticker = dash.and_then(|(d, _, _)| d.ticker(threads, control.clone()));
    let live = dash.map(|(d, _, _)| d);
    let before = crate::live::Edge::now(live);
    let tcp_before = probe::tcp_counters().ok();
    let sockets = SocketWatch::start(plan.target.addr, control.clone());
    let started = Instant::now();
    let result = load::run_with_intervals(&plan, &control, &mut |iv| {
        // Rows made here always carry their histogram, so merging them cannot fail.
        let _ = series
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(iv.index, report::IntervalRow::from(iv));
        if let Some((d, _, _)) = dash {
            d.pushed(iv);
        }
    });
    drop(ticker);
    // Copied, not taken: the page shows this window's charts until the next one begins.
    let intervals: Vec<report::IntervalRow> = series
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .rows()
        .cloned()
        .collect();
    let wall = started.elapsed();
    let spent = before.until(&crate::live::Edge::now(live));
    let tcp_after = probe::tcp_counters().ok();
    control.stop();
    let _ = watcher.join();
    let (links, sockets_usage) = sockets.finish();
    let spent = spent.without(&sockets_usage);
    let result = result.map_err(|e| anyhow!(e.text().worded(&crate::cli::Flags)))?;
    let mut report = build_report(&plan, threads, &result, intervals, &spent, wall);
    report.tcp = tcp_before
        .zip(tcp_after)
        .map(|(a, b)| tcp_report(&plan, &result, &report, &a, &b, &links));
    let verdict = slo.judge(&report, None);
    Ok((report, verdict))
}

/// Writes the text report (the search, not the body's whole report) and the JSON as
/// `foxbench load` does.
fn write(args: &LoadArgs, report: &LoadReport) -> Result<()> {
    let c = &report.config;
    let text = format!(
        "foxbench load --find-max {} {}\n  open model, {} connections, {} threads, keep-alive {}\n\n{}",
        report.target.method,
        report.target.url,
        c.connections,
        c.threads,
        if c.keepalive { "on" } else { "off" },
        report.capacity.as_ref().map(|c| c.to_text()).unwrap_or_default()
    );
    crate::cli::emit(
        crate::cli::JsonTo::json_flag(args.json.as_deref()),
        || serde_json::to_string_pretty(report).expect("report serializes") + "\n",
        &text,
        args.quiet,
    )
}
