//! The plan's levels as the report reads them: found by name, told in a few words, and
//! whether one belongs on the concurrency axis.

use super::numbers::short;
use crate::shootout::{LevelInfo, ShootoutResults};

/// A level in a few words: `c100 (100 conns, 10 s)`.
pub(super) fn level_text(l: &LevelInfo) -> String {
    let what = match (l.duration_s, l.requests) {
        _ if l.capacity.is_some() => {
            let c = l.capacity.as_ref().expect("matched");
            format!(
                "capacity under {}, {} s windows, {} s budget",
                c.objective,
                short(c.window_s),
                short(c.budget_s)
            )
        }
        (_, Some(n)) => format!("{n} requests"),
        (Some(d), None) => format!("{} s", short(d)),
        (None, None) => String::new(),
    };
    let ka = if l.keepalive == Some(false) {
        ", no keep-alive"
    } else {
        ""
    };
    let resume = if l.tls_resume == Some(false) {
        ", no TLS resumption"
    } else {
        ""
    };
    format!(
        "{} ({} conn{}, {what}{ka}{resume}{})",
        l.name,
        l.connections,
        if l.connections == 1 { "" } else { "s" },
        open_model_text(l)
    )
}

/// `, open model at 400 req/s, latency corrected` for an open-model level, else nothing:
/// its latency is timed from when each request was due (coordinated omission corrected).
pub(crate) fn open_model_text(l: &LevelInfo) -> String {
    l.rate
        .as_ref()
        .map(|r| format!(", open model at {r} req/s, latency corrected"))
        .unwrap_or_default()
}

/// The plan's level of that name.
pub(super) fn level<'a>(r: &'a ShootoutResults, name: &str) -> Option<&'a LevelInfo> {
    r.protocol.plan.levels.iter().find(|l| l.name == name)
}

/// Whether a column is a capacity level (charted over the ramp, not on the concurrency axis
/// nor as a counted level).
pub(super) fn capacity(r: &ShootoutResults, name: &str) -> bool {
    level(r, name).is_some_and(|l| l.capacity.is_some())
}

/// Whether a column is a timed keep-alive level (the ones on the concurrency axis).
pub(super) fn timed_keepalive(r: &ShootoutResults, scenario: &str, name: &str) -> bool {
    let cell_keepalive = r
        .targets
        .iter()
        .filter_map(|t| t.cell(scenario, name))
        .all(|c| c.keepalive);
    match level(r, name) {
        Some(l) => {
            l.capacity.is_none()
                && l.requests.is_none()
                && l.duration_s.is_some()
                && l.keepalive != Some(false)
                && cell_keepalive
        }
        None => cell_keepalive,
    }
}

#[cfg(test)]
mod tests;
