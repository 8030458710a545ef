//! `foxbench load`: flags in ab's and wrk's language, wired to the engine and the report.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use clap::Args;
use load::{
    parse_duration, Arrival, Control, Plan, PlanError, RequestSpec, RunResult, Selection,
    StatusSet, Stop, Target, TlsOptions, Verify,
};
use report::slo::Slo;
use report::LoadReport;

use crate::agent::{self, AgentFlags};
use crate::load_series::Observers;

/// Flags of `foxbench load`. ab's and wrk's spellings are accepted where they agree.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  foxbench load -c 100 -d 10s http://127.0.0.1:8080/\n  foxbench load -n 100000 -c 10 http://127.0.0.1:6666/     (the ab protocol)\n  foxbench load --rate 20000 -c 200 -d 30s http://[::1]:8080/   (open model)"
)]
pub struct LoadArgs {
    /// The http:// or https:// URL to load (IPv4, [IPv6] or a host name resolved once). Its path may
    /// hold random parts filled per request: `/{hex:6}.svg`, `/doc/{int:1-10000}`. With
    /// --urls, paths in the file resolve against it.
    #[arg(required_unless_present = "urls")]
    pub url: Option<String>,

    /// A request list: one request per line, `[METHOD] URL [@bodyfile]`, or plain URLs,
    /// all to one host and port; `#` starts a comment.
    #[arg(long = "urls", value_name = "FILE")]
    pub urls: Option<PathBuf>,

    /// How each request picks its line of --urls: round-robin or random.
    #[arg(long = "select", value_enum, default_value = "round-robin")]
    pub select: SelectArg,

    /// Seed of the random parts and of random selection, to reproduce a run's requests
    /// (default: a fresh seed, shown in the report).
    #[arg(long = "seed")]
    pub seed: Option<u64>,

    /// The length of the intervals of the per-second series (JSON `intervals`, progress p99).
    #[arg(long = "interval", value_parser = parse_duration, default_value = "1s")]
    pub interval: Duration,

    /// Concurrent connections.
    #[arg(short = 'c', long = "connections", default_value_t = 10)]
    pub connections: usize,

    /// Stop after this many requests (ab's -n).
    #[arg(short = 'n', long = "requests", conflicts_with = "duration")]
    pub requests: Option<u64>,

    /// Stop after this long: 10s, 500ms, 2m (default 10s).
    #[arg(short = 'd', long = "duration", value_parser = parse_duration)]
    pub duration: Option<Duration>,

    /// Worker threads (default: the CPUs this process may run on).
    #[arg(short = 't', long = "threads")]
    pub threads: Option<usize>,

    /// Requests in flight per connection (HTTP/1.1 pipelining).
    #[arg(long = "pipeline", default_value_t = 1)]
    pub pipeline: usize,

    /// Speak HTTP/2: h2 negotiated by ALPN for https://, h2c with prior knowledge for
    /// http://. A server that cannot is one line and exit 2.
    #[arg(long = "http2")]
    pub http2: bool,

    /// --http2: streams kept in flight on each connection (h2load's -m), never more than
    /// the server's SETTINGS_MAX_CONCURRENT_STREAMS.
    #[arg(long = "streams", default_value_t = 1, requires = "http2")]
    pub streams: u32,

    /// --http2: the receive window of each stream, in bytes (default 2^30-1, as h2load's).
    /// (--window is --find-max's.)
    #[arg(long = "stream-window", value_name = "BYTES", requires = "http2")]
    pub stream_window: Option<u32>,

    /// --http2: the receive window of each connection, in bytes (default 2^30-1).
    #[arg(long = "connection-window", value_name = "BYTES", requires = "http2")]
    pub connection_window: Option<u32>,

    /// Open model: send this many requests per second in total, answered or not, and
    /// time each from when it was due (corrects coordinated omission). A ramp:
    /// `1000..20000/60s`; stages `1000/10s,5000/30s` (each reached at its end); steps
    /// `1000+1000/10s..10000`. A ramp without -d or -n runs for its stages.
    #[arg(short = 'R', long = "rate", value_parser = load::Rate::parse)]
    pub rate: Option<load::Rate>,

    /// Keep connections alive (the default; accepted for ab compatibility).
    #[arg(short = 'k', long = "keepalive", conflicts_with = "no_keepalive")]
    pub keepalive: bool,

    /// Open a new connection for every request and send Connection: close.
    #[arg(long = "no-keepalive")]
    pub no_keepalive: bool,

