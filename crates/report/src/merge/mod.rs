//! `foxbench merge`: one result from the results of agents that shared a plan
//! (`--shard I/N`), exactly.
//!
//! Counts are summed and the conservation law is checked per agent and overall;
//! histograms are added (HdrHistogram add, never averaged percentiles); the per-interval
//! series are aligned on wall-clock time (each agent's real start plus the interval's
//! offset, rounded to the interval grid of the earliest start). Nothing is merged
//! silently: a missing, duplicate or interrupted shard, shards of different plans or
//! shares, a broken count or a histogram of other bounds is a [`MergeError`] naming its
//! source; [`Options::partial_ok`] accepts missing and interrupted shards and the result
//! says so (`agents.incomplete`).
//!
//! An error names the settings it is about typed ([`MergeError::text`]): `foxbench merge`
//! words them as its flags; its `Display` words them as the plan names them.

pub mod input;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use stats::setting::{Setting, Text};

use crate::agents::{AgentRow, Agents, ShardInfo, StartInfo};
use crate::{
    Client, Distribution, IntervalRow, LatencyClock, LoadReport, OpenReport, RequestShape,
};

/// One result to merge and where it came from.
#[derive(Debug, Clone)]
pub struct Source {
    /// A file name, or a document of a stream (`stdin line 40 (pod/x-1/foxbench)`).
    pub name: String,
    /// The result.
    pub report: LoadReport,
}

/// How strict a merge is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Accept missing and interrupted shards, and say so in the result.
    pub partial_ok: bool,
}

/// Why results cannot be merged. Each names the source at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no results to merge: give result files, or - for a stream of them on stdin")]
    Empty,
    /// Two results of one shard.
    #[error("{second}: duplicate shard {shard}, also in {first}: merge each agent's result once")]
    Duplicate {
        /// The shard.
        shard: u64,
        /// The first source of it.
        first: String,
        /// The second.
        second: String,
    },
    /// Shards with no result.
    #[error("{}", missing(.shards, *.expected))]
    Missing {
        /// The shards without a result.
        shards: Vec<u64>,
        /// How many there should be.
        expected: u64,
    },
    /// An interrupted run.
    #[error("{}", partial(.source_name, *.shard))]
    Partial {
        /// Its source.
        source_name: String,
        /// Its shard.
        shard: u64,
    },
    /// A document of a stream that ended before it did.
    #[error("{}", truncated(.source_name))]
    Truncated {
        /// Its source.
        source_name: String,
    },
    /// A document that is not JSON.
    #[error("{source_name}: not JSON: {reason}")]
    NotJson {
        /// Its source.
        source_name: String,
        /// The parser's words.
        reason: String,
    },
    /// A document that claims to be a load result and is not one.
    #[error("{source_name}: not a foxbench load --json result: {reason}")]
    NotAResult {
        /// Its source.
        source_name: String,
        /// The parser's words.
        reason: String,
    },
    /// Not the same plan.
    #[error("{}", plan(.source_name, .first, .setting, .theirs, .ours))]
    Plan {
        /// Its source.
        source_name: String,
        /// The first source.
        first: String,
        /// The setting that differs, by name: `Setting::Rate`, or plain words for one
        /// without a flag (`the URL`).
        setting: Text,
        /// The first source's value.
        theirs: String,
        /// This source's value.
        ours: String,
    },
    /// A share that is not the rule's.
    #[error(
        "{source_name}: shard {shard} ran {got} {setting}, but its share of the plan is {want}"
    )]
    Share {
        /// Its source.
        source_name: String,
        /// Its shard.
        shard: u64,
        /// connections or requests.
        setting: &'static str,
        /// What it ran.
        got: u64,
        /// Its share.
        want: u64,
    },
    /// A result whose counts do not add up.
    #[error("{source_name}: its counts break sent = ok + failed_status + errors + in_flight ({sent} != {ok} + {failed_status} + {errors} + {in_flight}): the file was altered or is not foxbench's")]
    Conservation {
        /// Its source, or "the merge".
        source_name: String,
        /// Sent.
        sent: u64,
        /// Ok.
        ok: u64,
        /// Failed status.
        failed_status: u64,
        /// Errors.
        errors: u64,
        /// In flight.
        in_flight: u64,
    },
    /// A histogram that does not decode, or has other bounds.
    #[error("{source_name}: {what}: {error}")]
    Histogram {
        /// Its source.
        source_name: String,
        /// Which histogram.
        what: String,
        /// Why.
        error: String,
    },
    /// A shard section that cannot be (`count` 0, `index` not below it).
    #[error("{source_name}: shard {index}/{count} is not a shard: the file was altered or is not foxbench's")]
    BadShard {
        /// Its source.
        source_name: String,
        /// Its index.
        index: u64,
        /// Its count.
        count: u64,
    },
    /// No start instant, so no alignment on wall-clock time.
    #[error("{source_name}: no start instant (written by a foxbench before merge existed): rerun the agent")]
    NoStart {
        /// Its source.
        source_name: String,
    },
}

