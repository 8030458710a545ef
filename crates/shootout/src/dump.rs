//! JVM thread dumps: `jcmd <pid> Thread.print` for every JVM of a target's tree, written
//! into the results directory (the tool the "art of benchmarking" post read its pool
//! from). The `jcmd` beside the JVM's own `java` is used, so the versions match.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a dump may take before it is abandoned.
pub const DUMP_TIMEOUT: Duration = Duration::from_secs(20);

/// The JVMs of the tree rooted at `root`: processes whose executable is a `java`, each
/// with the `jcmd` of its own JDK.
pub fn jvms(root: i32) -> Vec<(i32, PathBuf)> {
    let Ok(pids) = probe::tree(root) else {
        return Vec::new();
    };
    pids.into_iter()
        .filter_map(|pid| {
            let exe = probe::processes::exe(pid)?;
            (exe.file_name()? == "java").then_some(())?;
            let jcmd = exe.with_file_name("jcmd");
            jcmd.is_file().then_some((pid, jcmd))
        })
        .collect()
}

/// Why a dump could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// `jcmd` could not run or be waited for.
    #[error("cannot run {0}: {1}")]
    Spawn(String, std::io::Error),
    /// It ran too long and was killed.
    #[error("jcmd Thread.print did not finish within {0:?}")]
    Timeout(Duration),
    /// It failed.
    #[error("jcmd Thread.print failed ({0}): {1}")]
    Failed(std::process::ExitStatus, String),
}

/// Runs `jcmd PID Thread.print` into `file`, killing it after [`DUMP_TIMEOUT`].
pub fn thread_dump(pid: i32, jcmd: &Path, file: &Path) -> Result<(), DumpError> {
    let out =
        std::fs::File::create(file).map_err(|e| DumpError::Spawn(file.display().to_string(), e))?;
    let mut child = Command::new(jcmd)
        .args([pid.to_string().as_str(), "Thread.print"])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| DumpError::Spawn(jcmd.display().to_string(), e))?;
    let deadline = Instant::now() + DUMP_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(DumpError::Timeout(DUMP_TIMEOUT));
            }
            Err(e) => return Err(DumpError::Spawn(jcmd.display().to_string(), e)),
        }
    };
    if status.success() {
        return Ok(());
    }
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    Err(DumpError::Failed(status, err.trim().to_string()))
}
