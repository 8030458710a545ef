//! Builds, cached by content: the key hashes the build command, the environment, the tools
//! it needs, and every file of the target's directory and declared inputs. Runs sharing a
//! cache take turns on an entry.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::process;

/// Directories never hashed: build output and version control.
const SKIP_DIRS: [&str; 5] = [".git", "target", "node_modules", "__pycache__", ".foxbench"];

/// Adds every file under `path` (sorted, names and contents) to the hash.
fn hash_tree(h: &mut Sha256, root: &Path, path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    let rel = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned();
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            let name = e
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if e.is_dir() && SKIP_DIRS.contains(&name.as_str()) {
                continue;
            }
            hash_tree(h, root, &e)?;
        }
    } else if meta.is_file() {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(fs::read(path)?);
        h.update([0]);
    } else if meta.file_type().is_symlink() {
        h.update(rel.as_bytes());
        h.update(fs::read_link(path)?.to_string_lossy().as_bytes());
    }
    Ok(())
}

/// The cache key of a build.
pub fn key(
    command: &str,
    env: &[(String, String)],
    tools: &[PathBuf],
    root: &Path,
    dirs: &[PathBuf],
) -> io::Result<String> {
    let mut h = Sha256::new();
    h.update(command.as_bytes());
    for (k, v) in env {
        h.update(format!("\0{k}={v}").as_bytes());
    }
    for t in tools {
        h.update(t.to_string_lossy().as_bytes());
        if let Ok(m) = fs::metadata(t) {
            // A new toolchain (same path, new file) makes a new build.
            h.update(m.len().to_le_bytes());
            if let Ok(modified) = m.modified() {
                h.update(format!("{modified:?}").as_bytes());
            }
        }
    }
    for d in dirs {
        hash_tree(&mut h, root, d)?;
    }
    Ok(h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Why a build failed.
#[derive(Debug)]
pub enum BuildError {
    /// The command exited with an error.
    Failed(String),
    /// It took longer than allowed.
    TimedOut(Duration),
    /// Ctrl-C.
    Interrupted,
    /// It could not be run at all.
    Io(io::Error),
}

/// Takes the lock of the cache entry `out` (the file `out.lock` beside it), waiting while
/// another foxbench holds it: two runs sharing a cache (parallel tests, or a developer's
/// run beside CI's) would otherwise each throw away the other's build in progress as
/// half-finished. The lock goes with the returned file. Waiting counts against `limit`.
fn lock_entry(out: &Path, limit: Duration, interrupt: &AtomicBool) -> Result<fs::File, BuildError> {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let path = out.with_file_name(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(BuildError::Io)?;
    }
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(BuildError::Io)?;
    let started = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(e)) => return Err(BuildError::Io(e)),
        }
        if interrupt.load(Ordering::Relaxed) {
            return Err(BuildError::Interrupted);
        }
        if started.elapsed() > limit {
            return Err(BuildError::TimedOut(limit));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The file a finished build leaves in its cache entry.
const BUILT_STAMP: &str = ".foxbench-built";

/// Whether the cache entry `out` holds a finished build.
pub fn is_built(out: &Path) -> bool {
    out.join(BUILT_STAMP).exists()
}

/// Runs `command` in `dir` into `out` unless `out` already holds a finished build.
/// Returns whether the cache was used, and the time taken.
pub fn build(
    command: &str,
    dir: &Path,
    out: &Path,
    env: &[(String, String)],
    log: &Path,
    limit: Duration,
    interrupt: &AtomicBool,
) -> Result<(bool, Duration), BuildError> {
    let stamp = out.join(BUILT_STAMP);
    if stamp.exists() {
        return Ok((true, Duration::ZERO));
    }
    let _lock = lock_entry(out, limit, interrupt)?;
    // Another run may have finished this build while we waited.
    if stamp.exists() {
        return Ok((true, Duration::ZERO));
    }
    // A half-finished build from an interrupted run is thrown away.
    let _ = fs::remove_dir_all(out);
    fs::create_dir_all(out).map_err(BuildError::Io)?;
    let _ = fs::remove_file(log);
    let started = Instant::now();
    let mut p = process::spawn(
        command,
        process::Shell::Script,
        dir,
        env,
        &process::allowed_cpus(),
        log,
    )
    .map_err(BuildError::Io)?;
    loop {
        if let Some(status) = p.exited() {
            // Anything the build left running (a compile server) is stopped with it.
            p.stop(Duration::from_secs(2));
            if status.success() {
                fs::write(&stamp, command).map_err(BuildError::Io)?;
                return Ok((false, started.elapsed()));
            }
            let last = process::tail(log, 1);
            return Err(BuildError::Failed(format!(
                "build failed ({status}){}",
                if last.is_empty() {
                    String::new()
                } else {
                    format!(": {}", last.chars().take(200).collect::<String>())
                }
            )));
        }
        if interrupt.load(Ordering::Relaxed) {
            p.stop(Duration::from_secs(2));
            return Err(BuildError::Interrupted);
        }
        if started.elapsed() > limit {
            p.stop(Duration::from_secs(2));
            return Err(BuildError::TimedOut(limit));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The size of a file, or of every file under a directory.
pub fn size(path: &Path) -> Option<u64> {
    let meta = fs::symlink_metadata(path).ok()?;
    if meta.is_file() {
        return Some(meta.len());
    }
    if !meta.is_dir() {
        return None;
    }
    let mut total = 0;
    for e in fs::read_dir(path).ok()?.flatten() {
        let name = e.file_name();
        if name == BUILT_STAMP {
            continue;
        }
        total += size(&e.path()).unwrap_or(0);
    }
    Some(total)
}

/// Where toolchains install themselves off the usual PATH: Go's tarball, rustup, `go
/// install`, and the sbin directories a non-login root shell may lack (nginx, php-fpm).
pub fn extra_dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["/usr/local/go/bin", "/usr/sbin", "/sbin", "/usr/local/sbin"]
        .iter()
        .map(PathBuf::from)
        .collect();
    if let Some(home) = std::env::var_os("HOME") {
        let home = PathBuf::from(home);
        v.push(home.join(".cargo/bin"));
        v.push(home.join("go/bin"));
    }
    v.extend(postgres_bin_dirs(Path::new("/usr/lib/postgresql")));
    v
}

/// Debian's PostgreSQL server binaries (`initdb`, `postgres`), which it keeps off PATH in
/// `/usr/lib/postgresql/<major>/bin`: the newest version first.
fn postgres_bin_dirs(base: &Path) -> Vec<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let major = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((major, e.path().join("bin")))
        })
        .filter(|(_, bin)| bin.is_dir())
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions.into_iter().map(|(_, bin)| bin).collect()
}

/// Finds a command on PATH, then in [`extra_dirs`]. An absolute path with `*` in it
/// (`/usr/lib/jvm/temurin-*/bin/java`) is a glob: the newest executable it matches, see
/// [`newest_match`].
pub fn which(cmd: &str) -> Option<PathBuf> {
    if is_glob(cmd) {
        return newest_match(cmd);
    }
    if cmd.contains('/') {
        let p = PathBuf::from(cmd);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra_dirs())
        .map(|d| d.join(cmd))
        .find(|p| is_executable(p))
}

/// Whether a `requires` entry is a glob: an absolute path with `*` in it.
pub fn is_glob(cmd: &str) -> bool {
    cmd.starts_with('/') && cmd.contains('*')
}

/// The executable matching `pattern` (`*` within a path component, any number of them)
/// that sorts last in [`version_order`], so `temurin-25-jdk` beats `temurin-8-jdk`. A
/// hand-written matcher rather than the `glob` crate: `*` is all a suite needs, and the
/// order, the point of it, is ours anyway.
pub fn newest_match(pattern: &str) -> Option<PathBuf> {
    let mut found = vec![PathBuf::from("/")];
    for part in Path::new(pattern).components().skip(1) {
        let part = part.as_os_str().to_string_lossy();
        found = if part.contains('*') {
            found
                .iter()
                .filter_map(|d| fs::read_dir(d).ok())
                .flat_map(|entries| entries.flatten())
                .filter(|e| wildcard_match(&part, &e.file_name().to_string_lossy()))
                .map(|e| e.path())
                .collect()
        } else {
            found.iter().map(|d| d.join(&*part)).collect()
        };
    }
    found
        .into_iter()
        .filter(|p| is_executable(p))
        .max_by(|a, b| version_order(&a.to_string_lossy(), &b.to_string_lossy()))
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let mut parts: Vec<&str> = parts.collect();
    let Some(last) = parts.pop() else {
        return rest.is_empty(); // no `*` at all: the whole name was the prefix
    };
    for p in parts {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Compares names with runs of digits as numbers: `jdk-9` < `jdk-17` < `jdk-25.0.1`.
pub fn version_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn runs(s: &str) -> Vec<(bool, &str)> {
        let mut v = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                v.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        v
    }
    let (ra, rb) = (runs(a), runs(b));
    for (x, y) in ra.iter().zip(&rb) {
        let ord = match (x, y) {
            ((true, x), (true, y)) => {
                let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
                x.len().cmp(&y.len()).then_with(|| x.cmp(y))
            }
            ((_, x), (_, y)) => x.cmp(y),
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    ra.len().cmp(&rb.len())
}

/// PATH with the directories of `tools` appended where they are not on it already, so a
/// target's build finds the toolchain that [`which`] found.
pub fn path_with(tools: &[PathBuf]) -> Option<String> {
    path_with_first(&[], tools)
}

/// [`path_with`], with the directories of `first` put before everything else (the tools a
/// glob found, so `java` means the JDK the glob chose, not the one on PATH).
pub fn path_with_first(first: &[PathBuf], tools: &[PathBuf]) -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let old: Vec<PathBuf> = std::env::split_paths(&path).collect();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for d in first.iter().filter_map(|t| t.parent()) {
        if !dirs.iter().any(|x| x == d) {
            dirs.push(d.to_path_buf());
        }
    }
    let moved = dirs.len();
    for d in old.iter() {
        if !dirs.contains(d) {
            dirs.push(d.clone());
        }
    }
    let before = dirs.len();
    for t in tools {
        if let Some(d) = t.parent() {
            if !dirs.iter().any(|x| x == d) {
                dirs.push(d.to_path_buf());
            }
        }
    }
    if moved == 0 && dirs.len() == before {
        return None;
    }
    Some(
        std::env::join_paths(dirs)
            .ok()?
            .to_string_lossy()
            .into_owned(),
    )
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests;
