//! The capacity search's driver, for `foxbench load --find-max` and the shootout's
//! capacity levels alike: its constants, its configuration from what the caller was given
//! ([`Capacity`]), the errors of that configuration (worded by the caller's [`Keys`]), and
//! the loop ([`drive`]) that runs the search's windows and, for `--find-max`, the latency
//! spectrum after it. Each caller brings its own way of running and judging a window.
//!
//! Which rate comes next is `load::search::Search`'s; the result's types are
//! `report::search`'s.

use std::time::{Duration, Instant};

use load::search::{Ended, Phase, Search, SearchConfig, SearchError};
use report::search::{
    Bracket, CapacityReport, CapacityWindow, Spectrum, SpectrumRow, Stopped, WindowPhase,
    SPECTRUM_SHARES,
};
use report::shootout::Repeat;
use report::slo::{Slo, SloReport};
use report::tcp::TcpReport;
use report::LoadReport;

/// The lowest rate a search tries, requests per second (or the start rate if lower).
pub const FLOOR_PER_SEC: f64 = 10.0;
/// The highest rate a search tries, requests per second.
pub const CEILING_PER_SEC: f64 = 10_000_000.0;
/// The bisection stops when the bracket is this narrow (relative).
pub const PRECISION: f64 = 0.02;
/// Setup time a window costs beyond its length (connecting, starting the workers, probing
/// the server at its edges), counted against the budget.
pub const WINDOW_SLACK: Duration = Duration::from_millis(250);
/// A window's length when a suite's capacity level gives none (`--find-max` has its own,
/// [`FIND_MAX_WINDOW`]).
pub const DEFAULT_WINDOW: Duration = Duration::from_secs(1);
/// The first rate tried when a suite's capacity level gives none, requests per second
/// (`--start-rate`'s default too).
pub const DEFAULT_START_RATE: f64 = 1000.0;
/// `--find-max`'s window length without `--window`: twice a suite level's, as one run alone
/// has no repeats to smooth a window's noise.
pub const FIND_MAX_WINDOW: Duration = Duration::from_secs(2);
/// `--find-max`'s whole budget without `--max-time`, spectrum included.
pub const FIND_MAX_BUDGET: Duration = Duration::from_secs(60);

/// A capacity search as its caller was given it: `--find-max OBJECTIVE` with `--window`
/// and `--start-rate`, or a suite level's `capacity`, `window` and `start_rate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    /// The objective as written, such as `p99<10ms`.
    pub objective: String,
    /// It parsed (`report::slo`'s syntax).
    pub slo: Slo,
    /// Each constant-rate window's length.
    pub window: Duration,
    /// The first rate tried, requests per second.
    pub start_per_sec: f64,
}

/// What runs after the search, within its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Nothing (a shootout capacity level).
    Nothing,
    /// Windows at the [`SPECTRUM_SHARES`] of the rate found (`--find-max`).
    Spectrum,
}

impl After {
    /// The windows it runs after the search (100% is the search's own).
    fn windows(self) -> u32 {
        match self {
            After::Nothing => 0,
            After::Spectrum => SPECTRUM_SHARES.iter().filter(|s| **s != 100.0).count() as u32,
        }
    }
}

/// How an edge names the search's settings: `--start-rate` or `start_rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keys {
    /// The first rate tried.
    pub start_rate: &'static str,
    /// A window's length.
    pub window: &'static str,
    /// The whole search's time budget.
    pub budget: &'static str,
}

/// Why a [`Capacity`] cannot be searched within its budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SetupError {
    /// The start rate is not a positive number.
    Rate(f64),
    /// A window of no time.
    Window,
    /// The budget does not hold one window (and what runs after the search).
    Budget {
        /// The budget.
        budget: Duration,
        /// A window's length.
        window: Duration,
        /// What runs after the search.
        after: After,
    },
    /// The search's own precision is not within (0, 1): a bug, not a setting.
    Precision,
}

impl SetupError {
    /// The error in the edge's words: the setting at fault, then how to fix it.
    pub fn worded(&self, keys: &Keys) -> String {
        match *self {
            SetupError::Rate(rate) => format!(
                "{} {rate} is not a rate: give a positive number of requests per second",
                keys.start_rate
            ),
            SetupError::Window => format!("{} must be longer than zero", keys.window),
            SetupError::Budget {
                budget,
                window,
                after,
            } => format!(
                "{b} {budget:?} does not hold one {w} of {window:?} (and {WINDOW_SLACK:?} to set it up){spectrum}: raise {b} or shorten {w}",
                b = keys.budget,
                w = keys.window,
                spectrum = match after {
                    After::Nothing => "",
                    After::Spectrum => " and the spectrum after it",
                },
            ),
            SetupError::Precision => SearchError::Precision.to_string(),
        }
    }
}

