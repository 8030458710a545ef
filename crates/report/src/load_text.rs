//! A load result as text: what `foxbench load` prints.

use std::fmt::Write as _;

use crate::units::{bytes_one_decimal, human_us, ms_from_us, trim_pct};
use crate::{errors_by_reason, ClientCertificate, IntervalRow, LoadReport, Selection};

impl LoadReport {
    /// The one-line warning printed when the client was saturated.
    pub fn saturation_warning(&self) -> Option<String> {
        self.client.saturated.then(|| {
            format!(
                "foxbench used {:.0}% of its CPUs: the result may be limited by the load generator, not the server",
                self.client.cpu_percent
            )
        })
    }

    /// The warnings of the kernel's TCP counters ([`tcp::findings`]), one line each.
    pub fn tcp_warnings(&self) -> impl Iterator<Item = &str> {
        self.tcp
            .iter()
            .flat_map(|t| &t.warnings)
            .map(|w| w.detail.as_str())
    }

    /// When requests were sent and none succeeded, one line that says so with the top
    /// reason (its hint worded by `wording`): the run completed and measured nothing (exit
    /// status 1).
    pub fn no_success(&self, wording: &dyn stats::setting::Wording) -> Option<String> {
        let r = &self.requests;
        if r.sent == 0 || r.ok > 0 {
            return None;
        }
        let top_error = self.errors_by_reason.first();
        let top_status = self
            .status
            .iter()
            .max_by_key(|(_, n)| **n)
            .filter(|_| r.failed_status > 0);
        let top = match (top_error, top_status) {
            (Some(e), Some((code, n))) if *n > e.count => {
                format!("status {code} {n} of {}", r.sent)
            }
            (Some(e), _) => e.line(r.sent, wording),
            (None, Some((code, n))) => format!("status {code} {n} of {}", r.sent),
            (None, None) if r.in_flight == r.sent => {
                format!("all {} requests were still unanswered at the stop", r.sent)
            }
            (None, None) => format!("{} errors", r.errors),
        };
        let asked = self
            .tls
            .as_ref()
            .is_some_and(|t| t.client_certificate == ClientCertificate::AskedNoneGiven);
        Some(match asked {
            true => format!(
                "No request succeeded: {top}; {}",
                ClientCertificate::none_given().worded(wording)
            ),
            false => format!("No request succeeded: {top}"),
        })
    }

    /// What each connection carries at once: `pipeline N` over HTTP/1.1, `streams N` (as
    /// asked for) over HTTP/2 and HTTP/3, where pipelining has no meaning.
    pub fn depth(&self) -> String {
        match (&self.http2, self.protocol.as_deref()) {
            (Some(h), _) => format!("streams {}", h.streams),
            (None, Some("h3")) => format!(
                "streams {}",
                self.config.streams.unwrap_or(self.config.pipeline)
            ),
            (None, _) => format!("pipeline {}", self.config.pipeline),
        }
    }

