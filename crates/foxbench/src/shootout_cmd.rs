//! `foxbench shootout` and `foxbench report`: flags and files only; the work is in the
//! `shootout` and `report` crates.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use report::shootout::{to_html, to_markdown, ShootoutResults};
use shootout::runner::{self, Observer, Options};
use shootout::suite::{parse_cpus, Suite, DEFAULT_SUITE};

/// Flags of `foxbench shootout`.
#[derive(Args, Debug)]
pub struct ShootoutArgs {
    /// A suite file (TOML); without one, the built-in avatar challenge runs.
    pub suite: Option<PathBuf>,

    /// The short version of the plan, for CI (about 2 minutes for the default suite).
    #[arg(long)]
    pub quick: bool,

    /// Only these targets (comma-separated names; a parameter row's name, such as
    /// `java-httpserver[heap=8m,gc=G1]`, keeps its commas).
    #[arg(long)]
    pub only: Vec<String>,

    /// Where results.json, summary.md, report.html and logs/ go
    /// [default: shootout-results/<UTC date and time>].
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,

    /// The directory target paths are relative to [default: the nearest directory above
    /// the current one that has targets/, else the suite file's directory].
    #[arg(long)]
    pub root: Option<PathBuf>,

    /// The build cache [default: <root>/target/shootout-cache].
    #[arg(long)]
    pub cache: Option<PathBuf>,

    /// CPUs for foxbench, e.g. 0 or 0-1 (overrides the suite's plan.client_cpus).
    #[arg(long, value_parser = cpu_list)]
    pub client_cpus: Option<Vec<usize>>,

    /// CPUs for the targets, e.g. 1 or 2-3 (overrides the suite's plan.server_cpus).
    #[arg(long, value_parser = cpu_list)]
    pub server_cpus: Option<Vec<usize>>,

    /// Print the suite's targets and plan, then exit without running anything.
    #[arg(long)]
    pub list: bool,

    /// With --list: print every target and service as JSON instead, its build and start
    /// commands filled as the shootout fills them, its scenarios, and its finished build in
    /// the build cache (`built`), if any.
    #[arg(long, requires = "list")]
    pub json: bool,

    /// With --list --json: a value for a placeholder of the commands, e.g. port=8080,
    /// out=DIR, images=5 or service.postgres.port=5432 (repeatable); those not given stay.
    #[arg(long, value_name = "NAME=VALUE", requires = "json", value_parser = placeholder_value)]
    pub fill: Vec<(String, String)>,

    /// Take a JVM thread dump (`jcmd PID Thread.print`) of every level of a JVM target,
    /// under the level's load in an unmeasured slice after its repeats, into thread-dumps/
    /// of the results [default: only of levels whose threads mostly waited on a futex
    /// while neither side's CPUs were the limit].
    #[arg(long)]
    pub thread_dump: bool,

    /// Serve a live page of the run at ADDR (default 127.0.0.1:0, a free loopback port):
    /// the matrix of targets × levels fills in as cells run, and a running cell links to its
    /// live charts; when the run ends the page becomes the report. The URL, with an
    /// unguessable token in its path, is printed at the start.
    #[arg(long = "dashboard", value_name = "ADDR", num_args = 0..=1, require_equals = true, default_missing_value = "127.0.0.1:0")]
    pub dashboard: Option<std::net::SocketAddr>,
}

/// A comma-separated list of target names; commas inside `[...]` belong to a row's name.
fn names(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(s[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim().to_string());
    out.retain(|n| !n.is_empty());
    out
}

fn placeholder_value(s: &str) -> std::result::Result<(String, String), String> {
    match s.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("{s:?}: give NAME=VALUE, e.g. port=8080")),
    }
}

fn cpu_list(s: &str) -> std::result::Result<Vec<usize>, String> {
    match parse_cpus(s)? {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(format!("{s:?}: give CPU numbers, e.g. 0 or 2-3")),
    }
}

/// Flags of `foxbench report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results.json written by `foxbench shootout`, or a `foxbench load --json` result.
    pub results: PathBuf,
    /// Where summary.md and report.html (or, for a load result, NAME.html) go [default: next
    /// to the file].
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

fn find_root(suite: Option<&Path>) -> PathBuf {
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            if dir.join("targets").is_dir() {
                return dir.to_path_buf();
            }
        }
    }
    if let Some(p) = suite.and_then(|s| s.parent()) {
        if !p.as_os_str().is_empty() {
            return p.to_path_buf();
        }
    }
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

/// A UTC timestamp for directory names: 2026-11-22T20-31-05Z.
fn stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let t = report::time::UtcTime::from_unix_s(secs);
    format!(
        "{:04}-{:02}-{:02}T{:02}-{:02}-{:02}Z",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    )
}

/// Writes a file whole or not at all: a crash mid-write never leaves half a results.json.
fn write_atomic(path: &Path, data: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, data).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Writes results.json, summary.md and report.html into `dir`.
pub fn write_reports(dir: &Path, r: &ShootoutResults) -> Result<()> {
    let json = serde_json::to_vec_pretty(r).context("cannot serialize the results")?;
    write_atomic(&dir.join("results.json"), &json)?;
    write_atomic(&dir.join("summary.md"), to_markdown(r).as_bytes())?;
    write_atomic(&dir.join("report.html"), to_html(r).as_bytes())?;
    Ok(())
}

struct Console {
    out: PathBuf,
    failed_save: bool,
}

impl Observer for Console {
    fn line(&mut self, text: &str) {
        let _ = writeln!(std::io::stderr(), "{text}");
    }
    fn save(&mut self, results: &ShootoutResults) {
        if let Err(e) = write_reports(&self.out, results) {
            if !self.failed_save {
                let _ = writeln!(std::io::stderr(), "foxbench: {e:#}");
            }
            self.failed_save = true;
        }
    }
}

