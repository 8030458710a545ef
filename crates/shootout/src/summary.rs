//! A cell's arithmetic: its repeats into the summary (medians, spread, merged latency and
//! spectrum), the figures its diagnosis is made from, and when warm-up is done; no I/O.

use report::shootout::{
    Cell, CellStatus, CellSummary, CpuUse, ProcessCost, Repeat, SystemSummary, ThreadWaits,
};
use stats::Latency;

use crate::diagnosis::diagnose;
use crate::figures::Figures;
use crate::waiting::{client_saturated, mostly_on_futex, server_saturated};

mod tcp;
pub use tcp::{tcp_report, window_tcp, Net};

/// Warm-up is over once the last two slices' throughputs agree within 10%.
pub fn steady(warmup_rps: &[f64]) -> bool {
    match warmup_rps {
        [.., a, b] => *a > 0.0 && (b - a).abs() <= 0.1 * a,
        _ => false,
    }
}

/// The percentiles the spectrum chart plots: 0, 50, 75, 87.5, ... towards 100, then 100.
pub fn spectrum_points() -> Vec<f64> {
    let mut v: Vec<f64> = (0..=17).map(|k| 100.0 * (1.0 - 0.5f64.powi(k))).collect();
    v.push(100.0);
    v
}

/// A cell's summary: medians and the spread of throughput over its repeats, their merged
/// latency, peaks and totals.
pub fn summarize(reps: &[Repeat]) -> CellSummary {
    let med = |f: &dyn Fn(&Repeat) -> Option<f64>| {
        let mut v: Vec<f64> = reps.iter().filter_map(f).collect();
        report::shootout::median(&mut v)
    };
    let mut merged = Latency::new();
    for r in reps {
        if let Ok(h) = Latency::from_base64(&r.hdr_base64) {
            let _ = merged.merge(&h);
        }
    }
    let rps: Vec<f64> = reps.iter().map(|r| r.rps).collect();
    CellSummary {
        rps_median: med(&|r| Some(r.rps)).unwrap_or(0.0),
        rps_min: rps.iter().copied().fold(f64::INFINITY, f64::min),
        rps_max: rps.iter().copied().fold(0.0, f64::max),
        latency: merged.summary(),
        hdr_base64: merged.to_base64(),
        spectrum: if merged.is_empty() {
            Vec::new()
        } else {
            spectrum_points()
                .into_iter()
                .map(|p| (p, merged.percentile_ns(p) as f64 / 1e3))
                .collect()
        },
        server_cpu_us_per_request: med(&|r| r.server.cpu_us_per_request),
        client_cpu_us_per_request: med(&|r| r.client.cpu_us_per_request),
        client_work_us_per_request: med(&|r| r.client.work_us_per_request),
        server_cpu_percent: med(&|r| Some(r.server.cpu_percent)).unwrap_or(0.0),
        busiest_thread_percent: med(&|r| Some(r.server.busiest_thread_percent)).unwrap_or(0.0),
        client_cpu_percent: med(&|r| Some(r.client.cpu_percent)).unwrap_or(0.0),
        rss_peak_bytes: reps
            .iter()
            .map(|r| r.server.rss_peak_bytes)
            .max()
            .unwrap_or(0),
        rss_mean_bytes: reps.iter().map(|r| r.server.rss_mean_bytes).sum::<u64>()
            / reps.len().max(1) as u64,
        pss_peak_bytes: reps
            .iter()
            .map(|r| r.server.pss_peak_bytes)
            .max()
            .unwrap_or(0),
        threads_peak: reps
            .iter()
            .map(|r| r.server.threads_peak)
            .max()
            .unwrap_or(0),
        fds_peak: reps.iter().map(|r| r.server.fds_peak).max().unwrap_or(0),
        errors: reps.iter().map(|r| r.requests.errors).sum(),
        errors_by_reason: report::errors_by_reason::merge(
            &reps
                .iter()
                .map(|r| r.errors_by_reason.as_slice())
                .collect::<Vec<_>>(),
        ),
        failed_status: reps.iter().map(|r| r.requests.failed_status).sum(),
        sent: reps.iter().map(|r| r.requests.sent).sum(),
        handshakes_full_per_s: med(&|r| r.handshakes.map(|h| h.full_per_s)),
        handshakes_resumed_per_s: med(&|r| r.handshakes.map(|h| h.resumed_per_s)),
        processes: process_costs(reps),
        system: system_summary(reps),
        waits: merged_waits(reps),
    }
}

