//! `foxbench man` and `foxbench completions`: the man pages and the shell completions,
//! generated from the CLI's own clap definition, so the flags have one source.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, CommandFactory, ValueEnum};

/// Flags of `foxbench man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write one page per command into DIR (foxbench.1, foxbench-load.1, ...) instead of
    /// printing foxbench.1 to stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Flags of `foxbench completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: Shell,
}

/// The shells `foxbench completions` writes for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shell {
    /// bash: `foxbench completions bash > /etc/bash_completion.d/foxbench`.
    Bash,
    /// zsh: `foxbench completions zsh > "${fpath[1]}/_foxbench"`.
    Zsh,
    /// fish: `foxbench completions fish > ~/.config/fish/completions/foxbench.fish`.
    Fish,
}

impl Shell {
    fn generator(self) -> clap_complete::Shell {
        match self {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
        }
    }
}

/// The man page of `foxbench` (with its SUBCOMMANDS section), rendered as roff.
fn man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    clap_mangen::Man::new(crate::Cli::command()).render(out)
}

/// The completion script for `shell`.
fn completion(shell: Shell, out: &mut dyn std::io::Write) {
    let mut cmd = crate::Cli::command();
    clap_complete::generate(shell.generator(), &mut cmd, "foxbench", out);
}

/// `foxbench man`.
pub fn man(args: ManArgs) -> Result<ExitCode> {
    match args.dir {
        None => {
            let mut out = std::io::stdout().lock();
            man_page(&mut out)?;
            out.flush()?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(crate::Cli::command(), &dir)
                .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
            eprintln!("wrote the man pages into {}", dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `foxbench completions SHELL`.
pub fn completions(args: CompletionsArgs) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    completion(args.shell, &mut out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests;
