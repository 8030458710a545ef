//! The result of a capacity search (`foxbench load --find-max`, the shootout's capacity
//! levels): the objective, the rate found, the bracket, every window tried with its
//! verdict, figures and TCP counters' report ([`CapacityWindow`], one row for both), the
//! latency spectrum around the rate found, and whether the client bounded it. The rows are
//! built by `measure::search`, which drives the search (`load::search`).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::human_us;
use crate::slo::ClauseVerdict;
use crate::tcp::{TcpFinding, TcpReport};

/// The shares of the rate found at which the spectrum is shown, percent.
pub const SPECTRUM_SHARES: [f64; 4] = [50.0, 80.0, 100.0, 110.0];

/// A capacity search's result: the `capacity` section of `foxbench load --json`, and of a
/// shootout capacity level's cell (whose `spectra` is empty: it runs no spectrum).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CapacityReport {
    /// The objective, as given (`p99<10ms`); every clause must hold.
    pub objective: String,
    /// The highest constant rate whose window held the objective, requests per second;
    /// null when none did.
    pub rate_per_sec: Option<f64>,
    /// The highest rate that held and the lowest that failed.
    pub bracket: Bracket,
    /// Why the search stopped.
    pub stopped: Stopped,
    /// True when the client was saturated (client CPU, `client.saturated`'s rule) in a
    /// window that bounds the rate found: at it, at the lowest rate that failed, or at
    /// 110% of it. The figure is then the load generator's limit, not the server's.
    pub client_bound: bool,
    /// The length of each window, seconds.
    pub window_s: f64,
    /// The time budget (`--max-time`, a level's `max_duration`), seconds.
    pub budget_s: f64,
    /// The search's wall time, the spectrum's windows included, seconds.
    pub elapsed_s: f64,
    /// Every window run, in order.
    pub windows: Vec<CapacityWindow>,
    /// The latency spectrum at 50%, 80%, 100% and 110% of the rate found (empty when none
    /// was found, a share missing when the budget or an interruption cut it, and always
    /// empty in a shootout cell; absent in shootout results from before 2026-11-28).
    #[serde(default)]
    pub spectra: Vec<SpectrumRow>,
}

/// The bracket of the capacity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bracket {
    /// The highest rate that held, requests per second.
    pub held_per_sec: Option<f64>,
    /// The lowest rate that failed, requests per second.
    pub failed_per_sec: Option<f64>,
}

/// Why a capacity search stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Stopped {
    /// The bracket narrowed to the precision.
    Converged,
    /// The time budget ran out: the bracket is the best known.
    Budget,
    /// The lowest rate tried failed: the objective is not met.
    Floor,
    /// The highest rate allowed held: the capacity is at least that.
    Ceiling,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted,
}

impl Stopped {
    /// Why the search stopped, in words (the text report's and the load page's).
    pub(crate) fn words(self) -> &'static str {
        match self {
            Stopped::Converged => "converged",
            Stopped::Budget => "the time budget cut the search short; this is the best bracket",
            Stopped::Floor => "the objective failed even at the lowest rate tried",
            Stopped::Ceiling => "the objective held at the highest rate allowed",
            Stopped::Interrupted => "interrupted",
        }
    }
}

/// Which part of the search ran a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WindowPhase {
    /// Doubling or halving to bracket the knee.
    Bracket,
    /// Halving the bracket.
    Bisect,
    /// A window of the spectrum, after the search.
    Spectrum,
}

impl WindowPhase {
    /// Every phase.
    pub const ALL: [WindowPhase; 3] = [
        WindowPhase::Bracket,
        WindowPhase::Bisect,
        WindowPhase::Spectrum,
    ];

    /// The phase's name: the JSON's, for the text and the dashboard.
    pub fn name(self) -> &'static str {
        match self {
            WindowPhase::Bracket => "bracket",
            WindowPhase::Bisect => "bisect",
            WindowPhase::Spectrum => "spectrum",
        }
    }
}

