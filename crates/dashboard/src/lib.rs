//! `foxbench load --dashboard` and `foxbench shootout --dashboard`: a live page of a run,
//! served while it goes on.
//!
//! This crate owns the dashboard's HTTP server (loopback by default, every path behind an
//! unguessable token; anything else is 404), its Server-Sent Events and the page itself
//! (`assets/`, with uPlot vendored and embedded: nothing is fetched from outside), whose
//! series take the load report's colours ([`report::palette`], handed to the script). It reads
//! only what the CLI hands it: the run's bounded interval series ([`report::series`], shared,
//! never copied), gauges sampled once a second, and the final report. It runs on its own
//! threads and never touches the load engine, whose hot path it cannot reach; its threads
//! report their own CPU as they work ([`Dashboard::cpu`], left out of the client's) and
//! follow [`Dashboard::pin`] (a shootout's client CPUs, never the target's).
//!
//! One server and one page serve three kinds of run ([`Meta::kind`]): a `load` run, a
//! `find-max` search (each window is a run of its own, and a point on the rate/latency
//! chart) and a `shootout` (each cell is a run; the matrix fills in as cells change).
//!
//! Events: `meta` (the current run's plan: kind, model, interval, target schedule, `--slo`
//! clauses) and `history` (every row so far) when a page connects and again whenever the
//! next run begins ([`Dashboard::begin_run`]), then `interval` per new row; each [`Feed`]'s
//! new items (`gauges`, `service`, `windows`, `cells`); and `done` with the final report's
//! HTML and JSON.
#![forbid(unsafe_code)]

pub mod feed;
pub mod http;
mod stream;
mod threads;

pub use feed::Feed;
use feed::Feeds;

use std::io::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use report::series::Series;
use report::IntervalRow;
use serde::Serialize;

/// The interval series the CLI fills and the dashboard reads.
pub type Shared = Arc<Mutex<Series<IntervalRow>>>;

/// Gauges kept for a late page: an hour at one a second; older ones are dropped (the final
/// report has the run's totals).
pub const GAUGES_KEPT: usize = 3_600;

/// Event streams (pages with the token) served at once; more are refused (503) so a flood
/// cannot spawn threads without end.
pub const MAX_CLIENTS: usize = 32;

/// Connections whose request head is still being read, at once; more are refused (503).
/// Each has [`HEAD_TIMEOUT`] from accept, so a client without the token holds a slot for
/// no longer than that, and never one of the event streams'.
pub const MAX_PENDING: usize = 64;

/// The time a connection gets, from accept, to send its whole request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(2);

/// Why the dashboard cannot start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The address is taken.
    #[error("{addr} is already in use: give another address, or port 0 for a free one")]
    InUse {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Any other bind or setup failure.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the OS said.
        error: std::io::Error,
    },
    /// No randomness for the token.
    #[error("cannot read /dev/urandom for the dashboard's token: {0}")]
    Random(std::io::Error),
}

/// The kind of run a page shows: its parts, beside the current run's charts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// `foxbench load`: one run.
    #[default]
    Load,
    /// `foxbench load --find-max`: the windows' chart; each window is a run.
    FindMax,
    /// `foxbench shootout`: the matrix; each cell is a run, charted at `?cell=N`.
    Shootout,
}

/// What the page needs to know of the plan, sent once per page and run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Meta {
    /// Which parts the page shows.
    pub kind: Kind,
    /// The run's number in a search or a shootout (a cell's link names it); 0 for a load run.
    pub run: u64,
    /// What the run is, for the page's heading (a cell: target and level).
    pub title: String,
    /// The URL loaded.
    pub url: String,
    /// "open" or "closed".
    pub model: String,
    /// The interval length, seconds.
    pub interval_s: f64,
    /// Open model: the schedule's target rate, (seconds, requests/s) points to draw.
    pub target: Vec<(f64, f64)>,
    /// `--slo` clauses, as lines on their charts.
    pub slo: Vec<SloLine>,
    /// The client's CPU share above which it is called client-bound, percent.
    pub saturated_percent: f64,
}

