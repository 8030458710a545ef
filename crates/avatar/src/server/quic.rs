//! A worker's HTTP/3 side: its own UDP socket (bound with `SO_REUSEPORT` beside the other
//! workers', so the kernel keeps a flow on one worker), a `quinn_proto::Endpoint`, and the
//! connections it accepted, each with its [`h3::Conn`]; driven from the worker's mio loop.
//!
//! Datagrams go out in batches: a connection's transmit is up to [`udp::MAX_SEGMENTS`]
//! datagrams of one size, sent in one `sendmsg` that the kernel cuts apart (GSO). A
//! connection whose batch the kernel refuses (`EIO`: no checksum offload on its route;
//! `EINVAL`: its route's MTU, its destination) but whose datagrams it then takes one by
//! one sends one datagram a `sendmsg` from then on ([`udp::Batcher`], one per connection);
//! only `ENOPROTOOPT` (a kernel without `UDP_SEGMENT`) turns GSO off for the whole worker.
//! They come in with GRO on: one `recvmsg` returns the datagrams of a flow that arrived back
//! to back, copied once into a `BytesMut` that [`udp::segments`] cuts into views, one per
//! datagram handed to the endpoint. A batch the socket cannot take at once is dropped whole
//! (QUIC's loss recovery sends it again), and the worker stops sending until the socket is
//! writable again. `/metrics` counts the datagrams (sent, received, dropped) and the
//! system calls both ways, and the connections that gave GSO up.
//!
//! ECN is not sent: the transmit's ECN codepoint is dropped today. Its control message
//! (`IP_TOS`/`IPV6_TCLASS`) would go in the same `sendmsg` as `UDP_SEGMENT`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;
use mio::net::UdpSocket;
use quinn_proto::{
    ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig, ServerConfig, Transmit,
};
use socket2::{Domain, Protocol, Socket, Type};

use super::Shared;
use crate::h3;
use crate::metrics::{H3Event, H3Udp, WorkerMetrics};

/// The largest read: one datagram, or with GRO the datagrams coalesced into one read, which
/// the kernel keeps under 64 KiB.
const MAX_READ: usize = 64 * 1024;
// A read the buffer cannot hold is cut short (`MSG_TRUNC`): no datagram or GRO read is
// larger than a UDP length field.
const _: () = assert!(MAX_READ >= u16::MAX as usize);
/// Datagrams read per wakeup, counted as datagrams (a GRO read holds up to 64), and an empty
/// datagram as one: past it the worker turns to its other sockets and comes back at once (a
/// poll with no wait), so a flood of datagrams cannot starve TCP. The read that crosses it
/// is handled whole, so a turn takes at most this many plus one read's.
const MAX_DATAGRAMS_PER_TURN: usize = 64;
/// The bytes of one transmit: quinn's datagrams stay under 1,500 bytes.
const MAX_TRANSMIT: usize = udp::MAX_SEGMENTS * 1500;
/// Receive errors in a row (ICMP reports, EINTR) before the read stops for this turn.
const MAX_ERRORS_IN_A_ROW: usize = 16;

struct Slot {
    conn: quinn_proto::Connection,
    h3: h3::Conn,
    timeout: Option<Instant>,
    /// The time of this connection's entry in `Quic::timers` (its earliest); other entries
    /// for it are stale.
    queued: Option<Instant>,
    /// Counted in `Shared::h3_live`: not closed yet.
    live: bool,
    /// Counted in `Quic::handshaking`.
    handshaking: bool,
    /// This connection's GSO: on until its route refuses a batch it takes one by one.
    batcher: udp::Batcher,
}

/// One worker's QUIC endpoint and connections.
pub(super) struct Quic {
    pub(super) socket: UdpSocket,
    endpoint: Endpoint,
    config: Arc<ServerConfig>,
    /// By quinn's connection handle, a small index it reuses.
    conns: Vec<Option<Box<Slot>>>,
    open: usize,
    /// Connections of this worker still in their handshake.
    handshaking: usize,
    rx: Vec<u8>,
    /// GRO's control message, for every read.
    cmsg: udp::ControlBuf,
    out: Out,
    scratch: h3::Scratch,
    /// Connection timers, earliest first; an entry is checked against its slot's current
    /// timeout when it comes up, so a changed timer costs no search.
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    stopping: bool,
    /// The socket may hold more datagrams: read again next turn without waiting.
    more: bool,
    /// Connections a batch of datagrams reached, driven once after it.
    touched: Vec<ConnectionHandle>,
}

