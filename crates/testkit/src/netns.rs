//! A network namespace of a test's own (`ip netns`, root): its own loopback, ports and TCP
//! counters, so a test that changes sysctls or reads counters is not disturbed by the
//! tests beside it.

use std::process::{Child, Command, Output, Stdio};

/// The switch CI also sets for these tests: `FOXBENCH_NETNS=require` turns the skip into a
/// failure, as `FOXBENCH_REQUIRE=all` (or `netns`) does.
pub const NETNS_ENV: &str = "FOXBENCH_NETNS";

/// A network namespace with loopback up; deleted on drop, after the processes it was
/// given ([`Netns::adopt`]) are killed, also when the test fails.
pub struct Netns {
    name: String,
    children: Vec<Child>,
}

impl Netns {
    /// A fresh namespace named after `what`, this process and a serial of its own (two
    /// tests at once that named theirs alike collided: the second `ip netns add` failed),
    /// or `None` after a loud skip when this machine cannot make one (a panic when
    /// required: see [`NETNS_ENV`]).
    #[track_caller]
    pub fn new(what: &str) -> Option<Netns> {
        static SERIAL: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("fb-{what}-{}-{serial}", std::process::id());
        let ok = Command::new("ip")
            .args(["netns", "add", &name])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let why = "cannot create a network namespace: run as root, with iproute2 (apt-get install iproute2)";
        if !ok && std::env::var(NETNS_ENV).as_deref() == Ok("require") {
            panic!("{NETNS_ENV}=require: {why}");
        }
        if !crate::skip_unless(ok, "netns", why) {
            return None;
        }
        let ns = Netns {
            name,
            children: Vec::new(),
        };
        let up = ns.sh("ip link set lo up");
        assert!(up.status.success(), "ip link set lo up: {up:?}");
        Some(ns)
    }

    /// Its name, for `ip netns exec`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its file, `/var/run/netns/NAME`: to move a thread of the test itself inside
    /// (`setns`), for an engine that runs in-process.
    pub fn path(&self) -> std::path::PathBuf {
        std::path::Path::new("/var/run/netns").join(&self.name)
    }

    /// A command that runs inside it: `ip netns exec NAME`, to which the program and its
    /// arguments are added.
    pub fn exec(&self) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]);
        c
    }

    /// Runs `program` with `args` inside, to its end.
    #[track_caller]
    pub fn run(&self, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
        self.exec().arg(program).args(args).output().unwrap()
    }

    /// Runs a shell script inside, to its end.
    #[track_caller]
    pub fn sh(&self, script: &str) -> Output {
        self.run("sh", &["-c", script])
    }

    /// Takes a process started inside (with [`Netns::exec`]), to kill it on drop.
    pub fn adopt(&mut self, child: Child) {
        self.children.push(child);
    }

    /// Kills the processes it was given, now.
    pub fn kill_adopted(&mut self) {
        for mut c in self.children.drain(..) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.kill_adopted();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}
