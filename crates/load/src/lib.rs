//! The foxbench load engine: HTTP/1.1 or HTTP/2 over many connections, one event loop per
//! thread.
//!
//! This crate owns sending requests and framing responses: the [`Plan`] says what load to
//! apply, [`run`] applies it and returns a [`RunResult`] of counts and histograms, and
//! [`run_with_intervals`] also hands the caller one merged [`Interval`] per period while
//! the run goes on. It does no formatting and no terminal I/O; reports are built from the
//! result by other crates. [`search`] holds the capacity search's state machine (which
//! constant rate to try next), pure, for `--find-max` and the shootout to drive.
//!
//! The engine is built like wrk: each worker thread owns its connections and one mio poll
//! (epoll, edge-triggered, each socket registered once). Requests are encoded once, into a
//! request table; URL templates fill their random parts per request without allocating.
//! A request costs one `write` and, usually, one `read`. Its seams: a [`Schedule`]-driven
//! worker that never asks which load model runs, nor which protocol (the worker is generic
//! over one connection's protocol, `worker::http::Http`, with HTTP/1.1 and HTTP/2
//! implementations; HTTP/3, a datagram protocol, will be a third), a `Transport` for the
//! byte stream those two share, and interval recording handed off at each boundary.
//!
//! A plan can be one agent's share of a plan run by several ([`Plan::shard`], [`shard`]),
//! started at an instant agreed beforehand ([`start`]).
//!
//! Before a run, [`os_limits`] checks the machine's limits that its connections will hit (open
//! files, ephemeral ports, listen backlogs, conntrack, TCP memory): `foxbench doctor`, and
//! the shootout before each level.
//!
//! It must not touch the machine's `/proc` (that is `probe`'s, which also reads the figures
//! `os_limits` judges), render results (`report`'s) or parse a command line; its errors name
//! settings, and each caller words them (the CLI as flags, the shootout as suite keys).
//!
//! Accounting: every request issued ends in exactly one outcome, so
//! `sent = ok + failed_status + errors + in_flight` holds for every run.
//!
//! HTTP/2 ([`Protocol::Http2`], `--http2`) lives in [`h2`], sans I/O: the worker's HTTP/2
//! implementation feeds it the bytes it reads and writes what it appends, as the HTTP/1.1
//! one does with the framer. A request is a stream; `--streams` play the part pipelining
//! plays for HTTP/1.1 ([`Plan::per_connection`] says how many, for all three).
//!
//! HTTP/3 ([`Protocol::Http3`], `--http3`) is QUIC by `quinn-proto`, sans I/O too, driven
//! by the worker's loop over a UDP socket per connection, with HTTP/3's wire format from
//! `h3wire`; `h3` holds what runs outside the loop (the requests encoded once, the
//! preflight's QUIC handshake).
//!
//! [`Schedule`]: schedule
#![forbid(unsafe_code)]

