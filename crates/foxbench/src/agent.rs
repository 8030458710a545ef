//! `foxbench load --shard I/N --start-at TIME`: wiring of one agent of a plan run by
//! several, for the load command.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use anyhow::{anyhow, Result};
use load::{Arrival, Plan, Shard, Stop};

/// The agent's flags, as `load` parsed them.
pub struct AgentFlags<'a> {
    /// `--shard`.
    pub shard: Option<Shard>,
    /// `--start-at`.
    pub start_at: Option<&'a str>,
    /// `--late-ok`.
    pub late_ok: bool,
}

/// The whole plan's figures the result records beside the shard's.
pub struct Whole {
    connections: u64,
    requests: Option<u64>,
    peak_per_sec: Option<f64>,
}

/// Narrows `plan` to the shard; returns the whole plan's figures for the result.
pub fn shard(plan: &mut Plan, shard: Option<Shard>) -> Result<Option<(Shard, Whole)>> {
    let Some(shard) = shard else {
        return Ok(None);
    };
    let whole = Whole {
        connections: plan.connections as u64,
        requests: match plan.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        },
        peak_per_sec: match &plan.arrival {
            Arrival::Open { rate } => Some(rate.peak_per_sec()),
            Arrival::Closed => None,
        },
    };
    plan.shard(shard)
        .map_err(|e| anyhow!("--shard {shard}: {e}"))?;
    Ok(Some((shard, whole)))
}

/// The start instant `--start-at` names, resolved now (before any preparation, so that a
/// relative `+30s` counts from when the agent was started).
pub fn start_instant(flags: &AgentFlags<'_>) -> Result<Option<SystemTime>> {
    let Some(text) = flags.start_at else {
        return Ok(None);
    };
    let base = std::env::var(load::start::BASE_ENV).ok();
    let at = load::start::resolve(text, base.as_deref(), SystemTime::now())
        .map_err(|e| anyhow!("--start-at: {e}"))?;
    Ok(Some(at))
}

/// Waits, once prepared, for the start instant; fails when ready after it (unless
/// `--late-ok`), or when `interrupted` is set while waiting.
pub fn wait(at: Option<SystemTime>, late_ok: bool, interrupted: &AtomicBool) -> Result<()> {
    if let Some(at) = at {
        load::start::wait_until(at, late_ok, &|| interrupted.load(Ordering::Relaxed)).map_err(
            |e| match e {
                load::start::StartError::Late { late_ms, at } => anyhow!(
                    "--start-at: ready {late_ms:.0} ms after the start instant {at}: start the agent earlier, give a later --start-at, or pass --late-ok to run late"
                ),
                e => anyhow!("--start-at: {e}"),
            },
        )?;
    }
    Ok(())
}

/// The result's shard and start sections.
pub fn sections(
    sharded: Option<&(Shard, Whole)>,
    at: Option<SystemTime>,
    started: SystemTime,
) -> (Option<report::agents::ShardInfo>, report::agents::StartInfo) {
    let shard = sharded.map(|(s, w)| report::agents::ShardInfo {
        index: s.index,
        count: s.count,
        plan_connections: w.connections,
        plan_requests: w.requests,
        plan_peak_per_sec: w.peak_per_sec,
    });
    let ns = load::start::unix_ns;
    let start = report::agents::StartInfo {
        requested: at.map(load::start::format_rfc3339),
        started: load::start::format_rfc3339(started),
        started_unix_ns: ns(started),
        late_ms: at.map(|a| (ns(started) as f64 - ns(a) as f64) / 1e6),
    };
    (shard, start)
}