/// Latency percentiles of one window, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spectrum {
    /// Median.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th.
    pub p99_us: f64,
    /// 99.9th.
    pub p99_9_us: f64,
    /// 99.99th.
    pub p99_99_us: f64,
    /// Longest.
    pub max_us: f64,
}

impl Spectrum {
    /// The spectrum of an encoded histogram; None when it is empty or does not decode.
    pub fn of(hdr_base64: &str) -> Option<Spectrum> {
        let h = stats::Latency::from_base64(hdr_base64).ok()?;
        if h.is_empty() {
            return None;
        }
        let us = |p: f64| h.percentile_ns(p) as f64 / 1e3;
        Some(Spectrum {
            p50_us: us(50.0),
            p90_us: us(90.0),
            p99_us: us(99.0),
            p99_9_us: us(99.9),
            p99_99_us: us(99.99),
            max_us: us(100.0),
        })
    }
}

/// One constant-rate window of a capacity search and its verdict: the one row, for a
/// `foxbench load --find-max` result and a shootout capacity level alike (built by
/// `measure::search::window_row`). Figures a side does not measure are null (the server's
/// in `foxbench load`) or absent (`late` in the shootout's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CapacityWindow {
    /// The rate asked for, requests per second.
    pub rate_per_sec: f64,
    /// Which part of the search ran it.
    pub phase: WindowPhase,
    /// True when every clause of the objective held over the whole window.
    pub passed: bool,
    /// Complete responses per second.
    pub achieved_per_sec: f64,
    /// Requests sent.
    pub sent: u64,
    /// Requests that failed (errors and failure statuses).
    pub failed: u64,
    /// Requests sent late because every connection was busy; absent where they are not
    /// counted (a shootout window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<u64>,
    /// Corrected latency (from each request's due instant); null with no response, absent
    /// in shootout results from before 2026-11-28.
    #[serde(default)]
    pub corrected: Option<Spectrum>,
    /// Service time (from each request's write); null with no response, absent in shootout
    /// results from before 2026-11-28.
    #[serde(default)]
    pub service: Option<Spectrum>,
    /// Median corrected latency, µs (`corrected`'s); null with no response, absent in
    /// `foxbench load` results from before 2026-11-28.
    #[serde(default)]
    pub p50_us: Option<f64>,
    /// 99th percentile of the corrected latency, µs (`corrected`'s); null with no
    /// response, absent in `foxbench load` results from before 2026-11-28.
    #[serde(default)]
    pub p99_us: Option<f64>,
    /// The client's CPU share over the window, percent of its CPUs.
    pub client_cpu_percent: f64,
    /// The part of `client_cpu_percent` spent spinning with nothing to do (time to spare,
    /// see `Client::spin_s`); 0 in results from before it was kept.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub client_spin_percent: f64,
    /// The client's CPU per completed request, µs; absent in `foxbench load` results from
    /// before 2026-11-28.
    #[serde(default)]
    pub client_cpu_us_per_request: Option<f64>,
    /// The client's work per completed request, µs: its CPU less the spin
    /// (`Client::work_us_per_request`); absent in results from before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_work_us_per_request: Option<f64>,
    /// True when the client was saturated in it (its CPU less the spin).
    pub client_saturated: bool,
    /// What the client itself added to the window's latencies, and which clock they are
    /// on; absent in results from before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_delay: Option<crate::ClientDelay>,
    /// The server tree's CPU share over the window, percent of its CPUs; null where the
    /// server is not probed (`foxbench load`).
    #[serde(default)]
    pub server_cpu_percent: Option<f64>,
    /// The server tree's CPU per completed request, µs; null where the server is not
    /// probed, or with no response.
    #[serde(default)]
    pub server_cpu_us_per_request: Option<f64>,
    /// Each clause's verdict and observed value.
    pub clauses: Vec<ClauseVerdict>,
    /// The kernel's TCP counters over the window (system-wide for the client's network
    /// namespace), per response, and the warnings of their rules (`tcp::findings`, as
    /// `foxbench load` gives); absent when they could not be read, and in results written
    /// before windows read them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpReport>,
}

