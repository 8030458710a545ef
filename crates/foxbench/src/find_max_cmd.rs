//! `foxbench load --find-max OBJECTIVE`: the flags wired to `measure::search`'s driver.
//!
//! Each window the search asks for is one constant-rate open-model run of `--window`
//! (`measure::window`), judged whole by the objective (`report::slo`); the driver runs the
//! spectrum's windows after it. Each window reads the kernel's TCP counters around it and
//! carries their report, as one `foxbench load` run does; the result's own `tcp` is its
//! body window's. Here: the flags, the progress lines, the dashboard and the output.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Result};
use load::{Arrival, Plan, Stop};
use measure::search::{After, Capacity, Keys};
use report::search::{CapacityWindow, WindowPhase};
use report::slo::Slo;
use report::LoadReport;

use crate::load_cmd::{build_plan, LoadArgs};

/// The search's settings as `foxbench load` names them.
const KEYS: Keys = Keys {
    start_rate: "--start-rate",
    window: "--window",
    budget: "--max-time",
};

/// Runs the capacity search.
pub fn run(args: &LoadArgs, objective: &str) -> Result<ExitCode> {
    let slo: Slo = objective
        .parse()
        .map_err(|e: report::slo::SloError| anyhow!("--find-max {e}"))?;
    let base = build_plan(args)?;
    let capacity = Capacity {
        objective: objective.trim().to_string(),
        slo,
        window: args.window,
        start_per_sec: args.start_rate,
    };
    let search = capacity
        .search(args.max_time, After::Spectrum)
        .map_err(|e| anyhow!(e.worded(&KEYS)))?;
    let (slo, window) = (&capacity.slo, capacity.window);
    load::raise_fd_limit(base.connections)?;
    crate::load_cmd::preflight(&base)?;

    let live = args
        .dashboard
        .map(|addr| {
            let meta = dashboard::Meta {
                kind: dashboard::Kind::FindMax,
                title: "waiting for the first window".into(),
                ..crate::live::meta(&base, Some(slo))
            };
            crate::live::Live::bind_meta(addr, &meta, crate::live::series())
        })
        .transpose()?;
    let interrupted = crate::cli::interrupt_flag(crate::cli::RUN)?;
    let is_interrupted = || interrupted.load(std::sync::atomic::Ordering::Relaxed);

    let mut trials = Trials {
        base: &base,
        slo,
        window,
        interrupted: &interrupted,
        quiet: args.quiet,
        live: live.as_ref(),
        windows: Vec::new(),
        runs: Vec::new(),
    };
    let found = measure::search::drive(
        search,
        After::Spectrum,
        &is_interrupted,
        &mut |rate, phase| trials.judge(rate, phase).map(Some),
    )?;

    // The result's body is the window at the rate found, or the lowest rate tried.
    let Trials {
        mut runs, windows, ..
    } = trials;
    let Some(body) = found.body else {
        return Err(anyhow!(
            "--find-max: no window ran (interrupted before the first ended)"
        ));
    };
    let held = found.rate_per_sec;
    let capacity = found.report(&capacity, args.max_time, windows);
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
        let w = measure::search::window_row(
            rate,
            phase,
            &measure::search::WindowRun::of_load(&run),
            &verdict,
        );
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
                "{}",
                w.progress_line(self.windows.len() + 1)
            );
        }
        let passed = w.passed;
        self.windows.push(w);
        run.slo = Some(verdict);
        self.runs.push(run);
        Ok(passed)
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
    let mut plan = measure::rules::with_arrival(
        base.clone(),
        Arrival::Open {
            rate: load::Rate::constant(rate),
        },
    );
    plan.stop = Stop::Duration(window);
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
    let around = crate::window::Around {
        interrupted,
        progress: false,
        live: dash.map(|(d, _, _)| d),
        series: &series,
    };
    let report = crate::window::run(&plan, around, &mut |_| false)?.report;
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
