//! `foxbench merge`: reads agents' results (files, or `-` for a stream on stdin) and
//! writes one result; the rules live in `report::merge`.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use clap::Args;
use report::merge::{self, input, Options, Source};
use report::slo::Slo;
use report::LoadReport;

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
            let report = serde_json::from_str::<LoadReport>(&text)
                .map_err(|e| anyhow!("{name}: not a foxbench load --json result: {e}"))?;
            sources.push(Source {
                name: name.clone(),
                report,
            });
        }
    }
    Ok(sources)
}

/// The results of a stream: documents that are not load results are skipped with the
/// noise; one that claims to be and does not parse is an error.
fn read_stream(text: &str, partial_ok: bool) -> Result<Vec<Source>> {
    let split = input::split_stream(text, "stdin");
    if let Some(first) = split.unfinished.first() {
        if !partial_ok {
            return Err(merge::MergeError::Truncated {
                source_name: first.clone(),
            }
            .into());
        }
        for u in &split.unfinished {
            eprintln!("foxbench merge: {u}: a truncated result, left out (--partial-ok)");
        }
    }
    let mut out = Vec::new();
    let mut other = 0;
    for doc in split.documents {
        let value: serde_json::Value = match serde_json::from_str(&doc.text) {
            Ok(v) => v,
            Err(e) => return Err(anyhow!("{}: not JSON: {e}", doc.source)),
        };
        if value.get("schema").and_then(|s| s.as_str()) != Some(report::LOAD_SCHEMA) {
            other += 1;
            continue;
        }
        let report = serde_json::from_value::<LoadReport>(value)
            .map_err(|e| anyhow!("{}: not a foxbench load --json result: {e}", doc.source))?;
        out.push(Source {
            name: doc.source,
            report,
        });
    }
    if split.skipped_lines > 0 || other > 0 {
        eprintln!(
            "foxbench merge: stdin: {} result{} read; skipped {} line{} and {} JSON document{} that are not results",
            out.len(),
            if out.len() == 1 { "" } else { "s" },
            split.skipped_lines,
            if split.skipped_lines == 1 { "" } else { "s" },
            other,
            if other == 1 { "" } else { "s" },
        );
    }
    Ok(out)
}

/// Runs `foxbench merge`.
pub fn run(args: MergeArgs) -> Result<ExitCode> {
    let slo = args.slo.as_deref().map(str::parse::<Slo>).transpose()?;
    let sources = read_sources(&args)?;
    let mut merged = merge::merge(
        &sources,
        Options {
            partial_ok: args.partial_ok,
        },
    )?;
    if let Some(slo) = &slo {
        slo.check_measurable(merged.open.is_some())?;
        merged.slo = Some(slo.judge(&merged, None));
    }
    let json = serde_json::to_string_pretty(&merged).expect("report serializes") + "\n";
    let text = merged.to_text();
    match &args.output {
        Some(path) => {
            std::fs::write(path, json)
                .with_context(|| format!("cannot write -o {}", path.display()))?;
            if !args.quiet {
                std::io::stdout()
                    .lock()
                    .write_all(text.as_bytes())
                    .context("cannot write report")?;
            }
        }
        None => {
            std::io::stdout()
                .lock()
                .write_all(json.as_bytes())
                .context("cannot write JSON to stdout")?;
            if !args.quiet {
                let _ = std::io::stderr().write_all(text.as_bytes());
            }
        }
    }
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
    match &merged.slo {
        Some(v) if !v.passed => {
            let failed: Vec<&str> = v
                .clauses
                .iter()
                .filter(|c| !c.passed)
                .map(|c| c.clause.as_str())
                .collect();
            eprintln!("foxbench merge: --slo failed: {}", failed.join(", "));
            Ok(ExitCode::from(crate::exit::FAILED))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}