impl Capacity {
    /// The search within `budget`, with room kept for what runs `after`.
    pub fn search(&self, budget: Duration, after: After) -> Result<Search, SetupError> {
        let config = self.config(budget, after)?;
        Search::new(config).map_err(|_| SetupError::Precision)
    }

    /// The search's configuration within `budget`, with room kept for what runs `after`.
    pub fn config(&self, budget: Duration, after: After) -> Result<SearchConfig, SetupError> {
        if self.window.is_zero() {
            return Err(SetupError::Window);
        }
        let window = self.window + WINDOW_SLACK;
        let config = SearchConfig {
            start_per_sec: self.start_per_sec,
            floor_per_sec: FLOOR_PER_SEC.min(self.start_per_sec),
            ceiling_per_sec: CEILING_PER_SEC.max(self.start_per_sec),
            precision: PRECISION,
            window,
            budget,
            reserve: window * after.windows(),
        };
        config.validate().map_err(|e| match e {
            SearchError::Rate => SetupError::Rate(self.start_per_sec),
            SearchError::Window => SetupError::Window,
            SearchError::Budget => SetupError::Budget {
                budget,
                window: self.window,
                after,
            },
            SearchError::Precision => SetupError::Precision,
        })?;
        Ok(config)
    }
}

/// A driven search's outcome; its windows are the caller's, in the order they ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// The highest rate that held, requests per second.
    pub rate_per_sec: Option<f64>,
    /// The highest rate that held and the lowest that failed.
    pub bracket: Bracket,
    /// Why the search stopped.
    pub stopped: Stopped,
    /// The spectrum's rows (each the index of its window), with [`After::Spectrum`].
    pub spectra: Vec<SpectrumRow>,
    /// The window a result's body comes from ([`load::search::body_window`]): the
    /// search's at the rate found, else the lowest rate tried; `None` when none ran.
    pub body: Option<usize>,
    /// The wall time of the search and what ran after it.
    pub elapsed: Duration,
}

impl Found {
    /// The search's result over its `windows` (the caller's rows, in the order they ran),
    /// for `capacity` searched within `budget`: `--find-max`'s `capacity` section and a
    /// shootout capacity level's alike.
    pub fn report(
        self,
        capacity: &Capacity,
        budget: Duration,
        windows: Vec<CapacityWindow>,
    ) -> CapacityReport {
        CapacityReport {
            objective: capacity.objective.clone(),
            rate_per_sec: self.rate_per_sec,
            bracket: self.bracket,
            stopped: self.stopped,
            client_bound: CapacityReport::client_bound_of(&windows, &self.spectra, self.bracket),
            window_s: capacity.window.as_secs_f64(),
            budget_s: budget.as_secs_f64(),
            elapsed_s: self.elapsed.as_secs_f64(),
            windows,
            spectra: self.spectra,
        }
    }
}

