//! `foxbench merge`: reads agents' results (files, or `-` for a stream on stdin) and
//! writes one result; the rules live in `report::merge`.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use report::merge::{self, input, MergeError, Options, Source};

/// Flags of `foxbench merge`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  foxbench merge agent-0.json agent-1.json agent-2.json -o merged.json\n  kubectl logs -l job-name=foxbench --tail=-1 --prefix | foxbench merge -"
)]
pub struct MergeArgs {
    /// `foxbench load --json` results of one plan's agents (`--shard I/N`); `-` reads a
    /// stream of them on stdin, as `kubectl logs` prints them (other lines are skipped).
    #[arg(required = true, value_name = "RESULT")]
    pub results: Vec<String>,

    /// Write the merged result to FILE (default: stdout; the text report then goes to stderr).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Merge even when shards are missing or were interrupted; the result says which.
    #[arg(long = "partial-ok")]
    pub partial_ok: bool,

    /// Service-level objective on the merged data, as in `foxbench load --slo`; exits 1
    /// when a clause fails.
    #[arg(long = "slo", value_name = "CLAUSES")]
    pub slo: Option<String>,

    /// No text report.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
}

/// A merge error with its settings worded as flags (`--partial-ok`, `--shard N`).
pub fn flagged(e: MergeError) -> anyhow::Error {
    anyhow::anyhow!(e.text().worded(&crate::cli::Flags))
}

/// Reads every source: a file is one result; `-` is a stream of them.
fn read_sources(args: &MergeArgs) -> Result<Vec<Source>> {
    let mut sources = Vec::new();
    for name in &args.results {
        if name == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read stdin")?;
            sources.extend(read_stream(&text, args.partial_ok)?);
        } else {
            let text =
                std::fs::read_to_string(name).with_context(|| format!("cannot read {name}"))?;
            sources.push(input::read_result(name, &text).map_err(flagged)?);
        }
    }
    Ok(sources)
}

/// The results of a stream, saying what was left out.
fn read_stream(text: &str, partial_ok: bool) -> Result<Vec<Source>> {
    let r = input::read_stream(text, "stdin", partial_ok).map_err(flagged)?;
    for u in &r.unfinished {
        eprintln!("foxbench merge: {u}: a truncated result, left out (--partial-ok)");
    }
    let n = r.sources.len();
    if r.skipped_lines > 0 || r.other_documents > 0 {
        eprintln!(
            "foxbench merge: stdin: {} result{} read; skipped {} line{} and {} JSON document{} that are not results",
            n,
            if n == 1 { "" } else { "s" },
            r.skipped_lines,
            if r.skipped_lines == 1 { "" } else { "s" },
            r.other_documents,
            if r.other_documents == 1 { "" } else { "s" },
        );
    }
    Ok(r.sources)
}

/// Runs `foxbench merge`.
pub fn run(args: MergeArgs) -> Result<ExitCode> {
    let slo = crate::cli::slo_flag(args.slo.as_deref())?;
    let sources = read_sources(&args)?;
    let mut merged = merge::merge(
        &sources,
        Options {
            partial_ok: args.partial_ok,
        },
    )
    .map_err(flagged)?;
    if let Some(slo) = &slo {
        crate::cli::slo_measurable(slo, merged.open.is_some())?;
        merged.slo = Some(slo.judge(&merged, None));
    }
    let json = serde_json::to_string_pretty(&merged).expect("report serializes") + "\n";
    let text = merged.to_text(&crate::cli::Flags);
    let to = match &args.output {
        Some(path) => crate::cli::JsonTo::File { path, flag: "-o" },
        None => crate::cli::JsonTo::Stdout,
    };
    crate::cli::emit(to, || json, &text, args.quiet)?;
    if let Some(a) = merged.agents.as_ref().filter(|a| a.incomplete) {
        eprintln!(
            "foxbench merge: warning: incomplete merge (--partial-ok): {} of {} shards{}{}",
            a.agents.len(),
            a.expected,
            if a.missing.is_empty() {
                String::new()
            } else {
                format!(", missing {:?}", a.missing)
            },
            if a.partial.is_empty() {
                String::new()
            } else {
                format!(", interrupted {:?}", a.partial)
            }
        );
    }
    Ok(crate::cli::slo_verdict(merged.slo.as_ref(), args.quiet).unwrap_or(ExitCode::SUCCESS))
}
