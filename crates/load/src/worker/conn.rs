//! A connection's slot in the worker: its phase, its requests in flight, and its protocol's
//! state.

use super::http::Requests;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// No socket; may connect at `retry_at_ns`.
    Closed,
    /// Connecting; requests may already be assigned.
    Connecting,
    /// Established.
    Open,
}

/// A request issued and not yet answered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    /// When its latency clock started (ns from the start of the run).
    pub(super) start_ns: u64,
    /// When it was handed to its connection, for the service time.
    pub(super) sent_ns: u64,
    /// Its row in the request table.
    pub(super) shape: u32,
    /// Its protocol's tag for it: HTTP/2's stream ID; 0 under HTTP/1.1.
    pub(super) stream: u32,
    /// Times it was sent again after the server left it unprocessed (HTTP/2's GOAWAY or
    /// REFUSED_STREAM).
    pub(super) retries: u8,
}

/// A connection's place in the worker: what the worker keeps of it, its requests, and its
/// protocol's state `C` ([`super::http::Http::Conn`]).
pub(super) struct Slot<C> {
    /// Bumped at each connect and close: events of a socket closed since are stale.
    pub(super) generation: u32,
    pub(super) phase: Phase,
    /// When the current connect started.
    pub(super) since_ns: u64,
    pub(super) retry_at_ns: u64,
    pub(super) failures: u32,
    pub(super) reqs: Requests,
    /// Connections this slot has opened.
    pub(super) opened: u64,
    /// On the free list: waiting for a request to fall due.
    pub(super) on_free_list: bool,
    /// Timers: the instant the protocol asked to be woken at, when it asks for timers.
    pub(super) wake_ns: Option<u64>,
    pub(super) conn: C,
}

/// What an event says about the read side of a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Readiness {
    None,
    Data,
    /// The peer closed or reset: the EOF or error is queued behind any data.
    Closed,
}

/// Where a connection goes after bytes were processed.
pub(super) enum Flow {
    Continue,
    /// Close the connection; requests still in flight fail as `read`.
    Close,
}