/// What the worker lends the QUIC side.
pub(super) struct Ctx<'a> {
    pub(super) responder: &'a mut crate::responder::Responder,
    pub(super) metrics: &'a WorkerMetrics,
    pub(super) limits: &'a crate::config::Limits,
    pub(super) shared: &'a Shared,
    pub(super) max_connections: usize,
}

/// Binds a UDP socket that shares `addr` with the other workers'.
pub(super) fn bind_udp(addr: SocketAddr) -> io::Result<std::net::UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    // The kernel caps both at net.core.{r,w}mem_max, silently.
    socket.set_send_buffer_size(udp::BUFFER_BYTES)?;
    socket.set_recv_buffer_size(udp::BUFFER_BYTES)?;
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

impl Quic {
    pub(super) fn new(
        socket: std::net::UdpSocket,
        config: Arc<ServerConfig>,
        endpoint: Arc<EndpointConfig>,
    ) -> Self {
        let endpoint = Endpoint::new(endpoint, Some(Arc::clone(&config)), true, None);
        // Best effort: a kernel without GRO (before Linux 5.0) reads one datagram a call.
        udp::enable_gro(&socket);
        Quic {
            socket: UdpSocket::from_std(socket),
            endpoint,
            config,
            conns: Vec::new(),
            open: 0,
            handshaking: 0,
            rx: vec![0; MAX_READ],
            cmsg: udp::ControlBuf::new(),
            out: Out::new(),
            scratch: h3::Scratch::new(),
            timers: BinaryHeap::new(),
            stopping: false,
            more: false,
            touched: Vec::new(),
        }
    }