mod cause;
mod control;
pub mod h2;
mod h3;
pub mod idle;
mod interval;
pub mod os_limits;
mod plan;
mod protocol_counts;
mod quic_counts;
mod rate;
mod response;
mod schedule;
pub mod search;
mod setup;
pub mod shard;
mod stamps;
pub mod start;
mod table;
mod target;
mod template;
mod tls;
mod transport;
mod urls;
mod worker;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use control::{Control, Snapshot};
pub use h2::blocking::{H2Client, H2Error, H2Response};
pub use h2::{H2Counts, H2Options};
pub use h3::blocking::{H3Client, H3Error, H3Response};
#[doc(hidden)]
pub use h3::response::fuzz_feed as fuzz_h3_response;
pub use h3::{H3Counts, UDP_BUFFER_BYTES};
pub use idle::{Idle, IdleChoice, IdleWhy, Placement};
pub use plan::{
    Arrival, Coalesce, H3Options, KernelStamps, LatencyClock, Plan, PlanError, Protocol, StatusSet,
    Stop, COALESCE_BATCH, COALESCE_LATENCY_SHARE, COALESCE_LIMIT, COALESCE_MAX, COALESCE_MIN,
    MAX_PIPELINE,
};
pub use quic_counts::{PathAtEnd, QuicCounts, QuicFrames};
pub use rate::{Rate, RateError, Stage};
pub use response::{parse_head, Chunked, Framer, Framing, Head, ParseError, Step, MAX_HEAD};
pub use setup::{
    connect_blocking, fds_needed, handshake_timed_out, preflight, raise_fd_limit, Connection,
    SetupError,
};
pub use shard::{Shard, ShardError};
pub use stamps::SEND_SAMPLE_EVERY;
pub use stats::setting::{self, PlanWording, Setting, Text, Wording};
pub use stats::{Counts, Interval, Latency};
pub use table::Selection;
pub use target::{parse_header, RequestSpec, Scheme, Target, TargetError};
pub use template::{Hole, Piece, Rng, Template, TemplateError};
pub use tls::{
    explain as explain_tls, ClientCert, Handshake, SelfSigned, TlsError, TlsInfo, TlsOptions,
    Verify,
};
pub use urls::{load_urls, parse_urls, UrlLine, UrlsError};

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The plan is inconsistent.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A request could not be encoded.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The TLS configuration could not be built.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The control block was made for fewer workers than the plan runs.
    #[error("control made for {made} threads, the plan needs {needed}: make it with Plan::effective_threads")]
    Control {
        /// Threads the control block serves.
        made: usize,
        /// Threads the plan runs.
        needed: usize,
    },
    /// A worker thread could not be started.
    #[error("cannot start worker thread: {0}")]
    Thread(std::io::Error),
    /// A worker could not create its poll instance.
    #[error("cannot create event loop: {0}")]
    Poll(std::io::Error),
    /// A worker thread panicked: a bug in foxbench.
    #[error("a worker thread panicked: this is a bug in foxbench, please report it")]
    Panicked,
}

impl LoadError {
    /// The message with its settings left for the caller to word.
    pub fn text(&self) -> Text {
        match self {
            LoadError::Plan(e) => e.text(),
            LoadError::Tls(e) => e.text(),
            e => e.to_string().into(),
        }
    }
}

/// What one request shape of the table carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShapeCounts {
    /// Requests of this shape issued.
    pub sent: u64,
    /// Of those, complete responses (any status).
    pub completed: u64,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// Outcome counters.
    pub counts: Counts,
    /// Request latency: from send (closed model) or due time (open model) to the last
    /// byte of the response. Without keep-alive it includes the connect.
    pub latency: Latency,
    /// Open model: service time, from when each request was handed to its connection to
    /// its response (wrk2's `-U`); empty in the closed model.
    pub service: Latency,
    /// Open model: how late each request was handed to a connection that was free when it
    /// fell due: the client's own dispatch error, which latency includes.
    pub lateness: Latency,
    /// Open model: how late each request was sent that fell due while every connection was
    /// busy (`counts.late` of them).
    pub late: Latency,
    /// Time to establish each connection's TCP connect (for TLS, without the handshake).
    pub connect: Latency,
    /// TLS: time from the TCP connect to the end of each full handshake.
    pub handshake_full: Latency,
    /// TLS: the same for each resumed handshake.
    pub handshake_resumed: Latency,
    /// TLS: what the first handshake negotiated; `None` for http:// or when none completed.
    pub tls: Option<TlsInfo>,
    /// https: a server asked for a client certificate in some handshake of the run.
    pub client_cert_asked: bool,
    /// Responses by status code, ascending.
    pub status: Vec<(u16, u64)>,
    /// Per row of the request table, in the plan's order.
    pub shapes: Vec<ShapeCounts>,
    /// HTTP/2's counts (streams, retries, resets and GOAWAYs by code, header bytes);
    /// `None` under HTTP/1.1.
    pub h2: Option<H2Counts>,
    /// HTTP/3's counts (retries, QUIC's figures); `None` under HTTP/1.1 and HTTP/2.
    pub h3: Option<H3Counts>,
    /// Wall time from the start of the workers to the end of the last one.
    pub elapsed: Duration,
    /// True when the run was stopped early through [`Control::stop`].
    pub interrupted: bool,
    /// Interval hand-offs at which a worker waited for the caller's `sink` to catch up
    /// (every histogram it may hold was still on its way): zero unless the consumer of the
    /// intervals fell several intervals behind. The requests the waits delayed are measured
    /// late; no interval is dropped.
    pub interval_waits: u64,
    /// Wall time the workers spent, summed, polling without a timeout and finding nothing
    /// to do: in the open model in the last 50 µs before a due instant (a timer wake-up
    /// costs 30-40 µs), and all the time in workers that spin ([`Idle::Spin`]). That CPU is
    /// spent on purpose: it is time to spare, not saturation. Zero in a closed model that
    /// sleeps.
    pub spin: Duration,
    /// Closed model: the waits before sleeping that batched wake-ups ([`Coalesce`]), summed
    /// over the workers.
    pub coalesced: Coalesced,
    /// Every response's latency to its read: `latency` when the read clock leads.
    pub read_latency: Latency,
    /// Every response's latency to the kernel's receive stamp, when `latency` does not hold
    /// it: `Some` under [`ClockInUse::ReadAsked`] when some read carried a stamp, `None`
    /// under [`ClockInUse::Kernel`] (`latency` is it, kept once) and when no read was
    /// stamped (there is no kernel latency). [`RunResult::latency_on`] answers for either
    /// clock.
    pub kernel_latency: Option<Latency>,
    /// What the client added to each response's latency: its read latency minus its
    /// latency to the kernel's receive stamp (zero for a read without a stamp).
    pub client_delay: Latency,
    /// Which clock `latency` and `service` hold, and why.
    pub latency_clock: ClockInUse,
    /// Reads of response bytes that carried a kernel receive stamp, and those that did not.
    pub stamps: StampCounts,
    /// Send stamps: how many requests were sampled, and how many stamps came back.
    pub send_stamps: SendStampCounts,
    /// Open model: the sampled requests' lateness by the kernel, from the due instant to
    /// the departure of the request's last byte (those handed over on time, beside
    /// `lateness`, which ends at the handing over).
    pub send_lateness_kernel: Latency,
    /// The sampled requests' send delay by the kernel: from the handing over to the
    /// departure of the request's last byte (both models).
    pub send_delay_kernel: Latency,
}

