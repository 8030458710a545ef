//! The diagnosis's system rules: when a side's CPUs count as saturated on the per-CPU
//! figures of `/proc/stat` (kernel work charged to no process included), and what a cell
//! whose CPUs were not saturated waited on, from its threads' wait states.
//!
//! The waiting verdicts are a table ([`crate::diagnosis::WAIT_RULES`]), tried in order
//! after the CPU verdicts; the first that finds its evidence names the cell. A verdict
//! that needs more figures (connections to a service: "pool-bound", "service-bound") is
//! one more entry with one more field in [`Figures`].

use report::shootout::{CpuUse, ThreadWaits};
use report::SATURATED_PERCENT;

use crate::figures::Figures;

/// A side's process must use at least this share of its CPUs for its busy CPUs to be its
/// own limit: a CPU kept busy by other work on the machine is reported, not blamed.
pub const OWN_SHARE_PERCENT: f64 = 50.0;

/// At least this share of the target's waiting thread observations (running ones left
/// out: on a machine busy with other work, they wait for a CPU) on a futex makes it
/// lock-bound.
pub const FUTEX_SHARE: f64 = 0.5;

/// Whether most of the waiting observations (`total` less `running`) are on a futex.
pub fn futex_majority(futex: u64, running: u64, total: u64) -> bool {
    let waiting = total.saturating_sub(running);
    waiting > 0 && futex as f64 >= FUTEX_SHARE * waiting as f64
}

/// Observations on a futex beyond the threads parked there before the load.
fn futex_added(w: &ThreadWaits) -> u64 {
    w.futex.saturating_sub(w.futex_idle * w.samples)
}

/// Whether most of the waiting observations were on a futex, the threads parked there
/// before the load left out.
pub fn mostly_on_futex(w: &ThreadWaits) -> bool {
    let idle = w.futex_idle * w.samples;
    futex_majority(futex_added(w), w.running, w.total().saturating_sub(idle))
}

/// ... and at least this many threads on a futex on average (one thread waiting for work
/// is no contention).
pub const FUTEX_THREADS: f64 = 2.0;

/// The mean busy share of a side's CPUs, percent.
fn mean_busy(cpus: &[CpuUse]) -> Option<f64> {
    (!cpus.is_empty()).then(|| cpus.iter().map(|c| c.busy).sum::<f64>() / cpus.len() as f64)
}

/// Whether a side's CPUs were its limit: its process saturated them (the figure before
/// per-CPU time), or they were saturated on `/proc/stat` (softirq, irq and kernel threads
/// counted) while its process used a fair share of them. `spin_percent` of its CPUs were
/// spent spinning with nothing to do (foxbench's open model before send instants, or a
/// client that spins instead of sleeping, `idle`): taken off both the process's
/// and the CPUs' figures first, by [`report::client_saturated`]'s one rule.
fn saturated(process_percent: f64, cpus: Option<&[CpuUse]>, spin_percent: f64) -> bool {
    if report::client_saturated(process_percent, spin_percent) {
        return true;
    }
    let busy = cpus.and_then(mean_busy).unwrap_or(0.0);
    report::client_saturated(busy, spin_percent)
        && process_percent - spin_percent >= OWN_SHARE_PERCENT
}

/// foxbench's CPUs were its limit: its spin is time to spare.
pub fn client_saturated(f: &Figures) -> bool {
    saturated(
        f.client_cpu_percent,
        f.system.as_ref().map(|s| s.client.as_slice()),
        f.client_spin_percent,
    )
}

/// The server's CPUs were its limit.
pub fn server_saturated(f: &Figures) -> bool {
    saturated(
        f.server_cpu_percent,
        f.system.as_ref().map(|s| s.server.as_slice()),
        0.0,
    )
}

/// `client CPU 0 98% busy, foxbench 6% of it: other work on the machine`: each side whose
/// CPUs were saturated while its own process used little of them.
pub fn other_work(f: &Figures) -> Option<String> {
    let s = f.system.as_ref()?;
    let sides = [
        ("client", "foxbench", &s.client, f.client_cpu_percent),
        ("server", "the server", &s.server, f.server_cpu_percent),
    ];
    let parts: Vec<String> = sides
        .iter()
        .filter_map(|(side, who, cpus, own)| {
            let busy = mean_busy(cpus)?;
            (busy >= SATURATED_PERCENT && *own < OWN_SHARE_PERCENT)
                .then(|| format!("{side} CPUs {busy:.0}% busy, {who} {own:.0}% of them"))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "{}: other work on the machine took the CPU, so these figures are the machine's as much as the target's",
            parts.join(", ")
        )
    })
}

