//! Multi-tier results: the suite's services (`[[service]]`), each cell's figures per tier
//! (the target and every service it uses), and the backend counter cross-check; with their
//! Markdown and HTML sections.
//!
//! Every field here is new in results files since the services landed, so each is
//! `#[serde(default)]` where it hangs off an older type: old results load with none.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{BuildInfo, Cell, Outcome, ProbePoint, ShootoutResults};
use crate::units::bytes_compact;

/// The throughput the backend-call post aimed at, req/s.
pub const POST_GOAL_RPS: f64 = 50_000.0;

/// One `[[service]]` of the run: how it was built and started, and where it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceResult {
    /// The service's name.
    pub name: String,
    /// `measured` when it ran through every target that used it; else why not.
    pub outcome: Outcome,
    /// Why it was skipped, failed or stopped early, in one line.
    pub message: Option<String>,
    /// The build.
    pub build: Option<BuildInfo>,
    /// The start command as run (placeholders filled in).
    pub start_command: Option<String>,
    /// From spawn to ready, milliseconds.
    pub startup_ms: Option<f64>,
    /// The CPUs it was pinned to.
    pub cpus: Vec<usize>,
    /// The targets that use it, in run order.
    pub used_by: Vec<String>,
    /// Its tree once ready, before any load.
    pub idle: Option<ProbePoint>,
    /// The last lines it printed, when it failed.
    pub log_tail: Option<String>,
}

/// What a tier is to the request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TierRole {
    /// The server foxbench loads.
    Target,
    /// A process the target calls.
    Service,
}

/// A service's process tree over one measured repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TierWindow {
    /// The service's name.
    pub name: String,
    /// CPU (user + system), seconds.
    pub cpu_s: f64,
    /// Its share of its own CPUs, percent.
    pub cpu_percent: f64,
    /// CPU µs per response foxbench completed.
    pub cpu_us_per_request: Option<f64>,
    /// Peak RSS of the tree, bytes.
    pub rss_peak_bytes: u64,
    /// Peak threads.
    pub threads_peak: u64,
}

/// One tier's figures in a cell, medians over the repeats (peaks: the highest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tier {
    /// The target's or the service's name.
    pub name: String,
    /// Target or service.
    pub role: TierRole,
    /// CPU µs per response foxbench completed: which tier paid for a request.
    pub cpu_us_per_request: Option<f64>,
    /// Share of the tier's CPUs, percent.
    pub cpu_percent: f64,
    /// Peak RSS, bytes.
    pub rss_peak_bytes: u64,
    /// Peak threads.
    pub threads_peak: u64,
}

/// A service's own request count over a level against foxbench's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CounterCheck {
    /// The service.
    pub service: String,
    /// Its counter's increase from before the warm-up to after the last repeat.
    pub service_requests: u64,
    /// Responses foxbench completed over the same span (warm-up included).
    pub completed: u64,
    /// Of those, the ones with a failing status: a front end may answer one without a
    /// call to the service (a 502 when its own call failed), so they are left out of the
    /// lower bound. 0 in results from before it was counted.
    #[serde(default)]
    pub failed_status: u64,
    /// Requests foxbench sent over the span; those unanswered when a timed repeat stopped
    /// may or may not have reached the service.
    pub sent: u64,
    /// True when completed − failed_status ≤ service_requests ≤ sent: one backend call per
    /// request answered right.
    pub matches: bool,
}

impl CounterCheck {
    /// The check of `service_requests` against foxbench's `completed` (of which
    /// `failed_status` had a failing status) and `sent`.
    pub fn new(
        service: &str,
        service_requests: u64,
        (completed, failed_status): (u64, u64),
        sent: u64,
    ) -> Self {
        let answered_right = completed.saturating_sub(failed_status);
        CounterCheck {
            service: service.to_string(),
            service_requests,
            completed,
            failed_status,
            sent,
            matches: answered_right <= service_requests && service_requests <= sent.max(completed),
        }
    }

    /// `hello 12034 = 12034 completed`, or the mismatch.
    pub fn line(&self) -> String {
        if self.matches {
            if self.service_requests == self.completed {
                format!(
                    "{} counted {} = {} completed",
                    self.service, self.service_requests, self.completed
                )
            } else {
                format!(
                    "{} counted {} ({} completed, {} sent: the rest were in flight at the end)",
                    self.service, self.service_requests, self.completed, self.sent
                )
            }
        } else {
            format!(
                "{} counted {} but foxbench completed {} (sent {}): not one backend call per request",
                self.service, self.service_requests, self.completed, self.sent
            )
        }
    }
}

