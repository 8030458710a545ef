//! The waiting verdicts that read the target's connections to its services: "pool-bound"
//! (a small steady pool with more requests in flight than it holds) and "waiting
//! on the backend" (the target's threads on its sockets to a service that has CPU to
//! spare). Entries of [`crate::diagnosis::WAIT_RULES`]; tried only when neither side's CPUs
//! were the limit.

use report::shootout::pool::ServiceConnections;
use report::SATURATED_PERCENT;

use crate::figures::Figures;
use crate::waiting::{futex_majority, FUTEX_THREADS};

/// A pool counts as steady when its mean is at most this many times its fewest
/// connections, or at least its most divided by this: a connection above the floor now
/// and then (pgx opens one more for each PostgreSQL cancel request, when a load that ends
/// abandons queries) is not growth, and neither is one below the ceiling now and then
/// (pgx closes a connection whose query was cancelled, and the next request opens it
/// again). A pool that opens connections as demand rises has a mean well away from both.
pub const STEADY_RATIO: f64 = 1.25;

/// A pool counts as small when the target has at least this many times more requests in
/// flight than the pool holds connections to the service (its mean).
pub const OVERSUBSCRIBED: f64 = 2.0;

/// Connections busy (bytes in flight) at least this share of the readings count as busy
/// most of the level.
pub const BUSY_SHARE: f64 = 0.5;

/// A service below this share of its CPUs is idle-ish: its latency is not its CPU.
pub const IDLE_SERVICE_PERCENT: f64 = 50.0;

/// At least this share of the target's waiting thread observations on sockets or in
/// epoll makes them waiting on the backend.
pub const SOCKET_SHARE: f64 = 0.5;

/// `2 of 2 connections to postgres busy 97% of the level`, or with a range.
fn pool_words(c: &ServiceConnections) -> String {
    let held = if c.min == c.max {
        format!("{} of {}", c.max, c.max)
    } else {
        format!("{:.1} (of {}-{})", c.mean, c.min, c.max)
    };
    let busy = c
        .busy_share
        .map(|b| format!(" busy {:.0}% of the level", 100.0 * b))
        .unwrap_or_default();
    let active = c
        .active_mean
        .map(|a| format!(", {a:.1} active in {}", c.service))
        .unwrap_or_default();
    format!("{held} connections to {}{busy}{active}", c.service)
}

/// The threads the load parked on a futex (a runtime's own parked ones left out):
/// `Some("196 of 200 threads waiting on a futex")` when they are most of the waiting ones.
fn futex_waiters(f: &Figures) -> Option<String> {
    let w = f.waits.as_ref()?;
    let idle = w.futex_idle * w.samples;
    let added = w.futex.saturating_sub(idle);
    (futex_majority(added, w.running, w.total().saturating_sub(idle))
        && w.mean_of(added) >= FUTEX_THREADS)
        .then(|| {
            format!(
                "{:.0} of {:.0} threads waiting on a futex",
                w.mean_of(w.futex),
                w.threads_mean()
            )
        })
}

/// Pool-bound: some service's connections sat at a small steady number while the target
/// had more requests in flight than that (by Little's law, from the cell's throughput and
/// mean latency; the level's connections when there is no latency), and neither side's
/// CPUs were the limit (the rule runs after those verdicts). Then at most that many
/// requests can be at the service at once and the rest wait for a connection: the pool is
/// where they queue. The evidence names the connections, the requests in flight, and the
/// target's threads parked on a futex (a thread-per-request server waiting on the pool)
/// when most of them were. Without the in-flight figure, the connections must also have
/// been busy most of the level.
pub fn pool_bound(f: &Figures) -> Option<String> {
    f.service_connections.iter().find_map(|c| {
        if c.samples == 0 || c.max == 0 {
            return None;
        }
        let at_floor = c.min == c.max || (c.min > 0 && c.mean <= STEADY_RATIO * f64::from(c.min));
        let at_ceiling = c.mean * STEADY_RATIO >= f64::from(c.max);
        let in_flight = f.in_flight.unwrap_or(f.level_connections as f64);
        let small = in_flight >= OVERSUBSCRIBED * c.mean;
        if !((at_floor || at_ceiling) && small) {
            return None;
        }
        let busy = c.busy_share.is_some_and(|b| b >= BUSY_SHARE);
        if f.in_flight.is_none() && !busy {
            return None;
        }
        let held = if at_floor { c.min } else { c.max };
        let mut queued = format!("{in_flight:.0} requests in flight for {held} connections");
        if let Some(w) = futex_waiters(f) {
            queued = format!("{queued}; {w}");
        }
        Some(format!("{}; {queued}", pool_words(c)))
    })
}

/// Waiting on the backend: the target held connections to a service with CPU to spare,
/// and most of its waiting threads were on socket reads or in epoll (not on a futex).
pub fn backend_wait(f: &Figures) -> Option<String> {
    let w = f.waits.as_ref()?;
    let waiting = w.total().saturating_sub(w.running);
    let on_sockets = w.socket + w.epoll;
    if waiting == 0 || (on_sockets as f64) < SOCKET_SHARE * waiting as f64 {
        return None;
    }
    f.service_connections.iter().find_map(|c| {
        if c.samples == 0 || c.mean < 1.0 {
            return None;
        }
        let cpu = f
            .service_cpu_percent
            .iter()
            .find(|(n, _)| *n == c.service)
            .map(|(_, p)| *p)?;
        if cpu >= IDLE_SERVICE_PERCENT.min(SATURATED_PERCENT) {
            return None;
        }
        Some(format!(
            "{}; {:.0} of {:.0} threads waiting on a socket read or in epoll; {} {cpu:.0}% of its CPUs",
            pool_words(c),
            w.mean_of(on_sockets),
            w.threads_mean(),
            c.service
        ))
    })
}

#[cfg(test)]
mod tests;
