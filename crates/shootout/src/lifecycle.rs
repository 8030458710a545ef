//! One target's life around its measurement: tools and directory, the cached build, the
//! start pinned to the server CPUs, readiness and the stop, each step failing with a
//! [`TargetFailure`].

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use report::shootout::{BuildInfo, ProbePoint};

use crate::cache;
use crate::failure::{Abandoned, NotReady, TargetFailure};
use crate::process::{self, Spawned, StopReport};
use crate::suite::{fill, Ready, TargetSpec};
use crate::verify;
use crate::window::point;

/// Lines of a log a failed target's result keeps.
const LOG_TAIL_LINES: usize = 20;

/// A target's directory, tools and environment: what its build and start need.
#[derive(Debug)]
pub struct Setup<'a> {
    /// The target.
    pub spec: &'a TargetSpec,
    /// The directory suite paths are relative to.
    pub root: &'a Path,
    /// The target's directory.
    pub dir: PathBuf,
    /// The commands it requires, as found on PATH.
    pub tools: Vec<PathBuf>,
    /// Its environment for build and start: the suite's, with a PATH that has the tools.
    pub env: Vec<(String, String)>,
    /// Where its logs go.
    pub logs: PathBuf,
}

impl<'a> Setup<'a> {
    /// Finds the target's tools on PATH and its directory under `root`.
    pub fn new(spec: &'a TargetSpec, root: &'a Path, logs: PathBuf) -> Result<Self, TargetFailure> {
        let (found, missing): (Vec<_>, Vec<_>) = spec
            .requires
            .iter()
            .map(|t| (t, cache::which(t)))
            .partition(|(_, path)| path.is_some());
        if !missing.is_empty() {
            return Err(TargetFailure::MissingTools {
                names: missing.into_iter().map(|(t, _)| t.clone()).collect(),
                install: spec.install.clone(),
            });
        }
        let dir = root.join(&spec.dir);
        if !dir.is_dir() {
            return Err(TargetFailure::NoDirectory(dir));
        }
        let tools: Vec<PathBuf> = found.into_iter().filter_map(|(_, path)| path).collect();
        let mut env: Vec<(String, String)> = spec
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // A tool found by a glob (a JDK beside the system's) goes first on PATH.
        let first: Vec<PathBuf> = spec
            .requires
            .iter()
            .filter(|t| cache::is_glob(t))
            .filter_map(|t| cache::which(t))
            .collect();
        if let Some(path) = cache::path_with_first(&first, &tools) {
            if !spec.env.contains_key("PATH") {
                env.push(("PATH".into(), path));
            }
        }
        Ok(Setup {
            spec,
            root,
            dir,
            tools,
            env,
            logs,
        })
    }

    fn log(&self, suffix: &str) -> PathBuf {
        self.logs
            .join(format!("{}.{suffix}", self.spec.file_stem()))
    }

    /// The start command for a build, a port, the suite's images and template, and the
    /// services' placeholders (`service.NAME.port`, ...) as `services`.
    pub fn start_command(
        &self,
        built: &Built,
        port: u16,
        images: u32,
        template: &str,
        services: &[(String, String)],
    ) -> String {
        let (port, images) = (port.to_string(), images.to_string());
        let out = built.out.to_string_lossy();
        let dir = self.dir.to_string_lossy();
        let mut vars: Vec<(&str, &str)> = vec![
            ("port", &port),
            ("images", &images),
            ("template", template),
            ("out", &out),
            ("dir", &dir),
        ];
        vars.extend(services.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        fill(&self.spec.start, &vars)
    }

    /// Starts `command` in its own process group, pinned to `cpus`, logging to a fresh log.
    pub fn spawn(
        &self,
        command: String,
        port: u16,
        cpus: &[usize],
    ) -> Result<Running, TargetFailure> {
        let log = self.log("log");
        let _ = std::fs::remove_file(&log);
        let spawned_at = Instant::now();
        match process::spawn(
            &command,
            process::Shell::Exec,
            &self.dir,
            &self.env,
            cpus,
            &log,
        ) {
            Ok(server) => Ok(Running {
                server,
                addr: SocketAddr::from(([127, 0, 0, 1], port)),
                log,
                spawned_at,
            }),
            Err(error) => Err(TargetFailure::Spawn { command, error }),
        }
    }
}

/// Where builds go and what bounds them.
#[derive(Debug, Clone, Copy)]
pub struct Builder<'a> {
    /// The build cache.
    pub cache: &'a Path,
    /// The longest a build may take.
    pub timeout: Duration,
    /// Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// Every CPU foxbench could use when it started: builds run on them.
    pub build_cpus: &'a [usize],
    /// The CPUs foxbench's own thread returns to after a build.
    pub client_cpus: &'a [usize],
}