/// One `--slo` clause as the page draws it.
#[derive(Debug, Clone, Serialize)]
pub struct SloLine {
    /// The clause as given.
    pub text: String,
    /// Which chart: "latency", "rate" or "errors".
    pub chart: &'static str,
    /// Latency clauses: the percentile (50, 99, 100 are drawn per interval).
    pub percentile: Option<f64>,
    /// `<`, `<=`, `>`, `>=`.
    pub op: &'static str,
    /// The threshold: µs, requests/s or percent.
    pub threshold: f64,
}

/// One reading of the client, once a second.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Gauge {
    /// Seconds from the start of the run.
    pub t_s: f64,
    /// The client's CPU over the last second, percent of its CPUs.
    pub cpu_percent: f64,
    /// The part of `cpu_percent` spent spinning (before the open model's send instants, or
    /// all the time with `--idle spin`): time to spare, left out when the page judges the
    /// client saturated.
    pub spin_percent: f64,
    /// Connections the client holds established to the target: the engine's own count.
    pub connections_open: u64,
}

/// Open model: one interval's service time, beside its corrected latency (the row of the
/// same `start_s`).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ServicePoint {
    /// When the interval began, seconds from the start of the run.
    pub start_s: f64,
    /// Median service time, µs.
    pub p50_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Longest, µs.
    pub max_us: f64,
}

/// `--find-max`: one window of the search, as a point of the rate/latency chart.
#[derive(Debug, Clone, Serialize)]
pub struct WindowPoint {
    /// The rate the window asked for, requests/s (the chart's x).
    pub offered_per_sec: f64,
    /// The rate it achieved, requests/s.
    pub achieved_per_sec: f64,
    /// Its corrected p99 over the whole window, µs (the chart's y); None without responses.
    pub p99_us: Option<f64>,
    /// Whether it held the objective.
    pub passed: bool,
    /// Which part of the search ran it.
    pub phase: report::search::WindowPhase,
}

/// Where a cell of the matrix stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    /// Not reached yet.
    #[default]
    Waiting,
    /// Being measured.
    Running,
    /// Measured.
    Measured,
    /// Failed (or its target never got to it).
    Failed,
    /// Verification showed it does not apply, or its target was skipped (a tool missing).
    Excluded,
    /// Ctrl-C.
    Interrupted,
}

/// `foxbench shootout`: one cell of the matrix as it stands.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CellState {
    /// The target's name (the matrix's row).
    pub target: String,
    /// The level's name, with its scenario where there are several (the column).
    pub level: String,
    /// Where it stands.
    pub status: CellStatus,
    /// Measured: requests per second.
    pub requests_per_sec: Option<f64>,
    /// Failed or excluded: why.
    pub reason: Option<String>,
    /// Running: the run whose charts the cell links to ([`Meta::run`]).
    pub run: Option<u64>,
}

/// The final report, as the page becomes it.
#[derive(Debug, Serialize)]
struct Done<'a> {
    html: &'a str,
    json: &'a str,
}

#[derive(Default)]
struct State {
    feeds: Feeds,
    /// The current run: its number of [`Dashboard::begin_run`] calls, plan and rows.
    generation: u64,
    meta: Arc<String>,
    series: Option<Shared>,
    /// The `done` event's data, once the run is over.
    done: Option<Arc<String>>,
    closing: bool,
}

struct Inner {
    token: String,
    state: Mutex<State>,
    changed: Condvar,
    /// Connections whose request head is being read.
    pending: AtomicUsize,
    /// Event streams open: pages with the token, the only ones [`Dashboard::finish`] waits for.
    streams: AtomicUsize,
    /// The dashboard's threads: their CPU, its own cost told apart from the engine's, and
    /// the CPUs they may run on.
    threads: threads::Threads,
}

/// A running dashboard.
pub struct Dashboard {
    inner: Arc<Inner>,
    url: String,
    addr: SocketAddr,
    accept: Option<JoinHandle<()>>,
}

