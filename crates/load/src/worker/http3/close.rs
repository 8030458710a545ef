//! Closing a connection: its CONNECTION_CLOSE sent before the socket goes, its QUIC
//! statistics added, the endpoint told to forget it, and its state reset for the slot's
//! next connection.

use std::time::Instant;

use h3wire::error as h3err;
use quinn_proto::EndpointEvent;

use super::{Conn, Http3, Tag};

impl Http3 {
    /// [`Http::close`], and [`Http::end`]'s (`run_ended`: a handshake not done is no
    /// failure).
    pub(super) fn shut(&mut self, c: &mut Conn, run_ended: bool) {
        if let Some((handle, mut conn)) = c.quic.take() {
            let sock = c.socket.as_ref();
            let quic = &mut self.quic;
            let send = |d: &[u8]| {
                if let Some(sock) = sock {
                    quic.send_calls += 1;
                    if let Ok(n) = sock.send(d) {
                        quic.datagrams_sent += 1;
                        quic.bytes_sent += n as u64;
                    }
                }
            };
            if !conn.is_closed() {
                crate::h3::close(
                    &mut conn,
                    Instant::now(),
                    h3err::H3_NO_ERROR,
                    &mut self.tx,
                    send,
                );
            } else if !conn.is_drained() {
                crate::h3::flush(&mut conn, Instant::now(), &mut self.tx, send);
            }
            self.quic.add_connection(&conn.stats());
            if c.handshake_failed(run_ended) {
                self.quic.handshakes_failed += 1;
            }
            while let Some(ev) = conn.poll_endpoint_events() {
                if ev.is_drained() {
                    c.drained = true;
                }
                let _ = self.endpoint.handle_event(handle, ev);
            }
            if !c.drained {
                let _ = self.endpoint.handle_event(handle, EndpointEvent::drained());
            }
        }
        c.socket = None;
        c.drained = false;
        c.up = false;
        c.handshake_counted = false;
        c.next_tag = Tag::default();
        c.queue.clear();
        c.rx.clear();
        c.readable.clear();
        c.uni.clear();
        c.goaway = None;
        c.issued = false;
        c.lost = None;
        c.answered_ns = None;
    }
}

impl Conn {
    /// Closing it is a failed handshake: its handshake was never counted done, unless the
    /// run's end cut short a handshake still going (one lost already failed).
    pub(super) fn handshake_failed(&self, run_ended: bool) -> bool {
        let cut_short = run_ended && self.lost.is_none();
        !self.handshake_counted && !cut_short
    }

    /// Up and not lost when the run ended: its path then is noted.
    pub(super) fn open_at_end(&self) -> bool {
        self.up && self.lost.is_none()
    }
}
