//! A connection's slot in the worker (its phase, its requests in flight, its protocol's
//! state) and its life: connecting, events, failures, and the replacement of a connection
//! that closed.

use stats::reason::Kind;

use super::http::{Http, Next, Requests, Sent, Setup};
use super::{now_ns, token, Failure, Worker};

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
    /// Its protocol's tag for it: HTTP/2's stream ID; HTTP/3's tag counted at issue (no
    /// stream index: its stream is noted apart); 0 under HTTP/1.1.
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

impl<P: Http> Worker<P> {
    /// Handles one readiness event of the slot's socket: a connection being set up makes
    /// progress, an established one sends what waits and takes in what it received.
    pub(super) fn on_event(
        &mut self,
        idx: usize,
        read: Readiness,
        writable: bool,
        error: bool,
        now: u64,
    ) {
        let generation = self.slots[idx].generation;
        // A failure below may close the socket and open a new one in the same slot; the
        // rest of this event belongs to the old socket and must not touch the new one.
        let same = |w: &Self| w.slots[idx].generation == generation;
        if self.slots[idx].phase == Phase::Connecting {
            let setup = {
                let (http, slot, mut cx) = self.at(idx);
                http.setup(&mut slot.conn, &mut cx, error, now)
            };
            match setup {
                Setup::Waiting => return,
                Setup::Failed(f) => {
                    self.fail(idx, f, now);
                    return;
                }
                Setup::Up => {
                    if !self.up(idx) {
                        return;
                    }
                    // What the handshake's last write left (see `send`).
                    self.send(idx, now);
                    if !same(self) {
                        return;
                    }
                }
            }
            if self.cfg.keepalive && self.room(idx) > 0 {
                let _ = self.offer(idx, now);
                if !same(self) {
                    return;
                }
            }
        } else if writable {
            self.send(idx, now);
            if !same(self) {
                return;
            }
        }
        if read != Readiness::None {
            self.receive(idx, read == Readiness::Closed, now);
        }
    }

    /// Opens the slot's connection, carrying whatever was issued on it already.
    pub(super) fn connect(&mut self, idx: usize, now: u64) {
        let connected = {
            let (http, slot, mut cx) = self.at(idx);
            slot.generation = slot.generation.wrapping_add(1);
            slot.since_ns = now;
            let token = token(idx, slot.generation);
            http.connect(&mut slot.conn, &mut cx, token, now)
        };
        if let Err(f) = connected {
            self.fail(idx, f, now);
            return;
        }
        let slot = &mut self.slots[idx];
        slot.phase = Phase::Connecting;
        slot.opened += 1;
        if slot.opened > 1 {
            self.rec.counts.reconnects += 1;
        }
        // On loopback the handshake has usually finished by now: write at once rather
        // than spend an epoll_wait on the writable edge.
        self.send(idx, now);
        self.rearm(idx);
    }

    /// Records a connection established. False when it failed instead: its protocol
    /// refused it (under `--http2`, a TLS server that did not select h2).
    fn up(&mut self, idx: usize) -> bool {
        // A fresh clock read: the caller's `now` may be from before the connect started.
        let now = now_ns(self.cfg.epoch);
        let (http, slot, mut cx) = self.at(idx);
        slot.phase = Phase::Open;
        slot.failures = 0;
        // What an idle connection has waited since (an h2 server allowing no streams);
        // requests already assigned keep their own start.
        if slot.reqs.inflight.is_empty() {
            slot.reqs.wait_since_ns = now;
        }
        let transport_up = http.up(&mut slot.conn, &mut cx, now);
        cx.rec
            .connect
            .record_ns(transport_up.saturating_sub(slot.since_ns));
        cx.rec.counts.connections_opened += 1;
        let carries = http.carries(&slot.conn);
        self.open += 1;
        if let Err(f) = carries {
            self.fail(idx, f, now);
            return false;
        }
        true
    }

