//! A connection's slot in the worker: its socket, phase, requests in flight and buffers.

use std::collections::VecDeque;

use crate::h2 as http2;
use crate::response::Framer;
use crate::transport::Transport;

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
    /// HTTP/2: its stream; 0 under HTTP/1.1.
    pub(super) stream: u32,
    /// HTTP/2: times it was sent again after a GOAWAY or REFUSED_STREAM.
    pub(super) retries: u8,
}

pub(super) struct Slot {
    pub(super) conn: Option<Transport>,
    pub(super) generation: u32,
    pub(super) phase: Phase,
    /// When the current connect started.
    pub(super) since_ns: u64,
    /// When its TCP connect completed, for a TLS connection still in its handshake.
    pub(super) tcp_up_ns: Option<u64>,
    pub(super) retry_at_ns: u64,
    pub(super) failures: u32,
    /// The requests issued and not yet answered, oldest first.
    pub(super) inflight: VecDeque<Pending>,
    /// Encoded requests; `out[out_pos..]` is issued but not yet written. Its capacity is
    /// reserved up front, so encoding a request does not allocate.
    pub(super) out: Vec<u8>,
    pub(super) out_pos: usize,
    /// Since when the oldest request in flight has been waiting (for the timeout).
    pub(super) wait_since_ns: u64,
    pub(super) framer: Framer,
    /// Start of a response head split across reads.
    pub(super) leftover: Vec<u8>,
    /// Connections this slot has opened.
    pub(super) opened: u64,
    /// HTTP/2: the connection's streams and windows.
    pub(super) h2: Option<http2::Conn>,
    /// HTTP/2: requests a GOAWAY or REFUSED_STREAM left unprocessed, to send again on the
    /// next connection. Not in `inflight`: no stream carries them.
    pub(super) requeue: Vec<Pending>,
    /// On the free list: waiting for a request to fall due.
    pub(super) on_free_list: bool,
}

impl Slot {
    /// Issued requests not yet written, or TLS records not yet on the wire.
    pub(super) fn unwritten(&self) -> bool {
        self.out_pos < self.out.len() || self.conn.as_ref().is_some_and(Transport::pending)
    }
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