    /// When the next connection timer is due.
    pub(super) fn next_timeout(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((t, _))| *t)
    }

    /// Whether the socket may still hold datagrams (the last read stopped at its budget):
    /// the worker then polls without waiting and calls [`Quic::readable`] again.
    pub(super) fn more(&self) -> bool {
        self.more
    }

    /// Reads up to [`MAX_DATAGRAMS_PER_TURN`] datagrams (the socket is edge-triggered:
    /// [`Quic::more`] says whether to come back) and handles what they brought, driving
    /// each connection they reached once.
    pub(super) fn readable(&mut self, cx: &mut Ctx<'_>) {
        self.more = false;
        let mut errors = 0;
        let mut datagrams = 0;
        self.touched.clear();
        loop {
            if datagrams >= MAX_DATAGRAMS_PER_TURN || errors == MAX_ERRORS_IN_A_ROW {
                self.more = true;
                break;
            }
            cx.metrics.h3_udp(H3Udp::ReceiveCalls, 1);
            let got = match udp::receive(&self.socket, &mut self.rx, &mut self.cmsg) {
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // Each error (EINTR, an ICMP report) is taken off the socket by the call.
                Err(_) => {
                    errors += 1;
                    continue;
                }
            };
            errors = 0;
            // An empty datagram counts as one, here and in the turn's budget.
            let n = udp::datagrams(got.n, got.segment).max(1);
            datagrams += n;
            cx.metrics.h3_udp(H3Udp::DatagramsReceived, n as u64);
            // An IPv4 or IPv6 socket always says who sent. Port 0 cannot be answered (a
            // send to it is EINVAL): such a datagram is forged, and QUIC never sees it.
            let Some(from) = got.from.filter(|a| a.port() != 0) else {
                continue;
            };
            let now = Instant::now();
            // One allocation for the read, however many datagrams GRO put in it: each is a
            // view of it (quinn keeps stream data as such views).
            let data = BytesMut::from(&self.rx[..got.n]);
            for datagram in udp::segments(data, got.segment) {
                self.out.tx.clear();
                match self
                    .endpoint
                    .handle(now, from, None, None, datagram, &mut self.out.tx)
                {
                    Some(DatagramEvent::NewConnection(incoming)) => self.admit(incoming, now, cx),
                    Some(DatagramEvent::ConnectionEvent(h, ev)) => {
                        if let Some(Some(slot)) = self.conns.get_mut(h.0) {
                            slot.conn.handle_event(ev);
                            if !self.touched.contains(&h) {
                                self.touched.push(h);
                            }
                        }
                    }
                    Some(DatagramEvent::Response(t)) => {
                        self.out.respond(&self.socket, cx.metrics, &t)
                    }
                    None => {}
                }
            }
        }
        let now = Instant::now();
        let mut touched = std::mem::take(&mut self.touched);
        for &h in &touched {
            self.drive(h, now, cx);
        }
        touched.clear();
        self.touched = touched;
    }

    fn admit(&mut self, incoming: quinn_proto::Incoming, now: Instant, cx: &mut Ctx<'_>) {
        // Spoofed Initials would hold --max-connections (shared with TCP) for the idle
        // timeout: handshakes are capped at a quarter of this worker's share, and past half
        // of that an unvalidated address is asked to prove itself with a Retry first.
        let share = cx.max_connections / cx.shared.wakers.len().max(1);
        let cap = (share / 4).max(2);
        if self.handshaking >= cap / 2
            && !incoming.remote_address_validated()
            && incoming.may_retry()
        {
            self.out.tx.clear();
            match self.endpoint.retry(incoming, &mut self.out.tx) {
                Ok(t) => self.out.respond(&self.socket, cx.metrics, &t),
                Err(e) => self.endpoint.ignore(e.into_incoming()),
            }
            return;
        }
        let full = cx.shared.open.fetch_add(1, Ordering::Relaxed) >= cx.max_connections;
        if full || self.stopping || self.handshaking >= cap {
            cx.shared.open.fetch_sub(1, Ordering::Relaxed);
            cx.metrics.h3(H3Event::Refused);
            let t = self.endpoint.refuse(incoming, &mut self.out.tx);
            self.out.respond(&self.socket, cx.metrics, &t);
            return;
        }
        match self.endpoint.accept(
            incoming,
            now,
            &mut self.out.tx,
            Some(Arc::clone(&self.config)),
        ) {
            Ok((h, conn)) => {
                cx.metrics.h3(H3Event::Connection);
                if self.conns.len() <= h.0 {
                    self.conns.resize_with(h.0 + 1, || None);
                }
                self.conns[h.0] = Some(Box::new(Slot {
                    conn,
                    h3: h3::Conn::new(),
                    timeout: None,
                    queued: None,
                    live: true,
                    handshaking: true,
                    batcher: udp::Batcher::default(),
                }));
                self.handshaking += 1;
                cx.shared.h3_live.fetch_add(1, Ordering::Relaxed);
                self.open += 1;
                cx.metrics.set_h3_open(self.open);
                self.drive(h, now, cx);
            }
            Err(e) => {
                cx.shared.open.fetch_sub(1, Ordering::Relaxed);
                if let Some(t) = e.response {
                    self.out.respond(&self.socket, cx.metrics, &t);
                }
            }
        }
    }

    /// The socket has room again: if a send found it full, every connection sends what it
    /// held back since.
    pub(super) fn writable(&mut self, cx: &mut Ctx<'_>) {
        if !self.out.blocked {
            return;
        }
        self.out.blocked = false;
        let now = Instant::now();
        for i in 0..self.conns.len() {
            if self.conns[i].is_some() {
                self.drive(ConnectionHandle(i), now, cx);
            }
        }
    }

    /// Runs every connection timer that is due.
    pub(super) fn timers(&mut self, cx: &mut Ctx<'_>) {
        let now = Instant::now();
        while let Some(&Reverse((at, i))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let Some(Some(slot)) = self.conns.get_mut(i) else {
                continue;
            };
            if slot.queued != Some(at) {
                continue;
            }
            slot.queued = None;
            match slot.timeout {
                Some(t) if t <= now => {
                    slot.conn.handle_timeout(now);
                    self.drive(ConnectionHandle(i), now, cx);
                }
                Some(t) => {
                    slot.queued = Some(t);
                    self.timers.push(Reverse((t, i)));
                }
                None => {}
            }
        }
    }

    /// Sends GOAWAY on every connection; new ones are refused from now on.
    pub(super) fn begin_shutdown(&mut self, cx: &mut Ctx<'_>) {
        self.stopping = true;
        let now = Instant::now();
        for i in 0..self.conns.len() {
            let Some(slot) = &mut self.conns[i] else {
                continue;
            };
            {
                let mut hcx = h3_ctx(cx, &mut self.scratch, now);
                slot.h3.goaway(&mut slot.conn, &mut hcx);
            }
            self.drive(ConnectionHandle(i), now, cx);
        }
    }

    /// Whether a stopping worker's own connections are done: every one closed by us and its
    /// CONNECTION_CLOSE sent (its draining period is not waited for). The worker also waits
    /// for the other workers' (`Shared::h3_live`) before it drops its socket.
    pub(super) fn done(&self) -> bool {
        self.conns
            .iter()
            .flatten()
            .all(|s| s.h3.closed() || s.conn.is_closed())
    }

    /// Handles a connection's events, sends what it has, and drops it once drained.
    fn drive(&mut self, h: ConnectionHandle, now: Instant, cx: &mut Ctx<'_>) {
        let Some(Some(slot)) = self.conns.get_mut(h.0) else {
            return;
        };
        let mut hcx = h3_ctx(cx, &mut self.scratch, now);
        slot.h3.drive(&mut slot.conn, &mut hcx);
        while let Some(ev) = slot.conn.poll_endpoint_events() {
            if let Some(back) = self.endpoint.handle_event(h, ev) {
                slot.conn.handle_event(back);
            }
        }
        self.out.flush(&self.socket, cx.metrics, slot, now);
        if slot.live && (slot.h3.closed() || slot.conn.is_closed()) {
            slot.live = false;
            let was = cx.shared.h3_live.fetch_sub(1, Ordering::Relaxed);
            if was == 1 && self.stopping {
                // The last one anywhere: the workers waiting on it may go now.
                for w in &cx.shared.wakers {
                    let _ = w.wake();
                }
            }
        }
        if slot.handshaking && (!slot.conn.is_handshaking() || slot.conn.is_closed()) {
            slot.handshaking = false;
            self.handshaking -= 1;
        }
        slot.timeout = slot.conn.poll_timeout();
        if let Some(t) = slot.timeout {
            // A later timer waits for the queued entry, which re-queues it when it comes up.
            if slot.queued.is_none_or(|q| t < q) {
                slot.queued = Some(t);
                self.timers.push(Reverse((t, h.0)));
            }
        }
        if slot.conn.is_drained() {
            self.conns[h.0] = None;
            self.open -= 1;
            cx.shared.open.fetch_sub(1, Ordering::Relaxed);
            cx.metrics.set_h3_open(self.open);
        }
    }

    /// Closes every connection still open (the shutdown deadline) with H3_NO_ERROR and sends
    /// the CONNECTION_CLOSE, so clients learn of it now rather than at their idle timeout;
    /// then forgets them all (a stopped worker): the shared counts go back.
    pub(super) fn release(&mut self, cx: &mut Ctx<'_>) {
        let now = Instant::now();
        // The last sends of this worker: tried even if the socket was full a moment ago.
        self.out.blocked = false;
        for slot in self.conns.iter_mut().flatten() {
            if !slot.conn.is_closed() {
                let c = quinn_proto::VarInt::from_u64(h3wire::error::H3_NO_ERROR).unwrap();
                slot.conn.close(now, c, bytes::Bytes::new());
            }
            self.out.flush(&self.socket, cx.metrics, slot, now);
        }
        cx.shared.open.fetch_sub(self.open, Ordering::Relaxed);
        let live = self.conns.iter().flatten().filter(|s| s.live).count();
        cx.shared.h3_live.fetch_sub(live, Ordering::Relaxed);
        self.open = 0;
        self.conns.clear();
        self.timers.clear();
        self.handshaking = 0;
        cx.metrics.set_h3_open(0);
    }
}