    /// Sends whatever the slot's connection has waiting.
    #[inline]
    pub(super) fn send(&mut self, idx: usize, now: u64) {
        let sent = {
            let (http, slot, mut cx) = self.at(idx);
            http.send(&mut slot.conn, &mut cx, now)
        };
        match sent {
            Ok(Sent::Wait) => {}
            // Recorded first, then the rest of what waited goes: a write that finishes a TLS
            // handshake returns as soon as it has, and no writable edge need come for the
            // rest.
            Ok(Sent::Up) => {
                if self.up(idx) {
                    self.send(idx, now);
                }
            }
            Err(f) => self.fail(idx, f, now),
        }
    }

    /// Takes in what a readable connection received.
    fn receive(&mut self, idx: usize, peer_closed: bool, now: u64) {
        let next = {
            let (http, slot, mut cx) = self.at(idx);
            http.receive(&mut slot.conn, &mut slot.reqs, &mut cx, peer_closed, now)
        };
        match next {
            Next::Idle | Next::Refill => {}
            Next::Close(f) => return self.close_and_replace(idx, f, now),
            Next::Fail(f) => return self.fail(idx, f, now),
        }
        // Responses freed room: refill it at once, in one write, timed from now.
        if self.cfg.keepalive && self.room(idx) > 0 {
            let _ = self.offer(idx, now_ns(self.cfg.epoch));
        }
        // What the protocol owes the server (HTTP/2's acknowledgements and window updates)
        // goes now, if the refill did not take it.
        if self.http.owes(&mut self.slots[idx].conn) {
            self.send(idx, now);
        }
    }

    /// Acts on what the protocol said after a timeout or a timer.
    pub(super) fn then(&mut self, idx: usize, next: Next, now: u64) {
        match next {
            Next::Idle => {}
            Next::Refill => {
                if self.cfg.keepalive && self.slots[idx].phase == Phase::Open && self.room(idx) > 0
                {
                    let _ = self.offer(idx, now);
                }
            }
            Next::Close(f) => self.close_and_replace(idx, f, now),
            Next::Fail(f) => self.fail(idx, f, now),
        }
    }

    /// Every request in flight on the slot fails with `f`; the slot is closed and,
    /// unless the run is ending, reopened (after a backoff for repeated connect failures).
    pub(super) fn fail(&mut self, idx: usize, f: Failure, now: u64) {
        let n = self.slots[idx].reqs.inflight.len() as u64;
        self.rec.failed(f, n);
        if matches!(f.kind, Kind::Connect | Kind::Tls) {
            // Repeated connect and handshake failures back off.
            self.slots[idx].failures += 1;
        }
        self.slots[idx].reqs.inflight.clear();
        self.close_and_replace(idx, f, now);
    }

    /// Closes the slot's socket. Requests still in flight fail as `remaining`; then the
    /// slot is reopened now, or after a backoff if connecting keeps failing.
    pub(super) fn close_and_replace(&mut self, idx: usize, remaining: Failure, now: u64) {
        if !self.slots[idx].reqs.inflight.is_empty() {
            self.fail(idx, remaining, now);
            return;
        }
        let slot = &mut self.slots[idx];
        self.http.close(&mut slot.conn);
        if slot.phase == Phase::Open {
            self.open -= 1;
        }
        slot.phase = Phase::Closed;
        if P::TIMED {
            self.wakes.set(idx, slot.generation, None);
        }
        slot.generation = slot.generation.wrapping_add(1);
        // Back off only on repeated connect failures: 0, 1, 2, 4 ... 64 ms.
        let backoff_ms = match slot.failures {
            0 | 1 => 0,
            f => 1u64 << (f - 2).min(6),
        };
        slot.retry_at_ns = now + backoff_ms * 1_000_000;
        if self.cfg.schedule.ended(now) {
            return;
        }
        if backoff_ms == 0 {
            self.open_slot(idx, now);
        }
    }
}