    /// Request method (default GET, or POST with -p, PUT with -u).
    #[arg(short = 'm', long = "method")]
    pub method: Option<String>,

    /// Send HEAD requests (ab's -i).
    #[arg(short = 'i', long = "head", conflicts_with = "method")]
    pub head: bool,

    /// Extra header, "Name: value"; repeatable.
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,

    /// Request body.
    #[arg(short = 'b', long = "body", conflicts_with_all = ["post_file", "put_file"])]
    pub body: Option<String>,

    /// POST the contents of FILE (ab's -p).
    #[arg(short = 'p', long = "post-file", conflicts_with = "put_file")]
    pub post_file: Option<PathBuf>,

    /// PUT the contents of FILE (ab's -u).
    #[arg(short = 'u', long = "put-file")]
    pub put_file: Option<PathBuf>,

    /// Content-Type of the body (ab's -T).
    #[arg(short = 'T', long = "content-type")]
    pub content_type: Option<String>,

    /// A request with no complete response after this long fails as a timeout.
    #[arg(short = 's', long = "timeout", value_parser = parse_duration, default_value = "10s")]
    pub timeout: Duration,

    /// A connection not established after this long fails as a connect error.
    #[arg(long = "connect-timeout", value_parser = parse_duration, default_value = "5s")]
    pub connect_timeout: Duration,

    /// Statuses counted as failures: "400-599,302", or "none" (default: outside 200-399).
    #[arg(long = "fail-status")]
    pub fail_status: Option<String>,

    /// https: trust the CA certificates in this PEM file instead of the system's roots.
    #[arg(long = "cacert", value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,

    /// https: do not verify the server's certificate (shown in the report).
    #[arg(long = "insecure")]
    pub insecure: bool,

    /// https: present this client certificate (PEM, leaf first) when the server asks for one.
    #[arg(long = "cert", value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,

    /// https: the private key of --cert (PEM: PKCS#8, RSA or EC; RSA, ECDSA or Ed25519).
    #[arg(long = "key", value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,

    /// https: resume TLS sessions on reconnect (tickets or session IDs).
    #[arg(long = "tls-resume", value_enum, default_value = "on")]
    pub tls_resume: OnOff,

    /// Write the result as JSON to FILE, or "-" for stdout (the text report then goes to stderr).
    #[arg(long = "json")]
    pub json: Option<String>,

    /// Also write every interval's latency histogram to FILE as an HdrHistogram interval log
    /// (`.hlog`, tag `corrected`), for HdrHistogram's HistogramLogProcessor and plotters.
    #[arg(long = "hlog", value_name = "FILE")]
    pub hlog: Option<PathBuf>,

    /// Service-level objective: comma-separated clauses such as
    /// 'p99<5ms,p99.9<=20ms,errors<0.1%,rps>=9500'; each verdict is printed and in the JSON,
    /// and the run exits 1 when one fails.
    #[arg(long = "slo", value_name = "CLAUSES")]
    pub slo: Option<String>,

    /// Stop the run as soon as a --slo clause can no longer be met: a latency percentile
    /// broken in any interval, or (with -n) more errors than the whole run may have.
    #[arg(long = "slo-abort", requires = "slo")]
    pub slo_abort: bool,

    /// Capacity search: find the highest constant rate at which every clause of this
    /// objective holds ('p99<10ms', in --slo's syntax), judging whole windows of the open
    /// model: doubling from --start-rate to bracket the knee, then bisecting. Reports the
    /// rate, every window, the latency spectrum at 50/80/100/110% of it and whether the
    /// client bounded it. Exits 0 when found, 1 when the objective fails at every rate tried.
    #[arg(long = "find-max", value_name = "OBJECTIVE", conflicts_with_all = ["rate", "requests", "duration", "slo", "shard", "start_at", "hlog"])]
    pub find_max: Option<String>,

    /// --find-max: the whole search's time budget, spectrum included; when it runs out the
    /// report gives the best bracket found.
    #[arg(long = "max-time", value_parser = parse_duration, default_value = "60s", requires = "find_max")]
    pub max_time: Duration,

    /// --find-max: the length of each constant-rate window judged.
    #[arg(long = "window", value_parser = parse_duration, default_value = "2s", requires = "find_max")]
    pub window: Duration,

    /// --find-max: the first rate tried, requests per second.
    #[arg(long = "start-rate", default_value_t = 1000.0, requires = "find_max")]
    pub start_rate: f64,