impl CapacityWindow {
    /// The window's progress line, the `number`th of its search: `window  3:  1000 req/s
    /// asked, 998 achieved, p99 1.20ms, client 12% (3% spin), delay p99 9.0µs: held (tcp:
    /// nagle)`.
    pub fn progress_line(&self, number: usize) -> String {
        let spin = if self.client_spin_percent >= 0.5 {
            format!(" ({:.0}% spin)", self.client_spin_percent)
        } else {
            String::new()
        };
        let kinds: Vec<&str> = (self.tcp.iter())
            .flat_map(|t| &t.warnings)
            .map(|f| f.kind.as_str())
            .collect();
        let tcp = if kinds.is_empty() {
            String::new()
        } else {
            format!(" (tcp: {})", kinds.join(", "))
        };
        let delay = match &self.client_delay {
            Some(d) if d.stamped_reads > 0 => format!(", delay p99 {}", human_us(d.p99_us)),
            _ => String::new(),
        };
        format!(
            "window {number:>2}: {:>9.0} req/s asked, {:>9.0} achieved, p99 {:>9}, client {:>3.0}%{spin}{delay}: {}{tcp}",
            self.rate_per_sec,
            self.achieved_per_sec,
            self.corrected.map_or("-".into(), |s| human_us(s.p99_us)),
            self.client_cpu_percent,
            if self.passed { "held" } else { "failed" },
        )
    }
}

/// The spectrum at one share of the rate found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SpectrumRow {
    /// The share of the rate found, percent: 50, 80, 100 or 110.
    pub share_percent: f64,
    /// The index in `windows` of the window measured at it.
    pub window: usize,
}

impl CapacityReport {
    /// The TCP counters' warnings over the windows, one line per rule that fired: the
    /// windows it fired in, and its detail in the one of them with the most requests sent
    /// (the same details as `foxbench load` gives for one run).
    pub fn tcp_warnings(&self) -> Vec<String> {
        let mut kinds: Vec<TcpFinding> = Vec::new();
        for w in self.windows.iter().filter_map(|w| w.tcp.as_ref()) {
            for f in &w.warnings {
                if !kinds.contains(&f.kind) {
                    kinds.push(f.kind);
                }
            }
        }
        kinds
            .into_iter()
            .filter_map(|kind| {
                let fired: Vec<(usize, &CapacityWindow, &str)> = self
                    .windows
                    .iter()
                    .enumerate()
                    .filter_map(|(i, w)| {
                        let t = w.tcp.as_ref()?;
                        let f = t.warnings.iter().find(|f| f.kind == kind)?;
                        Some((i, w, f.detail.as_str()))
                    })
                    .collect();
                let (_, w, detail) = fired
                    .iter()
                    .max_by_key(|(i, w, _)| (w.sent, usize::MAX - i))?;
                let list: Vec<String> = fired.iter().map(|(i, ..)| (i + 1).to_string()).collect();
                Some(format!(
                    "{} in window{} {} of {}; at {:.0} req/s: {detail}",
                    kind.as_str(),
                    if fired.len() == 1 { "" } else { "s" },
                    list.join(", "),
                    self.windows.len(),
                    w.rate_per_sec
                ))
            })
            .collect()
    }

    /// The window of a spectrum row.
    pub fn spectrum_window(&self, row: &SpectrumRow) -> Option<&CapacityWindow> {
        self.windows.get(row.window)
    }

    /// Whether the client bounded the rate found (see `client_bound`), from the windows.
    pub fn client_bound_of(
        windows: &[CapacityWindow],
        spectra: &[SpectrumRow],
        bracket: Bracket,
    ) -> bool {
        let at = |rate: Option<f64>| {
            rate.is_some_and(|r| {
                windows.iter().any(|w| {
                    w.rate_per_sec == r && w.phase != WindowPhase::Spectrum && w.client_saturated
                })
            })
        };
        let over = spectra
            .iter()
            .filter(|s| s.share_percent > 100.0)
            .filter_map(|s| windows.get(s.window))
            .any(|w| w.client_saturated);
        at(bracket.held_per_sec) || at(bracket.failed_per_sec) || over
    }

