//! Closed model: the wait before sleeping that batches wake-ups ([`crate::Coalesce`]).
//!
//! A worker that finds nothing to read waits a little before it sleeps in `epoll_wait`, so
//! that the responses arriving meanwhile are read in one wake-up. Without the wait, on
//! loopback, each response a server sends wakes the sleeping client in the server's own
//! context: against nginx over TLS at 100 connections × 10 streams, nginx spent 18% of its
//! CPU waking foxbench, and foxbench woke 0.67 times per request (`bench/h2_syscalls.py`).
//! A network card's interrupt moderation does this on a real network; loopback has none.
//!
//! The wait is measured, not assumed: each one's wall time is summed into
//! [`crate::Coalesced`], which the report shows.

use std::time::Duration;

use mio::Events;

use super::{now_ns, Http, Worker};
use crate::{Coalesce, COALESCE_BATCH, COALESCE_LATENCY_SHARE, COALESCE_MAX, COALESCE_MIN};

/// One worker's coalescing: its mode, and the waits it made.
pub(super) struct Coalescer {
    mode: Coalesce,
    /// How much longer than asked a sleep lasts, ns: a moving mean over about the last 8.
    /// A timer's wake-up on the VMs measured came 30-60 µs late (bench/open.py), so a
    /// 50 µs wait asked for as such lasted 85 µs; the wait asks for that much less.
    overshoot_ns: u64,
    pub(super) waits: u64,
    pub(super) waited_ns: u64,
}

impl Coalescer {
    /// The worker's coalescing, set up on its own thread; `mode` is the plan's in effect
    /// (`Off` in the open model: [`crate::Plan::coalesce_in_effect`]).
    pub(super) fn new(mode: Coalesce) -> Self {
        if mode != Coalesce::Off {
            // A sleep's default timer slack is 50 µs: a 20 µs wait would last 70. The
            // slack is the thread's own; 1 µs keeps the wait what the rule says.
            let _ = nix::sys::prctl::set_timerslack(1_000);
        }
        Self {
            mode,
            overshoot_ns: 0,
            waits: 0,
            waited_ns: 0,
        }
    }

    /// How long to ask a sleep for, to wait `wait_ns` in all; 0 when there is no wait, or
    /// when a sleep would overshoot it by itself. Each wait skipped for the overshoot lowers
    /// the overshoot learnt by 1/4096, so that a machine that got quieter is tried again
    /// (after ~600 skips when the overshoot is a sixth over the wait; a faster decay would
    /// try, and overshoot, every few dozen turns).
    pub(super) fn ask_ns(&mut self, wait_ns: u64) -> u64 {
        if wait_ns == 0 {
            return 0;
        }
        let ask = wait_ns.saturating_sub(self.overshoot_ns);
        if ask == 0 {
            self.overshoot_ns -= self.overshoot_ns / 4096;
        }
        ask
    }

    /// Counts a wait that asked for `asked_ns` and lasted `waited_ns`. A sleep the thread
    /// was preempted in counts as at most twice the longest wait late.
    pub(super) fn waited(&mut self, asked_ns: u64, waited_ns: u64) {
        self.waits += 1;
        self.waited_ns += waited_ns;
        let most = 2 * COALESCE_MAX.as_nanos() as u64;
        let over = waited_ns.saturating_sub(asked_ns).min(most);
        self.overshoot_ns = self.overshoot_ns - self.overshoot_ns / 8 + over / 8;
    }

    /// How long to wait before sleeping, given the recent mean latency and the requests in
    /// flight (counted only when needed: this runs once per loop turn); 0 for no wait.
    #[inline]
    pub(super) fn wait_ns(&self, recent_latency_ns: u64, in_flight: impl FnOnce() -> u64) -> u64 {
        match self.mode {
            Coalesce::Off => 0,
            Coalesce::Fixed(d) => u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
            Coalesce::Auto => auto_wait_ns(recent_latency_ns, in_flight),
        }
    }
}

/// [`Coalesce::Auto`]'s wait: 1/40th of the recent mean latency, at most 200 µs; none when
/// that is below 10 µs, or when fewer than [`COALESCE_BATCH`] responses are due in it
/// (`in_flight` requests answered over one latency: a wait that reads one or two
/// responses costs a timer and a poll more than the wake-up it saves). The common case at
/// low concurrency, a latency under 400 µs, costs one division and one comparison.
#[inline]
pub(super) fn auto_wait_ns(recent_latency_ns: u64, in_flight: impl FnOnce() -> u64) -> u64 {
    let max = COALESCE_MAX.as_nanos() as u64;
    let wait = (recent_latency_ns / COALESCE_LATENCY_SHARE).min(max);
    if wait < COALESCE_MIN.as_nanos() as u64 {
        return 0;
    }
    // due = in_flight × wait / latency, compared without dividing.
    if in_flight().saturating_mul(wait) < COALESCE_BATCH.saturating_mul(recent_latency_ns) {
        return 0;
    }
    wait
}

impl<P: Http> Worker<P> {
    /// Polls for events, sleeping at most `wait_ns`. With a coalescing wait due, a poll that
    /// finds nothing ready is followed by the wait, then by the poll that may sleep; a
    /// worker with work to do never waits. `spinning` polls (the open model's last stretch
    /// before a due instant) never wait.
    pub(super) fn poll_events(
        &mut self,
        events: &mut Events,
        wait_ns: u64,
        spinning: bool,
    ) -> std::io::Result<()> {
        let ask = if spinning || wait_ns == 0 {
            0
        } else {
            let c = &self.rec.counts;
            let in_flight = || c.sent.saturating_sub(c.completed() + c.errors());
            let wait = self
                .coalesce
                .wait_ns(self.rec.recent_latency_ns, in_flight)
                .min(wait_ns);
            self.coalesce.ask_ns(wait)
        };
        if ask > 0 {
            self.poll.poll(events, Some(Duration::ZERO))?;
            if !events.is_empty() {
                return Ok(());
            }
            let before = now_ns(self.cfg.epoch);
            std::thread::sleep(Duration::from_nanos(ask));
            let waited = now_ns(self.cfg.epoch).saturating_sub(before);
            self.coalesce.waited(ask, waited);
            let rest = wait_ns.saturating_sub(waited);
            return self.poll.poll(events, Some(Duration::from_nanos(rest)));
        }
        self.poll.poll(events, Some(Duration::from_nanos(wait_ns)))
    }
}

#[cfg(test)]
mod tests;
