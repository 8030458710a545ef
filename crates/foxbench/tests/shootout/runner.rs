//! One way for a test to run `foxbench shootout`: [`Shootout`] builds the command,
//! [`Running`] holds the process while it runs, and every run ends with the process table
//! checked for what it started (nothing may outlive it), also when the test fails.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use testkit::Netns;

/// Where the run keeps its builds.
pub(crate) enum Cache {
    /// `--cache OUT/cache`: a fresh cache of the run's own, built from nothing.
    Own,
    /// `--cache DIR`.
    At(PathBuf),
    /// No `--cache`: foxbench's default, `<root>/target/shootout-cache`, shared across runs.
    Default,
}

/// Which network namespace the run is in.
enum Namespace<'a> {
    /// The machine's.
    Host,
    /// A fresh one of its own where this machine can make one, else the machine's.
    Alone,
    /// One the test made (and keeps, with its servers in it).
    In(&'a Netns),
}

/// `foxbench shootout SUITE --root ROOT --out OUT --cache OUT/cache ARGS`, each part
/// settable; [`Shootout::run`] runs it to its end, [`Shootout::spawn`] hands it over running.
pub(crate) struct Shootout<'a> {
    suite: Option<OsString>,
    out: PathBuf,
    cache: Cache,
    root: Option<OsString>,
    dir: Option<PathBuf>,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    capture_stdout: bool,
    namespace: Namespace<'a>,
}

impl<'a> Shootout<'a> {
    /// The suite file `suite` (relative to the working directory, see [`Shootout::dir`]),
    /// written to `out`, with a cache of its own.
    pub(crate) fn new(suite: impl AsRef<OsStr>, out: &Path) -> Self {
        Shootout {
            suite: Some(suite.as_ref().to_owned()),
            ..Shootout::builtin(out)
        }
    }

    /// The built-in suite, written to `out`, with a cache of its own.
    pub(crate) fn builtin(out: &Path) -> Self {
        Shootout {
            suite: None,
            out: out.to_owned(),
            cache: Cache::Own,
            root: None,
            dir: None,
            args: Vec::new(),
            env: Vec::new(),
            capture_stdout: true,
            namespace: Namespace::Host,
        }
    }

    /// `--root ROOT` (without it, foxbench finds the root from its working directory).
    pub(crate) fn root(mut self, root: impl AsRef<OsStr>) -> Self {
        self.root = Some(root.as_ref().to_owned());
        self
    }

    /// Runs in `dir` (without it, in the test's working directory).
    pub(crate) fn dir(mut self, dir: &Path) -> Self {
        self.dir = Some(dir.to_owned());
        self
    }

    pub(crate) fn cache(mut self, cache: Cache) -> Self {
        self.cache = cache;
        self
    }

    pub(crate) fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub(crate) fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub(crate) fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Discards stdout instead of capturing it.
    pub(crate) fn quiet(mut self) -> Self {
        self.capture_stdout = false;
        self
    }

    /// In a network namespace of its own (where this machine can make one; CI requires
    /// it): the TCP counters the verdicts read (listen overflows, retransmits, delayed ACKs)
    /// are then the run's alone. On the machine's namespace a test beside it that
    /// overflowed a listen queue turned a pool-bound cell into `listen-overflow` (1,283
    /// overflows, none of them the cell's). Tests that assert a verdict use this.
    pub(crate) fn alone(mut self) -> Self {
        self.namespace = Namespace::Alone;
        self
    }

    /// In `ns`, which the test made: its servers are in there too.
    pub(crate) fn netns(mut self, ns: &'a Netns) -> Self {
        self.namespace = Namespace::In(ns);
        self
    }

    /// Runs to its end, stdout and stderr captured; no process it started may outlive it.
    #[track_caller]
    pub(crate) fn run(self) -> Output {
        self.spawn().wait_with_output()
    }

    /// Starts it, in a process group of its own, stderr (and stdout unless
    /// [`Shootout::quiet`]) piped, stdin empty.
    #[track_caller]
    pub(crate) fn spawn(self) -> Running {
        let own = match self.namespace {
            Namespace::Alone => own_netns(),
            _ => None,
        };
        // `ip netns exec` execs foxbench in its own process: the pid stays the run's.
        let ns = match self.namespace {
            Namespace::In(ns) => Some(ns),
            _ => own.as_ref(),
        };
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = ns.exec();
                c.arg(env!("CARGO_BIN_EXE_foxbench"));
                c
            }
            None => crate::foxbench(),
        };
        cmd.arg("shootout");
        cmd.args(&self.suite);
        cmd.args(self.root.iter().flat_map(|r| [OsStr::new("--root"), r]));
        cmd.arg("--out").arg(&self.out);
        match &self.cache {
            Cache::Own => cmd.arg("--cache").arg(self.out.join("cache")),
            Cache::At(dir) => cmd.arg("--cache").arg(dir),
            Cache::Default => &mut cmd,
        };
        cmd.args(&self.args).envs(self.env);
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::null())
            .stdout(if self.capture_stdout {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped());
        // Its own group, so that a failed test can kill it with its helpers (psql, jcmd).
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().expect("foxbench starts");
        Running {
            pid: child.id(),
            child: Some(child),
            clean: false,
            _netns: own,
        }
    }
}

