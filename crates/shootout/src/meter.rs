//! What measuring a cell needs from the run ([`Meter`]: the plan, each side's CPUs, Ctrl-C,
//! the services and the live view; [`Dumps`]: where thread dumps go) and why a cell failed
//! ([`CellFailure`]). Apart from `measure`, which runs a cell, and `sampler`, which probes
//! one load: both take a `Meter` and fail with a `CellFailure`, so neither imports the other
//! for them.

use std::io;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::services::Probe;
use crate::suite::Plan;

/// Why a cell failed; its message is the cell's.
#[derive(Debug, thiserror::Error)]
pub enum CellFailure {
    /// The sampler thread could not be started.
    #[error("cannot start the probe thread: {0}")]
    ProbeThread(io::Error),
    /// The load generator refused the plan.
    #[error("the load could not run: {}", .0.text().worded(&crate::wording::SuiteKeys))]
    Load(load::LoadError),
    /// The target exited while warming up.
    #[error("the target exited during warm-up")]
    ExitedInWarmUp,
    /// The target exited during a repeat (which is kept).
    #[error("the target exited ({0}) during the level")]
    Exited(ExitStatus),
    /// The target's process tree could not be read around a repeat (which is kept).
    #[error("the target's process could not be probed")]
    Unprobed,
    /// A capacity level's search could not be set up.
    #[error("the capacity search cannot run: {0}")]
    Capacity(String),
}

/// Where JVM thread dumps of a target go, and when they are taken.
#[derive(Debug, Clone, Copy)]
pub struct Dumps<'a> {
    /// The results directory; dumps go in its `thread-dumps/`.
    pub dir: &'a Path,
    /// Every cell (`--thread-dump`), or only cells whose threads wait on a futex.
    pub always: bool,
    /// The target's name, for the file names.
    pub target: &'a str,
}

/// What measuring needs from the run: the plan, the CPUs on each side, and Ctrl-C.
#[derive(Debug, Clone, Copy)]
pub struct Meter<'a> {
    /// The suite's plan.
    pub plan: &'a Plan,
    /// Load generator threads (one per client CPU).
    pub client_threads: usize,
    /// CPUs the server may use.
    pub server_cpus: usize,
    /// Set by Ctrl-C.
    pub interrupt: &'a Arc<AtomicBool>,
    /// Each side's CPUs (client, server), for the per-CPU figures of `/proc/stat`.
    pub cpu_ids: (&'a [usize], &'a [usize]),
    /// JVM thread dumps, when a results directory takes them.
    pub dumps: Option<Dumps<'a>>,
    /// The services the target uses, probed beside it.
    pub services: &'a [Probe],
    /// CPUs the services may use.
    pub service_cpus: usize,
    /// A live view told of each load and its intervals (`--dashboard`).
    pub watch: Option<&'a dyn crate::watch::Watch>,
    /// What the TCP counters' rules need to know of the target (capacity windows).
    pub net: crate::summary::Net,
}