/// `foxbench shootout`.
pub fn run(args: ShootoutArgs) -> Result<ExitCode> {
    let (text, source) = match &args.suite {
        Some(p) => (
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read suite file {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (DEFAULT_SUITE.to_string(), "built-in".to_string()),
    };
    let mut suite = Suite::parse(&text, &source)?;
    if args.quick {
        suite.make_quick();
    }
    if !args.only.is_empty() {
        let names: Vec<String> = args.only.iter().flat_map(|s| names(s)).collect();
        suite.select(&names)?;
    }
    if let Some(c) = args.client_cpus {
        suite.plan.client_cpus = Some(c);
    }
    if let Some(c) = args.server_cpus {
        suite.plan.server_cpus = Some(c);
    }
    let allowed = shootout::process::allowed_cpus();
    for (flag, cpus) in [
        ("client", &suite.plan.client_cpus),
        ("server", &suite.plan.server_cpus),
    ] {
        if let Some(c) = cpus {
            if let Some(bad) = c.iter().find(|c| !allowed.contains(c)) {
                bail!("{flag} CPU {bad} is not available (this process may use {allowed:?}): fix --{flag}-cpus or plan.{flag}_cpus");
            }
        }
    }
    let root = args
        .root
        .clone()
        .unwrap_or_else(|| find_root(args.suite.as_deref()));
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(|| root.join("target").join("shootout-cache"));
    if args.json {
        let listing = shootout::listing::listing(&suite, &root, &cache, &args.fill);
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &listing)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.list {
        // Written, not printed: `--list | head` closes the pipe, and that is not an error.
        let listing = shootout::listing::text_listing(&suite, &source, &root);
        std::io::stdout()
            .lock()
            .write_all(listing.to_text().as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("shootout-results").join(stamp()));
    std::fs::create_dir_all(&out)
        .with_context(|| format!("cannot create output directory {}", out.display()))?;
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create build cache {}", cache.display()))?;
    let cache = cache.canonicalize().unwrap_or(cache);
    let root = root.canonicalize().unwrap_or(root);

    // Both sides of the largest level need a file per connection; the targets and services
    // inherit it. A target that calls a service holds two per request in flight: its
    // client's and its own connection to the service.
    let most = suite
        .plan
        .levels
        .iter()
        .map(|l| l.connections)
        .max()
        .unwrap_or(0)
        * if suite.services.is_empty() { 1 } else { 2 };
    if let Err(e) = load::raise_fd_limit(most) {
        eprintln!("foxbench: warning: {e}");
    }
    let live = args
        .dashboard
        .map(|addr| crate::shootout_live::ShootoutLive::bind(addr, &suite.name))
        .transpose()?
        .map(std::sync::Arc::new);
    shootout::process::become_subreaper();
    let interrupt = crate::cli::interrupt_flag(crate::cli::SHOOTOUT)?;
    let opts = Options {
        root,
        cache,
        out: out.clone(),
        interrupt: interrupt.clone(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        source,
        text,
        quick: args.quick,
        thread_dump: args.thread_dump,
        watch: live.as_ref().map(crate::shootout_live::watch),
    };
    let mut console = Console {
        out: out.clone(),
        failed_save: false,
    };
    let results = runner::run(&suite, &opts, &mut console);
    write_reports(&out, &results)?;
    drop(opts);
    if let Some(live) = live.and_then(|l| std::sync::Arc::try_unwrap(l).ok()) {
        let json =
            serde_json::to_string_pretty(&results).context("cannot serialize the results")?;
        live.finish(&to_html(&results), &json);
    }
    // The posts' tables on stdout; where the files are on stderr.
    let tables = report::shootout::headline_markdown(&results);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(tables.as_bytes())?;
    stdout.flush()?;
    eprintln!(
        "wrote {0}/results.json, {0}/summary.md and {0}/report.html ({1:.0} s)",
        out.display(),
        results.elapsed_s
    );
    if results.interrupted {
        return Ok(crate::cli::exit::interrupted());
    }
    let failed = results.targets.iter().any(|t| t.outcome.is_failure())
        || results.services.iter().any(|s| s.outcome.is_failure());
    Ok(if failed {
        ExitCode::from(crate::cli::exit::FAILED)
    } else {
        ExitCode::SUCCESS
    })
}

/// `foxbench report`: a shootout's summary.md and report.html, or a load result's page.
pub fn report(args: ReportArgs) -> Result<ExitCode> {
    let path = &args.results;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let r = match report::compare::Run::from_json(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
    {
        report::compare::Run::Shootout(r) => r,
        report::compare::Run::Load(load) => return load_page(&args, &load),
    };
    let dir = args.out.clone().unwrap_or_else(|| {
        args.results
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    });
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_atomic(&dir.join("summary.md"), to_markdown(&r).as_bytes())?;
    write_atomic(&dir.join("report.html"), to_html(&r).as_bytes())?;
    eprintln!("wrote {0}/summary.md and {0}/report.html", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// `foxbench report LOAD.json`: LOAD.html beside it, or in `--out`.
fn load_page(args: &ReportArgs, r: &report::LoadReport) -> Result<ExitCode> {
    let name = args.results.with_extension("html");
    let name = name
        .file_name()
        .unwrap_or(std::ffi::OsStr::new("load.html"));
    let page = match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            dir.join(name)
        }
        None => args.results.with_extension("html"),
    };
    write_atomic(&page, report::load_html::to_html(r).as_bytes())?;
    eprintln!("wrote {}", page.display());
    Ok(ExitCode::SUCCESS)
}

/// How a TLS scenario checks the certificate, for `--list`.
#[cfg(test)]
mod tests;