fn h3_ctx<'a>(
    cx: &'a mut Ctx<'_>,
    scratch: &'a mut h3::Scratch,
    now: Instant,
) -> h3::conn::Ctx<'a> {
    h3::conn::Ctx {
        responder: cx.responder,
        scratch,
        metrics: cx.metrics,
        limits: cx.limits,
        now,
    }
}

/// A worker's sending side: its transmit buffer and its GSO state.
struct Out {
    /// One transmit: up to [`udp::MAX_SEGMENTS`] datagrams of one size.
    tx: Vec<u8>,
    /// The endpoint's own answers (Retry, refusals, version negotiation): one datagram
    /// each, to addresses that are no connection.
    batcher: udp::Batcher,
    /// False once the kernel said it has no `UDP_SEGMENT` (`ENOPROTOOPT`): no connection
    /// of this worker asks for batches then.
    gso: bool,
    /// A send found the socket full: nothing more is sent until it is writable again
    /// ([`Quic::writable`]); the connections keep what they have to send till then.
    blocked: bool,
}

impl Out {
    fn new() -> Self {
        Out {
            tx: Vec::with_capacity(MAX_TRANSMIT),
            batcher: udp::Batcher::default(),
            gso: true,
            blocked: false,
        }
    }

    /// Sends what `slot`'s connection has to send, up to its batcher's datagrams a
    /// transmit, until the socket is full.
    fn flush(
        &mut self,
        socket: &UdpSocket,
        metrics: &WorkerMetrics,
        slot: &mut Slot,
        now: Instant,
    ) {
        while !self.blocked {
            self.tx.clear();
            let max = if self.gso {
                slot.batcher.max_datagrams()
            } else {
                1
            };
            let Some(t) = slot.conn.poll_transmit(now, max, &mut self.tx) else {
                break;
            };
            self.send(socket, metrics, &mut slot.batcher, &t);
        }
    }

