//! The foxbench load engine: HTTP/1.1 over many connections, one event loop per thread.
//!
//! This crate owns sending requests and framing responses: the [`Plan`] says what load to
//! apply, [`run`] applies it and returns a [`RunResult`] of counts and histograms. It does
//! no formatting and no terminal I/O; reports are built from the result by other crates.
//!
//! The engine is built like wrk: each worker thread owns its connections and one mio poll
//! (epoll, edge-triggered, each socket registered once). The request is encoded once. A
//! request costs one `write` and, usually, one `read`: a short read is taken to mean the
//! socket is drained, so no read is spent on `EAGAIN`. Each worker records into its own
//! HDR histogram and counters; they are merged after the run.
//!
//! Accounting: every request issued ends in exactly one outcome, so
//! `sent = ok + failed_status + errors + in_flight` holds for every run.
#![forbid(unsafe_code)]

mod response;
mod target;
mod worker;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use response::{parse_head, Chunked, Framer, Framing, Head, ParseError, Step, MAX_HEAD};
pub use stats::Latency;
pub use target::{parse_header, RequestSpec, Target, TargetError};

/// When requests are sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    /// Each connection sends its next request as soon as a response frees a slot.
    Closed,
    /// Requests are due at a fixed rate, whether or not earlier ones were answered.
    /// Latency is timed from when each request was due (coordinated-omission correct).
    Open {
        /// Requests per second across all threads.
        rate_per_sec: f64,
    },
}

/// When the run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// After exactly this many requests have been issued and answered (or failed).
    Requests(u64),
    /// After this long; requests still unanswered then are counted as in flight.
    Duration(Duration),
}

/// Which status codes count as failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusSet {
    bits: [u64; 16],
}

impl StatusSet {
    /// The default: any status outside 200..=399 is a failure.
    pub fn outside_2xx_3xx() -> Self {
        let mut s = Self { bits: [0; 16] };
        for code in (0..200).chain(400..1000) {
            s.insert(code);
        }
        s
    }

    /// No status is a failure.
    pub fn none() -> Self {
        Self { bits: [0; 16] }
    }

    /// Marks `code` (0..=999) as a failure.
    pub fn insert(&mut self, code: u16) {
        if code < 1000 {
            self.bits[usize::from(code / 64)] |= 1 << (code % 64);
        }
    }

    /// True when `code` counts as a failure.
    #[inline]
    pub fn contains(&self, code: u16) -> bool {
        code >= 1000 || self.bits[usize::from(code / 64)] & (1 << (code % 64)) != 0
    }

    /// Parses a list such as `400-599,302` or `none`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut s = Self::none();
        if text.trim().eq_ignore_ascii_case("none") {
            return Ok(s);
        }
        for part in text.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let parse = |v: &str| -> Result<u16, String> {
                match v.parse::<u16>() {
                    Ok(n) if (100..=999).contains(&n) => Ok(n),
                    _ => Err(format!(
                        "invalid status {v:?} in {text:?}: expected codes 100-999 like \"400-599,302\" or \"none\""
                    )),
                }
            };
            let (lo, hi) = (parse(lo)?, parse(hi)?);
            if lo > hi {
                return Err(format!("invalid status range {part:?}: {lo} > {hi}"));
            }
            for c in lo..=hi {
                s.insert(c);
            }
        }
        Ok(s)
    }
}

/// Everything that describes one load run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Where to send requests.
    pub target: Target,
    /// What to send.
    pub request: RequestSpec,
    /// Connections, spread evenly over the threads.
    pub connections: usize,
    /// Worker threads, each with its own event loop.
    pub threads: usize,
    /// The load model.
    pub arrival: Arrival,
    /// When to stop.
    pub stop: Stop,
    /// Requests in flight per connection (1 = no pipelining).
    pub pipeline: usize,
    /// Reuse connections (HTTP/1.1 keep-alive); otherwise one connection per request.
    pub keepalive: bool,
    /// A request with no complete response after this long fails as a timeout.
    pub timeout: Duration,
    /// A connection not established after this long fails as a connect error.
    pub connect_timeout: Duration,
    /// Which statuses count as failed.
    pub fail_status: StatusSet,
}

