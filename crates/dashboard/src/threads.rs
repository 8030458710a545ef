//! The dashboard's own threads: the CPU they use, told apart from the load generator's,
//! and the CPUs they may run on (the client's, in a shootout: never the target's).
//!
//! Each thread joins when it starts and leaves when it ends ([`Member`]); it reports its
//! own CPU (`RUSAGE_THREAD`: exact to the microsecond, user and system apart) each time it
//! has worked, so the total is current while the threads live, not only once they end.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard};

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::{gettid, Pid};
use probe::OwnUsage;

/// The dashboard's threads, their CPU so far and the CPUs they are pinned to.
#[derive(Debug, Default)]
pub(crate) struct Threads {
    book: Mutex<Book>,
}

#[derive(Debug, Default)]
struct Book {
    /// CPU reported so far, by threads live and ended.
    cpu: OwnUsage,
    /// Live threads' ids.
    tids: BTreeSet<i32>,
    /// The CPUs every thread is pinned to, once [`Threads::pin`] was called.
    cpus: Option<Vec<usize>>,
}

/// One of the dashboard's threads, from its start to its end (drop reports its last CPU).
pub(crate) struct Member<'a> {
    threads: &'a Threads,
    tid: i32,
    told: OwnUsage,
}

impl Threads {
    fn lock(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The calling thread joins: it is pinned at once if the others are (under the same
    /// lock as [`Threads::pin`], so a thread started meanwhile is never missed).
    pub(crate) fn join(&self) -> Member<'_> {
        let tid = gettid().as_raw();
        let mut b = self.lock();
        b.tids.insert(tid);
        if let Some(cpus) = &b.cpus {
            let _ = pin(tid, cpus);
        }
        Member {
            threads: self,
            tid,
            told: OwnUsage::default(),
        }
    }

    /// Adds CPU a thread outside the dashboard used on its behalf (the CLI's sampler).
    pub(crate) fn add(&self, used: &OwnUsage) {
        let mut b = self.lock();
        b.cpu = b.cpu.plus(used);
    }

    /// The CPU the threads reported so far, ended ones included.
    pub(crate) fn cpu(&self) -> OwnUsage {
        self.lock().cpu
    }

    /// Pins every thread, live and to come, to `cpus`.
    pub(crate) fn pin(&self, cpus: &[usize]) -> std::io::Result<()> {
        let mut b = self.lock();
        b.cpus = Some(cpus.to_vec());
        b.tids.iter().try_for_each(|&tid| pin(tid, cpus))
    }

    /// The live threads' ids.
    #[cfg(test)]
    pub(crate) fn tids(&self) -> Vec<i32> {
        self.lock().tids.iter().copied().collect()
    }
}

impl Member<'_> {
    /// Adds the CPU this thread used since its last report.
    pub(crate) fn report(&mut self) {
        let now = probe::thread_usage();
        self.threads.add(&now.since(&self.told));
        self.told = now;
    }
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        self.report();
        self.threads.lock().tids.remove(&self.tid);
    }
}

fn pin(tid: i32, cpus: &[usize]) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(std::io::Error::from)?;
    }
    sched_setaffinity(Pid::from_raw(tid), &set).map_err(std::io::Error::from)
}
