//! One measured window's server-side arithmetic: probe readings at its edges into the
//! server's figures (its CPU by process name too), the per-CPU figures and
//! the thread-wait histogram, TLS handshake rates, and a load's result with both into a
//! repeat; no I/O. The client's record is `measure::record`'s, as `foxbench load`'s is.

use load::RunResult;
use report::shootout::{
    CpuUse, Handshakes, ProbePoint, ProcessCpu, Repeat, ServerWindow, SystemWindow, ThreadWaits,
    WchanCount,
};

/// The server tree read at one edge of a measured window.
#[derive(Debug, Clone)]
pub struct Edge {
    /// The tree's totals.
    pub sample: probe::Sample,
    /// Its threads' counters.
    pub threads: probe::Threads,
    /// Its CPU by process name.
    pub by_name: probe::ByName,
}

/// One probe sample as a point of a repeat's series.
pub fn point(t_s: f64, cpu_percent: f64, s: &probe::Sample) -> ProbePoint {
    ProbePoint {
        t_s,
        cpu_percent,
        rss_bytes: s.rss_bytes,
        pss_bytes: s.pss_bytes,
        threads: u64::from(s.threads),
        processes: u64::from(s.processes),
        fds: u64::from(s.fds),
    }
}

/// The server's figures when it could not be probed.
pub fn zero_server() -> ServerWindow {
    ServerWindow {
        cpu_user_s: 0.0,
        cpu_sys_s: 0.0,
        cpu_percent: 0.0,
        busiest_thread_percent: 0.0,
        cpu_us_per_request: None,
        rss_peak_bytes: 0,
        rss_mean_bytes: 0,
        pss_peak_bytes: 0,
        pss_mean_bytes: 0,
        threads_peak: 0,
        processes_peak: 0,
        fds_peak: 0,
        voluntary_ctxt_per_s: 0.0,
        involuntary_ctxt_per_s: 0.0,
        processes: Vec::new(),
    }
}

/// The CPU of each process name between two edges, most first. A name seen only at the
/// end (a process started during the window) counts from zero.
pub fn processes(from: &probe::ByName, to: &probe::ByName, completed: u64) -> Vec<ProcessCpu> {
    let mut out: Vec<ProcessCpu> = to
        .iter()
        .map(|(name, b)| {
            let a = from.get(name).map_or(0, |a| a.cpu_ns);
            let cpu_s = b.cpu_ns.saturating_sub(a) as f64 / 1e9;
            ProcessCpu {
                name: name.clone(),
                processes: u64::from(b.processes),
                cpu_s,
                cpu_us_per_request: (completed > 0).then(|| cpu_s * 1e6 / completed as f64),
            }
        })
        .collect();
    out.sort_by(|x, y| y.cpu_s.total_cmp(&x.cpu_s).then(x.name.cmp(&y.name)));
    out
}

/// The handshakes of a TLS repeat and their rates; `None` for plain HTTP.
pub fn handshakes(res: &RunResult, tls: bool) -> Option<Handshakes> {
    let c = &res.counts;
    let elapsed = res.elapsed.as_secs_f64().max(1e-9);
    tls.then(|| Handshakes {
        full: c.handshakes_full,
        resumed: c.handshakes_resumed,
        full_per_s: c.handshakes_full as f64 / elapsed,
        resumed_per_s: c.handshakes_resumed as f64 / elapsed,
    })
}

/// The server tree over a window of `elapsed_s` seconds in which `completed` responses
/// came back: CPU from the edges, memory and counts from the edges and the series between.
pub fn server_window(
    from: &Edge,
    to: &Edge,
    series: &[ProbePoint],
    elapsed_s: f64,
    completed: u64,
    server_cpus: usize,
) -> ServerWindow {
    let (a, b) = (&from.sample, &to.sample);
    let user = b.cpu_user_ns.saturating_sub(a.cpu_user_ns) as f64 / 1e9;
    let sys = b.cpu_sys_ns.saturating_sub(a.cpu_sys_ns) as f64 / 1e9;
    let mut rss: Vec<u64> = series.iter().map(|p| p.rss_bytes).collect();
    rss.extend([a.rss_bytes, b.rss_bytes]);
    let mut pss: Vec<u64> = series.iter().map(|p| p.pss_bytes).collect();
    pss.extend([a.pss_bytes, b.pss_bytes]);
    let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len().max(1) as u64;
    let peak = |of: fn(&ProbePoint) -> u64, edges: [u32; 2]| {
        series
            .iter()
            .map(of)
            .chain(edges.map(u64::from))
            .max()
            .unwrap_or(0)
    };
    let (t0, t1) = (&from.threads, &to.threads);
    ServerWindow {
        cpu_user_s: user,
        cpu_sys_s: sys,
        cpu_percent: 100.0 * (user + sys) / elapsed_s / server_cpus.max(1) as f64,
        busiest_thread_percent: 100.0 * t1.busiest_since(t0) as f64 / 1e9 / elapsed_s,
        cpu_us_per_request: (completed > 0).then(|| (user + sys) * 1e6 / completed as f64),
        rss_peak_bytes: rss.iter().copied().max().unwrap_or(0),
        rss_mean_bytes: mean(&rss),
        pss_peak_bytes: pss.iter().copied().max().unwrap_or(0),
        pss_mean_bytes: mean(&pss),
        threads_peak: peak(|p| p.threads, [a.threads, b.threads]),
        processes_peak: peak(|p| p.processes, [a.processes, b.processes]),
        fds_peak: peak(|p| p.fds, [a.fds, b.fds]),
        voluntary_ctxt_per_s: t1.voluntary_ctxt.saturating_sub(t0.voluntary_ctxt) as f64
            / elapsed_s,
        involuntary_ctxt_per_s: t1.involuntary_ctxt.saturating_sub(t0.involuntary_ctxt) as f64
            / elapsed_s,
        processes: processes(&from.by_name, &to.by_name, completed),
    }
}