    /// No progress bar and no text report (errors and warnings still print).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Run shard I of N agents sharing this plan (I from 0): its share of the connections,
    /// of -n, and every Nth arrival of the open model's schedule. `foxbench merge` adds
    /// the agents' results up exactly.
    #[arg(long = "shard", value_name = "I/N", value_parser = load::Shard::parse)]
    pub shard: Option<load::Shard>,

    /// Prepare (resolve, check the target, raise limits), then start at this instant:
    /// RFC 3339 (2026-11-24T23:30:00Z) or +DURATION from $FOXBENCH_START_BASE (RFC 3339)
    /// or, without it, from now. Ready only after it: exit 2, unless --late-ok.
    #[arg(long = "start-at", value_name = "TIME")]
    pub start_at: Option<String>,

    /// With --start-at: start at once when ready after the instant, rather than fail.
    #[arg(long = "late-ok", requires = "start_at")]
    pub late_ok: bool,

    /// Serve a live page of the run at ADDR (default 127.0.0.1:0, a free loopback port):
    /// the URL, with an unguessable token in its path, is printed at the start; when the run
    /// ends the page becomes the final report. Give an address beyond loopback explicitly.
    #[arg(long = "dashboard", value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = "127.0.0.1:0")]
    pub dashboard: Option<std::net::SocketAddr>,

    /// Print the latency distribution (always printed; accepted for wrk compatibility).
    #[arg(long = "latency", hide = true)]
    pub latency: bool,
}

/// A switch given as a value: `--tls-resume off`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    /// Enabled.
    On,
    /// Disabled.
    Off,
}

/// `--select`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectArg {
    /// In the file's order.
    RoundRobin,
    /// Uniformly at random.
    Random,
}

/// The request every line of --urls (or the URL) starts from: method, headers, body.
fn default_request(args: &LoadArgs) -> Result<RequestSpec> {
    let mut spec = RequestSpec::default();
    let mut default_method = "GET";
    if let Some(b) = &args.body {
        spec.body = b.clone().into_bytes();
        default_method = "POST";
    }
    if let Some(f) = &args.post_file {
        spec.body =
            std::fs::read(f).with_context(|| format!("cannot read --post-file {}", f.display()))?;
        default_method = "POST";
    }
    if let Some(f) = &args.put_file {
        spec.body =
            std::fs::read(f).with_context(|| format!("cannot read --put-file {}", f.display()))?;
        default_method = "PUT";
    }
    spec.method = if args.head {
        "HEAD".into()
    } else {
        args.method.clone().unwrap_or_else(|| default_method.into())
    };
    spec.content_type = args.content_type.clone();
    for h in &args.headers {
        spec.headers.push(load::parse_header(h)?);
    }
    Ok(spec)
}

/// A [`PlanError`] in the language of the flags: the flag that sets it, then the problem.
fn flag_error(e: &PlanError) -> String {
    let flag = match e {
        PlanError::Connections => "--connections",
        PlanError::Threads => "--threads",
        PlanError::Pipeline
        | PlanError::PipelineWithoutKeepalive
        | PlanError::PipelineWithHttp2 => "--pipeline",
        PlanError::Streams | PlanError::StreamsWithoutKeepalive => "--streams",
        PlanError::Window => "--stream-window",
        PlanError::ConnectionWindow => "--connection-window",
        PlanError::Rate(_) => "--rate",
        PlanError::Requests => "--requests",
        PlanError::Duration => "--duration",
        PlanError::Timeout => "--timeout",
        PlanError::ConnectTimeout => "--connect-timeout",
        PlanError::Interval => "--interval",
        PlanError::NoRequests => "--urls",
        PlanError::Shard { setting, .. } => return format!("--shard: {setting} {}", e.problem()),
    };
    format!("{flag} {}", e.problem())
}

/// A seed for a run that was given none: different per run, and reported so that the run
/// can be repeated with --seed.
fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (t.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32)
}

