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
mod tests {
    use super::*;

    /// Every subcommand, as clap knows it (not a list kept by hand).
    fn subcommands() -> Vec<String> {
        let names: Vec<String> = crate::Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        assert!(names.len() >= 9, "{names:?}");
        names
    }

    #[test]
    fn man_page_names_every_subcommand() {
        let mut page = Vec::new();
        man_page(&mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.starts_with(".ie"), "{page:.200}");
        assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
        for name in subcommands() {
            // clap_mangen lists each as `foxbench\-NAME(1)`, the roff escape of a hyphen.
            let entry = format!("foxbench\\-{}(1)", name.replace('-', "\\-"));
            assert!(page.contains(&entry), "{entry} missing from the man page");
        }
    }

    #[test]
    fn man_dir_gets_one_page_per_subcommand() {
        let dir = std::env::temp_dir().join(format!("foxbench-man-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        man(ManArgs {
            dir: Some(dir.clone()),
        })
        .unwrap();
        let mut pages = vec!["foxbench.1".to_string()];
        pages.extend(subcommands().iter().map(|n| format!("foxbench-{n}.1")));
        for page in &pages {
            let text =
                std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
            assert!(text.contains(".SH NAME"), "{page}: {text:.200}");
        }
        // The load page carries load's own flags.
        let load = std::fs::read_to_string(dir.join("foxbench-load.1")).unwrap();
        assert!(load.contains("\\-\\-connections"), "{load:.400}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_completion_names_every_subcommand() {
        for shell in Shell::value_variants() {
            let mut script = Vec::new();
            completion(*shell, &mut script);
            let script = String::from_utf8(script).unwrap();
            // How each script names a subcommand, and a flag of one.
            let (entry, flag): (fn(&str) -> String, &str) = match shell {
                Shell::Bash => (|n| format!("foxbench,{n})"), "--connections"),
                Shell::Zsh => (|n| format!("({n})"), "--connections"),
                Shell::Fish => (|n| format!("-a \"{n}\""), "-l connections"),
            };
            for name in subcommands() {
                let want = entry(&name);
                assert!(script.contains(&want), "{shell:?}: no {want:?}");
            }
            assert!(script.contains(flag), "{shell:?}: no {flag:?}");
        }
    }
}
