//! The progress lines a run prints for a human: the build, each verification's verdict,
//! and each measured cell.

use report::shootout::{Cell, Verification};

use crate::suite::Multiplexed;

pub(super) fn build_line(info: &report::shootout::BuildInfo) -> String {
    format!(
        "  build: {}",
        if info.cached {
            "cached".to_string()
        } else {
            format!("{:.1} s", info.seconds)
        }
    )
}

/// One scenario's verification in a few words: ok, or the checks that failed. `base` is
/// the protocol the scenario speaks itself (`http2 = true`, `http3 = true`; `None`:
/// HTTP/1.1); every other protocol it was verified over that failed is named, with why.
pub(super) fn verdict(v: &Verification, base: Option<Multiplexed>) -> String {
    if v.passed {
        let failed: Vec<(Multiplexed, &str)> = [Multiplexed::Http2, Multiplexed::Http3]
            .into_iter()
            .filter(|m| m.passed_over(v) == Some(false))
            .map(|m| {
                let why = v
                    .checks
                    .iter()
                    .find(|c| !c.passed && c.name == m.check().name())
                    .and_then(|c| c.detail.as_deref())
                    .unwrap_or("failed");
                (m, why)
            })
            .collect();
        let excluded = failed
            .iter()
            .map(|(m, why)| format!("{why}: {} levels excluded", m.name()))
            .collect::<Vec<_>>()
            .join("; ");
        let base_failed = base.is_some_and(|b| failed.iter().any(|(m, _)| *m == b));
        let base_name = base.map_or("HTTP/1.1", Multiplexed::name);
        match (v.keepalive, failed.is_empty()) {
            // A target that does not speak the scenario's own protocol answered nothing.
            _ if base_failed => excluded,
            (_, false) => format!("ok over {base_name}, but {excluded}"),
            (Some(false), true) => {
                "ok, but it closes every connection: keep-alive levels excluded".to_string()
            }
            _ => "ok".to_string(),
        }
    } else {
        v.checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.name, c.detail.as_deref().unwrap_or("failed")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A measured cell's progress line: throughput, p99, server CPU per request, bottleneck.
pub(super) fn cell_line(cell: &Cell) -> Option<String> {
    let (summary, d) = (cell.summary.as_ref()?, cell.diagnosis.as_ref()?);
    Some(
        format!(
            "  {} {:>6}: {:>9.0} req/s  p99 {:>9}  server {:>6}  {}",
            cell.scenario,
            cell.level,
            summary.rps_median,
            summary
                .latency
                .at(99.0)
                .map(report::human_us)
                .unwrap_or_default(),
            summary
                .server_cpu_us_per_request
                .map(|u| format!("{u:.1} µs/req"))
                .unwrap_or_default(),
            d.bottleneck.as_str()
        ) + &[
            summary.handshake_line(),
            summary.process_line(),
            cell.capacity.as_ref().map(|c| c.line()),
        ]
        .into_iter()
        .flatten()
        .map(|l| format!("\n      {l}"))
        .collect::<String>(),
    )
}
