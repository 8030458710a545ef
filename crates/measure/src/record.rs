//! A measured window's result as the one record: the client's cost ([`client`], the same
//! [`report::Client`] in a load result and a shootout repeat), a `foxbench load` result
//! ([`load_report`]), the HTTP/2 section, the TCP links and the TCP counters' report; no I/O
//! but the loopback's `somaxconn`.

use std::time::Duration;

use load::{Arrival, Plan, RunResult, Selection, Stop, Verify, Wording};
use report::tcp::{Evidence, TcpCounts, TcpLink};
use report::LoadReport;

use crate::rules;
use crate::window::{Spent, Window};

/// The client's cost over one window: what it `spent`, on `cpus` CPUs over the window's
/// one time base ([`Spent::wall`]), for the result `r`'s responses. The one translator of
/// the client's figures, for a load result and a shootout repeat alike. A new figure is a
/// field of [`report::Client`] and a line here; the compiler then asks for it where a
/// `Client` is built field by field (`Client::measure` and report's merge of agents,
/// `merge/mod.rs`, which must also say how agents' values combine, and report's test
/// sample, `report/src/tests.rs`); `schemas/load.schema.json` is written by hand and needs
/// it too, while `shootout.schema.json` is generated from the struct.
pub fn client(r: &RunResult, spent: &Spent, cpus: usize) -> report::Client {
    report::Client {
        client_delay: Some(client_delay(r)),
        ..client_of((r.counts.completed(), r.spin, r.coalesced), spent, cpus)
    }
}

/// What the client added to the run's latencies, and which clock they are on.
pub fn client_delay(r: &RunResult) -> report::ClientDelay {
    let us = |ns: u64| ns as f64 / 1_000.0;
    let d = &r.client_delay;
    report::ClientDelay {
        latency_clock: match r.latency_clock {
            load::ClockInUse::Kernel => report::LatencyClock::Kernel,
            load::ClockInUse::ReadAsked => report::LatencyClock::ReadAsked,
            load::ClockInUse::ReadNoStamps => report::LatencyClock::ReadNoStamps,
        },
        p50_us: us(d.percentile_ns(50.0)),
        p99_us: us(d.percentile_ns(99.0)),
        max_us: us(d.percentile_ns(100.0)),
        latency_p50_us: us(r.latency.percentile_ns(50.0)),
        stamped_reads: r.stamps.stamped,
        unstamped_reads: r.stamps.unstamped,
        send_stamps: Some(send_stamps(r)),
    }
}

/// The run's sampled send stamps, in brief.
fn send_stamps(r: &RunResult) -> report::SendStamps {
    let brief = |h: &load::Latency| {
        (!h.is_empty()).then(|| report::Brief {
            count: h.len(),
            p50_us: h.percentile_ns(50.0) as f64 / 1_000.0,
            p99_us: h.percentile_ns(99.0) as f64 / 1_000.0,
            max_us: h.percentile_ns(100.0) as f64 / 1_000.0,
        })
    };
    let s = r.send_stamps;
    report::SendStamps {
        every: s.every,
        sampled: s.sampled,
        returned: s.returned,
        matched: s.matched,
        lateness: brief(&r.send_lateness_kernel),
        delay: brief(&r.send_delay_kernel),
    }
}

/// [`client`] from the result's completed responses, spin and coalescing waits.
fn client_of(
    (completed, spin, coalesced): (u64, Duration, load::Coalesced),
    spent: &Spent,
    cpus: usize,
) -> report::Client {
    let used = &spent.client;
    let measured = report::Client::measure(
        cpus as u64,
        used.user.as_secs_f64(),
        used.sys.as_secs_f64(),
        spent.wall.as_secs_f64(),
        completed,
        used.max_rss_bytes,
    )
    .with_spin(spin.as_secs_f64());
    let per_request = |n: u64| (completed > 0).then(|| n as f64 / completed as f64);
    report::Client {
        voluntary_ctxt_per_request: per_request(used.voluntary_ctxt),
        involuntary_ctxt_per_request: per_request(used.involuntary_ctxt),
        coalesced_waits: coalesced.waits,
        coalesced_s: coalesced.waited.as_secs_f64(),
        probe_cpu_s: Some(spent.helpers.cpu().as_secs_f64()),
        dashboard_cpu_s: spent.beside.map(|d| d.cpu().as_secs_f64()),
        ..measured
    }
}