impl MergeError {
    /// The message with its settings left for the caller to word (`foxbench merge` as its
    /// flags).
    pub fn text(&self) -> Text {
        match self {
            MergeError::Missing { shards, expected } => missing(shards, *expected),
            MergeError::Partial { source_name, shard } => partial(source_name, *shard),
            MergeError::Truncated { source_name } => truncated(source_name),
            MergeError::Plan {
                source_name,
                first,
                setting,
                theirs,
                ours,
            } => plan(source_name, first, setting, theirs, ours),
            other => Text::plain(other.to_string()),
        }
    }
}

fn missing(shards: &[u64], expected: u64) -> Text {
    let s = if shards.len() == 1 { "" } else { "s" };
    Text::plain(format!(
        "missing shard{s} {} of {expected}: pass every agent's result, or ",
        list(shards)
    ))
    .name(Setting::PartialOk)
    .then(" to merge what there is")
}

fn partial(source_name: &str, shard: u64) -> Text {
    Text::plain(format!(
        "{source_name}: shard {shard} was interrupted, its result is partial: rerun it, or "
    ))
    .give(&[Setting::PartialOk])
}

fn truncated(source_name: &str) -> Text {
    Text::plain(format!(
        "{source_name}: the stream ended inside this result (an agent killed while writing?): "
    ))
    .give(&[Setting::PartialOk])
    .then(" to merge the others")
}

fn plan(source_name: &str, first: &str, setting: &Text, theirs: &str, ours: &str) -> Text {
    Text::plain(format!("{source_name}: a different plan than {first}: "))
        .and(setting.clone())
        .then(format!(
            " is {theirs} there and {ours} here; merge only the agents of one run"
        ))
}

