//! The `foxbench` command: parses flags and wires the crates together; nothing else.
//!
//! It owns the flags (clap's help is their one description, also the man page and the
//! completions), the words a library's setting takes as a flag, where output goes, the
//! verdict lines, signals and exit codes (`cli`). It must not hold a loop, a rule or a
//! rendering of its own: measuring is `load`'s, `measure`'s (one window, its record, the
//! capacity search's driver) and `shootout`'s, rendering `report`'s, and the machine
//! `probe`'s.
#![forbid(unsafe_code)]

mod agent;
mod cli;
mod compare_cmd;
mod doctor_cmd;
mod find_max_cmd;
mod k8s_cmd;
mod live;
mod load_args;
mod load_cmd;
mod load_series;
mod manual_cmd;
mod merge_cmd;
mod shootout_cmd;
mod shootout_live;
#[cfg(test)]
mod tests;
mod window;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use cli::exit;

/// HTTP load generator and server shootout harness.
#[derive(Parser, Debug)]
#[command(name = "foxbench", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load an HTTP server (HTTP/1.1, or HTTP/2 with --http2) and report throughput, latency
    /// and errors.
    Load(Box<load_cmd::LoadArgs>),
    /// Build, start, verify and load every target of a suite, probing each server; write
    /// results.json, summary.md and report.html.
    Shootout(shootout_cmd::ShootoutArgs),
    /// Regenerate summary.md and report.html from a results.json.
    Report(shootout_cmd::ReportArgs),
    /// Compare runs (shootout results.json or load --json files): protocol differences, and
    /// which figures changed significantly over the repeats; a regression gate for CI.
    Compare(compare_cmd::CompareArgs),
    /// Merge the results of agents that shared a plan (`load --shard I/N`) into one
    /// result, exactly: counts summed, histograms added, series aligned on wall-clock time.
    Merge(merge_cmd::MergeArgs),
    /// Render the Kubernetes Indexed Job that runs `load` as N agents with one start
    /// instant, from the same flags as `load`; pipe it to `kubectl apply -f -`.
    #[command(name = "k8s-job")]
    K8sJob(k8s_cmd::K8sJobArgs),
    /// Check the machine's limits (open files, ports, backlogs, conntrack) for a run of N
    /// connections, and print the command that fixes each one that is short.
    Doctor(doctor_cmd::DoctorArgs),
    /// Print the man page (or write one per command into --dir), generated from these flags.
    Man(manual_cmd::ManArgs),
    /// Print a completion script for bash, zsh or fish.
    Completions(manual_cmd::CompletionsArgs),
}

/// A clap error as one line: its first, and the next when the first ends in ':' ("the
/// following required arguments were not provided:" names them on the next line).
fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("invalid arguments");
    let first = first.trim_start_matches("error: ");
    match (first.ends_with(':'), lines.next()) {
        (true, Some(next)) => format!("{first} {}", next.trim()),
        _ => first.to_string(),
    }
}

/// Parses `load`'s flags (`argv` starts with "load") with the CLI's own parser.
pub(crate) fn parse_load_args(argv: &[String]) -> Result<load_cmd::LoadArgs, String> {
    let cli =
        Cli::try_parse_from(std::iter::once("foxbench".to_string()).chain(argv.iter().cloned()))
            .map_err(|e| one_line(&e))?;
    match cli.command {
        Command::Load(args) => Ok(*args),
        _ => Err("not a load command".into()),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || matches!(
                    e.kind(),
                    ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                )
            {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // One line: what was wrong, and where to look.
            let first = one_line(&e);
            let _ = writeln!(std::io::stderr(), "foxbench: {first} (see foxbench --help)");
            return ExitCode::from(exit::USAGE);
        }
    };
    let result = match cli.command {
        // --find-max is a search made of load runs: find_max_cmd drives it, using load_cmd's
        // plan, and load_cmd never calls back.
        Command::Load(args) => match args.find_max.as_deref() {
            Some(objective) => find_max_cmd::run(&args, objective),
            None => load_cmd::run(*args),
        },
        Command::Shootout(args) => shootout_cmd::run(args),
        Command::Report(args) => shootout_cmd::report(args),
        Command::Compare(args) => compare_cmd::run(args),
        Command::Merge(args) => merge_cmd::run(args),
        Command::K8sJob(args) => k8s_cmd::run(args),
        Command::Doctor(args) => doctor_cmd::run(args),
        Command::Man(args) => manual_cmd::man(args),
        Command::Completions(args) => manual_cmd::completions(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // A closed stdout (foxbench load | head) is not an error.
            if e.chain()
                .filter_map(|c| c.downcast_ref::<std::io::Error>())
                .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            let mut msg = format!("{e}");
            for cause in e.chain().skip(1) {
                msg.push_str(": ");
                msg.push_str(&cause.to_string());
            }
            let _ = writeln!(std::io::stderr(), "foxbench: {msg}");
            ExitCode::from(exit::USAGE)
        }
    }
}