    /// The human report, with the figures ab and wrk users look for; the hints of its
    /// errors name settings as `wording` does (the CLI passes its flags).
    pub fn to_text(&self, wording: &dyn stats::setting::Wording) -> String {
        let mut o = String::new();
        let c = &self.config;
        let r = &self.requests;
        if let Some(line) = self.no_success(wording) {
            let _ = writeln!(o, "{line}");
        }
        let _ = writeln!(
            o,
            "foxbench load {} {}",
            self.target.method, self.target.url
        );
        let stop = match (c.requests, c.duration_s) {
            (Some(n), _) => format!("{n} requests"),
            (None, Some(d)) => format!("{d}s"),
            _ => String::new(),
        };
        let model = match (c.rate_per_sec, &c.rate_schedule) {
            (Some(rate), _) => format!("open model at {rate} req/s"),
            (None, Some(schedule)) => format!("open model at {schedule}"),
            (None, None) => "closed model".into(),
        };
        let _ = writeln!(
            o,
            "  {model}, {}, {} connection{}, {} thread{}, {}, {stop}{}",
            if c.keepalive {
                "keep-alive"
            } else {
                "new connection per request"
            },
            c.connections,
            if c.connections == 1 { "" } else { "s" },
            c.threads,
            if c.threads == 1 { "" } else { "s" },
            self.depth(),
            if self.interrupted {
                " (interrupted)"
            } else {
                ""
            }
        );
        let _ = writeln!(o);
        let _ = writeln!(o, "Server address:         {}", self.target.address);
        if self.protocol.as_deref() == Some("h3") {
            let _ = writeln!(o, "Protocol:               HTTP/3 (h3 over QUIC)");
        }
        if let Some(shard) = &self.shard {
            shard.write_text(&mut o);
        }
        if let Some(start) = &self.start {
            start.write_text(&mut o);
        }
        if let Some(agents) = &self.agents {
            agents.write_text(&mut o);
        }
        let _ = writeln!(o, "Time taken for tests:   {:.3} seconds", self.elapsed_s);
        let _ = writeln!(o, "Complete requests:      {}", r.completed);
        let _ = writeln!(o, "Failed requests:        {}", r.failed_status + r.errors);
        if r.failed_status > 0 {
            let _ = writeln!(o, "Non-2xx/3xx responses:  {}", r.failed_status);
        }
        let _ = writeln!(
            o,
            "Requests:               {} sent = {} ok + {} failed status + {} errors + {} in flight",
            r.sent, r.ok, r.failed_status, r.errors, r.in_flight
        );
        if r.unsent > 0 {
            let _ = writeln!(
                o,
                "Unsent:                 {} requests fell due but found every connection busy",
                r.unsent
            );
        }
        let t = &self.throughput;
        let _ = writeln!(
            o,
            "Requests per second:    {:.2} [#/sec] (mean)",
            t.requests_per_sec
        );
        let l = &self.latency.summary;
        if l.count > 0 {
            let _ = writeln!(
                o,
                "Time per request:       {} [ms] (mean)",
                ms_from_us(l.mean_us)
            );
            if t.requests_per_sec > 0.0 {
                let _ = writeln!(
                    o,
                    "Time per request:       {:.3} [ms] (mean, across all concurrent requests)",
                    1000.0 / t.requests_per_sec
                );
            }
        }
        let _ = writeln!(
            o,
            "Transfer rate:          {:.2} [Kbytes/sec] received ({} read, {} written)",
            t.read_bytes_per_sec / 1024.0,
            bytes_one_decimal(t.bytes_read as f64),
            bytes_one_decimal(t.bytes_written as f64)
        );
        let _ = writeln!(o);
        if l.count > 0 {
            let _ = writeln!(
                o,
                "Latency   {:>10} {:>10} {:>10} {:>10}",
                "mean", "stdev", "min", "max"
            );
            let _ = writeln!(
                o,
                "          {:>10} {:>10} {:>10} {:>10}",
                human_us(l.mean_us),
                human_us(l.stdev_us),
                human_us(l.min_us),
                human_us(l.max_us)
            );
            let _ = writeln!(o);
            let _ = writeln!(
                o,
                "Percentage of the requests served within a certain time (ms)"
            );
            for p in &l.percentiles {
                let _ = writeln!(
                    o,
                    "  {:>6}%  {:>10}",
                    trim_pct(p.percentile),
                    ms_from_us(p.value_us)
                );
            }
            let _ = writeln!(
                o,
                "    100%  {:>10} (longest request)",
                ms_from_us(l.max_us)
            );
            let _ = writeln!(o);
            let total: u64 = self.latency.buckets.iter().map(|b| b.1).sum();
            if total > 0 {
                let _ = writeln!(o, "Latency histogram");
                let peak = self
                    .latency
                    .buckets
                    .iter()
                    .map(|b| b.1)
                    .max()
                    .unwrap_or(1)
                    .max(1);
                for (upper, n) in &self.latency.buckets {
                    let bar = "■".repeat(((*n as f64 / peak as f64) * 40.0).round() as usize);
                    let _ = writeln!(o, "  ≤{:>10} {:>10} |{bar}", human_us(*upper), n);
                }
                let _ = writeln!(o);
            }
        }
        if let Some(cd) = &self.connect {
            if cd.summary.count > 0 && (!c.keepalive || self.connections.reconnects > 0) {
                let s = &cd.summary;
                let _ = writeln!(
                    o,
                    "Connect time: {} connections, mean {}, p50 {}, p99 {}, max {}",
                    s.count,
                    human_us(s.mean_us),
                    human_us(s.at(50.0).unwrap_or(0.0)),
                    human_us(s.at(99.0).unwrap_or(0.0)),
                    human_us(s.max_us)
                );
            }
        }
        let table = &self.request_table;
        if table.len() > 1 || table.iter().any(|r| r.path.contains('{')) {
            let _ = writeln!(
                o,
                "Request table: {} shape{}, {} selection, seed {}",
                table.len(),
                if table.len() == 1 { "" } else { "s" },
                match c.selection {
                    Selection::RoundRobin => "round-robin",
                    Selection::Random => "random",
                },
                c.seed
            );
            for r in table {
                let _ = writeln!(
                    o,
                    "  {:>10} sent {:>10} completed  {} {}",
                    r.sent, r.completed, r.method, r.path
                );
            }
        }
        if let Some(line) = self.interval_line() {
            let _ = writeln!(o, "{line}");
        }
        let codes: Vec<String> = self
            .status
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let _ = writeln!(
            o,
            "Status codes:  {}",
            if codes.is_empty() {
                "none".into()
            } else {
                codes.join(", ")
            }
        );
        let e = &self.errors;
        let _ = writeln!(
            o,
            "Errors:        connect {} (refused {}, ports exhausted {}, timeout {}), write {}, read {}, parse {}, timeout {}{}",
            e.connect, e.connect_refused, e.connect_ports_exhausted, e.connect_timeout, e.write, e.read, e.parse, e.timeout,
            if self.tls.is_some() || e.tls > 0 { format!(", tls {}", e.tls) } else { String::new() }
        );
        if self.http2.is_some() || e.reset + e.protocol > 0 {
            let _ = writeln!(
                o,
                "               reset {}, protocol {}",
                e.reset, e.protocol
            );
        }
        if e.connect_ports_exhausted > 0 {
            let _ = writeln!(
                o,
                "               EADDRNOTAVAIL: the client ran out of ephemeral ports (see net.ipv4.ip_local_port_range); not a server failure"
            );
        }
        errors_by_reason::write_text(&mut o, &self.errors_by_reason, r.sent, wording);
        let cn = &self.connections;
        let _ = writeln!(
            o,
            "Connections:   {} opened, {} reconnects, {} closed idle by the server",
            cn.opened, cn.reconnects, cn.closed_by_server
        );
        if let Some(tls) = &self.tls {
            tls.write_text(&mut o, c.keepalive, wording);
        }
        if let Some(h2) = &self.http2 {
            h2.write_text(&mut o, self.protocol.as_deref().unwrap_or("h2"));
        }
        if let Some(h3) = &self.http3 {
            h3.write_text(&mut o, self.tls.as_ref());
        }
        if let Some(open) = &self.open {
            open.write_text(&mut o);
        }
        let cl = &self.client;
        let _ = writeln!(
            o,
            "foxbench CPU:  {:.2}s user, {:.2}s sys, {:.0}% of {} CPU{}{}{}{}{}, max RSS {}",
            cl.cpu_user_s,
            cl.cpu_sys_s,
            cl.cpu_percent,
            cl.cpus,
            if cl.cpus == 1 { "" } else { "s" },
            cl.spin_note(),
            cl.dashboard_note(),
            cl.cpu_us_per_request
                .map(|v| format!(", {v:.2}µs per request"))
                .unwrap_or_default(),
            cl.work_note(),
            bytes_one_decimal(cl.max_rss_bytes as f64)
        );
        let _ = writeln!(o, "Idle:          {}", c.idle_text());
        if let Some(note) = cl.coalesced_note(self.requests.completed) {
            let _ = writeln!(o, "Coalescing:    {} ({note})", c.coalesce);
        }
        if let Some(d) = &cl.client_delay {
            let _ = writeln!(o, "Latency clock: {}", d.latency_clock.words());
            if let Some(line) = self.kernel_latency_line() {
                let _ = writeln!(o, "Kernel clock:  {line}");
            }
            let _ = writeln!(o, "Client delay:  {}", d.line());
            for line in d.send_stamps.iter().flat_map(crate::SendStamps::lines) {
                let _ = writeln!(o, "{line}");
            }
        }
        if let Some(w) = self.saturation_warning() {
            let _ = writeln!(o, "warning: {w}");
        }
        if let Some(w) = cl
            .client_delay
            .as_ref()
            .and_then(crate::ClientDelay::warning)
        {
            let _ = writeln!(o, "warning: {w}");
        }
        for w in self.tcp_warnings() {
            let _ = writeln!(o, "warning: {w}");
        }
        if let Some(w) = self.udp.as_ref().and_then(|u| u.warning.as_deref()) {
            let _ = writeln!(o, "warning: {w}");
        }
        if let Some(slo) = &self.slo {
            slo.write_text(&mut o);
        }
        if let Some(c) = &self.capacity {
            o.push('\n');
            o.push_str(&c.to_text());
        }
        o
    }
}

impl LoadReport {
    /// One line on the interval series: the spread of per-interval p99 and the worst
    /// interval, which is where a stall shows. None for runs of fewer than two intervals.
    pub fn interval_line(&self) -> Option<String> {
        let live: Vec<&IntervalRow> = self.intervals.iter().filter(|i| i.requests > 0).collect();
        if self.intervals.len() < 2 || live.is_empty() {
            return None;
        }
        let mut p99: Vec<f64> = live.iter().map(|i| i.p99_us).collect();
        p99.sort_by(f64::total_cmp);
        let worst = live
            .iter()
            .max_by(|a, b| a.p99_us.total_cmp(&b.p99_us))
            .expect("not empty");
        let idle = self.intervals.len() - live.len();
        Some(format!(
            "Intervals:     {} of {}s; p99 per interval min {}, median {}, max {} (at {:.0}s){}",
            self.intervals.len(),
            self.config.interval_s,
            human_us(p99[0]),
            human_us(p99[p99.len() / 2]),
            human_us(worst.p99_us),
            worst.start_s,
            if idle > 0 {
                format!("; {idle} with no response")
            } else {
                String::new()
            }
        ))
    }
}