/// One CPU's shares as recorded.
pub fn cpu_use(c: &probe::CpuShare) -> CpuUse {
    CpuUse {
        cpu: c.cpu as u64,
        user: c.user,
        nice: c.nice,
        system: c.system,
        irq: c.irq,
        softirq: c.softirq,
        steal: c.steal,
        idle: c.idle,
        iowait: c.iowait,
        busy: c.busy(),
    }
}

/// The client's and the server's CPUs between two readings of `/proc/stat`.
pub fn system_window(
    from: &probe::SystemStat,
    to: &probe::SystemStat,
    (client, server): (&[usize], &[usize]),
    elapsed_s: f64,
) -> SystemWindow {
    let side = |cpus: &[usize]| to.shares_since(from, cpus).iter().map(cpu_use).collect();
    SystemWindow {
        client: side(client),
        server: side(server),
        ctxt_per_s: to.ctxt_per_s_since(from, elapsed_s),
    }
}

/// A window's thread samples as recorded: each class's count and the eight kernel
/// functions sleeping threads were seen in most.
pub fn thread_waits(h: &probe::WaitHistogram) -> ThreadWaits {
    let n = |w: probe::Wait| h.counts.get(&w).copied().unwrap_or(0);
    let mut wchans: Vec<WchanCount> = h
        .wchans
        .iter()
        .map(|(wchan, &count)| WchanCount {
            wchan: wchan.clone(),
            count,
        })
        .collect();
    wchans.sort_by(|a, b| b.count.cmp(&a.count).then(a.wchan.cmp(&b.wchan)));
    wchans.truncate(8);
    ThreadWaits {
        samples: h.samples,
        threads_peak: h.threads_peak,
        running: n(probe::Wait::Running),
        futex: n(probe::Wait::Futex),
        socket: n(probe::Wait::Socket),
        epoll: n(probe::Wait::Epoll),
        disk: n(probe::Wait::Disk),
        sleep: n(probe::Wait::Sleep),
        wchans,
        futex_idle: 0,
    }
}

/// One repeat's record: the load's result with the two windows and the probe series.
pub fn repeat(
    res: &RunResult,
    tls: bool,
    capped: bool,
    server: ServerWindow,
    client: report::Client,
    series: Vec<ProbePoint>,
    intervals: Vec<report::IntervalRow>,
) -> Repeat {
    let c = &res.counts;
    let elapsed = res.elapsed.as_secs_f64().max(1e-9);
    Repeat {
        started_unix_ns: None,
        elapsed_s: res.elapsed.as_secs_f64(),
        capped,
        requests: c.into(),
        errors: c.into(),
        errors_by_reason: report::errors_by_reason::rows(&c.reasons),
        status: res
            .status
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
        connections: c.into(),
        rps: c.completed() as f64 / elapsed,
        latency: res.latency.summary(),
        hdr_base64: res.latency.to_base64(),
        server,
        client,
        series,
        handshakes: handshakes(res, tls),
        intervals,
        system: None,
        waits: None,
        services: Vec::new(),
        service_connections: Vec::new(),
        tcp: None,
        tcp_links: Vec::new(),
        connect_hdr_base64: (!res.connect.is_empty()).then(|| res.connect.to_base64()),
        service_hdr_base64: (!res.service.is_empty()).then(|| res.service.to_base64()),
        http2: None,
    }
}

#[cfg(test)]
mod tests;