impl ShootoutResults {
    /// True when the run had services, so the tier sections apply.
    pub fn has_tiers(&self) -> bool {
        !self.services.is_empty()
            || self
                .targets
                .iter()
                .flat_map(|t| &t.cells)
                .any(|c| !c.tiers.is_empty())
    }
}

/// The tier that limited a cell: the one the run named, else read off the verdict.
pub fn limiting_tier(cell: &Cell, target: &str) -> Option<String> {
    if let Some(t) = &cell.limiting_tier {
        return Some(t.clone());
    }
    let d = cell.diagnosis.as_ref()?;
    use super::Bottleneck::*;
    Some(match d.bottleneck {
        ClientBound => "client".into(),
        // A lock is in the target: its threads wait on it, whatever the CPUs do.
        // So is a pool: the target's own bound on its connections to the service.
        ServerCpuBound | ServerThreadBound | LockBound | PoolBound => target.into(),
        BackendWait => "a service".into(),
        ServiceCpuBound => "a service".into(),
        Neither => "neither".into(),
        Errors => "errors".into(),
        // The kernel's TCP counters are the namespace's: they name no one tier.
        Nagle | ListenOverflow | MemoryPressure | Retransmits => "network".into(),
    })
}

/// The Markdown sections of a multi-tier run (empty without services).
pub fn markdown(r: &ShootoutResults) -> String {
    if !r.has_tiers() {
        return String::new();
    }
    let mut out = String::new();
    out.push_str("### Services\n\n");
    for s in &r.services {
        out.push_str(&format!(
            "- **{}**: {}{}; CPUs {:?}; used by {}{}\n",
            s.name,
            s.outcome.as_str(),
            s.startup_ms
                .map(|ms| format!(", ready in {ms:.0} ms"))
                .unwrap_or_default(),
            s.cpus,
            if s.used_by.is_empty() {
                "no target".to_string()
            } else {
                s.used_by.join(", ")
            },
            s.message
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default()
        ));
    }
    for note in &r.protocol.cpu_sharing {
        out.push_str(&format!("- {note}\n"));
    }
    out.push_str(&format!(
        "\n### Against the post's goal of {} req/s\n\nreq/s (share of the goal), the requests that failed (errors and failing statuses, of those sent; the post's bar at 10,000 connections is under 0.1%) and those a counted level left unanswered at its time cap, the tier that limited the cell, the target's peak threads and its peak RSS above idle per connection.\n\n",
        POST_GOAL_RPS as u64
    ));
    out.push_str("| target | scenario | level | req/s | of goal | failed | limited by | threads | RSS / connection |\n|---|---|---|---:|---:|---:|---|---:|---:|\n");
    for t in &r.targets {
        for c in &t.cells {
            let Some(s) = &c.summary else { continue };
            out.push_str(&format!(
                "| {} | {} | {} | {:.0} | {:.0}% | {} | {} | {} | {} |\n",
                t.name,
                c.scenario,
                c.level,
                s.rps_median,
                100.0 * s.rps_median / POST_GOAL_RPS,
                failed(s.errors + s.failed_status, s.sent) + &unanswered(c),
                limiting_tier(c, &t.name).unwrap_or_default(),
                s.threads_peak,
                per_connection(s.rss_peak_bytes, t.idle.as_ref(), c.connections)
            ));
        }
    }
    out.push_str("\n### Per tier\n\nEach tier's CPU per request foxbench completed, its CPU share, peak RSS and threads: which tier paid for a request.\n\n");
    out.push_str("| target | scenario | level | tier | role | CPU/req | CPU % | peak RSS | threads |\n|---|---|---|---|---|---:|---:|---:|---:|\n");
    for t in &r.targets {
        for c in &t.cells {
            for tier in &c.tiers {
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {:.0}% | {} | {} |\n",
                    t.name,
                    c.scenario,
                    c.level,
                    tier.name,
                    role(tier.role),
                    tier.cpu_us_per_request
                        .map(|u| format!("{u:.1} µs"))
                        .unwrap_or_else(|| "–".into()),
                    tier.cpu_percent,
                    bytes_compact(tier.rss_peak_bytes),
                    tier.threads_peak
                ));
            }
        }
    }
    let checks: Vec<(&str, &Cell)> = r
        .targets
        .iter()
        .flat_map(|t| t.cells.iter().map(move |c| (t.name.as_str(), c)))
        .filter(|(_, c)| !c.counters.is_empty())
        .collect();
    if !checks.is_empty() {
        let differ = checks
            .iter()
            .flat_map(|(_, c)| &c.counters)
            .filter(|k| !k.matches)
            .count();
        out.push_str(&format!(
            "\n### Backend calls against requests\n\nEach service's own count over the level (warm-up included) against the responses foxbench completed: {}.\n\n",
            if differ == 0 {
                "equal in every cell".to_string()
            } else {
                format!("**{differ} cell(s) differ** (marked ⚠)")
            }
        ));
        out.push_str("| target | scenario | level | check |\n|---|---|---|---|\n");
        for (t, c) in checks {
            for k in &c.counters {
                out.push_str(&format!(
                    "| {t} | {} | {} | {}{} |\n",
                    c.scenario,
                    c.level,
                    if k.matches { "" } else { "⚠ " },
                    k.line()
                ));
            }
        }
    }
    out.push_str(&super::pool::markdown(r));
    out
}

