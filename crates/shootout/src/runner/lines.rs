//! The progress lines a run prints for a human: the build, each verification's verdict,
//! and each measured cell.

use report::shootout::{Cell, Verification};

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

/// One scenario's verification in a few words: ok, or the checks that failed.
pub(super) fn verdict(v: &Verification) -> String {
    if v.passed {
        use crate::check::CheckKind;
        // The first protocol whose check failed, with why.
        let other = [(CheckKind::Http2, "HTTP/2"), (CheckKind::Http3, "HTTP/3")]
            .into_iter()
            .find_map(|(kind, name)| {
                let c = v
                    .checks
                    .iter()
                    .find(|c| !c.passed && c.name == kind.name())?;
                Some((name, c.detail.as_deref().unwrap_or("failed")))
            });
        match (v.keepalive, other) {
            (_, Some((name, why))) => {
                format!("ok over HTTP/1.1, but {why}: {name} levels excluded")
            }
            (Some(false), None) => {
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