impl Dashboard {
    /// Listens on `addr` and serves the page of `series`.
    pub fn bind(addr: SocketAddr, meta: &Meta, series: Shared) -> Result<Dashboard, Error> {
        let listener = TcpListener::bind(addr).map_err(|error| match error.kind() {
            std::io::ErrorKind::AddrInUse => Error::InUse { addr },
            _ => Error::Bind { addr, error },
        })?;
        let local = listener
            .local_addr()
            .map_err(|error| Error::Bind { addr, error })?;
        let token = token().map_err(Error::Random)?;
        let inner = Arc::new(Inner {
            token,
            state: Mutex::new(State {
                meta: Arc::new(serde_json::to_string(meta).expect("meta serializes")),
                series: Some(series),
                ..State::default()
            }),
            changed: Condvar::new(),
            pending: AtomicUsize::new(0),
            streams: AtomicUsize::new(0),
            threads: threads::Threads::default(),
        });
        let url = format!("http://{local}/{}/", inner.token);
        let accept = {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name("foxbench-dashboard".into())
                .spawn(move || accept_loop(&listener, &inner))
                .map_err(|error| Error::Bind { addr, error })?
        };
        Ok(Dashboard {
            inner,
            url,
            addr: local,
            accept: Some(accept),
        })
    }

    /// The page's URL, token included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Tells the pages that the series has one more row (push it first). A wake-up only:
    /// the pages count rows by the series' own [`Series::pushed`], read under its lock.
    pub fn pushed(&self) {
        let _s = self.inner.lock();
        self.inner.changed.notify_all();
    }

    /// Adds one gauge reading.
    pub fn gauge(&self, g: Gauge) {
        self.push(Feed::Gauges, &g);
    }

    /// Adds one item to `feed`; the pages get it at once, a late page with those kept.
    pub fn push(&self, feed: Feed, item: &impl Serialize) {
        let mut s = self.inner.lock();
        s.feeds.push(feed, item);
        self.inner.changed.notify_all();
    }

    /// The next run (a window of a search, a cell of a shootout) begins: its plan and its
    /// rows replace the last run's, on every page (the run-scoped feeds start empty).
    pub fn begin_run(&self, meta: &Meta, series: Shared) {
        let mut s = self.inner.lock();
        s.meta = Arc::new(serde_json::to_string(meta).expect("meta serializes"));
        s.series = Some(series);
        s.generation += 1;
        s.feeds.next_run();
        self.inner.changed.notify_all();
    }

    /// Counts CPU a helper thread of the dashboard used (the CLI's sampler).
    pub fn add_cpu(&self, used: &probe::OwnUsage) {
        self.inner.threads.add(used);
    }

    /// The CPU the dashboard's threads have used so far, ended ones included (each thread
    /// reports after each piece of work): what a measured window leaves out of the client's.
    pub fn cpu(&self) -> probe::OwnUsage {
        self.inner.threads.cpu()
    }

    /// Pins the dashboard's threads, live and to come, to `cpus` (the client's, so that a
    /// page never runs on the target's CPU).
    pub fn pin(&self, cpus: &[usize]) -> std::io::Result<()> {
        self.inner.threads.pin(cpus)
    }