    /// Sends the endpoint's own transmit `t` in `self.tx`.
    fn respond(&mut self, socket: &UdpSocket, metrics: &WorkerMetrics, t: &Transmit) {
        let mut batcher = std::mem::take(&mut self.batcher);
        self.send(socket, metrics, &mut batcher, t);
        self.batcher = batcher;
    }

    /// Sends the transmit `t` in `self.tx`: its datagrams in one GSO send, or one by one
    /// once `batcher`'s route has refused GSO. A batch the socket cannot take now is lost
    /// (QUIC sends it again), and marks the worker blocked.
    fn send(
        &mut self,
        socket: &UdpSocket,
        metrics: &WorkerMetrics,
        batcher: &mut udp::Batcher,
        t: &Transmit,
    ) {
        let buf = &self.tx[..t.size];
        let had_gso = !batcher.gave_up();
        let sent = batcher.send_on(socket, buf, t.segment_size, Some(t.destination));
        metrics.h3_udp(H3Udp::SendCalls, sent.calls);
        if had_gso && batcher.gave_up() {
            metrics.h3_udp(H3Udp::GsoRefused, 1);
            if batcher.kernel_lacks_gso() {
                self.gso = false;
            }
        }
        self.settle(metrics, t, &sent.bytes);
    }

    /// Counts what became of transmit `t`, `sent` as the socket said: the datagrams it
    /// took and those it did not; a full socket (`WouldBlock`) blocks the worker's sends.
    fn settle(&mut self, metrics: &WorkerMetrics, t: &Transmit, sent: &io::Result<usize>) {
        let all = udp::datagrams(t.size, t.segment_size) as u64;
        let went = match sent {
            Ok(n) => udp::datagrams(*n, t.segment_size) as u64,
            Err(e) => {
                self.blocked |= e.kind() == io::ErrorKind::WouldBlock;
                0
            }
        };
        metrics.h3_udp(H3Udp::DatagramsSent, went);
        metrics.h3_udp(H3Udp::DatagramsDropped, all - went);
    }
}

#[cfg(test)]
mod tests;