fn list(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// A source's shard: its own, or the whole plan for a result run without `--shard`.
fn shard_of(r: &LoadReport) -> ShardInfo {
    r.shard.clone().unwrap_or(ShardInfo {
        index: 0,
        count: 1,
        plan_connections: r.config.connections,
        plan_requests: r.config.requests,
        plan_peak_per_sec: None,
    })
}

/// The settings two shards of one plan share, each by its [`Setting`] (or in plain words
/// for those without one), with its value as text.
fn plan_key(r: &LoadReport) -> Vec<(Text, String)> {
    let c = &r.config;
    let s = shard_of(r);
    let named = |setting: Setting| Text::default().name(setting);
    let plain = Text::plain;
    vec![
        // The N of `I/N`: the count of shards.
        (named(Setting::Shard).then(" N"), s.count.to_string()),
        (plain("the URL"), r.target.url.clone()),
        (plain("the method"), r.target.method.clone()),
        (plain("the model"), format!("{:?}", c.model)),
        (
            named(Setting::Rate),
            format!("{:?} {:?}", c.rate_per_sec, c.rate_schedule),
        ),
        (named(Setting::Connections), s.plan_connections.to_string()),
        (named(Setting::Requests), format!("{:?}", s.plan_requests)),
        (named(Setting::Duration), format!("{:?}", c.duration_s)),
        (named(Setting::Pipeline), c.pipeline.to_string()),
        (named(Setting::Streams), format!("{:?}", c.streams)),
        (plain("keep-alive"), c.keepalive.to_string()),
        (named(Setting::Timeout), c.timeout_s.to_string()),
        (named(Setting::Interval), c.interval_s.to_string()),
        (named(Setting::Select), format!("{:?}", c.selection)),
        (
            plain("the request table"),
            r.request_table
                .iter()
                .map(|s| format!("{} {}", s.method, s.path))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        (plain("TLS"), r.tls.is_some().to_string()),
    ]
}

fn decode(name: &str, what: &str, d: &Distribution) -> Result<stats::Latency, MergeError> {
    stats::Latency::from_base64_exact(&d.hdr_base64).map_err(|e| MergeError::Histogram {
        source_name: name.to_string(),
        what: what.to_string(),
        error: e.to_string(),
    })
}

/// Adds `d` (when present) into `into`.
fn add(
    into: &mut stats::Latency,
    name: &str,
    what: &str,
    d: Option<&Distribution>,
) -> Result<(), MergeError> {
    if let Some(d) = d {
        into.merge(&decode(name, what, d)?)
            .map_err(|e| MergeError::Histogram {
                source_name: name.to_string(),
                what: what.to_string(),
                error: e.to_string(),
            })?;
    }
    Ok(())
}

fn check_conserved(name: &str, r: &crate::Requests, e: &crate::Errors) -> Result<(), MergeError> {
    // u128: a crafted file's counts must not overflow the check.
    let w = u128::from;
    let kinds = w(e.connect)
        + w(e.write)
        + w(e.read)
        + w(e.parse)
        + w(e.timeout)
        + w(e.tls)
        + w(e.reset)
        + w(e.protocol);
    if w(r.sent) != w(r.ok) + w(r.failed_status) + w(r.errors) + w(r.in_flight)
        || w(r.errors) != kinds
        || w(r.completed) != w(r.ok) + w(r.failed_status)
    {
        return Err(MergeError::Conservation {
            source_name: name.to_string(),
            sent: r.sent,
            ok: r.ok,
            failed_status: r.failed_status,
            errors: r.errors,
            in_flight: r.in_flight,
        });
    }
    Ok(())
}

/// The sources by shard, once checked; the missing and the interrupted shards.
struct Checked<'a> {
    by_shard: BTreeMap<u64, &'a Source>,
    missing: Vec<u64>,
    partial: Vec<u64>,
}

/// Checks that the sources are the shards of one plan, each once.
fn check(sources: &[Source], opts: Options) -> Result<Checked<'_>, MergeError> {
    let first = sources.first().ok_or(MergeError::Empty)?;
    let key = plan_key(&first.report);
    let mut by_shard: BTreeMap<u64, &Source> = BTreeMap::new();
    let mut partial = Vec::new();
    for s in sources {
        for ((setting, theirs), (_, ours)) in key.iter().zip(plan_key(&s.report)) {
            if *theirs != ours {
                return Err(MergeError::Plan {
                    source_name: s.name.clone(),
                    first: first.name.clone(),
                    setting: setting.clone(),
                    theirs: theirs.clone(),
                    ours,
                });
            }
        }
        let shard = shard_of(&s.report);
        if shard.count == 0 || shard.index >= shard.count {
            return Err(MergeError::BadShard {
                source_name: s.name.clone(),
                index: shard.index,
                count: shard.count,
            });
        }
        if let Some(prev) = by_shard.insert(shard.index, s) {
            return Err(MergeError::Duplicate {
                shard: shard.index,
                first: prev.name.clone(),
                second: s.name.clone(),
            });
        }
        let share = |total: u64| total / shard.count + u64::from(shard.index < total % shard.count);
        let c = &s.report.config;
        let shares = [
            ("connections", c.connections, share(shard.plan_connections)),
            (
                "requests",
                c.requests.unwrap_or(0),
                shard.plan_requests.map_or(0, share),
            ),
        ];
        for (setting, got, want) in shares {
            if got != want {
                return Err(MergeError::Share {
                    source_name: s.name.clone(),
                    shard: shard.index,
                    setting,
                    got,
                    want,
                });
            }
        }
        check_conserved(&s.name, &s.report.requests, &s.report.errors)?;
        if s.report.interrupted {
            if !opts.partial_ok {
                return Err(MergeError::Partial {
                    source_name: s.name.clone(),
                    shard: shard.index,
                });
            }
            partial.push(shard.index);
        }
    }
    let count = shard_of(&first.report).count;
    let missing: Vec<u64> = (0..count).filter(|i| !by_shard.contains_key(i)).collect();
    if !missing.is_empty() && !opts.partial_ok {
        return Err(MergeError::Missing {
            shards: missing,
            expected: count,
        });
    }
    if let Some(s) = sources
        .iter()
        .find(|s| sources.len() > 1 && s.report.start.is_none())
    {
        return Err(MergeError::NoStart {
            source_name: s.name.clone(),
        });
    }
    Ok(Checked {
        by_shard,
        missing,
        partial,
    })
}