impl RunResult {
    /// Every response's latency on `clock`, whichever clock leads; `None` for the kernel's
    /// when no read carried a stamp.
    pub fn latency_on(&self, clock: LatencyClock) -> Option<&Latency> {
        match (clock, self.latency_clock) {
            (LatencyClock::Read, _) => Some(&self.read_latency),
            (LatencyClock::Kernel, ClockInUse::Kernel) => Some(&self.latency),
            (LatencyClock::Kernel, _) => self.kernel_latency.as_ref(),
        }
    }
}

/// Which clock a run's `latency` holds, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockInUse {
    /// The kernel's receive stamps.
    Kernel,
    /// The read, because `--latency-clock read` asked for it.
    ReadAsked,
    /// The read, because no read of the run carried a stamp (the kernel or the socket
    /// gave none).
    ReadNoStamps,
}

impl ClockInUse {
    /// What a run that asked for `asked` and counted `stamps` used.
    pub fn of(asked: LatencyClock, stamps: StampCounts) -> Self {
        match asked {
            LatencyClock::Read => ClockInUse::ReadAsked,
            LatencyClock::Kernel if stamps.stamped == 0 && stamps.unstamped > 0 => {
                ClockInUse::ReadNoStamps
            }
            LatencyClock::Kernel => ClockInUse::Kernel,
        }
    }
}

/// Send stamps ([`SEND_SAMPLE_EVERY`]): requests sampled, stamps that came back from the
/// error queue, and those matched to their sampled request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendStampCounts {
    /// One request in this many was sampled; 0 when send stamps were off (asked off, or
    /// no receive stamps either). A kernel that refuses the send flags on its sockets
    /// (before Linux 6.2) shows as requests sampled and no stamp returned.
    pub every: u64,
    /// Requests whose send was stamped.
    pub sampled: u64,
    /// Stamps read from the error queue: the sampled requests', and those of other writes
    /// made while stamping was on (a TLS handshake's flights, a request written in parts).
    pub returned: u64,
    /// Stamps matched to a sampled request: its departure was recorded.
    pub matched: u64,
}

impl SendStampCounts {
    /// Adds another worker's samples and stamps; `every` is the run's, set apart.
    pub fn merge(&mut self, other: SendStampCounts) {
        self.sampled += other.sampled;
        self.returned += other.returned;
        self.matched += other.matched;
    }
}

/// Reads of response bytes with and without a kernel receive stamp.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StampCounts {
    pub stamped: u64,
    pub unstamped: u64,
}

