//! One connection and how it is driven: its state ([`Conn`]), and per readiness the read,
//! the answers and the write ([`ConnIo::drive`]), the linger after the last response.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};

use mio::net::TcpStream;

use super::{Timers, LINGER_SECS, OUT_LIMIT};
use crate::config::Limits;
use crate::h2;
use crate::metrics::{Metrics, ParseError};
use crate::responder::{ConnState, Next, Responder};

/// One connection; kept small, since there may be many thousands.
#[derive(Debug)]
pub(super) struct Conn {
    pub(super) stream: TcpStream,
    pub(super) peer: SocketAddr,
    pub(super) state: ConnState,
    /// Unprocessed input: a split head, or requests held back while output is pending.
    pub(super) input: Vec<u8>,
    /// Output the socket has not taken yet.
    pub(super) output: Vec<u8>,
    /// Worker-clock second at which the timer closes the connection.
    pub(super) deadline_s: u32,
    /// A partial head is waiting (its deadline is the head timeout).
    pub(super) in_head: bool,
    /// A request body is being drained (its deadline is one head timeout from its head).
    pub(super) in_body: bool,
    /// Close (lingering) once `output` is written.
    pub(super) close_after_write: bool,
    /// Half-closed by us; reading and discarding until the peer closes.
    pub(super) lingering: bool,
    /// The peer has half-closed (or the socket has an error): read on to EOF.
    pub(super) peer_closed: bool,
    /// The protocol is not known yet: the first bytes may still be the HTTP/2 preface.
    pub(super) sniffing: bool,
    /// HTTP/2 state, once the preface came.
    pub(super) h2: Option<Box<h2::Conn>>,
}

/// What the loop does with a connection after driving it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Action {
    Keep,
    Close,
}

/// The borrowed worker state one connection needs while it is driven.
pub(super) struct ConnIo<'a> {
    pub(super) rbuf: &'a mut [u8],
    pub(super) wbuf: &'a mut Vec<u8>,
    pub(super) h2_scratch: &'a mut h2::Scratch,
    pub(super) limits: &'a Limits,
    pub(super) metrics: &'a Metrics,
    pub(super) worker: usize,
    pub(super) responder: &'a mut Responder,
    pub(super) timers: &'a Timers,
    pub(super) now_s: u32,
    pub(super) shutting_down: bool,
}

