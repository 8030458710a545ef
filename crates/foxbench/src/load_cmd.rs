//! `foxbench load`: flags in ab's and wrk's language, wired to the engine and the report.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use load::{
    parse_duration, Arrival, Control, Plan, RequestSpec, RunResult, StatusSet, Stop, Target,
};
use report::LoadReport;

/// Flags of `foxbench load`. ab's and wrk's spellings are accepted where they agree.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  foxbench load -c 100 -d 10s http://127.0.0.1:8080/\n  foxbench load -n 100000 -c 10 http://127.0.0.1:6666/     (the ab protocol)\n  foxbench load --rate 20000 -c 200 -d 30s http://[::1]:8080/   (open model)"
)]
pub struct LoadArgs {
    /// The http:// URL to load (IPv4, [IPv6] or a host name resolved once).
    pub url: String,

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

    /// Open model: send this many requests per second in total, answered or not, and
    /// time each from when it was due (corrects coordinated omission).
    #[arg(short = 'R', long = "rate")]
    pub rate: Option<f64>,

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

    /// Write the result as JSON to FILE, or "-" for stdout (the text report then goes to stderr).
    #[arg(long = "json")]
    pub json: Option<String>,

    /// No progress bar and no text report (errors and warnings still print).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Print the latency distribution (always printed; accepted for wrk compatibility).
    #[arg(long = "latency", hide = true)]
    pub latency: bool,
}

fn build_plan(args: &LoadArgs) -> Result<Plan> {
    let target = Target::parse(&args.url)?;
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
    let threads = match args.threads {
        Some(0) => bail!("--threads must be at least 1"),
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut plan = Plan::new(target);
    plan.request = spec;
    plan.connections = args.connections;
    plan.threads = threads;
    plan.pipeline = args.pipeline;
    plan.keepalive = !args.no_keepalive;
    plan.timeout = args.timeout;
    plan.connect_timeout = args.connect_timeout;
    plan.arrival = match args.rate {
        Some(r) => Arrival::Open { rate_per_sec: r },
        None => Arrival::Closed,
    };
    plan.stop = match (args.requests, args.duration) {
        (Some(n), _) => Stop::Requests(n),
        (None, Some(d)) => Stop::Duration(d),
        (None, None) => Stop::Duration(Duration::from_secs(10)),
    };
    if let Some(fs) = &args.fail_status {
        plan.fail_status = StatusSet::parse(fs).map_err(anyhow::Error::msg)?;
    }
    if args.no_keepalive && args.pipeline > 1 {
        bail!("--pipeline needs keep-alive: drop --no-keepalive or --pipeline");
    }
    // Encode once here too, so a bad method fails before anything starts.
    plan.request.encode(&plan.target, !plan.keepalive)?;
    Ok(plan)
}

/// Raises the open-file limit to what `connections` needs, up to the hard limit.
fn ensure_fd_limit(connections: usize) -> Result<()> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let need = connections as u64 + 64;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).context("cannot read RLIMIT_NOFILE")?;
    if soft >= need {
        return Ok(());
    }
    if hard < need {
        bail!(
            "-c {connections} needs {need} open files but the hard limit is {hard}: raise it (ulimit -Hn, or LimitNOFILE= in systemd) or use fewer connections"
        );
    }
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).context("cannot raise RLIMIT_NOFILE")?;
    Ok(())
}

/// One blocking connect before the run, so a dead target is one clear error, not a
/// report full of connect failures.
fn preflight(plan: &Plan) -> Result<()> {
    let addr = plan.target.addr;
    match TcpStream::connect_timeout(&addr, plan.connect_timeout) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            bail!("connection refused by {addr}: is the server running?")
        }
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => bail!(
            "cannot connect to {addr}: no answer within {:?} (--connect-timeout)",
            plan.connect_timeout
        ),
        Err(e) => bail!("cannot connect to {addr}: {e}"),
    }
}

struct Usage {
    user_s: f64,
    sys_s: f64,
    max_rss_bytes: u64,
}

fn usage() -> Usage {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => {
            let tv = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            Usage {
                user_s: tv(u.user_time()),
                sys_s: tv(u.system_time()),
                max_rss_bytes: u.max_rss().max(0) as u64 * 1024,
            }
        }
        Err(_) => Usage {
            user_s: 0.0,
            sys_s: 0.0,
            max_rss_bytes: 0,
        },
    }
}