impl StampCounts {
    /// Adds another worker's reads.
    pub fn merge(&mut self, other: StampCounts) {
        self.stamped += other.stamped;
        self.unstamped += other.unstamped;
    }
}

/// The waits a run's workers made before sleeping, to read several responses per wake-up
/// ([`Coalesce`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coalesced {
    /// Waits made: times a worker found nothing to read and waited before sleeping.
    pub waits: u64,
    /// Their wall time, summed.
    pub waited: Duration,
}

/// Applies the plan and returns what was measured. Blocks until the run ends.
///
/// `control` must have been made for [`Plan::effective_threads`] workers.
pub fn run(plan: &Plan, control: &Arc<Control>) -> Result<RunResult, LoadError> {
    run_with_intervals(plan, control, &mut |_| {})
}

/// Like [`run`], and passes `sink` each interval of `plan.interval` as soon as every
/// worker is past it (on the calling thread), then the last, partial one. The intervals'
/// histograms merged are the run's `latency`.
pub fn run_with_intervals(
    plan: &Plan,
    control: &Arc<Control>,
    sink: &mut dyn FnMut(&Interval),
) -> Result<RunResult, LoadError> {
    plan.validate()?;
    let threads = plan.effective_threads();
    if control.progress.len() < threads {
        return Err(LoadError::Control {
            made: control.progress.len(),
            needed: threads,
        });
    }
    let mut table = table::RequestTable::new(
        &plan.target,
        &plan.requests,
        plan.selection,
        !plan.keepalive,
        matches!(plan.protocol, Protocol::Http2(_)),
    )?;
    if let Protocol::Http3(_) = plan.protocol {
        table.h3 = h3::requests(&plan.target, &plan.requests)?;
    }
    let table = Arc::new(table);
    let tls = match plan.target.scheme {
        Scheme::Http => None,
        Scheme::Https => Some(tls::Connector::new(
            &plan.target.host,
            &TlsOptions {
                resume: plan.tls_resumption(),
                ..plan.tls.clone()
            },
            match plan.protocol {
                Protocol::Http1 => tls::Alpn::Http1,
                Protocol::Http2(_) => tls::Alpn::H2,
                Protocol::Http3(_) => tls::Alpn::H3,
            },
        )?),
    };
    let budget = match plan.stop {
        Stop::Requests(n) => Some(Arc::new(schedule::Budget::new(n, threads))),
        Stop::Duration(_) => None,
    };
    // Warmed once per process, before the run's epoch, and held on: stamping stays on for
    // this run and every later one. A kernel that stamped nothing in the warm-up is not
    // asked on every socket.
    let kernel_stamps = match plan.kernel_stamps.receive() && stamps::warm().stamped {
        true => plan.kernel_stamps,
        false => KernelStamps::Off,
    };
    // HTTP/3 stamps receives only: a QUIC datagram carries many requests' frames, so its
    // send stamp is no one request's departure, and none is sampled; the report then says
    // send stamps were off rather than that the kernel gave none.
    let kernel_stamps = match (&plan.protocol, kernel_stamps) {
        (Protocol::Http3(_), KernelStamps::ReceiveAndSend) => KernelStamps::Receive,
        (_, k) => k,
    };
    let (tx, rx) = mpsc::channel();
    let epoch = Instant::now();
    let mut handles = Vec::with_capacity(threads);
    let mut spares = Vec::with_capacity(threads);
    for id in 0..threads {
        let cfg = worker::Config {
            id,
            addr: plan.target.addr,
            tls: tls.clone(),
            table: table.clone(),
            seed: plan.seed,
            connections: shard::share(plan.connections as u64, threads as u64, id as u64) as usize,
            per_connection: plan.per_connection(),
            keepalive: plan.keepalive,
            coalesce: plan.coalesce_in_effect(),
            spin: plan.idle_in_effect().spin,
            latency_clock: plan.latency_clock,
            kernel_stamps,
            schedule: schedule::Schedule::new(
                plan.arrival.clone(),
                plan.stop,
                budget.clone(),
                plan.shard,
                id,
                threads,
            ),
            timeout: plan.timeout,
            connect_timeout: plan.connect_timeout,
            fail_status: plan.fail_status.clone(),
            epoch,
            control: control.clone(),
        };
        let (spare_tx, spare_rx) = mpsc::channel();
        spares.push(spare_tx);
        let current = interval::CurrentInterval::new(id, plan.interval, tx.clone(), spare_rx);
        let protocol = plan.protocol;
        let spawned = std::thread::Builder::new()
            .name(format!("foxbench-w{id}"))
            .stack_size(256 * 1024)
            .spawn(move || worker::run(protocol, cfg, current));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                // Stop the workers already running before reporting.
                control.stop();
                for h in handles {
                    let _ = h.join();
                }
                return Err(LoadError::Thread(e));
            }
        }
    }
    drop(tx);
    let mut collector = interval::Collector::new(plan.interval, spares);
    // Ends when every worker has finished and dropped its sender.
    for part in rx {
        collector.add(part, sink);
    }
    let mut counts = Counts::default();
    let mut connect = Latency::new();
    let mut lateness = Latency::new();
    let mut late = Latency::new();
    let mut handshake_full = Latency::new();
    let mut handshake_resumed = Latency::new();
    let mut tls_info = None;
    let mut status = vec![0u64; 1000];
    let mut shapes = vec![ShapeCounts::default(); plan.requests.len()];
    let mut protocol = protocol_counts::ProtocolCounts::default();
    let mut interval_waits = 0;
    let mut spin = Duration::ZERO;
    let mut coalesced = Coalesced::default();
    let mut stamps = StampCounts::default();
    let mut kernel_latency: Option<Latency> = None;
    let mut send_stamps = SendStampCounts::default();
    let mut send_lateness_kernel = Latency::new();
    let mut send_delay_kernel = Latency::new();
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(w)) => {
                counts.merge(&w.counts);
                connect.merge(&w.connect).expect("same bounds");
                lateness.merge(&w.lateness).expect("same bounds");
                late.merge(&w.late).expect("same bounds");
                handshake_full
                    .merge(&w.handshake_full)
                    .expect("same bounds");
                handshake_resumed
                    .merge(&w.handshake_resumed)
                    .expect("same bounds");
                tls_info = tls_info.or(w.tls);
                protocol.merge(&w.protocol);
                interval_waits += w.interval_waits;
                spin += w.spin;
                coalesced.waits += w.coalesced.waits;
                coalesced.waited += w.coalesced.waited;
                stamps.merge(w.stamps);
                if let Some(k) = &w.kernel_latency {
                    kernel_latency
                        .get_or_insert_with(Latency::new)
                        .merge(k)
                        .expect("same bounds");
                }
                send_stamps.merge(w.send_stamps);
                send_lateness_kernel
                    .merge(&w.send_lateness_kernel)
                    .expect("same bounds");
                send_delay_kernel
                    .merge(&w.send_delay_kernel)
                    .expect("same bounds");
                for (i, n) in w.status.iter().enumerate() {
                    status[i] += n;
                }
                for (s, (sent, done)) in shapes.iter_mut().zip(w.shapes) {
                    s.sent += sent;
                    s.completed += done;
                }
            }
            Ok(Err(e)) => first_err = Some(e),
            Err(_) => first_err = Some(LoadError::Panicked),
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let elapsed = epoch.elapsed();
    collector.finish(elapsed, sink);
    Ok(RunResult {
        counts,
        service: std::mem::take(&mut collector.total_service),
        read_latency: std::mem::take(&mut collector.total_read),
        client_delay: std::mem::take(&mut collector.total_client_delay),
        latency_clock: ClockInUse::of(plan.latency_clock, stamps),
        // Without a stamp each "kernel latency" was its read latency: none was measured.
        kernel_latency: kernel_latency.filter(|_| stamps.stamped > 0),
        stamps,
        send_stamps: SendStampCounts {
            every: match kernel_stamps.send() {
                true => SEND_SAMPLE_EVERY,
                false => 0,
            },
            ..send_stamps
        },
        send_lateness_kernel,
        send_delay_kernel,
        latency: collector.total,
        lateness,
        late,
        connect,
        handshake_full,
        handshake_resumed,
        tls: tls_info,
        client_cert_asked: tls.as_ref().is_some_and(tls::Connector::client_cert_asked),
        status: status
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(c, &n)| (c as u16, n))
            .collect(),
        shapes,
        h2: protocol.h2,
        h3: protocol.h3,
        elapsed,
        interrupted: control.stopped(),
        interval_waits,
        spin,
        coalesced,
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

#[cfg(test)]
mod tests;