/// Merges the results of the agents of one plan. See the module's doc for the rules.
pub fn merge(sources: &[Source], opts: Options) -> Result<LoadReport, MergeError> {
    let Checked {
        by_shard,
        missing,
        partial,
    } = check(sources, opts)?;
    let first = &sources[0].report;
    let start_ns = |r: &LoadReport| r.start.as_ref().map_or(0, |s| s.started_unix_ns);
    let t0 = by_shard
        .values()
        .map(|s| start_ns(&s.report))
        .min()
        .unwrap_or(0);
    let end = by_shard
        .values()
        .map(|s| start_ns(&s.report) as f64 + s.report.elapsed_s * 1e9)
        .fold(0.0, f64::max);
    let elapsed_s = ((end - t0 as f64) / 1e9).max(1e-9);

    let mut m = first.clone();
    m.http2 = crate::http2::Http2Report::merge(by_shard.values().map(|s| s.report.http2.as_ref()));
    // Saturating: real counts never come near u64::MAX, crafted ones must not panic.
    let sum = |f: &dyn Fn(&LoadReport) -> u64| {
        by_shard
            .values()
            .fold(0u64, |a, s| a.saturating_add(f(&s.report)))
    };
    m.requests = crate::Requests {
        sent: sum(&|r| r.requests.sent),
        ok: sum(&|r| r.requests.ok),
        failed_status: sum(&|r| r.requests.failed_status),
        completed: sum(&|r| r.requests.completed),
        errors: sum(&|r| r.requests.errors),
        in_flight: sum(&|r| r.requests.in_flight),
        unsent: sum(&|r| r.requests.unsent),
    };
    // Every shard's, not the first's; QUIC's per request over the merged requests.
    m.http3 = crate::Http3Report::merge(
        by_shard.values().filter_map(|s| s.report.http3.as_ref()),
        m.requests.completed,
    );
    m.errors = crate::Errors {
        connect: sum(&|r| r.errors.connect),
        connect_refused: sum(&|r| r.errors.connect_refused),
        connect_ports_exhausted: sum(&|r| r.errors.connect_ports_exhausted),
        connect_timeout: sum(&|r| r.errors.connect_timeout),
        write: sum(&|r| r.errors.write),
        read: sum(&|r| r.errors.read),
        parse: sum(&|r| r.errors.parse),
        timeout: sum(&|r| r.errors.timeout),
        tls: sum(&|r| r.errors.tls),
        reset: sum(&|r| r.errors.reset),
        protocol: sum(&|r| r.errors.protocol),
    };
    check_conserved("the merge", &m.requests, &m.errors)?;
    let by_reason: Vec<&[crate::errors_by_reason::ReasonRow]> = by_shard
        .values()
        .map(|s| s.report.errors_by_reason.as_slice())
        .collect();
    m.errors_by_reason = crate::errors_by_reason::merge(&by_reason);
    m.connections = crate::Connections {
        opened: sum(&|r| r.connections.opened),
        reconnects: sum(&|r| r.connections.reconnects),
        closed_by_server: sum(&|r| r.connections.closed_by_server),
    };
    m.status = BTreeMap::new();
    for s in by_shard.values() {
        for (code, n) in &s.report.status {
            let e = m.status.entry(code.clone()).or_default();
            *e = e.saturating_add(*n);
        }
    }
    m.request_table = first
        .request_table
        .iter()
        .enumerate()
        .map(|(i, row)| RequestShape {
            sent: sum(&|r| r.request_table.get(i).map_or(0, |x| x.sent)),
            completed: sum(&|r| r.request_table.get(i).map_or(0, |x| x.completed)),
            ..row.clone()
        })
        .collect();
    let bytes_read = sum(&|r| r.throughput.bytes_read);
    m.throughput = crate::Throughput {
        requests_per_sec: m.requests.completed as f64 / elapsed_s,
        bytes_read,
        bytes_written: sum(&|r| r.throughput.bytes_written),
        read_bytes_per_sec: bytes_read as f64 / elapsed_s,
    };
    m.elapsed_s = elapsed_s;
    m.interrupted = !partial.is_empty() || !missing.is_empty();
    // The kernel's TCP and UDP counters are each agent's whole network namespace over its own
    // window: agents on one host would count each other's traffic, so neither the first
    // agent's figures nor their sum describe the run. Each agent's own result keeps its.
    m.tcp = None;
    m.udp = None;

    // Histograms: every one the result carries, added.
    let mut latency = stats::Latency::new();
    let (mut read_latency, mut kernel_latency) = (stats::Latency::new(), stats::Latency::new());
    let mut connect = stats::Latency::new();
    let (mut service, mut lateness, mut late) = (
        stats::Latency::new(),
        stats::Latency::new(),
        stats::Latency::new(),
    );
    let (mut full, mut resumed) = (stats::Latency::new(), stats::Latency::new());
    for s in by_shard.values() {
        let (n, r) = (s.name.as_str(), &s.report);
        add(&mut latency, n, "latency", Some(&r.latency))?;
        add(
            &mut read_latency,
            n,
            "read_latency",
            r.read_latency.as_ref(),
        )?;
        add(
            &mut kernel_latency,
            n,
            "kernel_latency",
            r.latency_to_stamps(),
        )?;
        add(&mut connect, n, "connect", r.connect.as_ref())?;
        if let Some(o) = &r.open {
            add(&mut service, n, "open.service", o.service.as_ref())?;
            add(
                &mut lateness,
                n,
                "open.send_lateness",
                o.send_lateness.as_ref(),
            )?;
            add(&mut late, n, "open.late_wait", o.late_wait.as_ref())?;
        }
        if let Some(t) = &r.tls {
            add(
                &mut full,
                n,
                "tls.handshake_full",
                t.handshake_full.as_ref(),
            )?;
            add(
                &mut resumed,
                n,
                "tls.handshake_resumed",
                t.handshake_resumed.as_ref(),
            )?;
        }
    }
    m.latency = Distribution::of(&latency);
    // Only when every agent measured it: a part missing would make the sum short.
    m.read_latency = by_shard
        .values()
        .all(|s| s.report.read_latency.is_some())
        .then(|| Distribution::of(&read_latency));
    m.connect = (!connect.is_empty()).then(|| Distribution::of(&connect));
    let plan = shard_of(first);
    m.config.connections = plan.plan_connections;
    m.config.requests = plan.plan_requests;
    m.config.threads = sum(&|r| r.config.threads);
    if first.open.is_some() {
        let counts = stats::Counts {
            sent: m.requests.sent,
            late: sum(&|r| r.open.as_ref().map_or(0, |o| o.late)),
            ..stats::Counts::default()
        };
        m.open = Some(OpenReport::new(
            crate::OpenMeasured {
                peak_per_sec: plan
                    .plan_peak_per_sec
                    .or(first.config.rate_per_sec)
                    .unwrap_or(0.0),
                scheduled: sum(&|r| r.open.as_ref().map_or(0, |o| o.scheduled)),
                connections: m.config.connections,
                latency: &latency,
                service: &service,
                lateness: &lateness,
                late: &late,
            },
            &counts,
        ));
    }
    if let Some(t) = &mut m.tls {
        let dist = |h: &stats::Latency| (!h.is_empty()).then(|| Distribution::of(h));
        t.handshakes_full = sum(&|r| r.tls.as_ref().map_or(0, |t| t.handshakes_full));
        t.handshakes_resumed = sum(&|r| r.tls.as_ref().map_or(0, |t| t.handshakes_resumed));
        t.handshake_full = dist(&full);
        t.handshake_resumed = dist(&resumed);
    }
    m.intervals = merge_intervals(&by_shard, t0, first.config.interval_s)?;
    m.interval_segments = crate::series::segments(&m.intervals, first.config.interval_s);

    // The client: the agents' CPU added; the share is the busiest agent's, since one
    // saturated agent is what limits a figure.
    let rows = by_shard
        .iter()
        .map(|(&shard, s)| AgentRow::of(shard, &s.name, &s.report, t0))
        .collect::<Vec<_>>();
    let busiest = rows.iter().map(|a| a.cpu_percent).fold(0.0, f64::max);
    // A figure per request over all the agents: each agent's weighted by its responses;
    // absent when an agent with responses did not record it. An agent without responses
    // weighs nothing and has no figure per request to give: it is skipped.
    let per_request = |of: &dyn Fn(&Client) -> Option<f64>| {
        let each: Option<Vec<(f64, u64)>> = by_shard
            .values()
            .filter(|s| s.report.requests.completed > 0)
            .map(|s| of(&s.report.client).map(|v| (v, s.report.requests.completed)))
            .collect();
        let each = each?;
        let completed: u64 = each.iter().map(|e| e.1).sum();
        (completed > 0)
            .then(|| each.iter().map(|(v, n)| v * *n as f64).sum::<f64>() / completed as f64)
    };
    m.client = Client {
        cpus: sum(&|r| r.client.cpus),
        cpu_user_s: by_shard.values().map(|s| s.report.client.cpu_user_s).sum(),
        cpu_sys_s: by_shard.values().map(|s| s.report.client.cpu_sys_s).sum(),
        cpu_percent: busiest,
        cpu_us_per_request: None,
        work_us_per_request: per_request(&|c| c.work_us_per_request),
        max_rss_bytes: by_shard
            .values()
            .map(|s| s.report.client.max_rss_bytes)
            .max()
            .unwrap_or(0),
        voluntary_ctxt_per_request: per_request(&|c| c.voluntary_ctxt_per_request),
        involuntary_ctxt_per_request: per_request(&|c| c.involuntary_ctxt_per_request),
        spin_s: by_shard.values().map(|s| s.report.client.spin_s).sum(),
        coalesced_waits: sum(&|r| r.client.coalesced_waits),
        coalesced_s: by_shard.values().map(|s| s.report.client.coalesced_s).sum(),
        saturated: rows.iter().any(|a| a.saturated),
        // One rule for both helper figures: absent from an agent means 0 when nothing ran
        // there (no --dashboard: `dashboard_cpu_s` is absent) and unknown when it was not
        // recorded (`probe_cpu_s`, which every agent records since the socket reader, is
        // absent only from older results): an unknown part makes the total unknown, a
        // zero part adds nothing.
        probe_cpu_s: by_shard.values().map(|s| s.report.client.probe_cpu_s).sum(),
        dashboard_cpu_s: {
            let d: Vec<f64> = by_shard
                .values()
                .filter_map(|s| s.report.client.dashboard_cpu_s)
                .collect();
            (!d.is_empty()).then(|| d.iter().sum())
        },
        // Each agent's delay is its own; the merged one is the worst of each figure.
        client_delay: by_shard
            .values()
            .filter_map(|s| s.report.client.client_delay)
            .reduce(crate::ClientDelay::merge),
    };
    // Kept apart only when the merged `latency` is not it, and only when every agent
    // measured it (a part missing would make the sum short).
    let on_kernel = m.client.client_delay.map(|d| d.latency_clock) == Some(LatencyClock::Kernel);
    m.kernel_latency = (!on_kernel
        && by_shard
            .values()
            .all(|s| s.report.latency_to_stamps().is_some()))
    .then(|| Distribution::of(&kernel_latency));
    m.client.cpu_us_per_request = (m.requests.completed > 0)
        .then(|| (m.client.cpu_user_s + m.client.cpu_sys_s) * 1e6 / m.requests.completed as f64);
    let starts: Vec<u64> = by_shard.values().map(|s| start_ns(&s.report)).collect();
    let skew_ns = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
    m.start = by_shard
        .values()
        .min_by_key(|s| start_ns(&s.report))
        .and_then(|s| s.report.start.clone())
        .map(|s| StartInfo { late_ms: None, ..s });
    m.agents = Some(Agents {
        expected: plan.count,
        incomplete: !missing.is_empty() || !partial.is_empty(),
        missing,
        partial,
        start_skew_ms: skew_ns as f64 / 1e6,
        agents: rows,
    });
    m.shard = None;
    m.slo = None;
    Ok(m)
}