impl Plan {
    /// A closed-model keep-alive plan with the defaults of `foxbench load`.
    pub fn new(target: Target) -> Self {
        Self {
            target,
            request: RequestSpec::default(),
            connections: 10,
            threads: 1,
            arrival: Arrival::Closed,
            stop: Stop::Duration(Duration::from_secs(10)),
            pipeline: 1,
            keepalive: true,
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            fail_status: StatusSet::outside_2xx_3xx(),
        }
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The plan is inconsistent.
    #[error("{0}")]
    Plan(String),
    /// The request could not be encoded.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// A worker thread could not be started.
    #[error("cannot start worker thread: {0}")]
    Thread(std::io::Error),
    /// A worker could not create its poll instance.
    #[error("cannot create event loop: {0}")]
    Poll(std::io::Error),
}

/// Outcome and traffic counters. Merged by adding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests issued: written, or assigned to a connection that was being opened.
    pub sent: u64,
    /// Complete responses whose status is not a failure.
    pub ok: u64,
    /// Complete responses whose status is a failure (see `--fail-status`).
    pub failed_status: u64,
    /// Requests lost because their connection could not be established.
    pub connect: u64,
    /// Of `connect`: refused by the peer (ECONNREFUSED).
    pub connect_refused: u64,
    /// Of `connect`: no local address or port free (EADDRNOTAVAIL: ephemeral ports exhausted).
    pub connect_ports_exhausted: u64,
    /// Of `connect`: not established within the connect timeout.
    pub connect_timeout: u64,
    /// Requests lost because writing them failed.
    pub write: u64,
    /// Requests lost to a reset, or to EOF before their response was complete.
    pub read: u64,
    /// Requests whose response was malformed.
    pub parse: u64,
    /// Requests with no complete response within the timeout.
    pub timeout: u64,
    /// Requests still unanswered when the run stopped.
    pub in_flight: u64,
    /// Open model: requests that fell due but found no free connection before the stop.
    pub unsent: u64,
    /// Bytes read from sockets.
    pub bytes_read: u64,
    /// Bytes written to sockets.
    pub bytes_written: u64,
    /// TCP connections established.
    pub connections_opened: u64,
    /// Connections opened to replace one that closed (not counting the first per slot).
    pub reconnects: u64,
    /// Idle connections the server closed.
    pub closed_by_server: u64,
    /// Requests in the largest single write.
    pub max_batch: u64,
}

impl Counts {
    /// Requests that ended in an error of any kind.
    pub fn errors(&self) -> u64 {
        self.connect + self.write + self.read + self.parse + self.timeout
    }

    /// Complete responses, whatever their status.
    pub fn completed(&self) -> u64 {
        self.ok + self.failed_status
    }

    /// True when every issued request has exactly one outcome.
    pub fn conserved(&self) -> bool {
        self.sent == self.completed() + self.errors() + self.in_flight
    }

    fn add(&mut self, o: &Counts) {
        self.sent += o.sent;
        self.ok += o.ok;
        self.failed_status += o.failed_status;
        self.connect += o.connect;
        self.connect_refused += o.connect_refused;
        self.connect_ports_exhausted += o.connect_ports_exhausted;
        self.connect_timeout += o.connect_timeout;
        self.write += o.write;
        self.read += o.read;
        self.parse += o.parse;
        self.timeout += o.timeout;
        self.in_flight += o.in_flight;
        self.unsent += o.unsent;
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
        self.connections_opened += o.connections_opened;
        self.reconnects += o.reconnects;
        self.closed_by_server += o.closed_by_server;
        self.max_batch = self.max_batch.max(o.max_batch);
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Outcome counters.
    pub counts: Counts,
    /// Request latency: from send (closed model) or due time (open model) to the last
    /// byte of the response. Without keep-alive it includes the connect.
    pub latency: Latency,
    /// Time to establish each connection.
    pub connect: Latency,
    /// Responses by status code, ascending.
    pub status: Vec<(u16, u64)>,
    /// Wall time from the start of the workers to the end of the last one.
    pub elapsed: Duration,
    /// True when the run was stopped early through [`Control::stop`].
    pub interrupted: bool,
}

/// Live counters of one worker, published once per event-loop turn.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Progress {
    sent: AtomicU64,
    completed: AtomicU64,
    errors: AtomicU64,
}

/// Shared between the caller and the workers: the stop switch and live progress.
#[derive(Debug)]
pub struct Control {
    stop: AtomicBool,
    progress: Vec<Progress>,
}

/// A consistent-enough view of progress for a live display.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Requests issued.
    pub sent: u64,
    /// Responses completed.
    pub completed: u64,
    /// Requests failed with an error.
    pub errors: u64,
}

impl Control {
    /// A control block for `threads` workers.
    pub fn new(threads: usize) -> Arc<Self> {
        Arc::new(Self {
            stop: AtomicBool::new(false),
            progress: (0..threads).map(|_| Progress::default()).collect(),
        })
    }

