//! The open model's timer: a timerfd that wakes the loop at a due instant with nanosecond
//! precision, registered with the poll.

use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Interest, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};

use super::{Http, Worker};

/// The timer's token: no slot has it (slot indexes are below 2³²).
pub(super) const TIMER: Token = Token(usize::MAX);

/// A timer for the open model's due instants, registered with the poll; `None` if the
/// system refuses one (the loop then waits in whole milliseconds, as epoll_wait does).
pub(super) fn open_timer(registry: &mio::Registry) -> Option<TimerFd> {
    use std::os::fd::{AsFd, AsRawFd};
    let timer = TimerFd::new(
        ClockId::CLOCK_MONOTONIC,
        TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
    )
    .ok()?;
    let fd = timer.as_fd().as_raw_fd();
    // Edge-triggered: each expiry after a `set` raises a new edge, so the expiry count is
    // never read.
    registry
        .register(&mut SourceFd(&fd), TIMER, Interest::READABLE)
        .ok()?;
    Some(timer)
}

impl<P: Http> Worker<P> {
    /// Sets the timer to wake the loop at `due_ns`; false if there is no timer.
    pub(super) fn arm(&mut self, due_ns: u64, now: u64) -> bool {
        let Some(timer) = &self.timer else {
            return false;
        };
        if self.armed_ns == Some(due_ns) {
            return true;
        }
        let after = TimeSpec::from_duration(Duration::from_nanos(due_ns - now));
        if timer
            .set(Expiration::OneShot(after), TimerSetTimeFlags::empty())
            .is_err()
        {
            return false;
        }
        self.armed_ns = Some(due_ns);
        true
    }
}