/// A finished (or cached) build.
#[derive(Debug)]
pub struct Built {
    /// Its record.
    pub info: BuildInfo,
    /// The directory it wrote (`{out}`).
    pub out: PathBuf,
}

impl Builder<'_> {
    /// Builds the target into the cache, unless a build with the same key is there.
    pub fn build(&self, setup: &Setup) -> Result<Built, TargetFailure> {
        let spec = setup.spec;
        let command = spec.build.clone().unwrap_or_else(|| "true".into());
        let (out, key) = cache_entry(self.cache, setup).map_err(TargetFailure::CacheKey)?;
        let out_s = out.to_string_lossy().into_owned();
        let dir_s = setup.dir.to_string_lossy().into_owned();
        let vars = [("out", out_s.as_str()), ("dir", dir_s.as_str())];
        let log = setup.log("build.log");
        let artifact = spec.artifact.as_ref().map(|a| fill(a, &vars));
        let mut info = BuildInfo {
            command: fill(&command, &vars),
            key,
            cached: false,
            seconds: 0.0,
            artifact_bytes: None,
            artifact: artifact.clone(),
        };
        // foxbench's own thread is pinned to the client CPUs by now, and a build inherits
        // the mask of the thread that starts it.
        let _ = process::pin_current_thread(self.build_cpus);
        let built = cache::build(
            &info.command,
            &setup.dir,
            &out,
            &setup.env,
            &log,
            self.timeout,
            self.interrupt,
        );
        let _ = process::pin_current_thread(self.client_cpus);
        let (cached, took) = match built {
            Ok(done) => done,
            Err(error) => {
                let log_tail = process::tail(&log, LOG_TAIL_LINES);
                return Err(TargetFailure::Build {
                    info: Box::new(info),
                    error,
                    log,
                    log_tail,
                });
            }
        };
        info.cached = cached;
        info.seconds = took.as_secs_f64();
        info.artifact_bytes = artifact.as_ref().and_then(|a| {
            let p = Path::new(a);
            cache::size(&if p.is_absolute() {
                p.to_path_buf()
            } else {
                setup.dir.join(p)
            })
        });
        Ok(Built { info, out })
    }
}

/// The directory of `cache` that holds (or will hold) the target's build (`{out}`), and
/// its key.
pub fn cache_entry(cache: &Path, setup: &Setup) -> io::Result<(PathBuf, String)> {
    let spec = setup.spec;
    let mut inputs = vec![setup.dir.clone()];
    inputs.extend(spec.inputs.iter().map(|i| setup.root.join(i)));
    let command = spec.build.clone().unwrap_or_else(|| "true".into());
    let key = cache::key(&command, &setup.env, &setup.tools, setup.root, &inputs)?;
    // By the [[target]]'s name: its parameter rows share a build unless the parameters
    // change the build command or its environment (and so the key).
    Ok((cache.join(format!("{}-{key}", spec.base)), key))
}

/// How many ports a start tries when another process takes the chosen one first.
pub const PORT_TRIES: usize = 3;

