//! What every command does at its edge, each written once: where the JSON and the text
//! go, the verdict lines, the interrupt signals, and the exit codes.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{Context, Result};
use load::{Setting, Wording};
use report::slo::{Slo, SloReport};

/// Exit codes: the list is docs/cli.md's "Exit codes", and this is its code.
///
/// 0: success, and a closed stdout. 1 ([`exit::FAILED`]): the command completed and what it
/// measured failed (an `--slo` clause, a load run in which no request succeeded, a
/// `--find-max` with no rate that holds, a shootout target that failed, a `--fail-on`
/// change, a short `doctor` limit). 2 ([`exit::USAGE`]): usage or setup error, one line.
/// 130 ([`exit::INTERRUPTED`]): a second Ctrl-C ended the process at once, or an
/// interrupted shootout.
pub mod exit {
    use std::process::ExitCode;

    /// The command completed, and what it measured failed.
    pub const FAILED: u8 = 1;
    /// Usage or setup error.
    pub const USAGE: u8 = 2;
    /// A second Ctrl-C (or SIGTERM) ended the process at once; an interrupted shootout.
    pub const INTERRUPTED: i32 = 130;

    /// [`INTERRUPTED`] as a command's exit code.
    pub fn interrupted() -> ExitCode {
        ExitCode::from(INTERRUPTED as u8)
    }
}

/// Where a command's JSON result goes; its text goes to the other stream.
#[derive(Debug, Clone, Copy)]
pub enum JsonTo<'a> {
    /// The JSON on stdout, the text on stderr.
    Stdout,
    /// The JSON into a file, named in errors by the flag that gave it; the text on stdout.
    File {
        /// The file.
        path: &'a Path,
        /// The flag that named it (`--json`, `-o`).
        flag: &'static str,
    },
    /// No JSON; the text on stdout.
    Nowhere,
}

impl<'a> JsonTo<'a> {
    /// `--json`'s value: `-` for stdout, else a file; no JSON without it.
    pub fn json_flag(value: Option<&'a str>) -> JsonTo<'a> {
        match value {
            Some("-") => JsonTo::Stdout,
            Some(path) => JsonTo::File {
                path: Path::new(path),
                flag: "--json",
            },
            None => JsonTo::Nowhere,
        }
    }
}

/// Writes a result: its JSON (`json` makes it, a trailing newline included) where `to`
/// says, and its text on the other stream unless `quiet`.
pub fn emit(to: JsonTo<'_>, json: impl FnOnce() -> String, text: &str, quiet: bool) -> Result<()> {
    let text_to_stdout = || -> Result<()> {
        if !quiet {
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .context("cannot write report")?;
        }
        Ok(())
    };
    match to {
        JsonTo::Stdout => {
            std::io::stdout()
                .lock()
                .write_all(json().as_bytes())
                .context("cannot write JSON to stdout")?;
            if !quiet {
                let _ = std::io::stderr().write_all(text.as_bytes());
            }
            Ok(())
        }
        JsonTo::File { path, flag } => {
            std::fs::write(path, json())
                .with_context(|| format!("cannot write {flag} {}", path.display()))?;
            text_to_stdout()
        }
        JsonTo::Nowhere => text_to_stdout(),
    }
}

/// One line on stderr, as every command words them: `foxbench: LINE`.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "foxbench: {line}");
}

/// `--slo`'s clauses, if given; an error names the flag.
pub fn slo_flag(text: Option<&str>) -> Result<Option<Slo>> {
    text.map(str::parse::<Slo>)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--slo {e}"))
}

/// Refuses `--slo` clauses that this result cannot judge (`[service]` without the open
/// model's service times), naming the flag.
pub fn slo_measurable(slo: &Slo, service_recorded: bool) -> Result<()> {
    slo.check_measurable(service_recorded)
        .map_err(|e| anyhow::anyhow!("--slo {e}"))
}

/// A failed `--slo` verdict: exit 1, and one line on stderr when `quiet` hid the text
/// report that lists its clauses. `None` when there is no verdict or it passed.
pub fn slo_verdict(verdict: Option<&SloReport>, quiet: bool) -> Option<ExitCode> {
    let v = verdict.filter(|v| !v.passed)?;
    if quiet {
        let failed: Vec<&str> = v
            .clauses
            .iter()
            .filter(|c| !c.passed)
            .map(|c| c.clause.as_str())
            .collect();
        say(&format!("--slo failed: {}", failed.join(", ")));
    }
    Some(ExitCode::from(exit::FAILED))
}

