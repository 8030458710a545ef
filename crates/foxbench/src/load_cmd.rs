//! `foxbench load`: flags in ab's and wrk's language, wired to the engine and the report.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use load::{
    Arrival, Control, Plan, PlanError, RequestSpec, Selection, StatusSet, Stop, Target, TlsOptions,
    Verify,
};

use crate::agent::{self, AgentFlags};
use crate::cli::{self, Flags};
pub use crate::load_args::{LoadArgs, OnOff, SelectArg};
use crate::load_series::Observers;

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
    match e {
        // The share is the agent's flag; the setting it splits is named in the problem.
        PlanError::Shard { setting, .. } => {
            format!("--shard: {} {}", setting.name(), e.problem().worded(&Flags))
        }
        e => e.text().worded(&Flags),
    }
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
        Some(path) => load::load_urls(path, base.as_ref(), &spec)
            .map_err(|e| anyhow!(e.text().worded(&Flags)))?,
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
    plan.coalesce = args.coalesce;
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

/// Checks the target before the run, wording a setup error's setting as its flag.
pub(crate) fn preflight(plan: &Plan) -> Result<()> {
    load::preflight(plan).map_err(|e| anyhow!(e.text().worded(&Flags)))
}

/// Runs `foxbench load` (without `--find-max`, which is `find_max_cmd`'s).
pub fn run(args: LoadArgs) -> Result<ExitCode> {
    let agent = AgentFlags {
        shard: args.shard,
        start_at: args.start_at.as_deref(),
        late_ok: args.late_ok,
    };
    let start_at = agent::start_instant(&agent)?;
    let mut plan = build_plan(&args)?;
    let sharded = agent::shard(&mut plan, agent.shard)?;
    let slo = cli::slo_flag(args.slo.as_deref())?;
    if let Some(slo) = &slo {
        // Only the open model records a service-time histogram.
        cli::slo_measurable(slo, matches!(plan.arrival, Arrival::Open { .. }))?;
    }
    load::raise_fd_limit(plan.connections)?;
    preflight(&plan)?;
    let threads = plan.effective_threads();
    let control = Control::new(threads);

    // First Ctrl-C (or SIGTERM): stop and report. Second: exit at once.
    let interrupted = cli::interrupt_flag(cli::RUN)?;

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
        .map(|addr| crate::live::Live::bind(addr, &plan, slo.as_ref(), series.clone()))
        .transpose()?;
    let abort = slo.as_ref().filter(|_| args.slo_abort);
    let mut observers = Observers::new(args.hlog.as_deref(), abort, total_requests)?;
    // Everything is ready: wait for the synchronised start, if any, as the last step.
    agent::wait(start_at, agent.late_ok, &interrupted)?;
    let started_wall = std::time::SystemTime::now();
    if let Some(live) = &mut live {
        live.start(threads, control.clone());
    }
    // Bounded: the newest intervals at full resolution, older ones merged (--hlog keeps all).
    let mut series_error = None;
    // The interval sink tells the page, and the end stops it: both hold the dashboard.
    let live = std::cell::RefCell::new(live);
    let dashboard_cpu = || {
        let live = live.borrow();
        live.as_ref()
            .map(|l| l.dashboard().cpu())
            .unwrap_or_default()
    };
    let has_dashboard = live.borrow().is_some();
    let window = measure::window::run(
        &plan,
        &control,
        has_dashboard.then_some(&dashboard_cpu as &dyn Fn() -> probe::OwnUsage),
        measure::window::Sockets::Watch,
        &mut |iv| {
            live_p99_ns.store(iv.latency.percentile_ns(99.0), Ordering::Relaxed);
            if series_error.is_none() {
                let mut rows = series.lock().unwrap_or_else(|e| e.into_inner());
                series_error = rows.push(iv.index, report::IntervalRow::from(iv)).err();
            }
            if let Some(live) = &*live.borrow() {
                live.pushed(iv);
            }
            if observers.observe(iv) {
                control.stop();
            }
        },
        &mut || {
            if let Some(live) = &mut *live.borrow_mut() {
                live.stop();
            }
            probe::OwnUsage::default()
        },
    );
    let live = live.into_inner();
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
    let _ = watcher.join();
    let result = (window.result.as_ref()).map_err(|e| anyhow!(e.text().worded(&Flags)))?;
    if result.interval_waits > 0 {
        // Nothing was dropped; the waits delayed requests, which the latencies show.
        cli::say(&format!(
            "warning: the workers waited {} times for the interval series, --hlog or \
             --dashboard to catch up: a longer --interval asks less of them",
            result.interval_waits
        ));
    }
    let breach = observers.breach.take();
    observers.finish()?;

    let mut report =
        measure::record::load_report(&plan, threads, result, intervals, &window, &Flags);
    let (shard, start) = agent::sections(sharded.as_ref(), start_at, started_wall);
    report.shard = shard;
    report.start = Some(start);
    report.slo = slo.as_ref().map(|s| s.judge(&report, breach.as_ref()));
    let text = report.to_text(&crate::cli::Flags);
    cli::emit(
        cli::JsonTo::json_flag(args.json.as_deref()),
        || serde_json::to_string_pretty(&report).expect("report serializes") + "\n",
        &text,
        args.quiet,
    )?;
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
    // -q: the verdict first (a script reads the first line), then the warnings, which may
    // come from the kernel's counters and so from other traffic on the machine.
    let slo_code = cli::slo_verdict(report.slo.as_ref(), args.quiet);
    let no_success = match slo_code {
        Some(_) => None,
        None => report.no_success(&crate::cli::Flags),
    };
    if args.quiet {
        if let Some(line) = &no_success {
            cli::say(line);
        }
        if let Some(w) = report.saturation_warning() {
            cli::say(&format!("warning: {w}"));
        }
        for w in report.tcp_warnings() {
            cli::say(&format!("warning: {w}"));
        }
    }
    Ok(match (slo_code, no_success) {
        (Some(code), _) => code,
        // The run completed and measured nothing.
        (None, Some(_)) => ExitCode::from(cli::exit::FAILED),
        (None, None) => ExitCode::SUCCESS,
    })
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