impl Setup<'_> {
    /// Starts the target on a free port with `command(port)` and waits until it is ready
    /// there: the running target, its start command and its startup time. A port that
    /// another process took between the choice and the target's bind (two shootouts, or
    /// two tests, at once) is chosen again, up to [`PORT_TRIES`] times.
    pub fn start(
        &self,
        command: &dyn Fn(u16) -> String,
        cpus: &[usize],
        (ready, timeout): (Ready, Duration),
        interrupt: &AtomicBool,
        grace: Duration,
    ) -> Result<(Running, String, Duration), TargetFailure> {
        let mut tries = 0;
        loop {
            tries += 1;
            let port = free_port()?;
            let cmd = command(port);
            let mut running = self.spawn(cmd.clone(), port, cpus)?;
            match running.wait_ready(ready, timeout, interrupt) {
                Ok(startup) => return Ok((running, cmd, startup)),
                Err(NotReady::PortTaken { .. }) if tries < PORT_TRIES => {
                    running.stop(grace);
                }
                Err(reason) => {
                    return Err(TargetFailure::NotReady {
                        reason,
                        left: running.abandon(grace),
                    })
                }
            }
        }
    }
}

/// A free loopback port (the OS picks; the target binds it right after).
pub fn free_port() -> Result<u16, TargetFailure> {
    let port = || Ok::<_, io::Error>(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port());
    port().map_err(TargetFailure::NoPort)
}

/// A started target.
#[derive(Debug)]
pub struct Running {
    /// Its process.
    pub server: Spawned,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its log (stdout and stderr).
    pub log: PathBuf,
    spawned_at: Instant,
}

impl Running {
    /// Its root process id.
    pub fn pid(&self) -> i32 {
        self.server.pid
    }

    /// How it exited, once it has.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.server.exited()
    }

    /// Waits, at most `timeout`, until it accepts a connection (`Tcp`) or answers a request
    /// (`Http`); returns the time since it was started.
    pub fn wait_ready(
        &mut self,
        ready: Ready,
        timeout: Duration,
        interrupt: &AtomicBool,
    ) -> Result<Duration, NotReady> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(status) = self.server.exited() {
                return Err(NotReady::Exited {
                    status,
                    last_line: process::tail(&self.log, 1).chars().take(200).collect(),
                });
            }
            if interrupt.load(Ordering::Relaxed) {
                return Err(NotReady::Interrupted);
            }
            if Instant::now() >= end {
                return Err(NotReady::TimedOut {
                    after: timeout,
                    ready,
                    addr: self.addr,
                });
            }
            let ok = match ready {
                Ready::Tcp => {
                    TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok()
                }
                Ready::Http => verify::Client::connect(self.addr, Duration::from_millis(500))
                    .ok()
                    .and_then(|mut c| c.request("GET", "/", true).ok())
                    .is_some(),
            };
            if ok {
                // The port is the target's only if one of its processes listens on it
                // (a probe that cannot tell counts as yes).
                let members = self.server.members();
                if matches!(probe::listens(&members, self.addr.port()), Ok(false)) {
                    return Err(NotReady::PortTaken { addr: self.addr });
                }
                return Ok(self.spawned_at.elapsed());
            }
            // Fine polling at first: startup time is a reported figure (most targets are
            // ready within tens of milliseconds), coarser later to stay cheap.
            let left = end.saturating_duration_since(Instant::now());
            std::thread::sleep(
                if timeout.saturating_sub(left) < Duration::from_millis(500) {
                    Duration::from_millis(2)
                } else {
                    Duration::from_millis(20)
                },
            );
        }
    }

    /// Its tree once ready, before any load.
    pub fn idle(&self) -> Option<ProbePoint> {
        probe::sample(self.pid()).ok().map(|s| point(0.0, 0.0, &s))
    }

    /// The last lines of its log.
    pub fn log_tail(&self) -> String {
        process::tail(&self.log, LOG_TAIL_LINES)
    }

    /// SIGTERM, then SIGKILL after `grace`: nothing it started is left behind.
    pub fn stop(&mut self, grace: Duration) -> StopReport {
        self.server.stop(grace)
    }

    /// Stops it after a failed step, keeping the end of its log for the message.
    pub fn abandon(&mut self, grace: Duration) -> Abandoned {
        let stop = self.stop(grace);
        Abandoned {
            stop,
            log_tail: self.log_tail(),
        }
    }
}

#[cfg(test)]
mod tests;
