//! A load run's result in the report's terms: wiring only.

use std::time::Duration;

use load::{Arrival, Plan, RunResult, Selection, Stop, Verify};
use report::LoadReport;

/// The kernel's TCP counters between `before` and `after` and the rules' warnings on them
/// (the same rules as the shootout's diagnosis). The client's kernel delays the ACKs, so
/// the Nagle rule holds for a remote server too; its somaxconn is only known on loopback.
/// In the open model (`--rate`, `--find-max`'s windows) the rules read the service time.
pub(crate) fn tcp_report(
    plan: &Plan,
    result: &RunResult,
    report: &LoadReport,
    before: &probe::TcpCounters,
    after: &probe::TcpCounters,
    links: &[report::tcp::TcpLink],
) -> report::tcp::TcpReport {
    let deltas = report::tcp::TcpCounts::from_named(after.since(before).named());
    let loopback = plan.target.addr.ip().is_loopback();
    report::tcp::report(&report::tcp::Evidence {
        deltas: &deltas,
        completed: result.counts.completed(),
        // The open model's latency adds each request's wait for a free connection to the
        // stall; the service time (from the write) is where a Nagle stall sits alone.
        latency: if result.service.is_empty() {
            &result.latency
        } else {
            &result.service
        },
        connect: (!result.connect.is_empty()).then_some(&result.connect),
        cpu_saturated: report.client.saturated,
        somaxconn: loopback
            .then(|| load::os_limits::Machine::read().somaxconn)
            .flatten(),
        loopback,
        runtime: report::tcp::Runtime::Other,
        links,
    })
}

/// A thread that reads foxbench's own sockets to the target (their `tcp_info`, through
/// the probe) every 250 ms while a load runs: the delayed-ACK timeout and round trip the
/// Nagle rule times its band by, and the link's retransmits.
pub(crate) struct SocketWatch {
    handle: Option<std::thread::JoinHandle<(probe::LinkSeries, probe::OwnUsage)>>,
}

impl SocketWatch {
    const EVERY: Duration = Duration::from_millis(250);

    /// Starts reading the sockets connected to `addr` until `control` stops.
    pub(crate) fn start(
        addr: std::net::SocketAddr,
        control: std::sync::Arc<load::Control>,
    ) -> SocketWatch {
        let handle = std::thread::Builder::new()
            .name("foxbench-sockets".into())
            .spawn(move || {
                let mut link = probe::LinkSeries::to(addr);
                let mut next = std::time::Instant::now() + Self::EVERY;
                while !control.stopped() {
                    std::thread::sleep(Duration::from_millis(25));
                    if std::time::Instant::now() < next {
                        continue;
                    }
                    next += Self::EVERY;
                    if let Ok(sockets) = probe::tcp_sockets() {
                        link.push(&sockets);
                    }
                }
                (link, probe::thread_usage())
            })
            .ok();
        SocketWatch { handle }
    }

    /// The link it saw (none when no reading found a socket), and the CPU its thread used,
    /// which is not the load generator's.
    pub(crate) fn finish(self) -> (Vec<report::tcp::TcpLink>, probe::OwnUsage) {
        let Some((link, usage)) = self.handle.and_then(|h| h.join().ok()) else {
            return (Vec::new(), probe::OwnUsage::default());
        };
        (shootout::tcp_link(None, &link).into_iter().collect(), usage)
    }
}