fn role(r: TierRole) -> &'static str {
    match r {
        TierRole::Target => "target",
        TierRole::Service => "service",
    }
}

/// Failed requests of those sent: `0`, or the count and its share (`12 (0.03%)`).
fn failed(failed: u64, sent: u64) -> String {
    if failed == 0 {
        return "0".into();
    }
    let share = 100.0 * failed as f64 / sent.max(failed).max(1) as f64;
    let digits = if share < 0.1 { 3 } else { 1 };
    format!("{failed} ({share:.digits$}%)")
}

/// A counted level whose repeats hit their time cap: `; 9000 of 30000 unanswered at the
/// cap` (neither errors nor answers: still in flight or never sent when time ran out).
fn unanswered(c: &Cell) -> String {
    unanswered_of(c.repeats.iter().map(|r| (r.capped, &r.requests)))
}

fn unanswered_of<'a>(repeats: impl Iterator<Item = (bool, &'a crate::Requests)>) -> String {
    let (left, asked) = repeats
        .filter(|(capped, _)| *capped)
        .fold((0, 0), |(l, a), (_, r)| {
            (l + r.in_flight + r.unsent, a + r.sent + r.unsent)
        });
    if left == 0 {
        return String::new();
    }
    format!("; {left} of {asked} unanswered at the cap")
}

/// Peak RSS above idle, per connection of the level.
fn per_connection(peak: u64, idle: Option<&ProbePoint>, connections: u64) -> String {
    let above = peak.saturating_sub(idle.map_or(0, |i| i.rss_bytes));
    let per = above as f64 / connections.max(1) as f64;
    if per >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", per / (1024.0 * 1024.0))
    } else {
        format!("{:.1} KiB", per / 1024.0)
    }
}

/// The HTML sections of a multi-tier run (empty without services).
pub fn html(r: &ShootoutResults) -> String {
    if !r.has_tiers() {
        return String::new();
    }
    // The Markdown tables, as HTML tables: one rendering of the figures, two notations.
    let md = markdown(r);
    let mut out = String::new();
    let mut in_table = false;
    for line in md.lines() {
        if let Some(h) = line.strip_prefix("### ") {
            if in_table {
                out.push_str("</table>\n");
                in_table = false;
            }
            out.push_str(&format!("<h3>{}</h3>\n", esc(h)));
        } else if line.starts_with("|---") {
            continue;
        } else if let Some(row) = line.strip_prefix('|') {
            let cells: Vec<&str> = row.trim_end_matches('|').split(" | ").collect();
            let tag = if in_table { "td" } else { "th" };
            if !in_table {
                out.push_str("<table>\n");
                in_table = true;
            }
            out.push_str("<tr>");
            for c in cells {
                out.push_str(&format!(
                    "<{tag}>{}</{tag}>",
                    esc(c.trim()).replace("**", "")
                ));
            }
            out.push_str("</tr>\n");
        } else {
            if in_table {
                out.push_str("</table>\n");
                in_table = false;
            }
            if let Some(item) = line.strip_prefix("- ") {
                out.push_str(&format!("<p>{}</p>\n", esc(item).replace("**", "")));
            } else if !line.trim().is_empty() {
                out.push_str(&format!("<p>{}</p>\n", esc(line).replace("**", "")));
            }
        }
    }
    if in_table {
        out.push_str("</table>\n");
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests;