/// Which signals interrupt a command, and what a second one does.
#[derive(Debug, Clone, Copy)]
pub struct Interrupts {
    /// The signals.
    pub signals: &'static [i32],
    /// A second signal exits at once with [`exit::INTERRUPTED`]; otherwise the command
    /// finishes its own way (the shootout stops its targets first).
    pub second_exits: bool,
}

/// `load` and `--find-max`: the first Ctrl-C (or SIGTERM) stops the run and reports it;
/// the second exits at once.
pub const RUN: Interrupts = Interrupts {
    signals: &[signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM],
    second_exits: true,
};

/// The shootout: SIGINT, SIGTERM or SIGHUP stop it, and it always stops its targets.
pub const SHOOTOUT: Interrupts = Interrupts {
    signals: &[
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ],
    second_exits: false,
};

/// Installs the handlers of `how` and returns the flag the first signal sets.
pub fn interrupt_flag(how: Interrupts) -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for &sig in how.signals {
        if how.second_exits {
            signal_hook::flag::register_conditional_shutdown(sig, exit::INTERRUPTED, flag.clone())
                .context("cannot install the signal handler")?;
        }
        signal_hook::flag::register(sig, flag.clone())
            .context("cannot install the signal handler")?;
    }
    Ok(flag)
}

/// The flag that gives `setting` (of `foxbench load`, but for a merge's, a limit check's
/// and a comparison's own settings: of `merge`, `doctor` and `compare`), and the value a fix shows with it (empty
/// for a switch). The one place a library's setting becomes a flag.
pub fn flag(setting: Setting) -> &'static [(&'static str, &'static str)] {
    match setting {
        Setting::Connections => &[("--connections", "N")],
        Setting::Threads => &[("--threads", "N")],
        Setting::Pipeline => &[("--pipeline", "N")],
        Setting::Streams => &[("--streams", "N")],
        Setting::Window => &[("--stream-window", "BYTES")],
        Setting::ConnectionWindow => &[("--connection-window", "BYTES")],
        Setting::Rate => &[("--rate", "N")],
        Setting::Requests => &[("--requests", "N")],
        Setting::Duration => &[("--duration", "D")],
        Setting::Timeout => &[("--timeout", "D")],
        Setting::ConnectTimeout => &[("--connect-timeout", "D")],
        Setting::Interval => &[("--interval", "D")],
        Setting::Urls => &[("--urls", "FILE")],
        Setting::Http2 => &[("--http2", "")],
        Setting::Http3 => &[("--http3", "")],
        Setting::CaFile => &[("--cacert", "FILE")],
        Setting::Insecure => &[("--insecure", "")],
        Setting::ClientCert => &[("--cert", "FILE"), ("--key", "FILE")],
        Setting::Select => &[("--select", "MODE")],
        Setting::Shard => &[("--shard", "I/N")],
        Setting::Coalesce => &[("--coalesce", "auto|off|D")],
        Setting::Idle => &[("--idle", "spin|sleep|auto")],
        // The settings of other commands than `load`: of `merge`, then of `doctor`.
        Setting::PartialOk => &[("--partial-ok", "")],
        Setting::ClosesPerS => &[("--closes-per-s", "N")],
        Setting::ServerThreads => &[("--threads", "N")],
        // Of `compare`.
        Setting::Alpha => &[("--alpha", "A")],
        Setting::SameMachine => &[("--same-machine", "")],
    }
}

/// Settings worded as the flags that give them: `--cacert`, `pass --cacert FILE or
/// --insecure`, `drop --http2`.
#[derive(Debug, Clone, Copy)]
pub struct Flags;

impl Flags {
    /// A setting's flags with their values: `--cert FILE --key FILE`.
    fn usage(setting: Setting) -> String {
        let parts: Vec<_> = flag(setting)
            .iter()
            .map(|(f, v)| {
                if v.is_empty() {
                    f.to_string()
                } else {
                    format!("{f} {v}")
                }
            })
            .collect();
        parts.join(" ")
    }
}

impl Wording for Flags {
    fn name(&self, setting: Setting) -> String {
        flag(setting)[0].0.to_string()
    }

    fn give(&self, settings: &[Setting]) -> String {
        let each: Vec<_> = settings.iter().map(|&s| Flags::usage(s)).collect();
        format!("pass {}", each.join(" or "))
    }

    fn drop(&self, setting: Setting) -> String {
        let flags: Vec<_> = flag(setting).iter().map(|(f, _)| *f).collect();
        format!("drop {}", flags.join(" "))
    }

    fn usage(&self, setting: Setting) -> String {
        Flags::usage(setting)
    }
}
