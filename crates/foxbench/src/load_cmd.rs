//! `foxbench load`: flags in ab's and wrk's language, wired to the engine and the report.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use load::{
    Arrival, Plan, PlanError, RequestSpec, Selection, StatusSet, Stop, Target, TlsOptions, Verify,
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

/// `FOXBENCH_KERNEL_STAMPS`: `off` asks the kernel for no stamps, so that a run behaves as
/// on a kernel or socket without them (latencies fall back to the read); `rx` asks for the
/// receive stamps only, not the sampled send stamps (to measure what those cost). A testing
/// and diagnosis switch; unset or `on` is the default (both).
fn kernel_stamps_from_env() -> Result<load::KernelStamps> {
    match std::env::var("FOXBENCH_KERNEL_STAMPS").as_deref() {
        Err(_) | Ok("" | "on") => Ok(load::KernelStamps::ReceiveAndSend),
        Ok("rx") => Ok(load::KernelStamps::Receive),
        Ok("off") => Ok(load::KernelStamps::Off),
        Ok(other) => Err(anyhow!(
            "FOXBENCH_KERNEL_STAMPS={other:?} is not on, rx or off: unset it, set it to rx to run without send stamps, or to off to run without any kernel stamps"
        )),
    }
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
    if args.http3 {
        plan.protocol = load::Protocol::Http3(load::H3Options {
            streams: args.streams,
        });
    }
    plan.keepalive = !args.no_keepalive;
    plan.coalesce = args.coalesce;
    plan.idle = args.idle;
    plan.latency_clock = args.latency_clock;
    plan.kernel_stamps = kernel_stamps_from_env()?;
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
    if plan.idle != load::Idle::Sleep {
        plan.placement = load::Placement::find(plan.target.addr);
    }
    if let Some(w) = plan.idle_in_effect().warning() {
        crate::cli::say(&format!("warning: {w}"));
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
    // First Ctrl-C (or SIGTERM): stop and report. Second: exit at once.
    let interrupted = cli::interrupt_flag(cli::RUN)?;
    let show_progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let total_requests = match plan.stop {
        Stop::Requests(n) => Some(n),
        Stop::Duration(_) => None,
    };
    // Bounded: the newest intervals at full resolution, older ones merged (--hlog keeps all).
    let series = crate::live::series();
    let live = args
        .dashboard
        .map(|addr| crate::live::Live::bind(addr, &plan, slo.as_ref(), series.clone()))
        .transpose()?;
    let abort = slo.as_ref().filter(|_| args.slo_abort);
    let mut observers = Observers::new(args.hlog.as_deref(), abort, total_requests)?;
    // Everything is ready: wait for the synchronised start, if any, as the last step.
    agent::wait(start_at, agent.late_ok, &interrupted)?;
    let started_wall = std::time::SystemTime::now();
    let around = crate::window::Around {
        interrupted: &interrupted,
        progress: show_progress,
        live: live.as_ref(),
        series: &series,
    };
    let measured = crate::window::run(&plan, around, &mut |iv| observers.observe(iv))?;
    if measured.interval_waits > 0 {
        // Nothing was dropped; the waits delayed requests, which the latencies show.
        cli::say(&format!(
            "warning: the workers waited {} times for the interval series, --hlog or \
             --dashboard to catch up: a longer --interval asks less of them",
            measured.interval_waits
        ));
    }
    let breach = observers.breach.take();
    observers.finish()?;

    let mut report = measured.report;
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