    /// The text report.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let rate = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.0}"));
        match self.rate_per_sec {
            Some(r) => {
                let _ = writeln!(
                    o,
                    "Capacity:      {r:.0} req/s under {}{}",
                    self.objective,
                    if self.client_bound {
                        " (CLIENT-BOUND: the load generator's limit, not the server's)"
                    } else {
                        ""
                    }
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "Capacity:      none: {} is not met at any rate tried",
                    self.objective
                );
            }
        }
        let _ = writeln!(
            o,
            "Bracket:       held {} req/s, failed {} req/s ({})",
            rate(self.bracket.held_per_sec),
            rate(self.bracket.failed_per_sec),
            self.stopped.words()
        );
        let _ = writeln!(
            o,
            "Search:        {} windows of {:.1}s in {:.1}s (budget {:.0}s)",
            self.windows.len(),
            self.window_s,
            self.elapsed_s,
            self.budget_s
        );
        // The spin column only where a window spun (results from before it was kept have
        // none, and render as they did).
        let spun = self.windows.iter().any(|w| w.client_spin_percent >= 0.5);
        let _ = writeln!(
            o,
            "\n  {:>3} {:<8} {:>10} {:>10} {:>9} {:>9} {:>9} {:>6} {:>7}{}  verdict  tcp",
            "#",
            "phase",
            "rate",
            "achieved",
            "p50",
            "p99",
            "p99.9",
            "late",
            "client",
            if spun {
                "   spin  cpu/req work/req"
            } else {
                ""
            }
        );
        for (i, w) in self.windows.iter().enumerate() {
            let p = |f: fn(&Spectrum) -> f64| {
                w.corrected.as_ref().map_or("-".into(), |s| human_us(f(s)))
            };
            let _ = writeln!(
                o,
                "  {:>3} {:<8} {:>10.0} {:>10.0} {:>9} {:>9} {:>9} {:>6} {:>6.0}%{}  {:<7}  {}",
                i + 1,
                w.phase.name(),
                w.rate_per_sec,
                w.achieved_per_sec,
                p(|s| s.p50_us),
                p(|s| s.p99_us),
                p(|s| s.p99_9_us),
                w.late.map_or("-".to_string(), |n| n.to_string()),
                w.client_cpu_percent,
                if spun {
                    let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}µs"));
                    format!(
                        " {:>5.0}% {:>8} {:>8}",
                        w.client_spin_percent,
                        us(w.client_cpu_us_per_request),
                        us(w.client_work_us_per_request)
                    )
                } else {
                    String::new()
                },
                if w.passed { "held" } else { "FAILED" },
                w.tcp.as_ref().map_or("-".to_string(), |t| {
                    if t.warnings.is_empty() {
                        "ok".to_string()
                    } else {
                        let kinds: Vec<&str> = t.warnings.iter().map(|f| f.kind.as_str()).collect();
                        kinds.join(",")
                    }
                })
            );
        }
        if !self.spectra.is_empty() {
            let _ = writeln!(
                o,
                "\nSpectrum       {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                "rate", "p50", "p90", "p99", "p99.9", "p99.99", "max"
            );
            for row in &self.spectra {
                let Some(w) = self.spectrum_window(row) else {
                    continue;
                };
                for (name, s) in [("corrected", &w.corrected), ("service", &w.service)] {
                    let Some(s) = s else { continue };
                    let _ = writeln!(
                        o,
                        "  {:>4.0}% {:<9}{:>8.0} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                        row.share_percent,
                        name,
                        w.rate_per_sec,
                        human_us(s.p50_us),
                        human_us(s.p90_us),
                        human_us(s.p99_us),
                        human_us(s.p99_9_us),
                        human_us(s.p99_99_us),
                        human_us(s.max_us)
                    );
                }
            }
        }
        for w in self.tcp_warnings() {
            let _ = writeln!(o, "warning: {w}");
        }
        o
    }
}

#[cfg(test)]
mod tests;