/// Turns the flags into a plan and checks it whole, before any network I/O.
pub(crate) fn build_plan(args: &LoadArgs) -> Result<Plan> {
    let spec = default_request(args)?;
    let base = args.url.as_deref().map(Target::parse).transpose()?;
    let (target, requests) = match &args.urls {
        Some(path) => load::load_urls(path, base.as_ref(), &spec)?,
        None => {
            let target = base.expect("clap requires a URL without --urls");
            let spec = RequestSpec {
                path: target.path.clone(),
                ..spec
            };
            (target, vec![spec])
        }
    };
    let threads = match args.threads {
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut plan = Plan::new(target);
    plan.requests = requests;
    plan.selection = match args.select {
        SelectArg::RoundRobin => Selection::RoundRobin,
        SelectArg::Random => Selection::Random,
    };
    plan.seed = args.seed.unwrap_or_else(fresh_seed);
    plan.connections = args.connections;
    plan.threads = threads;
    plan.pipeline = args.pipeline;
    if args.http2 {
        let d = load::H2Options::default();
        plan.protocol = load::Protocol::Http2(load::H2Options {
            streams: args.streams,
            window: args.stream_window.unwrap_or(d.window),
            connection_window: args.connection_window.unwrap_or(d.connection_window),
            ..d
        });
    }
    plan.keepalive = !args.no_keepalive;
    plan.timeout = args.timeout;
    plan.connect_timeout = args.connect_timeout;
    plan.interval = args.interval;
    plan.arrival = match &args.rate {
        Some(r) => Arrival::Open { rate: r.clone() },
        None => Arrival::Closed,
    };
    plan.stop = match (args.requests, args.duration) {
        (Some(n), _) => Stop::Requests(n),
        (None, Some(d)) => Stop::Duration(d),
        (None, None) => Stop::Duration(
            args.rate
                .as_ref()
                .and_then(load::Rate::stages_duration)
                .unwrap_or(Duration::from_secs(10)),
        ),
    };
    plan.tls = TlsOptions {
        verify: match (&args.cacert, args.insecure) {
            (Some(path), _) => Verify::CaFile(path.clone()),
            (None, true) => Verify::Insecure,
            (None, false) => Verify::System,
        },
        resume: args.tls_resume == OnOff::On,
        client: match (&args.cert, &args.key) {
            (Some(cert), Some(key)) => Some(load::ClientCert {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ => None,
        },
    };
    if let Some(fs) = &args.fail_status {
        plan.fail_status = StatusSet::parse(fs).map_err(|e| anyhow!("--fail-status: {e}"))?;
    }
    plan.validate().map_err(|e| anyhow!(flag_error(&e)))?;
    // Encode once here too, so a bad method or template fails before anything starts.
    for r in &plan.requests {
        r.encode(&plan.target, !plan.keepalive)?;
    }
    Ok(plan)
}

/// Runs `foxbench load`.
pub fn run(args: LoadArgs) -> Result<ExitCode> {
    if let Some(objective) = &args.find_max {
        return crate::capacity_cmd::run(&args, objective);
    }
    let agent = AgentFlags {
        shard: args.shard,
        start_at: args.start_at.as_deref(),
        late_ok: args.late_ok,
    };
    let start_at = agent::start_instant(&agent)?;
    let mut plan = build_plan(&args)?;
    let sharded = agent::shard(&mut plan, agent.shard)?;
    let slo = args.slo.as_deref().map(str::parse::<Slo>).transpose()?;
    if let Some(slo) = &slo {
        // Only the open model records a service-time histogram.
        slo.check_measurable(matches!(plan.arrival, Arrival::Open { .. }))?;
    }
    load::raise_fd_limit(plan.connections)?;
    load::preflight(&plan)?;
    let threads = plan.effective_threads();
    let control = Control::new(threads);

    // First Ctrl-C (or SIGTERM): stop and report. Second: exit at once.
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            sig,
            crate::exit::INTERRUPTED,
            interrupted.clone(),
        )
        .context("cannot install signal handler")?;
        signal_hook::flag::register(sig, interrupted.clone())
            .context("cannot install signal handler")?;
    }

    // The last complete interval's p99 in ns, for the progress line.
    let live_p99_ns = Arc::new(AtomicU64::new(0));
    let show_progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let watcher = {
        let control = control.clone();
        let interrupted = interrupted.clone();
        let live_p99_ns = live_p99_ns.clone();
        let stop = plan.stop;
        std::thread::Builder::new()
            .name("foxbench-progress".into())
            .spawn(move || watch(&control, &interrupted, &live_p99_ns, stop, show_progress))
            .context("cannot start progress thread")?
    };

    let total_requests = match plan.stop {
        Stop::Requests(n) => Some(n),
        Stop::Duration(_) => None,
    };
    let series = crate::live::series();
    let mut live = args
        .dashboard
        .map(|addr| crate::live::Live::bind(addr, &plan, slo.as_ref(), threads, series.clone()))
        .transpose()?;
    let abort = slo.as_ref().filter(|_| args.slo_abort);
    let mut observers = Observers::new(args.hlog.as_deref(), abort, total_requests)?;
    // Everything is ready: wait for the synchronised start, if any, as the last step.
    agent::wait(start_at, agent.late_ok, &interrupted)?;
    let before = probe::own_usage();
    let tcp_before = probe::tcp_counters().ok();
    let started_wall = std::time::SystemTime::now();
    let started = Instant::now();
    if let Some(live) = &mut live {
        live.start(threads, control.clone());
    }
    // Bounded: the newest intervals at full resolution, older ones merged (--hlog keeps all).
    let mut series_error = None;
    let result = load::run_with_intervals(&plan, &control, &mut |iv| {
        live_p99_ns.store(iv.latency.percentile_ns(99.0), Ordering::Relaxed);
        if series_error.is_none() {
            let mut rows = series.lock().unwrap_or_else(|e| e.into_inner());
            series_error = rows.push(iv.index, report::IntervalRow::from(iv)).err();
        }
        if let Some(live) = &live {
            live.pushed();
        }
        if observers.observe(iv) {
            control.stop();
        }
    });
    if let Some(e) = series_error {
        // Cannot happen with the rows made above; said rather than hidden if it does.
        eprintln!("foxbench: warning: the interval series is incomplete: {e}");
    }
    let intervals: Vec<report::IntervalRow> = series
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .rows()
        .cloned()
        .collect();
    let wall = started.elapsed();
    let used = probe::own_usage().since(&before);
    let tcp_after = probe::tcp_counters().ok();
    control.stop(); // ends the watcher
    let _ = watcher.join();
    let result = result?;
    let breach = observers.breach.take();
    observers.finish()?;

    let mut report = build_report(&plan, threads, &result, intervals, &used, wall);
    let (shard, start) = agent::sections(sharded.as_ref(), start_at, started_wall);
    report.shard = shard;
    report.start = Some(start);
    report.slo = slo.as_ref().map(|s| s.judge(&report, breach.as_ref()));
    report.tcp = tcp_before
        .zip(tcp_after)
        .map(|(a, b)| tcp_report(&plan, &result, &report, &a, &b));
    let text = report.to_text();
    match args.json.as_deref() {
        Some("-") => {
            let mut out = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, &report)
                .context("cannot write JSON to stdout")?;
            writeln!(out).context("cannot write JSON to stdout")?;
            if !args.quiet {
                let _ = std::io::stderr().write_all(text.as_bytes());
            }
        }
        Some(path) => {
            let json = serde_json::to_string_pretty(&report).expect("report serializes");
            std::fs::write(path, json + "\n")
                .with_context(|| format!("cannot write --json {path}"))?;
            if !args.quiet {
                std::io::stdout()
                    .lock()
                    .write_all(text.as_bytes())
                    .context("cannot write report")?;
            }
        }
        None => {
            if !args.quiet {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .context("cannot write report")?;
            }
        }
    }
    // The result is on disk and on screen before the page gets it: `finish` may wait for
    // pages, and a second Ctrl-C in that wait exits at once.
    if let Some(live) = live {
        let json = serde_json::to_string_pretty(&report).expect("report serializes");
        live.finish(
            &report::load_html::to_html(&report),
            &json,
            report.requests.completed,
        );
    }
    if args.quiet {
        if let Some(w) = report.saturation_warning() {
            let _ = writeln!(std::io::stderr(), "foxbench: warning: {w}");
        }
        for w in report.tcp_warnings() {
            let _ = writeln!(std::io::stderr(), "foxbench: warning: {w}");
        }
    }
    match &report.slo {
        Some(verdict) if !verdict.passed => {
            if args.quiet {
                let failed: Vec<&str> = verdict
                    .clauses
                    .iter()
                    .filter(|c| !c.passed)
                    .map(|c| c.clause.as_str())
                    .collect();
                let _ = writeln!(
                    std::io::stderr(),
                    "foxbench: --slo failed: {}",
                    failed.join(", ")
                );
            }
            Ok(ExitCode::from(crate::exit::FAILED))
        }
        _ => match report.no_success() {
            // The run completed and measured nothing.
            Some(line) => {
                if args.quiet {
                    let _ = writeln!(std::io::stderr(), "foxbench: {line}");
                }
                Ok(ExitCode::from(crate::exit::FAILED))
            }
            None => Ok(ExitCode::SUCCESS),
        },
    }
}

