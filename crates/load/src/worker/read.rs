//! The worker's read side: draining a readable connection into its framer (HTTP/1.1) or
//! its HTTP/2 connection, and the end of the stream, which may end, truncate or cleanly
//! follow a response.

use super::*;

impl Worker {
    /// Reads what the connection holds. `peer_closed` (EPOLLRDHUP/HUP) means a FIN or reset
    /// is queued behind the data: then read on to the EOF, since no new edge will come.
    pub(super) fn read(&mut self, idx: usize, peer_closed: bool, now: u64) {
        loop {
            let Some(conn) = self.slots[idx].conn.as_mut() else {
                return;
            };
            match conn.read(&mut self.rbuf) {
                Ok(Read::Eof { close_notify }) => {
                    self.eof(idx, close_notify, now);
                    return;
                }
                Ok(Read::Data { n, drained }) => {
                    self.rec.counts.bytes_read += n as u64;
                    let flow = if self.slots[idx].h2.is_some() {
                        h2::feed(
                            &mut self.slots[idx],
                            &mut self.rec,
                            &mut self.h2,
                            &self.cfg.table.h2,
                            &self.rbuf[..n],
                            now,
                        )
                    } else {
                        feed(
                            &mut self.slots[idx],
                            &mut self.rec,
                            &self.cfg.table.shapes,
                            &self.rbuf[..n],
                            now,
                            self.cfg.keepalive,
                        )
                        .map_err(|e| Reason::new(Kind::Parse, cause::of_parse(e)))
                    };
                    match flow {
                        Ok(Flow::Continue) => {}
                        Ok(Flow::Close) => {
                            // Requests pipelined behind a response that closed.
                            let f = Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse));
                            self.close_and_replace(idx, f, now);
                            return;
                        }
                        Err(f) => {
                            self.goodbye(idx);
                            self.fail(idx, f, now);
                            return;
                        }
                    }
                    if drained && !peer_closed {
                        // No read is spent on EAGAIN: the transport says nothing is left.
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let kind = match cause::tls_error(&e) {
                        Some(_) => Kind::Tls,
                        None => Kind::Read,
                    };
                    let f = Reason::new(kind, cause::of_io(&e, stage(&self.slots[idx])));
                    self.fail(idx, f, now);
                    return;
                }
            }
        }
        // Responses freed room: refill it at once, in one write, timed from now.
        if self.cfg.keepalive && self.room(idx) > 0 {
            let _ = self.offer(idx, now_ns(self.cfg.epoch));
        }
        // HTTP/2 answers (SETTINGS and PING acknowledgements, window updates) go out now.
        if self.slots[idx].h2.is_some() && self.slots[idx].unwritten() {
            self.flush(idx, now);
        }
    }

    /// The server closed the stream: with a TCP FIN, or with TLS's close_notify. Either
    /// ends a response framed by the close, truncates one that is not complete, and between
    /// responses is a clean close.
    pub(super) fn eof(&mut self, idx: usize, close_notify: bool, now: u64) {
        let slot = &mut self.slots[idx];
        let at = stage(slot);
        let f = Reason::new(
            Kind::Read,
            match close_notify {
                true => Cause::CloseNotify(at),
                false => Cause::Closed(at),
            },
        );
        if let Some(status) = slot.framer.eof() {
            if let Some(req) = slot.inflight.pop_front() {
                self.rec.response(status, req, now);
            }
            let rest = Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse));
            self.close_and_replace(idx, rest, now);
        } else if slot.inflight.is_empty() {
            self.rec.counts.closed_by_server += 1;
            self.close_and_replace(idx, f, now);
        } else {
            self.fail(idx, f, now);
        }
    }
}
