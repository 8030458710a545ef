//! Results of a plan run by several agents: which share one agent ran ([`ShardInfo`]), when
//! it really started ([`StartInfo`]), and what a merge of them says about each
//! ([`Agents`]), with their lines in the text report.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// `--shard I/N`: this run's share of a plan run by `count` agents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShardInfo {
    /// This agent's index, 0 to `count - 1`.
    pub index: u64,
    /// How many agents share the plan.
    pub count: u64,
    /// The whole plan's connections (`config.connections` is this shard's share).
    pub plan_connections: u64,
    /// The whole plan's `-n` (`config.requests` is this shard's share).
    pub plan_requests: Option<u64>,
    /// Open model: the whole plan's peak rate, requests per second (`config.rate_per_sec`
    /// and `rate_schedule` are the whole plan's; this shard sends every `count`th arrival).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_peak_per_sec: Option<f64>,
}

/// When a run started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StartInfo {
    /// `--start-at`, resolved to an instant (RFC 3339, UTC); absent when it started at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// The wall-clock instant the load really started (RFC 3339, UTC, µs).
    pub started: String,
    /// The same, nanoseconds since the Unix epoch.
    pub started_unix_ns: u64,
    /// How far after `requested` it started, ms (negative: before; never, by design).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_ms: Option<f64>,
}

/// What `foxbench merge` merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Agents {
    /// The agents the plan was shared by (`N` of `--shard I/N`).
    pub expected: u64,
    /// Shards with no result (accepted only with `--partial-ok`).
    pub missing: Vec<u64>,
    /// Shards whose run was interrupted (accepted only with `--partial-ok`).
    pub partial: Vec<u64>,
    /// True when the merge is incomplete: `--partial-ok` accepted missing or partial shards.
    pub incomplete: bool,
    /// The spread of the agents' real starts (latest minus earliest), ms.
    pub start_skew_ms: f64,
    /// Each merged agent, by shard.
    pub agents: Vec<AgentRow>,
}

/// One merged agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentRow {
    /// Its shard index.
    pub shard: u64,
    /// Where its result came from: a file name, or `stdin` with the pod prefix or the
    /// document's number.
    pub source: String,
    /// The wall-clock instant it started (RFC 3339).
    pub started: String,
    /// How long after the earliest agent it started, ms.
    pub start_offset_ms: f64,
    /// Its run's wall time, seconds.
    pub elapsed_s: f64,
    /// Connections it ran.
    pub connections: u64,
    /// Requests it issued.
    pub sent: u64,
    /// Of those, complete responses with a status that is not a failure.
    pub ok: u64,
    /// Failed statuses and errors.
    pub failed: u64,
    /// Its errors by kind.
    pub errors: crate::Errors,
    /// Its share of its CPUs, percent.
    pub cpu_percent: f64,
    /// True when it was client-bound: its CPU less the spin ≥ 90% (`Client::saturated`).
    pub saturated: bool,
    /// True when its run was interrupted.
    pub interrupted: bool,
}

impl AgentRow {
    /// Shard `shard`'s row, from its result `r` read from `source`; `t0` is the earliest
    /// agent's start (Unix ns).
    pub(crate) fn of(shard: u64, source: &str, r: &crate::LoadReport, t0: u64) -> AgentRow {
        let start = r.start.as_ref();
        AgentRow {
            shard,
            source: source.to_string(),
            started: start.map_or_else(String::new, |s| s.started.clone()),
            start_offset_ms: start.map_or(0.0, |s| (s.started_unix_ns - t0) as f64 / 1e6),
            elapsed_s: r.elapsed_s,
            connections: r.config.connections,
            sent: r.requests.sent,
            ok: r.requests.ok,
            failed: r.requests.failed_status + r.requests.errors,
            errors: r.errors.clone(),
            cpu_percent: r.client.cpu_percent,
            saturated: r.client.saturated,
            interrupted: r.interrupted,
        }
    }
}

impl Agents {
    /// The text report's lines about the agents.
    pub fn write_text(&self, o: &mut String) {
        let _ = writeln!(
            o,
            "Agents:                 {} of {} merged, start skew {:.1} ms{}",
            self.agents.len(),
            self.expected,
            self.start_skew_ms,
            if self.incomplete {
                " (INCOMPLETE: --partial-ok)"
            } else {
                ""
            }
        );
        if !self.missing.is_empty() {
            let _ = writeln!(o, "  missing shards: {}", list(&self.missing));
        }
        if !self.partial.is_empty() {
            let _ = writeln!(o, "  interrupted shards: {}", list(&self.partial));
        }
        let _ = writeln!(
            o,
            "  {:>5} {:>10} {:>8} {:>6} {:>10} {:>10} {:>8} {:>6}  source",
            "shard", "start ms", "time s", "conns", "sent", "ok", "failed", "cpu%"
        );
        for a in &self.agents {
            let _ = writeln!(
                o,
                "  {:>5} {:>+10.1} {:>8.2} {:>6} {:>10} {:>10} {:>8} {:>5.0}{}  {}{}",
                a.shard,
                a.start_offset_ms,
                a.elapsed_s,
                a.connections,
                a.sent,
                a.ok,
                a.failed,
                a.cpu_percent,
                if a.saturated { "!" } else { " " },
                a.source,
                if a.interrupted { " (interrupted)" } else { "" }
            );
        }
        if self.agents.iter().any(|a| a.saturated) {
            let _ = writeln!(
                o,
                "  ! client-bound: that agent used ≥90% of its CPUs; add agents or CPUs"
            );
        }
    }
}

fn list(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

impl ShardInfo {
    /// The text report's line about the shard.
    pub fn write_text(&self, o: &mut String) {
        let _ = writeln!(
            o,
            "Shard:                  {}/{} of a plan of {} connections{}",
            self.index,
            self.count,
            self.plan_connections,
            self.plan_requests
                .map(|n| format!(" and {n} requests"))
                .unwrap_or_default()
        );
    }
}

impl StartInfo {
    /// The text report's line about the start.
    pub fn write_text(&self, o: &mut String) {
        match (&self.requested, self.late_ms) {
            (Some(at), Some(late)) => {
                let _ = writeln!(
                    o,
                    "Started:                {} ({late:+.3} ms from --start-at {at})",
                    self.started
                );
            }
            _ => {
                let _ = writeln!(o, "Started:                {}", self.started);
            }
        }
    }
}
