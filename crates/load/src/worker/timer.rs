//! The open model's timer: a timerfd that wakes the loop at a due instant with nanosecond
//! precision, registered with the poll.

use mio::unix::SourceFd;
use mio::{Interest, Token};
use nix::sys::timerfd::{ClockId, TimerFd, TimerFlags};

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