/// Runs `foxbench load`.
pub fn run(args: LoadArgs) -> Result<ExitCode> {
    let plan = build_plan(&args)?;
    ensure_fd_limit(plan.connections)?;
    preflight(&plan)?;
    let threads = load::effective_threads(&plan);
    let control = Control::new(threads);

    // First Ctrl-C (or SIGTERM): stop and report. Second: exit at once.
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, interrupted.clone())
            .context("cannot install signal handler")?;
        signal_hook::flag::register(sig, interrupted.clone())
            .context("cannot install signal handler")?;
    }

    let show_progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let watcher = {
        let control = control.clone();
        let interrupted = interrupted.clone();
        let stop = plan.stop;
        std::thread::Builder::new()
            .name("foxbench-progress".into())
            .spawn(move || watch(&control, &interrupted, stop, show_progress))
            .context("cannot start progress thread")?
    };

    let before = usage();
    let started = Instant::now();
    let result = load::run(&plan, &control);
    let wall = started.elapsed();
    let after = usage();
    control.stop(); // ends the watcher
    let _ = watcher.join();
    let result = result?;

    let report = build_report(&plan, threads, &result, &before, &after, wall);
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
    if args.quiet {
        if let Some(w) = report.saturation_warning() {
            let _ = writeln!(std::io::stderr(), "foxbench: warning: {w}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Polls for signals and draws the progress bar until the run ends.
fn watch(control: &Control, interrupted: &AtomicBool, stop: Stop, show: bool) {
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
            b.set_message(format!(
                "{} requests, {:.0} req/s, {} errors",
                s.completed, rate, s.errors
            ));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

fn build_report(
    plan: &Plan,
    threads: usize,
    r: &RunResult,
    before: &Usage,
    after: &Usage,
    wall: Duration,
) -> LoadReport {
    let c = &r.counts;
    let elapsed = r.elapsed.as_secs_f64().max(1e-9);
    let cpu_user = (after.user_s - before.user_s).max(0.0);
    let cpu_sys = (after.sys_s - before.sys_s).max(0.0);
    let cpu_percent =
        100.0 * (cpu_user + cpu_sys) / (wall.as_secs_f64().max(1e-9) * threads as f64);
    let completed = c.completed();
    let dist = |h: &stats::Latency| report::Distribution {
        summary: h.summary(),
        hdr_base64: h.to_base64(),
        buckets: h.buckets(20),
    };
    LoadReport {
        schema: report::LOAD_SCHEMA.into(),
        tool: report::Tool {
            name: "foxbench".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        target: report::TargetInfo {
            url: plan.target.url.clone(),
            address: plan.target.addr.to_string(),
            method: plan.request.method.clone(),
        },
        config: report::LoadConfig {
            model: match plan.arrival {
                Arrival::Closed => "closed".into(),
                Arrival::Open { .. } => "open".into(),
            },
            rate_per_sec: match plan.arrival {
                Arrival::Closed => None,
                Arrival::Open { rate_per_sec } => Some(rate_per_sec),
            },
            connections: plan.connections as u64,
            threads: threads as u64,
            pipeline: if plan.keepalive {
                plan.pipeline as u64
            } else {
                1
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
        },
        elapsed_s: elapsed,
        interrupted: r.interrupted,
        requests: shootout::counts::requests(c),
        errors: shootout::counts::errors(c),
        status: r
            .status
            .iter()
            .map(|(code, n)| (code.to_string(), *n))
            .collect::<BTreeMap<_, _>>(),
        throughput: report::Throughput {
            requests_per_sec: completed as f64 / elapsed,
            bytes_read: c.bytes_read,
            bytes_written: c.bytes_written,
            read_bytes_per_sec: c.bytes_read as f64 / elapsed,
        },
        latency: dist(&r.latency),
        connect: (!r.connect.is_empty()).then(|| dist(&r.connect)),
        connections: shootout::counts::connections(c),
        client: report::Client {
            cpus: threads as u64,
            cpu_user_s: cpu_user,
            cpu_sys_s: cpu_sys,
            cpu_percent,
            cpu_us_per_request: (completed > 0)
                .then(|| (cpu_user + cpu_sys) * 1e6 / completed as f64),
            max_rss_bytes: after.max_rss_bytes,
            saturated: cpu_percent >= report::SATURATED_PERCENT,
        },
    }
}