impl ConnIo<'_> {
    pub(super) fn drive(&mut self, conn: &mut Conn) -> Action {
        if !conn.output.is_empty() {
            match write_nb(&mut conn.stream, &conn.output) {
                // Only progress extends the deadline: a peer that never reads but sends a
                // byte now and then wakes us with nothing written, and must still time out.
                Ok(0) => {}
                Ok(n) => {
                    conn.output.drain(..n);
                    conn.deadline_s = self.now_s.saturating_add(self.timers.idle_s);
                }
                Err(_) => return Action::Close,
            }
            if !conn.output.is_empty() {
                return Action::Keep;
            }
            conn.output = Vec::new();
            if conn.close_after_write {
                return start_linger(conn, self.rbuf, self.now_s);
            }
        }
        loop {
            let carried = conn.input.len();
            self.rbuf[..carried].copy_from_slice(&conn.input);
            conn.input.clear();
            if conn.input.capacity() > 4096 {
                conn.input = Vec::new();
            }
            let mut more = false;
            let mut eof = false;
            let total = if carried < self.rbuf.len() {
                match conn.stream.read(&mut self.rbuf[carried..]) {
                    Ok(0) => {
                        eof = true;
                        carried
                    }
                    Ok(n) => {
                        // A short read means drained, unless the peer closed: then the EOF
                        // is still to be read, and no new event will say so.
                        more = carried + n == self.rbuf.len() || conn.peer_closed;
                        carried + n
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if carried == 0 {
                            return Action::Keep;
                        }
                        carried
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                        more = true;
                        carried
                    }
                    Err(_) => return Action::Close,
                }
            } else {
                more = true;
                carried
            };

            if conn.sniffing {
                match h2::sniff(&self.rbuf[..total]) {
                    h2::Sniff::Partial if !eof => {
                        conn.input.extend_from_slice(&self.rbuf[..total]);
                        if more {
                            continue;
                        }
                        return Action::Keep;
                    }
                    h2::Sniff::Partial => return Action::Close,
                    h2::Sniff::H2 => conn.h2 = Some(Box::new(h2::Conn::new())),
                    h2::Sniff::H1 => {}
                    h2::Sniff::NotHttp => {
                        self.metrics
                            .worker(self.worker)
                            .parse_error(ParseError::Malformed);
                        return Action::Close;
                    }
                }
                conn.sniffing = false;
            }

            let held_before = conn.h2.as_deref().map_or(0, h2::Conn::held_bytes);
            let mut pos = 0;
            let next = loop {
                let outcome = match conn.h2.as_deref_mut() {
                    Some(h2) => h2.process(
                        &self.rbuf[pos..total],
                        self.wbuf,
                        OUT_LIMIT,
                        &mut h2::Ctx {
                            responder: self.responder,
                            scratch: self.h2_scratch,
                            metrics: self.metrics.worker(self.worker),
                            limits: self.limits,
                            peer: Some(conn.peer),
                            now_s: self.now_s,
                        },
                    ),
                    None => self.responder.respond(
                        &mut conn.state,
                        &self.rbuf[pos..total],
                        self.wbuf,
                        OUT_LIMIT,
                        Some(conn.peer),
                    ),
                };
                pos += outcome.consumed;
                if outcome.next != Next::OutputFull {
                    break outcome.next;
                }
                // A long pipelined batch: send what we have before answering the rest.
                match write_nb(&mut conn.stream, self.wbuf) {
                    Ok(n) if n == self.wbuf.len() => self.wbuf.clear(),
                    Ok(n) => {
                        conn.output.extend_from_slice(&self.wbuf[n..]);
                        conn.input.extend_from_slice(&self.rbuf[pos..total]);
                        self.wbuf.clear();
                        // Waiting for the peer to read is idle time, not a head in progress.
                        conn.in_head = false;
                        if n > 0 {
                            conn.deadline_s = self.now_s.saturating_add(self.timers.idle_s);
                        }
                        return Action::Keep;
                    }
                    Err(_) => {
                        self.wbuf.clear();
                        return Action::Close;
                    }
                }
            };
            let mut next = next;
            if let (Some(h2), true, Next::NeedInput) =
                (conn.h2.as_deref_mut(), self.shutting_down, next)
            {
                // HTTP/2 says goodbye with a GOAWAY, then lingers like HTTP/1's last response,
                // once no stream waits for flow control (the shutdown timeout bounds that).
                h2.goaway(self.wbuf);
                if !h2.has_streams() {
                    next = Next::Linger;
                }
            }
            let closing = next != Next::NeedInput;
            if !closing && pos < total {
                conn.input.extend_from_slice(&self.rbuf[pos..total]);
            }

            if !self.wbuf.is_empty() {
                let written = write_nb(&mut conn.stream, self.wbuf);
                let Ok(n) = written else {
                    self.wbuf.clear();
                    return Action::Close;
                };
                if n < self.wbuf.len() {
                    conn.output.extend_from_slice(&self.wbuf[n..]);
                    self.wbuf.clear();
                    conn.close_after_write = closing || eof;
                    conn.in_head = false;
                    if n > 0 {
                        conn.deadline_s = self.now_s.saturating_add(self.timers.idle_s);
                    }
                    return Action::Keep;
                }
                self.wbuf.clear();
            }
            if next == Next::Close {
                return Action::Close;
            }
            if next == Next::Linger {
                return start_linger(conn, self.rbuf, self.now_s);
            }
            if eof {
                return Action::Close;
            }
            if conn.state.body_remaining > 0 {
                // The body's deadline is fixed when its head completes: bytes trickled into
                // it (which leave no input behind) must not extend it.
                if std::mem::take(&mut conn.state.body_started) {
                    conn.in_head = false;
                    conn.in_body = true;
                    conn.deadline_s = self.now_s.saturating_add(self.timers.head_s);
                }
            } else if conn.input.is_empty() {
                conn.state.body_started = false;
                conn.in_body = false;
                conn.in_head = false;
                // A peer that never reads times out as over HTTP/1: while flow control holds
                // response bytes, frames read (a PING every second) do not refresh the
                // deadline; starting to hold or sending held bytes does.
                let held = conn.h2.as_deref().map_or(0, h2::Conn::held_bytes);
                if held == 0 || held_before == 0 || held < held_before {
                    conn.deadline_s = self.now_s.saturating_add(self.timers.idle_s);
                }
                let holding = conn.h2.as_deref().is_some_and(h2::Conn::has_streams);
                if self.shutting_down && conn.state.body_remaining == 0 && !holding {
                    return Action::Close;
                }
            } else if pos > 0 || !conn.in_head {
                // A new head has started: it gets the whole head timeout, and no more.
                conn.state.body_started = false;
                conn.in_body = false;
                conn.in_head = true;
                conn.deadline_s = self.now_s.saturating_add(self.timers.head_s);
            }
            if !more {
                return Action::Keep;
            }
        }
    }
}

/// Half-closes after the last response and discards input until the peer closes.
fn start_linger(conn: &mut Conn, rbuf: &mut [u8], now_s: u32) -> Action {
    if conn.stream.shutdown(Shutdown::Write).is_err() {
        return Action::Close;
    }
    conn.lingering = true;
    conn.in_head = false;
    conn.input = Vec::new();
    conn.deadline_s = now_s.saturating_add(LINGER_SECS);
    linger(conn, rbuf)
}

pub(super) fn linger(conn: &mut Conn, rbuf: &mut [u8]) -> Action {
    // Bounded per event; the linger deadline bounds the total.
    for _ in 0..16 {
        match conn.stream.read(rbuf) {
            Ok(0) => return Action::Close,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Action::Keep,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Action::Close,
        }
    }
    Action::Keep
}

/// Writes as much of `buf` as the socket takes now.
pub(super) fn write_nb(stream: &mut TcpStream, buf: &[u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match stream.write(&buf[done..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}