/// Each CPU's median of every state over the repeats that read `/proc/stat`, and the
/// median context switches per second; `None` when none did.
pub fn system_summary(reps: &[Repeat]) -> Option<SystemSummary> {
    let windows: Vec<_> = reps.iter().filter_map(|r| r.system.as_ref()).collect();
    let first = windows.first()?;
    let side = |cpus: &[CpuUse], of: fn(&report::shootout::SystemWindow) -> &[CpuUse]| {
        cpus.iter()
            .map(|c| {
                let same: Vec<&CpuUse> = windows
                    .iter()
                    .filter_map(|w| of(w).iter().find(|x| x.cpu == c.cpu))
                    .collect();
                let med = |f: fn(&CpuUse) -> f64| {
                    let mut v: Vec<f64> = same.iter().map(|x| f(x)).collect();
                    report::shootout::median(&mut v).unwrap_or(0.0)
                };
                CpuUse {
                    cpu: c.cpu,
                    user: med(|x| x.user),
                    nice: med(|x| x.nice),
                    system: med(|x| x.system),
                    irq: med(|x| x.irq),
                    softirq: med(|x| x.softirq),
                    steal: med(|x| x.steal),
                    idle: med(|x| x.idle),
                    iowait: med(|x| x.iowait),
                    busy: med(|x| x.busy),
                }
            })
            .collect()
    };
    let mut ctxt: Vec<f64> = windows.iter().map(|w| w.ctxt_per_s).collect();
    Some(SystemSummary {
        client: side(&first.client, |w| &w.client),
        server: side(&first.server, |w| &w.server),
        ctxt_per_s: report::shootout::median(&mut ctxt).unwrap_or(0.0),
    })
}

/// The repeats' thread samples added up; `None` when none sampled them.
pub fn merged_waits(reps: &[Repeat]) -> Option<ThreadWaits> {
    let mut all = reps.iter().filter_map(|r| r.waits.as_ref());
    let mut merged = all.next()?.clone();
    for w in all {
        merged.merge(w);
    }
    Some(merged)
}

/// Whether the repeats show the level waiting, as a JVM thread dump can explain: neither
/// side's CPUs were its limit (the diagnosis's CPU verdicts), and most of the target's
/// waiting thread observations were on a futex (those parked there before the load left
/// out). A CPU-bound level's threads wait on a futex too (a pool's idle workers, calls
/// waiting on a future), but its dump would not name what limited it.
pub fn waited_on_futex(reps: &[Repeat], server_cpus: usize) -> bool {
    let f = figures(reps, &summarize(reps), server_cpus);
    !(client_saturated(&f) || server_saturated(&f)) && f.waits.as_ref().is_some_and(mostly_on_futex)
}