/// `CPU 0 93% busy (40% softirq, 31% system), CPU 1 22% busy`: each CPU of both sides
/// once, with its kernel shares when they are 5% or more.
pub fn cpus_line(f: &Figures) -> Option<String> {
    let s = f.system.as_ref()?;
    let mut seen: Vec<u64> = Vec::new();
    let mut parts = Vec::new();
    for (side, c) in s
        .client
        .iter()
        .map(|c| ("client", c))
        .chain(s.server.iter().map(|c| ("server", c)))
    {
        if seen.contains(&c.cpu) {
            continue;
        }
        seen.push(c.cpu);
        let kernel: Vec<String> = [(c.softirq, "softirq"), (c.irq, "irq"), (c.system, "system")]
            .iter()
            .filter(|(v, _)| *v >= 5.0)
            .map(|(v, n)| format!("{v:.0}% {n}"))
            .collect();
        let kernel = if kernel.is_empty() {
            String::new()
        } else {
            format!(" ({})", kernel.join(", "))
        };
        // A spinning client's CPU is busy with time to spare: said, lest it read as a limit.
        let spin = if side == "client" && parts.is_empty() && f.client_spin_percent >= 0.5 {
            format!(
                ", foxbench's spin {:.0}% of its CPUs",
                f.client_spin_percent
            )
        } else {
            String::new()
        };
        parts.push(format!(
            "{side} CPU {} {:.0}% busy{kernel}{spin}",
            c.cpu, c.busy
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "{}; {:.0} context switches/s",
            parts.join(", "),
            s.ctxt_per_s
        )
    })
}

/// The futex waiters the load added (the runtime's own parked threads left out), on
/// average, and of those the ones that can be waiting for a lock: a thread waits for a
/// lock only while it holds a request, so with `in_flight` requests in flight and `T`
/// threads, at least `T - in_flight` threads hold none: idle workers of a thread pool,
/// parked on its queue's futex, waiting for work. `(added, contended)`.
fn futex_waiters(f: &Figures) -> Option<(f64, f64)> {
    let w: &ThreadWaits = f.waits.as_ref()?;
    if !mostly_on_futex(w) {
        return None;
    }
    let added = w.mean_of(futex_added(w));
    let without_work = f.in_flight.map_or(0.0, |n| (w.threads_mean() - n).max(0.0));
    Some((added, (added - without_work).max(0.0)))
}

/// `190 of 200 threads idle on a futex, waiting for work: 10 requests in flight`: most
/// waiting threads are on a futex, but no more than the threads without a request, so
/// they are a pool's idle workers, not contention. For the "neither" verdict's detail.
pub fn idle_workers(f: &Figures) -> Option<String> {
    let w = f.waits.as_ref()?;
    let (added, contended) = futex_waiters(f)?;
    (contended < FUTEX_THREADS && added >= FUTEX_THREADS).then(|| {
        format!(
            "{added:.0} of {:.0} threads idle on a futex, waiting for work: {:.0} requests in flight",
            w.threads_mean(),
            f.in_flight.unwrap_or(0.0)
        )
    })
}

/// Most threads on a futex: `196 of 200 threads waiting on a futex (futex_do_wait)`.
/// The threads the target had parked on a futex before the load (a runtime's own) are
/// left out of both counts: only the waiters the load added can be waiting for a lock,
/// and of those only as many as hold a request ([`futex_waiters`]).
pub fn lock_bound(f: &Figures) -> Option<String> {
    let w: &ThreadWaits = f.waits.as_ref()?;
    let (_, contended) = futex_waiters(f)?;
    if contended < FUTEX_THREADS {
        return None;
    }
    let on_futex = w.mean_of(w.futex);
    let top = w
        .wchans
        .iter()
        .find(|x| x.wchan.starts_with("futex"))
        .map(|x| format!(" ({})", x.wchan))
        .unwrap_or_default();
    let parked = if w.futex_idle > 0 {
        format!(", {} of them parked there before the load", w.futex_idle)
    } else {
        String::new()
    };
    Some(format!(
        "{:.0} of {:.0} threads waiting on a futex{top}{parked}",
        on_futex,
        w.threads_mean()
    ))
}