/// A fresh namespace for one [`Shootout::alone`] run. Each gets a name of its own
/// (`Netns::new` numbers them): with one name for the whole test binary, two such tests at
/// once collided, and the second ran on the machine's namespace (or failed under
/// `FOXBENCH_NETNS=require`).
fn own_netns() -> Option<Netns> {
    Netns::new("alone")
}

/// A shootout while it runs. Dropped before [`Running::wait_with_output`] returned (the
/// test failed), it kills the run's process group and every process carrying its mark.
pub(crate) struct Running {
    child: Option<Child>,
    pid: u32,
    /// Waited for, and nothing of it left.
    clean: bool,
    // Dropped after `drop` has killed what ran in it.
    _netns: Option<Netns>,
}

impl Running {
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// Whether foxbench has not exited yet.
    pub(crate) fn is_running(&mut self) -> bool {
        let child = self.child.as_mut().expect("not waited for yet");
        child.try_wait().unwrap().is_none()
    }

    /// Sends foxbench SIGINT, as Ctrl-C does.
    pub(crate) fn interrupt(&self) {
        kill(Pid::from_raw(self.pid as i32), Signal::SIGINT).unwrap();
    }

    /// Waits, up to `deadline`, until foxbench runs a load worker (a thread named
    /// `foxbench-w*`): its services and targets are up by then. Fails if it exits first.
    #[track_caller]
    pub(crate) fn wait_for_load(&mut self, deadline: Duration) {
        testkit::wait_until(deadline, "a load worker (foxbench-w*)", || {
            assert!(self.is_running(), "foxbench exited before loading");
            !load_workers(self.pid).is_empty()
        });
    }

    /// Waits for its end, with its output; no process it started may outlive it.
    #[track_caller]
    pub(crate) fn wait_with_output(mut self) -> Output {
        let child = self.child.take().expect("waited for once");
        let o = child.wait_with_output().unwrap();
        let left = leftovers(self.pid);
        assert!(
            left.is_empty(),
            "processes left behind: {left:#?}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        self.clean = true;
        o
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.clean {
            return;
        }
        if let Some(mut child) = self.child.take() {
            let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
            let _ = child.wait();
        }
        // The targets run in groups of their own; the mark finds them, daemons included.
        // A loop of its own, not `testkit::wait_until`: that panics at its deadline, and a
        // panic in a drop during a failing test's unwinding aborts the test binary.
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end {
            let left = marked(self.pid);
            if left.is_empty() {
                break;
            }
            for p in left {
                let _ = kill(Pid::from_raw(p as i32), Signal::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The threads of `pid` that are load workers (named `foxbench-w*`), by thread id.
pub(crate) fn load_workers(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.starts_with("foxbench-w"))
        })
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect()
}

/// Live processes carrying the mark of the foxbench run `pid`: every process a target
/// starts inherits it (FOXBENCH_TARGET=<foxbench pid>-<n>), daemons included.
fn marked(pid: u32) -> Vec<u32> {
    let mark = format!("FOXBENCH_TARGET={pid}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .unwrap_or_default()
                .split(|&b| b == 0)
                .any(|kv| kv.starts_with(mark.as_bytes()))
        })
        .collect()
}

/// [`marked`], each with its command line and state, for a failure message.
pub(crate) fn leftovers(pid: u32) -> Vec<String> {
    marked(pid)
        .into_iter()
        .map(|p| {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            format!(
                "{p}: {} ({})",
                String::from_utf8_lossy(&cmd).replace('\0', " "),
                stat.rsplit(')').next().unwrap_or("").trim()
            )
        })
        .collect()
}

/// Two [`Shootout::alone`] runs at once (the pool and the lock tests run side by side) each
/// get a namespace: one name for every run made the second `ip netns add` fail.
#[test]
fn alone_runs_at_once_get_a_namespace_each() {
    let Some(first) = own_netns() else { return };
    let second = own_netns().expect("a second namespace beside the first");
    assert_ne!(first.name(), second.name());
}

/// A test that fails mid-level drops its [`Running`]: foxbench, the target and the daemon
/// the target left in a session of its own (which ignores SIGTERM) are all gone after it.
#[test]
fn a_run_dropped_mid_level_leaves_nothing() {
    let out = super::tmp("dropped");
    let suite = std::fs::read_to_string(super::faulty_dir().join("suite.toml"))
        .unwrap()
        .replace("duration = \"400ms\"", "duration = \"30s\"");
    assert!(suite.contains("duration = \"30s\""));
    std::fs::write(out.join("suite.toml"), suite).unwrap();
    let mut run = Shootout::new(out.join("suite.toml"), &out)
        .root(super::faulty_dir())
        .args(["--only", "forks-a-daemon"])
        .spawn();
    run.wait_for_load(Duration::from_secs(60));
    let pid = run.pid();
    // The target and its daemon, at least.
    assert!(marked(pid).len() >= 2, "{:?}", leftovers(pid));
    drop(run);
    assert_eq!(leftovers(pid), Vec::<String>::new());
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "foxbench reaped"
    );
    std::fs::remove_dir_all(&out).unwrap();
}