/// A `foxbench load` run's result: the plan in the report's terms, the engine's result
/// `r` of `threads` workers (the `window`'s, [`crate::window::run`]), its interval rows,
/// the client's cost and the TCP counters' report over the window; `wording` words the
/// certificate check's settings (the CLI's flags).
pub fn load_report(
    plan: &Plan,
    threads: usize,
    r: &RunResult,
    intervals: Vec<report::IntervalRow>,
    window: &Window,
    wording: &dyn Wording,
) -> LoadReport {
    let spent = &window.spent;
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
        streams: match plan.protocol {
            load::Protocol::Http3(h3) => Some(u64::from(h3.streams)),
            _ => None,
        },
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
        idle: plan.idle_in_effect().mode().to_string(),
        idle_reason: plan.idle_in_effect().why.to_string(),
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
    let verify = plan.tls.verify.text().worded(wording);
    let tls = (plan.target.scheme == load::Scheme::Https).then(|| report::TlsMeasured {
        version: r.tls.as_ref().map_or("", |t| t.version.as_str()),
        cipher: r.tls.as_ref().map_or("", |t| t.cipher.as_str()),
        group: r.tls.as_ref().and_then(|t| t.group.as_deref()),
        alpn: r.tls.as_ref().and_then(|t| t.alpn.as_deref()),
        verify: &verify,
        insecure: plan.tls.verify == Verify::Insecure,
        resumption: plan.tls_resumption(),
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
    let client = client(r, spent, threads);
    let mut report = LoadReport::new(target, config, measured, table, intervals, client);
    report.read_latency = Some(report::Distribution::of(&r.read_latency));
    report.kernel_latency = r.kernel_latency.as_ref().map(report::Distribution::of);
    let tls = plan.target.scheme == load::Scheme::Https;
    report.protocol = Some(rules::protocol_name(&plan.protocol, tls).into());
    report.http2 = http2_report(r, plan.protocol);
    report.http3 = r.h3.as_ref().map(|h| http3_report(h, r.counts.completed()));
    let links: Vec<TcpLink> = (window.link.as_ref())
        .and_then(|l| tcp_link(None, l))
        .into_iter()
        .collect();
    report.tcp = spent
        .tcp
        .as_ref()
        .map(|d| tcp_report(plan, r, &report, d, &links));
    report.udp = spent.udp.map(|d| udp_report(plan, d));
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

/// The HTTP/3 section of a load result from the engine's counts: its retries, and QUIC's
/// figures, those per request divided by the `completed` requests.
fn http3_report(h: &load::H3Counts, completed: u64) -> report::Http3Report {
    let q = &h.quic;
    let frames = |f: &load::QuicFrames| report::quic::QuicFrames {
        acks: f.acks,
        crypto: f.crypto,
        stream: f.stream,
        ping: f.ping,
        max_data: f.max_data,
        max_stream_data: f.max_stream_data,
        max_streams_bidi: f.max_streams_bidi,
        streams_blocked_bidi: f.streams_blocked_bidi,
        reset_stream: f.reset_stream,
        stop_sending: f.stop_sending,
        connection_close: f.connection_close,
    };
    let mut quic = report::QuicReport {
        datagrams_sent: q.datagrams_sent,
        datagrams_received: q.datagrams_received,
        send_calls: q.send_calls,
        receive_calls: q.receive_calls,
        bytes_sent: q.bytes_sent,
        bytes_received: q.bytes_received,
        per_request: None,
        datagrams_per_send_call: None,
        datagrams_per_receive_call: None,
        connections: q.connections,
        handshakes_failed: q.handshakes_failed,
        packets_sent: q.packets_sent,
        packets_lost: q.packets_lost,
        bytes_lost: q.bytes_lost,
        loss_percent: None,
        congestion_events: q.congestion_events,
        frames_sent: frames(&q.frames_sent),
        frames_received: frames(&q.frames_received),
        at_end: report::quic::PathsAtEnd::of(q.at_end.iter().map(|p| (p.rtt_ns, p.cwnd_bytes))),
    };
    quic.derive(completed);
    report::Http3Report {
        retries: h.retries,
        quic: Some(quic),
    }
}

/// The HTTP/2 section of a load result or a shootout repeat, from the engine's counts and the options it ran with;
/// `None` for an HTTP/1.1 run.
pub fn http2_report(res: &RunResult, protocol: load::Protocol) -> Option<report::Http2Report> {
    let (load::Protocol::Http2(opts), Some(h)) = (protocol, res.h2.as_ref()) else {
        return None;
    };
    let by_code = |counts: &[u64; 15]| {
        counts
            .iter()
            .zip(load::h2::CODE_NAMES)
            .filter(|(n, _)| **n > 0)
            .map(|(n, name)| (name.to_string(), *n))
            .collect()
    };
    Some(report::Http2Report {
        alpn: res.tls.as_ref().and_then(|t| t.alpn.clone()),
        streams: u64::from(opts.streams),
        server_max_streams: h.server_max_streams.map(u64::from),
        server_max_streams_highest: h.server_max_streams_highest.map(u64::from),
        streams_used_max: h.streams_used_max,
        connections: h.connections,
        retries: h.retries,
        id_rollovers: h.id_rollovers,
        pings_answered: h.pings_answered,
        header_bytes_sent: h.header_bytes_sent,
        header_bytes_sent_decoded: h.header_bytes_sent_raw,
        header_bytes_received: h.header_bytes_received,
        header_bytes_received_decoded: h.header_bytes_received_raw,
        hpack_saving_sent_percent: h.hpack_saving_sent().map(|s| s * 100.0),
        hpack_saving_received_percent: h.hpack_saving_received().map(|s| s * 100.0),
        rst_stream: by_code(&h.rst_received),
        goaway: by_code(&h.goaway_received),
        stream_window: u64::from(opts.window),
        connection_window: u64::from(opts.connection_window),
    })
}

/// One link's sockets over a window ([`probe::LinkSeries`]) as the report holds them: the
/// target's connections to `service`, or foxbench's own (`None`); `None` when no reading
/// saw any of its sockets.
pub fn tcp_link(service: Option<&str>, link: &probe::LinkSeries) -> Option<TcpLink> {
    let w = link.window();
    if w.sockets_max == 0 {
        return None;
    }
    let ms = |us: Option<u32>| us.map(|v| f64::from(v) / 1e3);
    Some(TcpLink {
        service: service.map(str::to_string),
        port: link.port(),
        readings: u64::from(w.readings),
        sockets_max: u64::from(w.sockets_max),
        retransmits: w.retransmits,
        data_segments: w.data_segments,
        delayed_ack_ms: ms(w.delayed_ack_us),
        ato_ms: ms(w.ato_us),
        min_rtt_ms: ms(w.min_rtt_us),
        held_ack_ms: ms(w.held_ack_us),
    })
}

/// The kernel's TCP counters' growth over a `foxbench load` window and the rules' warnings on them
/// (the same rules as the shootout's diagnosis). The client's kernel delays the ACKs, so
/// the Nagle rule holds for a remote server too; its somaxconn is only known on loopback.
/// In the open model (`--rate`, `--find-max`'s windows) the rules read the service time.
fn tcp_report(
    plan: &Plan,
    result: &RunResult,
    report: &LoadReport,
    deltas: &TcpCounts<u64>,
    links: &[TcpLink],
) -> report::tcp::TcpReport {
    let loopback = plan.target.addr.ip().is_loopback();
    report::tcp::report(&Evidence {
        deltas,
        completed: result.counts.completed(),
        latency: rules::rules_latency(&result.latency, &result.service),
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

/// The kernel's UDP counters' growth over a window, warned of when the run spoke UDP and
/// datagrams were dropped, with the machine's socket buffer caps.
fn udp_report(plan: &Plan, deltas: report::udp::UdpCounts) -> report::udp::UdpReport {
    let sysctl = |name: &str| {
        probe::machine::sysctl(name)
            .and_then(|t| probe::machine::numbers::<1>(&t))
            .map(|[v]| v)
    };
    let buffers = report::udp::Buffers {
        rmem_max: sysctl("net.core.rmem_max"),
        wmem_max: sysctl("net.core.wmem_max"),
        asked: rules::over_udp(&plan.protocol).then_some(load::UDP_BUFFER_BYTES as u64),
    };
    report::udp::report(deltas, rules::over_udp(&plan.protocol), &buffers)
}

#[cfg(test)]
mod tests;