/// The agents' series on one wall-clock grid: an agent's row that began at
/// `start + start_s` begins at slot `k = round((start + start_s - t0) / interval)`, and
/// lies in the dyadic block of its span (`k / span`, see [`crate::series`]). Blocks nest or
/// are disjoint, so each row merges into the largest block that holds it, exactly: agents
/// that coarsened differently (one ran an interval longer) still add up.
fn merge_intervals(
    by_shard: &BTreeMap<u64, &Source>,
    t0: u64,
    interval_s: f64,
) -> Result<Vec<IntervalRow>, MergeError> {
    let interval_ns = (interval_s * 1e9).max(1.0);
    // (block start slot, span, first slot, source, index, row) for every row.
    type At<'a> = (u64, u64, u64, &'a str, usize, &'a IntervalRow);
    let mut rows: Vec<At> = Vec::new();
    for s in by_shard.values() {
        let r = &s.report;
        let offset_ns = r.start.as_ref().map_or(0, |st| st.started_unix_ns - t0) as f64;
        for (i, row) in r.intervals.iter().enumerate() {
            let histogram = |error: String| MergeError::Histogram {
                source_name: s.name.clone(),
                what: format!("intervals[{i}]"),
                error,
            };
            let span = row.span_intervals.max(1);
            if !span.is_power_of_two() {
                return Err(histogram(format!(
                    "span_intervals {span} is not a power of two: not written by foxbench"
                )));
            }
            if row.hdr_base64.is_none() && by_shard.len() > 1 {
                return Err(histogram(
                    "no histogram (written before merge existed): rerun the agent".into(),
                ));
            }
            let k = ((offset_ns + row.start_s * 1e9) / interval_ns)
                .round()
                .max(0.0) as u64;
            rows.push((k / span * span, span, k, &s.name, i, row));
        }
    }
    // Larger blocks first among those that start together: they hold the smaller ones.
    rows.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut out: Vec<IntervalRow> = Vec::new();
    let mut block_end = 0u64;
    for (block, span, k, name, i, row) in rows {
        let mut row = row.clone();
        // On the common grid, so that concurrent rows share their start.
        row.start_s = k as f64 * interval_s;
        if !out.is_empty() && block < block_end {
            let into = out.last_mut().expect("a block is open");
            if row.hdr_base64.is_none() {
                // One agent of an old file: its rows are the merge's as they are.
                *into = row;
                continue;
            }
            into.merge(&row).map_err(|e| MergeError::Histogram {
                source_name: name.to_string(),
                what: format!("intervals[{i}]"),
                error: e.to_string(),
            })?;
        } else {
            block_end = block + span;
            if let Some(h) = &row.hdr_base64 {
                // Decoded once here, so that a bad histogram names its source even when
                // nothing merges into it.
                stats::Latency::from_base64_exact(h).map_err(|e| MergeError::Histogram {
                    source_name: name.to_string(),
                    what: format!("intervals[{i}]"),
                    error: e.to_string(),
                })?;
            }
            out.push(row);
        }
    }
    Ok(out)
}