/// Each process name's median CPU per request over the repeats, most first.
pub fn process_costs(reps: &[Repeat]) -> Vec<ProcessCost> {
    let mut names: Vec<&str> = Vec::new();
    for p in reps.iter().flat_map(|r| &r.server.processes) {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    let mut out: Vec<ProcessCost> = names
        .into_iter()
        .filter_map(|name| {
            let mut v: Vec<f64> = reps
                .iter()
                .filter_map(|r| r.server.processes.iter().find(|p| p.name == name))
                .filter_map(|p| p.cpu_us_per_request)
                .collect();
            Some(ProcessCost {
                name: name.to_string(),
                cpu_us_per_request: report::shootout::median(&mut v)?,
            })
        })
        .collect();
    out.sort_by(|a, b| b.cpu_us_per_request.total_cmp(&a.cpu_us_per_request));
    out
}

/// The figures a cell's diagnosis is made from.
pub fn figures(reps: &[Repeat], s: &CellSummary, server_cpus: usize) -> Figures {
    let sum = |f: &dyn Fn(&Repeat) -> u64| reps.iter().map(f).sum::<u64>();
    Figures {
        client_cpu_percent: s.client_cpu_percent,
        client_spin_percent: {
            let mut v: Vec<f64> = reps.iter().map(|r| r.client.spin_percent()).collect();
            report::shootout::median(&mut v).unwrap_or(0.0)
        },
        server_cpu_percent: s.server_cpu_percent,
        busiest_thread_percent: s.busiest_thread_percent,
        server_cpus,
        sent: s.sent,
        errors: s.errors,
        ports_exhausted: sum(&|r| r.errors.connect_ports_exhausted),
        refused: sum(&|r| r.errors.connect_refused),
        connect_timeouts: sum(&|r| r.errors.connect_timeout),
        connect_other: sum(&|r| {
            r.errors
                .connect
                .saturating_sub(r.errors.connect_refused)
                .saturating_sub(r.errors.connect_ports_exhausted)
                .saturating_sub(r.errors.connect_timeout)
        }),
        timeouts: sum(&|r| r.errors.timeout),
        resets: sum(&|r| r.errors.read + r.errors.write),
        parse: sum(&|r| r.errors.parse),
        reasons: s.errors_by_reason.clone(),
        failed_status: s.failed_status,
        p99_us: s.latency.at(99.0),
        completed: reps.iter().map(|r| r.requests.completed).sum(),
        system: s.system.clone(),
        waits: s.waits.clone(),
        level_connections: 0,
        // Little's law: the mean in flight is the throughput times the mean time in flight.
        in_flight: (s.latency.count > 0 && s.rps_median > 0.0)
            .then(|| s.rps_median * s.latency.mean_us / 1e6),
        service_connections: report::shootout::pool::ServiceConnections::merge(
            &reps
                .iter()
                .map(|r| r.service_connections.as_slice())
                .collect::<Vec<_>>(),
        ),
        service_cpu_percent: service_cpu(reps),
        tcp: Vec::new(),
        client_delay: reps
            .iter()
            .filter_map(|r| r.client.client_delay)
            .reduce(report::ClientDelay::merge),
    }
}

/// Each service's share of its CPUs, the median over the repeats.
fn service_cpu(reps: &[Repeat]) -> Vec<(String, f64)> {
    let mut names: Vec<&str> = Vec::new();
    for t in reps.iter().flat_map(|r| &r.services) {
        if !names.contains(&t.name.as_str()) {
            names.push(&t.name);
        }
    }
    names
        .into_iter()
        .filter_map(|n| {
            let mut v: Vec<f64> = reps
                .iter()
                .flat_map(|r| r.services.iter().filter(|t| t.name == n))
                .map(|t| t.cpu_percent)
                .collect();
            Some((n.to_string(), report::shootout::median(&mut v)?))
        })
        .collect()
}

/// Closes a cell whose measuring ended without failing: with repeats it is measured (unless
/// interrupted) and gets its summary, its TCP counters' report and its diagnosis; without
/// any, it was interrupted.
pub fn conclude(cell: &mut Cell, server_cpus: usize, net: &Net) {
    if cell.repeats.is_empty() {
        if cell.status == CellStatus::Excluded {
            cell.status = CellStatus::Interrupted;
        }
        return;
    }
    if cell.status == CellStatus::Excluded {
        cell.status = CellStatus::Measured;
    }
    let summary = summarize(&cell.repeats);
    let mut figures = Figures {
        level_connections: cell.connections as usize,
        ..figures(&cell.repeats, &summary, server_cpus)
    };
    let saturated = client_saturated(&figures) || server_saturated(&figures);
    cell.tcp = tcp_report(&cell.repeats, &summary, saturated, net);
    figures.tcp = cell
        .tcp
        .as_ref()
        .map(|t| t.warnings.clone())
        .unwrap_or_default();
    cell.diagnosis = Some(diagnose(&figures));
    cell.summary = Some(summary);
}

#[cfg(test)]
mod tests;