/// Polls for signals and draws the progress bar until the run ends.
pub(crate) fn watch(
    control: &Control,
    interrupted: &AtomicBool,
    live_p99_ns: &AtomicU64,
    stop: Stop,
    show: bool,
) {
    let bar = show.then(|| {
        let (len, template) = match stop {
            Stop::Requests(n) => (
                n,
                "{elapsed_precise} [{bar:30}] {pos}/{len} requests  {msg}",
            ),
            Stop::Duration(d) => (d.as_millis() as u64, "{elapsed_precise} [{bar:30}] {msg}"),
        };
        let b = indicatif::ProgressBar::with_draw_target(
            Some(len),
            indicatif::ProgressDrawTarget::stderr(),
        );
        b.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        b
    });
    let start = Instant::now();
    let mut last = (Instant::now(), 0u64);
    let mut rate = 0.0;
    while !control.stopped() {
        if interrupted.load(Ordering::Relaxed) {
            control.stop();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        if let Some(b) = &bar {
            let s = control.snapshot();
            let dt = last.0.elapsed().as_secs_f64();
            if dt >= 0.5 {
                rate = (s.completed - last.1) as f64 / dt;
                last = (Instant::now(), s.completed);
            }
            match stop {
                Stop::Requests(_) => b.set_position(s.completed + s.errors),
                Stop::Duration(_) => b.set_position(start.elapsed().as_millis() as u64),
            }
            let p99 = live_p99_ns.load(Ordering::Relaxed);
            b.set_message(format!(
                "{} requests, {:.0} req/s, p99 {}, {} errors",
                s.completed,
                rate,
                if p99 == 0 {
                    "-".to_string()
                } else {
                    report::human_us(p99 as f64 / 1e3)
                },
                s.errors
            ));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// The plan in the report's terms, and the report: wiring only.
/// The kernel's TCP counters between `before` and `after` and the rules' warnings on them
/// (the same rules as the shootout's diagnosis). The client's kernel delays the ACKs, so
/// the Nagle rule holds for a remote server too; its somaxconn is only known on loopback.
fn tcp_report(
    plan: &Plan,
    result: &RunResult,
    report: &LoadReport,
    before: &probe::TcpCounters,
    after: &probe::TcpCounters,
) -> report::tcp::TcpReport {
    let deltas = report::tcp::TcpCounts::from_named(after.since(before).named());
    let loopback = plan.target.addr.ip().is_loopback();
    report::tcp::report(&report::tcp::Evidence {
        deltas: &deltas,
        completed: result.counts.completed(),
        latency: &result.latency,
        connect: (!result.connect.is_empty()).then_some(&result.connect),
        cpu_saturated: report.client.saturated,
        somaxconn: loopback
            .then(|| load::limits::Machine::read().somaxconn)
            .flatten(),
        loopback,
        runtime: report::tcp::Runtime::Other,
    })
}

pub(crate) fn build_report(
    plan: &Plan,
    threads: usize,
    r: &RunResult,
    intervals: Vec<report::IntervalRow>,
    used: &probe::OwnUsage,
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
    let verify = plan.tls.verify.to_string();
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
    let client = report::Client::measure(
        threads as u64,
        used.user.as_secs_f64(),
        used.sys.as_secs_f64(),
        wall.as_secs_f64(),
        r.counts.completed(),
        used.max_rss_bytes,
    );
    let mut report = LoadReport::new(target, config, measured, table, intervals, client);
    if let load::Protocol::Http2(opts) = plan.protocol {
        let over_tls = plan.target.scheme == load::Scheme::Https;
        report.protocol = Some(if over_tls { "h2" } else { "h2c" }.into());
        report.http2 = r.h2.as_ref().map(|h| http2_report(h, opts, r));
    }
    report
}

/// The HTTP/2 section of the report, from the engine's counts.
fn http2_report(h: &load::H2Counts, opts: load::H2Options, r: &RunResult) -> report::Http2Report {
    let by_code = |counts: &[u64; 15]| {
        counts
            .iter()
            .zip(load::h2::CODE_NAMES)
            .filter(|(n, _)| **n > 0)
            .map(|(n, name)| (name.to_string(), *n))
            .collect()
    };
    report::Http2Report {
        alpn: r.tls.as_ref().and_then(|t| t.alpn.clone()),
        streams: u64::from(opts.streams),
        server_max_streams: h.server_max_streams.map(u64::from),
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
    }
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