/// Runs `search` ([`Capacity::search`]), then what runs `after` it: each window
/// by `window` (given its rate and phase, it answers whether the objective held, or `None`
/// when the search must end there, the caller keeping why). `interrupted` is asked before
/// each window; an interruption during the search makes it [`Stopped::Interrupted`].
pub fn drive<E>(
    mut search: Search,
    after: After,
    interrupted: &dyn Fn() -> bool,
    window: &mut dyn FnMut(f64, WindowPhase) -> Result<Option<bool>, E>,
) -> Result<Found, E> {
    let (budget, slot) = (search.config().budget, search.config().window);
    let started = Instant::now();
    // Each window's rate and whether it was the spectrum's, in order.
    let mut ran: Vec<(f64, bool)> = Vec::new();
    // A window that ended the search (`None`): nothing runs after it.
    let mut cut = false;
    let ended = load::search::drive(
        &mut search,
        || started.elapsed(),
        interrupted,
        |rate, phase| {
            let verdict = window(rate, window_phase(phase))?;
            ran.push((rate, false));
            cut = verdict.is_none();
            Ok(verdict)
        },
    )?;
    let stopped = match ended {
        _ if interrupted() => Stopped::Interrupted,
        ended => stopped(ended),
    };
    let (held, failed) = search.bracket();
    let mut spectra = Vec::new();
    if let (After::Spectrum, Some(rate), false) = (after, held, cut) {
        for share in SPECTRUM_SHARES {
            let index = if share == 100.0 {
                ran.iter().position(|&(r, spectrum)| r == rate && !spectrum)
            } else if !interrupted() && started.elapsed() + slot <= budget {
                let at = (rate * share / 100.0).round().max(1.0);
                window(at, WindowPhase::Spectrum)?;
                ran.push((at, true));
                Some(ran.len() - 1)
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
    Ok(Found {
        rate_per_sec: held,
        bracket: Bracket {
            held_per_sec: held,
            failed_per_sec: failed,
        },
        stopped,
        spectra,
        body: load::search::body_window(&ran, held),
        elapsed: started.elapsed(),
    })
}

/// What a window's row reads of its run: a `foxbench load` window's result
/// ([`WindowRun::of_load`]) or a shootout window's repeat ([`WindowRun::of_repeat`]).
#[derive(Debug, Clone, Copy)]
pub struct WindowRun<'a> {
    /// Complete responses per second.
    pub achieved_per_sec: f64,
    /// Requests sent.
    pub sent: u64,
    /// Errors and failure statuses.
    pub failed: u64,
    /// Requests sent late, where counted.
    pub late: Option<u64>,
    /// The corrected latency's histogram (base64).
    pub corrected: &'a str,
    /// The service time's histogram (base64), where recorded.
    pub service: Option<&'a str>,
    /// The client's record.
    pub client: &'a report::Client,
    /// The server tree's CPU share and CPU per request, where probed.
    pub server: Option<(f64, Option<f64>)>,
    /// The TCP counters' report over the window.
    pub tcp: Option<&'a TcpReport>,
}

impl<'a> WindowRun<'a> {
    /// A `foxbench load` window's result.
    pub fn of_load(r: &'a LoadReport) -> WindowRun<'a> {
        WindowRun {
            achieved_per_sec: r.throughput.requests_per_sec,
            sent: r.requests.sent,
            failed: r.requests.errors + r.requests.failed_status,
            late: Some(r.open.as_ref().map_or(0, |o| o.late)),
            corrected: &r.latency.hdr_base64,
            service: r
                .open
                .as_ref()
                .and_then(|o| o.service.as_ref())
                .map(|d| d.hdr_base64.as_str()),
            client: &r.client,
            server: None,
            tcp: r.tcp.as_ref(),
        }
    }

    /// A shootout window's repeat, with its TCP counters' report (the cell's rules on it).
    pub fn of_repeat(r: &'a Repeat, tcp: Option<&'a TcpReport>) -> WindowRun<'a> {
        WindowRun {
            achieved_per_sec: r.rps,
            sent: r.requests.sent,
            failed: r.requests.errors + r.requests.failed_status,
            late: None,
            corrected: &r.hdr_base64,
            service: r.service_hdr_base64.as_deref(),
            client: &r.client,
            server: Some((r.server.cpu_percent, r.server.cpu_us_per_request)),
            tcp,
        }
    }
}

/// One window's row, from its run and the objective's verdict on it whole: the one row
/// builder, for `--find-max` and the shootout's capacity levels.
pub fn window_row(
    rate_per_sec: f64,
    phase: WindowPhase,
    run: &WindowRun,
    verdict: &SloReport,
) -> CapacityWindow {
    let corrected = Spectrum::of(run.corrected);
    CapacityWindow {
        rate_per_sec,
        phase,
        passed: verdict.passed,
        achieved_per_sec: run.achieved_per_sec,
        sent: run.sent,
        failed: run.failed,
        late: run.late,
        corrected,
        service: run.service.and_then(Spectrum::of),
        p50_us: corrected.map(|s| s.p50_us),
        p99_us: corrected.map(|s| s.p99_us),
        client_cpu_percent: run.client.cpu_percent,
        client_spin_percent: run.client.spin_percent(),
        client_cpu_us_per_request: run.client.cpu_us_per_request,
        client_work_us_per_request: run.client.work_us_per_request,
        client_saturated: run.client.saturated,
        client_delay: run.client.client_delay,
        server_cpu_percent: run.server.map(|s| s.0),
        server_cpu_us_per_request: run.server.and_then(|s| s.1),
        clauses: verdict.clauses.clone(),
        tcp: run.tcp.cloned(),
    }
}

/// How a driven search ended, as a result records it: the one mapping from the engine's
/// reasons to the report's.
pub fn stopped(ended: Ended) -> Stopped {
    match ended {
        Ended::Search(load::search::Stopped::Converged) => Stopped::Converged,
        Ended::Search(load::search::Stopped::Budget) => Stopped::Budget,
        Ended::Search(load::search::Stopped::Floor) => Stopped::Floor,
        Ended::Search(load::search::Stopped::Ceiling) => Stopped::Ceiling,
        Ended::Interrupted => Stopped::Interrupted,
    }
}

/// The search's phase as a result's window records it: the one mapping.
pub fn window_phase(phase: Phase) -> WindowPhase {
    match phase {
        Phase::Bracket => WindowPhase::Bracket,
        Phase::Bisect => WindowPhase::Bisect,
    }
}

#[cfg(test)]
mod tests;