/// The plan in the report's terms, and the report: wiring only.
pub(crate) fn build_report(
    plan: &Plan,
    threads: usize,
    r: &RunResult,
    intervals: Vec<report::IntervalRow>,
    spent: &crate::live::Spent,
    wall: Duration,
) -> LoadReport {
    let target = report::TargetInfo {
        url: plan.target.url.clone(),
        address: plan.target.addr.to_string(),
        method: plan.requests[0].method.clone(),
    };
    let config = report::LoadConfig {
        model: match plan.arrival {
            Arrival::Closed => report::Model::Closed,
            Arrival::Open { .. } => report::Model::Open,
        },
        rate_per_sec: match &plan.arrival {
            Arrival::Closed => None,
            Arrival::Open { rate } => rate.constant_per_sec(),
        },
        rate_schedule: match &plan.arrival {
            Arrival::Open { rate } if !rate.is_constant() => Some(rate.to_string()),
            _ => None,
        },
        connections: plan.connections as u64,
        threads: threads as u64,
        pipeline: plan.pipeline as u64,
        keepalive: plan.keepalive,
        requests: match plan.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        },
        duration_s: match plan.stop {
            Stop::Requests(_) => None,
            Stop::Duration(d) => Some(d.as_secs_f64()),
        },
        timeout_s: plan.timeout.as_secs_f64(),
        connect_timeout_s: plan.connect_timeout.as_secs_f64(),
        selection: match plan.selection {
            Selection::RoundRobin => report::Selection::RoundRobin,
            Selection::Random => report::Selection::Random,
        },
        seed: plan.seed,
        interval_s: plan.interval.as_secs_f64(),
        coalesce: plan.coalesce_in_effect().to_string(),
    };
    let table = plan
        .requests
        .iter()
        .zip(&r.shapes)
        .map(|(spec, n)| report::RequestShape {
            method: spec.method.clone(),
            path: spec.path.clone(),
            sent: n.sent,
            completed: n.completed,
        })
        .collect();
    let verify = plan.tls.verify.text().worded(&crate::cli::Flags);
    let tls = (plan.target.scheme == load::Scheme::Https).then(|| report::TlsMeasured {
        version: r.tls.as_ref().map_or("", |t| t.version.as_str()),
        cipher: r.tls.as_ref().map_or("", |t| t.cipher.as_str()),
        group: r.tls.as_ref().and_then(|t| t.group.as_deref()),
        alpn: r.tls.as_ref().and_then(|t| t.alpn.as_deref()),
        verify: &verify,
        insecure: plan.tls.verify == Verify::Insecure,
        resumption: plan.tls.resume,
        full: &r.handshake_full,
        resumed: &r.handshake_resumed,
        client_certificate: match (r.client_cert_asked, plan.tls.client.is_some()) {
            (false, _) => report::ClientCertificate::NotAsked,
            (true, false) => report::ClientCertificate::AskedNoneGiven,
            (true, true) => report::ClientCertificate::Presented,
        },
    });
    let open = match &plan.arrival {
        Arrival::Closed => None,
        Arrival::Open { rate } => Some(report::OpenMeasured {
            peak_per_sec: rate.peak_per_sec() / plan.shard.count as f64,
            scheduled: scheduled(rate, plan.stop, plan.shard, r.elapsed),
            connections: plan.connections as u64,
            latency: &r.latency,
            service: &r.service,
            lateness: &r.lateness,
            late: &r.late,
        }),
    };
    let measured = report::Measured {
        counts: &r.counts,
        latency: &r.latency,
        connect: &r.connect,
        tls,
        open,
        status: &r.status,
        elapsed: r.elapsed,
        interrupted: r.interrupted,
    };
    let used = &spent.client;
    let client = report::Client::measure(
        threads as u64,
        used.user.as_secs_f64(),
        used.sys.as_secs_f64(),
        wall.as_secs_f64(),
        r.counts.completed(),
        used.max_rss_bytes,
    )
    .with_spin(r.spin.as_secs_f64());
    let client = report::Client {
        coalesced_waits: r.coalesced.waits,
        coalesced_s: r.coalesced.waited.as_secs_f64(),
        dashboard_cpu_s: spent.dashboard.map(|d| d.cpu().as_secs_f64()),
        ..client
    };
    let mut report = LoadReport::new(target, config, measured, table, intervals, client);
    if matches!(plan.protocol, load::Protocol::Http2(_)) {
        let over_tls = plan.target.scheme == load::Scheme::Https;
        report.protocol = Some(if over_tls { "h2" } else { "h2c" }.into());
        report.http2 = shootout::http2_report(r, plan.protocol);
    }
    report
}

/// Requests the schedule made due for this shard over a run that lasted `elapsed` (at
/// most `-n`, which is already the shard's).
fn scheduled(rate: &load::Rate, stop: Stop, shard: load::Shard, elapsed: Duration) -> u64 {
    let due = rate.due_by(elapsed.as_nanos() as f64).ceil().max(0.0) as u64;
    match stop {
        Stop::Requests(n) => shard.share(due).min(n),
        Stop::Duration(d) => shard.share(due.min(rate.due_by(d.as_nanos() as f64).ceil() as u64)),
    }
}
