//! Why a target was not measured, or not to the end: typed failures, each giving the
//! target's outcome and its one-line message.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use report::shootout::{BuildInfo, Check, Outcome, TargetResult};

use crate::cache::BuildError;
use crate::process::StopReport;
use crate::suite::Ready;

/// Why a target was not measured, or not to the end. Each becomes the target's outcome and
/// its one-line message.
#[derive(Debug, thiserror::Error)]
pub enum TargetFailure {
    /// Commands it requires are not on PATH.
    #[error("{} not found on PATH; install {}", .names.join(", "), .install.as_deref().unwrap_or("it"))]
    MissingTools {
        /// The missing commands.
        names: Vec<String>,
        /// What provides them, from the suite.
        install: Option<String>,
    },
    /// Its directory is not under the root.
    #[error("directory {} not found: run from the foxbench checkout or give the checkout's root (the directory that has targets/)", .0.display())]
    NoDirectory(PathBuf),
    /// Its files could not be read to make the build's cache key.
    #[error("cannot read the target's files for the build cache: {0}")]
    CacheKey(io::Error),
    /// The build failed, took too long or was interrupted.
    #[error("{}", build_message(.error, .log))]
    Build {
        /// The build's record so far.
        info: Box<BuildInfo>,
        /// What went wrong.
        error: BuildError,
        /// The build's log.
        log: PathBuf,
        /// Its last lines.
        log_tail: String,
    },
    /// No loopback port was free.
    #[error("no free loopback port: {0}")]
    NoPort(io::Error),
    /// The start command could not be run.
    #[error("cannot start `{command}`: {error}")]
    Spawn {
        /// The start command, placeholders filled in.
        command: String,
        /// Why it could not be run.
        error: io::Error,
    },
    /// It did not become ready; it has been stopped.
    #[error("{reason}{}", stop_note(&.left.stop))]
    NotReady {
        /// Why not.
        reason: NotReady,
        /// What stopping it left.
        left: Abandoned,
    },
    /// No scenario was answered correctly; it has been stopped.
    #[error("verification failed: {}{}", first_failure(.first), stop_note(&.left.stop))]
    WrongAnswers {
        /// The first check that failed.
        first: Option<Check>,
        /// What stopping it left.
        left: Abandoned,
    },
    /// A service it uses is down (did not start, exited, or failed its check): skipped.
    #[error("{0}")]
    ServiceDown(String),
    /// A service it uses exited during a level: the later levels were not run.
    #[error(
        "service {service} {why} during level {level}: the target's later levels were not run"
    )]
    ServiceDied {
        /// The service.
        service: String,
        /// How it ended.
        why: String,
        /// The level it ended in.
        level: String,
    },
    /// It exited during a level.
    #[error("the target exited ({status}) during level {level}")]
    Crashed {
        /// How it exited.
        status: ExitStatus,
        /// The level it was under.
        level: String,
        /// The last lines of its log.
        log_tail: String,
    },
}

fn first_failure(check: &Option<Check>) -> String {
    check
        .as_ref()
        .map(|c| format!("{}: {}", c.name, c.detail.as_deref().unwrap_or("")))
        .unwrap_or_default()
}

fn build_message(error: &BuildError, log: &Path) -> String {
    match error {
        BuildError::Failed(m) => format!("{m} (log: {})", log.display()),
        BuildError::TimedOut(d) => format!(
            "build took longer than {d:?}: raise plan.build_timeout (log: {})",
            log.display()
        ),
        BuildError::Interrupted => "interrupted during the build".into(),
        BuildError::Io(e) => format!("cannot run the build: {e}"),
    }
}

impl TargetFailure {
    /// The outcome it gives the target. `interrupted` is the run's flag: a target that was
    /// not ready because of Ctrl-C was interrupted, not broken.
    pub fn outcome(&self, interrupted: bool) -> Outcome {
        match self {
            TargetFailure::MissingTools { .. } | TargetFailure::ServiceDown(_) => Outcome::Skipped,
            TargetFailure::ServiceDied { .. } => Outcome::Measured,
            TargetFailure::CacheKey(_) => Outcome::BuildFailed,
            TargetFailure::Build {
                error: BuildError::Interrupted,
                ..
            } => Outcome::Interrupted,
            TargetFailure::Build { .. } => Outcome::BuildFailed,
            TargetFailure::NotReady { .. } if interrupted => Outcome::Interrupted,
            TargetFailure::NoDirectory(_)
            | TargetFailure::NoPort(_)
            | TargetFailure::Spawn { .. }
            | TargetFailure::NotReady { .. } => Outcome::StartFailed,
            TargetFailure::WrongAnswers { .. } => Outcome::VerifyFailed,
            TargetFailure::Crashed { .. } => Outcome::Crashed,
        }
    }

    /// Writes it into the target's result: outcome, message, the log's tail and, for a
    /// failed build, the build's record.
    pub fn record(self, r: &mut TargetResult, interrupted: bool) {
        r.outcome = self.outcome(interrupted);
        r.message = Some(self.to_string());
        r.log_tail = match self {
            TargetFailure::Build { info, log_tail, .. } => {
                r.build = Some(*info);
                Some(log_tail)
            }
            TargetFailure::NotReady { left, .. } | TargetFailure::WrongAnswers { left, .. } => {
                Some(left.log_tail)
            }
            TargetFailure::Crashed { log_tail, .. } => Some(log_tail),
            _ => None,
        };
    }
}

/// Why a started target was not ready.
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    /// It exited first.
    #[error("exited ({status}) before it was ready{}", colon_then(.last_line))]
    Exited {
        /// How it exited.
        status: ExitStatus,
        /// The last line of its log, cut to 200 characters.
        last_line: String,
    },
    /// Ctrl-C came first.
    #[error("interrupted while waiting for readiness")]
    Interrupted,
    /// The port answered, but another process listens on it: it took the port between
    /// the choice and the target's bind (the start is tried again on another port).
    #[error("{addr} answered, but another process listens on it, not the target")]
    PortTaken {
        /// Where.
        addr: SocketAddr,
    },
    /// Its time ran out.
    #[error("not ready after {after:?} ({} on {addr}): raise ready_timeout if it starts slowly", unanswered(*.ready))]
    TimedOut {
        /// The target's `ready_timeout`.
        after: Duration,
        /// What was waited for.
        ready: Ready,
        /// Where.
        addr: SocketAddr,
    },
}

fn colon_then(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

/// What a readiness check that timed out never saw.
fn unanswered(ready: Ready) -> &'static str {
    match ready {
        Ready::Tcp => "no TCP connection accepted",
        Ready::Http => "no HTTP response",
    }
}

/// What a target stopped after a failed step leaves: how the stop went, and its log's end.
#[derive(Debug)]
pub struct Abandoned {
    /// How the stop went.
    pub stop: StopReport,
    /// The last lines of its log, read after the stop.
    pub log_tail: String,
}

/// What stopping needed, as a note to append to a message: empty when SIGTERM sufficed
/// and nothing else was running.
pub fn stop_note(s: &StopReport) -> String {
    let mut parts = Vec::new();
    if s.killed {
        parts.push("SIGTERM was ignored, so SIGKILL was sent".to_string());
    }
    if s.leftovers > 0 {
        parts.push(format!(
            "{} process{} of its own stopped with it",
            s.leftovers,
            if s.leftovers == 1 { "" } else { "es" }
        ));
    }
    if s.survivors > 0 {
        parts.push(format!(
            "{} process{} survived SIGKILL",
            s.survivors,
            if s.survivors == 1 { "" } else { "es" }
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests;