    /// Asks every worker to stop; they finish their current turn and report.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// True once [`Control::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sums the workers' live counters.
    pub fn snapshot(&self) -> Snapshot {
        let mut s = Snapshot::default();
        for p in &self.progress {
            s.sent += p.sent.load(Ordering::Relaxed);
            s.completed += p.completed.load(Ordering::Relaxed);
            s.errors += p.errors.load(Ordering::Relaxed);
        }
        s
    }
}

/// Applies the plan and returns what was measured. Blocks until the run ends.
///
/// `control` must have been made for `plan.threads` workers (after the clamp to
/// `connections`, see [`effective_threads`]).
pub fn run(plan: &Plan, control: &Arc<Control>) -> Result<RunResult, LoadError> {
    validate(plan)?;
    let threads = effective_threads(plan);
    if control.progress.len() < threads {
        return Err(LoadError::Plan(format!(
            "control made for {} threads, plan needs {threads}",
            control.progress.len()
        )));
    }
    let pipeline = if plan.keepalive { plan.pipeline } else { 1 };
    let request = plan.request.encode(&plan.target, !plan.keepalive)?;
    let batch: Arc<[u8]> = request.repeat(pipeline).into();
    let budget = match plan.stop {
        Stop::Requests(n) => Some(Arc::new(worker::Budget::new(n, threads))),
        Stop::Duration(_) => None,
    };
    let epoch = Instant::now();
    let mut handles = Vec::with_capacity(threads);
    for id in 0..threads {
        let share = plan.connections / threads + usize::from(id < plan.connections % threads);
        let cfg = worker::Config {
            id,
            addr: plan.target.addr,
            batch: batch.clone(),
            request_len: request.len(),
            connections: share,
            pipeline,
            keepalive: plan.keepalive,
            head_request: plan.request.is_head(),
            arrival: match plan.arrival {
                Arrival::Closed => None,
                Arrival::Open { rate_per_sec } => {
                    Some(rate_per_sec * share as f64 / plan.connections as f64)
                }
            },
            end: match plan.stop {
                Stop::Duration(d) => Some(d),
                Stop::Requests(_) => None,
            },
            budget: budget.clone(),
            timeout: plan.timeout,
            connect_timeout: plan.connect_timeout,
            fail_status: plan.fail_status.clone(),
            epoch,
            control: control.clone(),
        };
        let h = std::thread::Builder::new()
            .name(format!("foxbench-w{id}"))
            .stack_size(256 * 1024)
            .spawn(move || worker::run(cfg))
            .map_err(LoadError::Thread)?;
        handles.push(h);
    }
    let mut counts = Counts::default();
    let mut latency = Latency::new();
    let mut connect = Latency::new();
    let mut status = vec![0u64; 1000];
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(w)) => {
                counts.add(&w.counts);
                latency.merge(&w.latency).expect("same bounds");
                connect.merge(&w.connect).expect("same bounds");
                for (i, n) in w.status.iter().enumerate() {
                    status[i] += n;
                }
            }
            Ok(Err(e)) => first_err = Some(e),
            Err(_) => first_err = Some(LoadError::Plan("a worker thread panicked".into())),
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    Ok(RunResult {
        counts,
        latency,
        connect,
        status: status
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(c, &n)| (c as u16, n))
            .collect(),
        elapsed: epoch.elapsed(),
        interrupted: control.stopped(),
    })
}

/// Parses durations such as `10s`, `500ms`, `2m`, `1h`, `1.5s`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: expected e.g. 10s, 500ms, 2m"))?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "invalid duration unit {other:?} in {text:?}: use ms, s, m or h"
            ))
        }
    };
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!("invalid duration {text:?}: must be positive"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The number of worker threads a plan really uses: never more than its connections.
pub fn effective_threads(plan: &Plan) -> usize {
    plan.threads.clamp(1, plan.connections.max(1))
}

fn validate(plan: &Plan) -> Result<(), LoadError> {
    let bad = |m: &str| Err(LoadError::Plan(m.to_string()));
    if plan.connections == 0 {
        return bad("--connections must be at least 1");
    }
    if plan.pipeline == 0 || plan.pipeline > 1024 {
        return bad("--pipeline must be between 1 and 1024");
    }
    if let Arrival::Open { rate_per_sec } = plan.arrival {
        if !(rate_per_sec.is_finite() && rate_per_sec > 0.0) {
            return bad("--rate must be a positive number of requests per second");
        }
    }
    match plan.stop {
        Stop::Requests(0) => return bad("--requests must be at least 1"),
        Stop::Duration(d) if d.is_zero() => return bad("--duration must be longer than 0"),
        _ => {}
    }
    if plan.timeout.is_zero() || plan.connect_timeout.is_zero() {
        return bad("--timeout and --connect-timeout must be longer than 0");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        for bad in ["", "s", "0", "-1s", "10x", "1e999", "ms10"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
