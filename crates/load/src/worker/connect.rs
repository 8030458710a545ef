//! A connection's setup: the TCP connect, the TLS handshake, and the moment it is
//! established.

use std::io;

use stats::reason::{At, Cause, Kind, Reason};

use super::{now_ns, token, Failure, Phase, Worker};
use crate::cause;
use crate::response::Framer;
use crate::tls::Handshake;
use crate::transport::Transport;

impl Worker {
    pub(super) fn connect(&mut self, idx: usize, now: u64) {
        let slot = &mut self.slots[idx];
        slot.generation = slot.generation.wrapping_add(1);
        slot.since_ns = now;
        slot.tcp_up_ns = None;
        slot.framer = Framer::new();
        slot.leftover.clear();
        let conn = match Transport::connect(
            self.cfg.addr,
            self.poll.registry(),
            token(idx, slot.generation),
            self.cfg.keepalive,
            self.cfg.tls.as_ref(),
        ) {
            Ok(c) => c,
            Err(e) => {
                let f = self.connecting_failure(idx, &e);
                self.fail(idx, f, now);
                return;
            }
        };
        slot.conn = Some(conn);
        slot.phase = Phase::Connecting;
        if let Some(h2) = slot.h2.as_mut() {
            // The preface goes out at once, so that the server's SETTINGS (how many streams
            // it allows) arrive before the slot is offered more than one request.
            h2.start(&mut slot.out);
        }
        slot.opened += 1;
        if slot.opened > 1 {
            self.rec.counts.reconnects += 1;
        }
        // On loopback the handshake has usually finished by now: write at once rather
        // than spend an epoll_wait on the writable edge.
        if slot.unwritten() {
            self.flush(idx, now);
        }
    }

    /// Makes progress on a connection with nothing to write yet.
    pub(super) fn poll_connect(&mut self, idx: usize, now: u64) {
        let Some(conn) = self.slots[idx].conn.as_mut() else {
            return;
        };
        let result = conn.poll_connect();
        self.note_tcp_up(idx);
        match result {
            Ok(true) => {
                self.established(idx);
            }
            Ok(false) => {}
            Err(e) => {
                let f = self.connecting_failure(idx, &e);
                self.fail(idx, f, now);
            }
        }
    }

    /// Notes when a TLS connection's TCP connect completed, which splits its setup into
    /// connect and handshake time.
    pub(super) fn note_tcp_up(&mut self, idx: usize) {
        let slot = &mut self.slots[idx];
        if slot.tcp_up_ns.is_none()
            && slot
                .conn
                .as_ref()
                .is_some_and(|c| matches!(c, Transport::Tls(_)) && c.tcp_established())
        {
            slot.tcp_up_ns = Some(now_ns(self.cfg.epoch));
        }
    }

    /// How a failure while connecting counts: a TLS error, or any failure once TCP is up
    /// (the handshake failed), is `tls`; the rest are `connect`.
    pub(super) fn connecting_failure(&self, idx: usize, e: &io::Error) -> Failure {
        if cause::tls_error(e).is_some() || self.slots[idx].tcp_up_ns.is_some() {
            Reason::new(Kind::Tls, cause::of_io(e, At::Handshake))
        } else {
            Reason::new(Kind::Connect, cause::of_io(e, At::Connect))
        }
    }

    /// Records a connection established. False when it failed instead: under `--http2`,
    /// a TLS server that did not select h2 (the preflight says so in one line; this is a
    /// server that changed its mind during the run).
    pub(super) fn established(&mut self, idx: usize) -> bool {
        // A fresh clock read: the caller's `now` may be from before the connect started.
        let now = now_ns(self.cfg.epoch);
        let slot = &mut self.slots[idx];
        slot.phase = Phase::Open;
        slot.failures = 0;
        self.open += 1;
        // What an idle connection has waited since (an h2 server allowing no streams);
        // requests already assigned keep their own start.
        if slot.inflight.is_empty() {
            slot.wait_since_ns = now;
        }
        let tcp_up = slot.tcp_up_ns.unwrap_or(now);
        self.rec
            .connect
            .record_ns(tcp_up.saturating_sub(slot.since_ns));
        self.rec.counts.connections_opened += 1;
        let Some(conn) = slot.conn.as_ref() else {
            return false;
        };
        let h2_refused =
            slot.h2.is_some() && conn.handshake().is_some() && conn.alpn() != Some(&b"h2"[..]);
        if let Some(kind) = conn.handshake() {
            let took = now.saturating_sub(tcp_up);
            match kind {
                Handshake::Full => {
                    self.rec.counts.handshakes_full += 1;
                    self.rec.handshake_full.record_ns(took);
                }
                Handshake::Resumed => {
                    self.rec.counts.handshakes_resumed += 1;
                    self.rec.handshake_resumed.record_ns(took);
                }
            }
            if self.rec.tls.is_none() {
                self.rec.tls = conn.tls_info();
            }
        }
        if h2_refused {
            self.fail(idx, Reason::new(Kind::Protocol, Cause::NoH2), now);
            return false;
        }
        true
    }
}