    /// Hands the pages the final report, waits up to `wait` for the connected ones to
    /// receive it, and stops serving. Returns the CPU the dashboard's threads used.
    pub fn finish(mut self, html: &str, json: &str, wait: Duration) -> Duration {
        let done = serde_json::to_string(&Done { html, json }).expect("strings serialize");
        let deadline = Instant::now() + wait;
        {
            let mut s = self.inner.lock();
            s.done = Some(Arc::new(done));
            self.inner.changed.notify_all();
            // Each page's thread ends once it has written `done`.
            while self.inner.streams.load(Ordering::SeqCst) > 0 {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                s = self
                    .inner
                    .changed
                    .wait_timeout(s, left.min(Duration::from_millis(50)))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        self.close();
        self.inner.threads.cpu().cpu()
    }

    fn close(&mut self) {
        self.inner.lock().closing = true;
        self.inner.changed.notify_all();
        // Wakes the accept loop, which then sees `closing`.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.close();
        }
    }
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// 128 random bits, hex: the path prefix nobody can guess.
fn token() -> std::io::Result<String> {
    use std::io::Read as _;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn accept_loop(listener: &TcpListener, inner: &Arc<Inner>) {
    let mut me = inner.threads.join();
    for stream in listener.incoming() {
        me.report();
        if inner.lock().closing {
            return;
        }
        let Some(mut stream) = accepted_or_back_off(stream) else {
            continue;
        };
        let accepted = Instant::now();
        if inner.pending.fetch_add(1, Ordering::SeqCst) >= MAX_PENDING {
            inner.pending.fetch_sub(1, Ordering::SeqCst);
            let _ = stream.write_all(http::status(503, "too many connections\n").as_bytes());
            continue;
        }
        let page = inner.clone();
        let spawned = std::thread::Builder::new()
            .name("foxbench-dashboard-page".into())
            .spawn(move || {
                let mut me = page.threads.join();
                serve(stream, &page, accepted + HEAD_TIMEOUT, &mut me);
            });
        if spawned.is_err() {
            inner.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// How long the accept loop pauses after a failed accept.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The accepted stream, or None after a pause: a failing accept (out of file descriptors,
/// most likely) fails again at once, and retrying without a pause spins a core.
fn accepted_or_back_off(r: std::io::Result<TcpStream>) -> Option<TcpStream> {
    match r {
        Ok(s) => Some(s),
        Err(_) => {
            std::thread::sleep(ACCEPT_BACKOFF);
            None
        }
    }
}

/// Holds one of the [`MAX_CLIENTS`] event-stream slots; gives it back, and wakes
/// [`Dashboard::finish`], when dropped.
struct StreamSlot<'a>(&'a Inner);

impl<'a> StreamSlot<'a> {
    fn take(inner: &'a Inner) -> Option<Self> {
        if inner.streams.fetch_add(1, Ordering::SeqCst) >= MAX_CLIENTS {
            inner.streams.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(StreamSlot(inner))
    }
}

impl Drop for StreamSlot<'_> {
    fn drop(&mut self) {
        let _s = self.0.lock();
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_all();
    }
}

/// Serves one connection, whose request head must arrive by `head_by`, on the thread `me`.
fn serve(mut stream: TcpStream, inner: &Inner, head_by: Instant, me: &mut threads::Member) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let path = http::read_path(&mut stream, head_by);
    inner.pending.fetch_sub(1, Ordering::SeqCst);
    let Some(path) = path else {
        let _ = stream.write_all(http::status(400, "bad request\n").as_bytes());
        return;
    };
    match http::route(&path, &inner.token) {
        http::Route::Page => {
            let _ = stream.write_all(http::ok("text/html; charset=utf-8", &page()).as_bytes());
        }
        http::Route::Events => match StreamSlot::take(inner) {
            // The page's CPU is reported before its slot is given back: `finish` then
            // counts every page it waited for.
            Some(_slot) => stream::events(stream, inner, me),
            None => {
                let reply = http::status(503, "too many dashboard pages open\n");
                let _ = stream.write_all(reply.as_bytes());
            }
        },
        http::Route::Json => {
            let done = inner.lock().done.clone();
            let body = match done {
                Some(d) => serde_json::from_str::<serde_json::Value>(&d)
                    .ok()
                    .and_then(|v| v["json"].as_str().map(str::to_owned)),
                None => None,
            };
            let reply = match body {
                Some(json) => http::ok("application/json", &json),
                None => http::status(404, "the run is not over yet\n"),
            };
            let _ = stream.write_all(reply.as_bytes());
        }
        http::Route::NotFound => {
            let _ = stream.write_all(http::status(404, "not found\n").as_bytes());
        }
    }
}

/// The page: HTML, the vendored uPlot and the dashboard's script, in one document; the
/// script's colours are the report's ([`colours`]).
pub fn page() -> String {
    let script = include_str!("../assets/dashboard.js").replace("/*COLOURS*/", &colours());
    include_str!("../assets/dashboard.html")
        .replace(
            "/*UPLOT_CSS*/",
            include_str!("../assets/uplot/uPlot.min.css"),
        )
        .replace(
            "/*UPLOT_JS*/",
            include_str!("../assets/uplot/uPlot.iife.min.js"),
        )
        .replace("/*DASHBOARD_JS*/", &script)
}

/// Each series' colour by its key (`{"p50":"#1f77b4",...}`): the report's palette
/// ([`report::palette::Line`]), so that the page draws each series as the load report does.
pub fn colours() -> String {
    let table: serde_json::Map<String, serde_json::Value> = report::palette::Line::ALL
        .iter()
        .map(|l| (l.key().to_string(), l.colour().into()))
        .collect();
    serde_json::Value::Object(table).to_string()
}

#[cfg(test)]
mod tests;
