//! `foxbench compare`: flags, files and exit codes; the comparison is `report::compare`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::Flags;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use report::compare::{compare, repeats_needed, CompareError, FailOn, Options, Run, DEFAULT_ALPHA};

/// Flags of `foxbench compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The base side's files. Without `--`, exactly two files: BASE then NEW.
    #[arg(required = true, value_name = "BASE")]
    pub base: Vec<PathBuf>,
    /// After `--`, the new side's files (repeats of one test per side for load results).
    #[arg(last = true, value_name = "NEW")]
    pub new: Vec<PathBuf>,
    /// Significance level: a change is reported only when the repeats' p-value is at most this.
    #[arg(long, default_value_t = DEFAULT_ALPHA)]
    pub alpha: f64,
    /// Exit 1 when a significant change breaks a limit, e.g. 'req/s<-10%,p99>+20%,cpu/req>+10%'.
    #[arg(long, value_name = "LIMITS")]
    pub fail_on: Option<String>,
    /// Refuse (exit 2) to compare runs measured on different hardware (CPU model or count).
    #[arg(long)]
    pub same_machine: bool,
    /// Print the comparison as JSON (schemas/compare.schema.json).
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the comparison as Markdown, for a pull request.
    #[arg(long)]
    pub markdown: bool,
}

fn read(path: &Path) -> Result<Run> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Run::from_json(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// `foxbench compare`.
pub fn run(args: CompareArgs) -> Result<ExitCode> {
    let (base, new) = match (args.base.as_slice(), args.new.as_slice()) {
        ([a, b], []) => (vec![a.clone()], vec![b.clone()]),
        (_, []) => bail!(
            "give BASE NEW, or several files a side as BASE... -- NEW... (got {} files and no --)",
            args.base.len()
        ),
        (a, b) => (a.to_vec(), b.to_vec()),
    };
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        bail!(
            "--alpha {}: give a level between 0 and 1, such as 0.05",
            args.alpha
        );
    }
    let fail_on: FailOn = match &args.fail_on {
        Some(text) => text.parse().map_err(|e| anyhow!("--fail-on {e}"))?,
        None => FailOn::default(),
    };
    let base = base.iter().map(|p| read(p)).collect::<Result<Vec<_>>>()?;
    let new = new.iter().map(|p| read(p)).collect::<Result<Vec<_>>>()?;
    let opts = Options {
        alpha: args.alpha,
        fail_on: fail_on.clone(),
    };
    let c = compare(&base, &new, &opts, &Flags).map_err(|e| match e {
        CompareError::Gate(e) => anyhow!("--fail-on {e}"),
        e => e.into(),
    })?;
    if args.same_machine {
        if let Some(e) = c.same_machine_error() {
            bail!("--same-machine: {e}");
        }
    }
    let gated = c.rows.iter().filter(|r| fail_on.covers(&r.figure)).count();
    let ungated = c.ungated(&fail_on);
    if gated > 0 && ungated == gated {
        bail!(
            "--fail-on: none of the {gated} compared figures it watches has enough repeats for a verdict; run at least {} repeats a side (at α = {})",
            repeats_needed(args.alpha),
            args.alpha
        );
    }
    let out = if args.json {
        c.to_json()
    } else if args.markdown {
        c.to_markdown(&Flags)
    } else {
        c.to_text(&Flags)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    if args.json || args.markdown {
        // The text carries the warning at its top; the other formats carry it as data, so
        // a CI log still gets it on stderr.
        if c.hardware_differences().next().is_some() {
            eprintln!("foxbench: warning: the runs were measured on different hardware");
        }
    }
    if ungated > 0 {
        eprintln!(
            "foxbench: warning: {ungated} of the {gated} figures --fail-on watches had too few repeats for a verdict"
        );
    }
    for f in &c.failures {
        eprintln!("foxbench: fail-on: {}", f.line());
    }
    Ok(if c.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::cli::exit::FAILED)
    })
}
