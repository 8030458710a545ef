//! HTTP/3, the [`Http`] implementation for it: QUIC by the sans-I/O `quinn-proto`, driven
//! by this worker's mio loop, one connected UDP socket per connection registered with the
//! slot's token; a request per bidirectional stream, its HEADERS (and body) encoded once per
//! shape ([`crate::h3::requests`]) and written whole, the stream finished after it; the
//! response framed from its stream (HEADERS, then DATA) and complete at the stream's FIN.
//!
//! Datagrams go out up to [`udp::MAX_SEGMENTS`] a `sendmsg` (GSO, through the `udp` crate's
//! [`udp::Batcher`]) and come in through `recvmsg` with GRO on (with the kernel's receive
//! stamp, as TCP's reads do), each read one allocation that [`udp::segments`] cuts into the
//! datagrams `quinn-proto` takes.
//!
//! QUIC's figures ([`crate::QuicCounts`]): the datagrams, their bytes and the system calls
//! are counted here at each `send` and `recvmsg`, not taken from quinn's `udp_tx`/`udp_rx`:
//! quinn counts a datagram the socket refused as sent, and one `ios` per datagram handed
//! to it, not the `recvmsg` that found nothing. Losses, congestion and frames are quinn's
//! (`Connection::stats()`), added as each connection closes ([`Http::close`]), the run's
//! end included ([`Http::end`], which also notes the path's RTT and window then).
//!
//! The connection's own streams: our control stream (SETTINGS: a QPACK table of 0, no
//! blocked streams) and the server's control stream (SETTINGS, GOAWAY), QPACK encoder
//! stream (checked: a capacity of 0 only) and decoder stream (Stream Cancellations only)
//! are in [`crate::h3::uni`], shared with the blocking client.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use h3wire::{error as h3err, frame};
use mio::net::UdpSocket;
use mio::{Interest, Token};
use quinn_proto::{
    ClientConfig, Connection, ConnectionError, ConnectionHandle, DatagramEvent, Dir, Endpoint,
    EndpointConfig, Event, Side, StreamEvent, StreamId, VarInt,
};
use stats::reason::{At, Cause, Kind, Reason};

use super::http::{Cx, Http, Next, Requests, Sent, Setup};
use super::{Config, Failure, Recorder};
use crate::h3::MAX_FIELD_SECTION;
use crate::protocol_counts::ProtocolCounts;
use crate::{cause, stamps};

mod close;
mod goaway;
mod response;

use crate::h3::uni::{self, Uni};
use goaway::{apply_goaway, requeue, take};
use response::{read_response, Rx};

/// Times a request is sent again after a GOAWAY before it fails.
const MAX_RETRIES: u8 = 3;

/// HTTP/3 for a worker: its QUIC endpoint and client configuration, and its buffers.
pub(in crate::worker) struct Http3 {
    endpoint: Endpoint,
    /// `None` when the run's TLS configuration could not carry QUIC: every connect fails.
    client: Option<ClientConfig>,
    server_name: String,
    streams: usize,
    /// `--no-keepalive`'s opposite: false, a connection carries one request and closes
    /// once it is answered, as a local GOAWAY would.
    keepalive: bool,
    /// The worker's clock's zero, to turn its nanoseconds into quinn's `Instant`s.
    epoch: Instant,
    /// The datagrams being sent: up to [`udp::MAX_SEGMENTS`] of one size, for one GSO send.
    tx: Vec<u8>,
    /// GSO while the kernel takes it, one datagram a send after.
    batcher: udp::Batcher,
    /// Our control stream's whole content: its type and SETTINGS.
    control: Vec<u8>,
    /// Requests sent again: left unprocessed by a GOAWAY or rejected
    /// (H3_REQUEST_REJECTED).
    retries: u64,
    /// QUIC's figures, this worker's.
    quic: crate::QuicCounts,
}

/// One HTTP/3 connection.
pub(in crate::worker) struct Conn {
    socket: Option<UdpSocket>,
    quic: Option<(ConnectionHandle, Connection)>,
    /// The endpoint has forgotten the connection (it said Drained): its handle may be
    /// another's now.
    drained: bool,
    /// The handshake is done (quinn said Connected).
    up: bool,
    /// The handshake was counted as a full TLS one ([`Http::up`], after `up`): a
    /// connection lost in the poll that brought Connected is not, and fails its handshake.
    handshake_counted: bool,
    /// When the connect started, and when the server first answered.
    started_ns: u64,
    answered_ns: Option<u64>,
    /// The next request's tag. Tags only tell requests apart: a request's stream is the
    /// one [`Rx::id`] names, opened when credit allows, whatever expired before it.
    next_tag: Tag,
    /// Issued and not yet on a stream (before the handshake, or past the stream credit):
    /// (tag, shape), in issue order.
    queue: VecDeque<(u32, u32)>,
    /// The responses being read, one per request stream open, each with its stream.
    rx: Vec<Rx>,
    /// Request streams with something to read.
    readable: Vec<StreamId>,
    /// The server's unidirectional streams being read: its control and QPACK streams, and
    /// new ones until their type is known (an unknown type is stopped and dropped), so no
    /// more than the transport's [`crate::h3::MAX_SERVER_UNI`].
    uni: Vec<Uni>,
    /// The server's GOAWAY: the first request stream it will not process.
    goaway: Option<u64>,
    /// A request was issued on this connection (under `--no-keepalive`, its only one).
    issued: bool,
    /// Why the connection ended, once it has.
    lost: Option<Failure>,
}

impl Http3 {
    pub(super) fn new(cfg: &Config, opts: crate::H3Options) -> Self {
        let streams = opts.streams as usize;
        let (client, server_name) = match &cfg.tls {
            Some(t) => (t.quic().ok(), t.server_name()),
            None => (None, String::new()),
        };
        let mut control = Vec::with_capacity(32);
        frame::put_stream_type(&mut control, frame::stream_type::CONTROL);
        frame::Settings::static_qpack(MAX_FIELD_SECTION).put(&mut control);
        Self {
            endpoint: Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None),
            client,
            server_name,
            streams,
            keepalive: cfg.keepalive,
            epoch: cfg.epoch,
            // quinn's packets stay under 1,500 bytes (it reserves more itself if need be).
            tx: Vec::with_capacity(udp::MAX_SEGMENTS * 1500),
            batcher: udp::Batcher::default(),
            control,
            retries: 0,
            quic: crate::QuicCounts::default(),
        }
    }

    fn instant(&self, now: u64) -> Instant {
        self.epoch + Duration::from_nanos(now)
    }

    /// Sends what the connection has to send: up to [`udp::MAX_SEGMENTS`] datagrams a
    /// `sendmsg` (GSO), or one a `send` once the kernel has refused GSO. A send the socket
    /// refuses (full) is dropped: QUIC's loss recovery sends it again.
    fn flush(&mut self, c: &mut Conn, rec: &mut Recorder, now: u64) -> Result<(), Failure> {
        let now = self.instant(now);
        let (Some(sock), Some((handle, conn))) = (c.socket.as_ref(), c.quic.as_mut()) else {
            return Ok(());
        };
        while let Some(t) = conn.poll_transmit(now, self.batcher.max_datagrams(), &mut self.tx) {
            // System calls, one or many for a transmit (one by one after a GSO refusal).
            let sent = self
                .batcher
                .send_on(sock, &self.tx[..t.size], t.segment_size, None);
            self.quic.send_calls += sent.calls;
            match sent.bytes {
                Ok(n) => {
                    rec.counts.bytes_written += n as u64;
                    self.quic.datagrams_sent += udp::datagrams(n, t.segment_size) as u64;
                    self.quic.bytes_sent += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.tx.clear();
                    return Err(Reason::new(
                        Kind::Write,
                        cause::of_io(&e, At::BeforeResponse),
                    ));
                }
            }
            self.tx.clear();
        }
        pump(&mut self.endpoint, *handle, conn, &mut c.drained);
        Ok(())
    }

    /// Reads every datagram waiting, handing each to QUIC and then taking in what it
    /// brought (with `reqs`, the responses it completed), each dated by its datagram's
    /// kernel stamp. False when the read failed for good (the failure is in `c.lost`).
    fn read(&mut self, c: &mut Conn, mut reqs: Option<&mut Requests>, cx: &mut Cx, now: u64) {
        loop {
            let Some(sock) = c.socket.as_ref() else {
                return;
            };
            self.quic.receive_calls += 1;
            let got = match stamps::receive(sock.as_raw_fd(), cx.rbuf, cx.cmsg) {
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // ICMP port unreachable: nothing listens there (any more).
                    let at = if c.up {
                        At::BeforeResponse
                    } else {
                        At::Connect
                    };
                    let kind = if c.up { Kind::Read } else { Kind::Connect };
                    c.lost
                        .get_or_insert(Reason::new(kind, cause::of_io(&e, at)));
                    return;
                }
            };
            cx.rec.counts.bytes_read += got.n as u64;
            self.quic.datagrams_received += udp::datagrams(got.n, got.segment) as u64;
            self.quic.bytes_received += got.n as u64;
            cx.rec.arrived(got.stamp_ns, now);
            c.answered_ns
                .get_or_insert_with(|| super::now_ns(self.epoch));
            let Some((handle, conn)) = c.quic.as_mut() else {
                return;
            };
            // One allocation for the read, however many datagrams GRO put in it: each is
            // a view of it (quinn keeps stream data as such views).
            let data = bytes::BytesMut::from(&cx.rbuf[..got.n]);
            let at = self.instant(now);
            let addr: SocketAddr = cx.cfg.addr;
            for datagram in udp::segments(data, got.segment) {
                match self
                    .endpoint
                    .handle(at, addr, None, None, datagram, &mut self.tx)
                {
                    Some(DatagramEvent::ConnectionEvent(h, ev)) if h == *handle => {
                        conn.handle_event(ev)
                    }
                    Some(DatagramEvent::Response(t)) => {
                        self.quic.send_calls += 1;
                        if let Ok(n) = sock.send(&self.tx[..t.size]) {
                            self.quic.datagrams_sent += 1;
                            self.quic.bytes_sent += n as u64;
                        }
                    }
                    _ => {}
                }
                self.tx.clear();
            }
            self.events(c, reqs.as_deref_mut(), cx, now);
        }
    }

    /// Takes in what QUIC has for us: the handshake's end, the connection's loss, the
    /// server's streams, and responses (only with `reqs`).
    fn events(&mut self, c: &mut Conn, reqs: Option<&mut Requests>, cx: &mut Cx, now: u64) {
        let Some((handle, conn)) = c.quic.as_mut() else {
            return;
        };
        pump(&mut self.endpoint, *handle, conn, &mut c.drained);
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Connected => {
                    c.up = true;
                    // Our control stream, first of our unidirectional streams.
                    if let Some(id) = conn.streams().open(Dir::Uni) {
                        let _ = conn.send_stream(id).write(&self.control);
                    }
                }
                Event::ConnectionLost { reason } => {
                    let f = lost(&reason, c.up, cx);
                    c.lost.get_or_insert(f);
                }
                // quinn raises no Readable for the frame that opened a stream: it is read
                // here, or a type and payload sent whole (SETTINGS and GOAWAY at once,
                // a second control stream) would never be.
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = conn.streams().accept(Dir::Uni) {
                        c.uni.push(Uni::new(id));
                        let at = self.instant(now);
                        read_uni(conn, &mut c.uni, &mut c.goaway, &mut c.lost, id, at);
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) => match id.dir() {
                    // Ours only: the transport gives the server no bidirectional credit,
                    // and a stream of its own is no request of ours (RFC 9114 6.1).
                    Dir::Bi if ours(id) => c.readable.push(id),
                    Dir::Bi => {}
                    Dir::Uni => {
                        let at = self.instant(now);
                        read_uni(conn, &mut c.uni, &mut c.goaway, &mut c.lost, id, at);
                    }
                },
                Event::Stream(StreamEvent::Writable { id }) => {
                    if let Some(rx) = c.rx.iter_mut().find(|r| r.id == id) {
                        write_request(conn, id, rx, &cx.cfg.table.h3);
                    }
                }
                // Stream credit: the queue goes on below.
                Event::Stream(_) | Event::HandshakeDataReady => {}
                Event::DatagramReceived | Event::DatagramsUnblocked => {}
            }
        }
        // After a GOAWAY no new stream opens: what is queued goes again elsewhere.
        if c.up && c.lost.is_none() && c.goaway.is_none() {
            open_queued(c, &cx.cfg.table.h3);
        }
        if let Some(reqs) = reqs {
            responses(c, reqs, cx.rec, self.instant(now), now);
            apply_goaway(c, reqs, cx.rec);
        }
    }
}

/// Reads the server's unidirectional stream `id`, if it is one kept; an error closes the
/// connection with its code (noted in `lost`).
fn read_uni(
    conn: &mut Connection,
    unis: &mut Vec<Uni>,
    goaway: &mut Option<u64>,
    lost: &mut Option<Failure>,
    id: StreamId,
    at: Instant,
) {
    let Some(i) = unis.iter().position(|u| u.id == id) else {
        return;
    };
    let kinds = uni::kinds(unis);
    let read = unis[i].read(conn, goaway, kinds);
    if read == Ok(uni::Keep::No) {
        unis.swap_remove(i);
    }
    if let Err(code) = read {
        close_with(conn, lost, code, at);
    }
}

/// Closes the connection with HTTP/3's `code`, a connection error of ours (RFC 9114 8).
fn close_with(conn: &mut Connection, lost: &mut Option<Failure>, code: u64, at: Instant) {
    let code32 = u32::try_from(code).unwrap_or(u32::MAX);
    let var = VarInt::from_u64(code).unwrap_or(VarInt::MAX);
    conn.close(at, var, bytes::Bytes::new());
    lost.get_or_insert(Reason::new(Kind::Protocol, Cause::H3Sent(code32)));
}

/// Hands the connection's events for the endpoint to it, and its answers back; notes the
/// connection forgotten once it is.
fn pump(
    endpoint: &mut Endpoint,
    handle: ConnectionHandle,
    conn: &mut Connection,
    drained: &mut bool,
) {
    while let Some(ev) = conn.poll_endpoint_events() {
        if ev.is_drained() {
            *drained = true;
        }
        if let Some(back) = endpoint.handle_event(handle, ev) {
            conn.handle_event(back);
        }
    }
}

/// Opens a stream for each queued request while the server's credit allows, in issue
/// order; each request's response is read from the stream it got ([`Rx::id`]).
fn open_queued(c: &mut Conn, shapes: &[Vec<u8>]) {
    let Some((_, conn)) = c.quic.as_mut() else {
        return;
    };
    while let Some(&(tag, shape)) = c.queue.front() {
        let Some(id) = conn.streams().open(Dir::Bi) else {
            return; // no credit: StreamEvent::Available brings us back
        };
        c.queue.pop_front();
        let mut rx = Rx::new(id, tag, shape, shapes[shape as usize].len());
        write_request(conn, id, &mut rx, shapes);
        c.rx.push(rx);
    }
}

/// Writes what the stream takes of the request, and finishes the stream once all is sent.
fn write_request(conn: &mut Connection, id: StreamId, rx: &mut Rx, shapes: &[Vec<u8>]) {
    if rx.unsent == 0 {
        return;
    }
    let bytes = &shapes[rx.shape as usize];
    let mut s = conn.send_stream(id);
    if let Ok(n) = s.write(&bytes[bytes.len() - rx.unsent..]) {
        rx.unsent -= n;
    }
    if rx.unsent == 0 {
        let _ = s.finish();
    }
}

/// Reads each request stream that has something, recording the responses that end. A
/// frame error on a request stream is a connection error (RFC 9114 7.1): the connection
/// closes with its code.
fn responses(c: &mut Conn, reqs: &mut Requests, rec: &mut Recorder, at: Instant, now: u64) {
    let Some((_, conn)) = c.quic.as_mut() else {
        return;
    };
    while let Some(id) = c.readable.pop() {
        let Some(i) = c.rx.iter().position(|r| r.id == id) else {
            continue; // a stream we gave up on (timed out)
        };
        let outcome = read_response(conn, id, &mut c.rx[i]);
        let Some(outcome) = outcome else {
            continue;
        };
        let rx = c.rx.swap_remove(i);
        if let Err(Reason {
            cause: Cause::H3Sent(code),
            ..
        }) = outcome
        {
            close_with(conn, &mut c.lost, u64::from(code), at);
        }
        let Some(req) = take(&mut reqs.inflight, rx.tag) else {
            continue;
        };
        match outcome {
            Ok(status) => {
                rec.response(status, req);
                reqs.wait_since_ns = now;
            }
            // Rejected unprocessed (RFC 9114 4.1.1): it goes again, as after a GOAWAY.
            Err(f) if f.cause == Cause::H3Received(h3err::H3_REQUEST_REJECTED as u32) => {
                requeue(req, &mut reqs.requeue, rec, f);
            }
            Err(f) => rec.failed(f, 1),
        }
    }
}

/// Why a connection ended, from QUIC's reason.
fn lost(reason: &ConnectionError, up: bool, cx: &Cx) -> Failure {
    let at = if up {
        At::BeforeResponse
    } else {
        At::Handshake
    };
    let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let refused = || cx.cfg.tls.as_ref().and_then(|t| t.refused());
    match reason {
        ConnectionError::TimedOut if up => Reason::new(Kind::Timeout, Cause::Timeout(at)),
        ConnectionError::TimedOut => Reason::new(Kind::Connect, Cause::Timeout(At::Connect)),
        ConnectionError::ApplicationClosed(c) => Reason::new(
            Kind::Protocol,
            Cause::H3Received(clamp(c.error_code.into_inner())),
        ),
        ConnectionError::ConnectionClosed(c) => match alert(u64::from(c.error_code)) {
            Some(a) => Reason::new(Kind::Tls, Cause::AlertReceived(a)),
            None => Reason::new(Kind::Protocol, Cause::Quic(clamp(u64::from(c.error_code)))),
        },
        ConnectionError::TransportError(e) => match (alert(u64::from(e.code)), refused()) {
            (Some(_), Some(err)) => Reason::new(Kind::Tls, cause::of_tls(&err, At::Handshake)),
            (Some(a), None) => Reason::new(Kind::Tls, Cause::AlertSent(a)),
            (None, _) => Reason::new(Kind::Protocol, Cause::Quic(clamp(u64::from(e.code)))),
        },
        ConnectionError::Reset => Reason::new(Kind::Read, Cause::Reset(at)),
        _ => Reason::new(Kind::Protocol, Cause::Unknown),
    }
}

/// The TLS alert a QUIC CRYPTO_ERROR carries (0x100 + the alert, RFC 9001 4.8).
fn alert(code: u64) -> Option<u8> {
    (0x100..0x200).contains(&code).then(|| (code - 0x100) as u8)
}

impl Http for Http3 {
    type Conn = Conn;
    const RESENDS: bool = true;
    const TIMED: bool = true;

    fn conn(&self, _cfg: &Config) -> Conn {
        Conn {
            socket: None,
            quic: None,
            drained: false,
            up: false,
            handshake_counted: false,
            started_ns: 0,
            answered_ns: None,
            next_tag: Tag::default(),
            queue: VecDeque::with_capacity(self.streams),
            rx: Vec::with_capacity(self.streams),
            readable: Vec::with_capacity(self.streams),
            uni: Vec::with_capacity(crate::h3::MAX_SERVER_UNI as usize),
            goaway: None,
            issued: false,
            lost: None,
        }
    }

    fn connect(
        &mut self,
        c: &mut Conn,
        cx: &mut Cx,
        token: Token,
        now: u64,
    ) -> Result<(), Failure> {
        let cfg = cx.cfg;
        let fail = |e: &io::Error| Reason::new(Kind::Connect, cause::of_io(e, At::Connect));
        let Some(client) = self.client.clone() else {
            return Err(Reason::new(Kind::Tls, Cause::TlsOther));
        };
        let bind: SocketAddr = match cfg.addr {
            SocketAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
            SocketAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
        };
        let mut sock = UdpSocket::bind(bind).map_err(|e| fail(&e))?;
        // Best effort: capped at net.core.rmem_max/wmem_max, which the report names.
        let size = crate::h3::UDP_BUFFER_BYTES;
        let _ = nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::RcvBuf, &size);
        let _ = nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::SndBuf, &size);
        sock.connect(cfg.addr).map_err(|e| fail(&e))?;
        cx.registry
            .register(&mut sock, token, Interest::READABLE | Interest::WRITABLE)
            .map_err(|e| fail(&e))?;
        // Receive stamps only: a QUIC send is a datagram of many frames, not one request.
        if cfg.kernel_stamps.receive() {
            let _ = stamps::enable(&sock, false);
        }
        // Best effort: without it a read is one datagram, as before.
        udp::enable_gro(&sock);
        let (handle, conn) = self
            .endpoint
            .connect(self.instant(now), client, cfg.addr, &self.server_name)
            .map_err(|e| fail(&io::Error::other(e.to_string())))?;
        c.socket = Some(sock);
        c.quic = Some((handle, conn));
        c.drained = false;
        c.up = false;
        c.handshake_counted = false;
        c.started_ns = now;
        c.answered_ns = None;
        c.goaway = None;
        c.lost = None;
        Ok(())
    }

    fn setup(&mut self, c: &mut Conn, cx: &mut Cx, _error: bool, now: u64) -> Setup {
        self.read(c, None, cx, now);
        if let Some(f) = c.lost {
            return Setup::Failed(f);
        }
        if let Err(f) = self.flush(c, cx.rec, now) {
            return Setup::Failed(f);
        }
        match c.up {
            true => Setup::Up,
            false => Setup::Waiting,
        }
    }

    /// The QUIC handshake, counted as a full TLS handshake from the server's first answer.
    /// QUIC is TLS 1.3 only, and ALPN h3 is checked next (`carries`); quinn-proto does not
    /// hand out the cipher suite or the group, left empty.
    fn up(&mut self, c: &mut Conn, cx: &mut Cx, now: u64) -> u64 {
        let answered = c.answered_ns.unwrap_or(now);
        cx.rec.counts.handshakes_full += 1;
        c.handshake_counted = true;
        cx.rec
            .handshake_full
            .record_ns(now.saturating_sub(answered));
        cx.rec.tls.get_or_insert_with(|| crate::TlsInfo {
            version: "TLSv1.3".into(),
            cipher: String::new(),
            group: None,
            alpn: Some("h3".into()),
        });
        answered
    }

    fn carries(&self, c: &Conn) -> Result<(), Failure> {
        let Some((_, conn)) = c.quic.as_ref() else {
            return Ok(());
        };
        match crate::h3::chose_h3(conn) {
            true => Ok(()),
            false => Err(Reason::new(Kind::Protocol, Cause::NoH3)),
        }
    }

    /// 1 until the handshake is done, then `--streams`, none after a GOAWAY, nor under
    /// `--no-keepalive` once a request was issued. Requests past the server's stream credit
    /// wait in the queue for its MAX_STREAMS.
    #[inline]
    fn room(&self, c: &mut Conn) -> usize {
        if self.ending(c) {
            return 0;
        }
        match c.up {
            false => 1,
            true => self.streams,
        }
    }

    #[inline]
    fn issue(&mut self, c: &mut Conn, cx: &mut Cx, shape: u32, resend: bool, _n: usize) -> u32 {
        if resend {
            self.retries += 1;
        }
        let tag = c.next_tag.next();
        c.issued = true;
        c.queue.push_back((tag, shape));
        if c.up && c.lost.is_none() && c.goaway.is_none() {
            open_queued(c, &cx.cfg.table.h3);
        }
        tag
    }

    fn send(&mut self, c: &mut Conn, cx: &mut Cx, now: u64) -> Result<Sent, Failure> {
        self.flush(c, cx.rec, now)?;
        Ok(Sent::Wait)
    }

    /// Everything owed goes at the end of each call that made it.
    #[inline]
    fn owes(&self, _c: &mut Conn) -> bool {
        false
    }

    fn receive(
        &mut self,
        c: &mut Conn,
        reqs: &mut Requests,
        cx: &mut Cx,
        _peer_closed: bool,
        now: u64,
    ) -> Next {
        self.read(c, Some(reqs), cx, now);
        self.after(c, reqs, cx, now)
    }

    /// Each request that has waited longer than the timeout fails alone: its stream is
    /// reset and stopped (H3_REQUEST_CANCELLED), and the connection goes on.
    fn expire(&mut self, c: &mut Conn, reqs: &mut Requests, cx: &mut Cx, now: u64) -> Next {
        let timeout = cx.cfg.timeout.as_nanos() as u64;
        let mut expired = false;
        while let Some(p) = reqs.inflight.front() {
            if now.saturating_sub(p.sent_ns) < timeout {
                break;
            }
            let tag = p.stream;
            reqs.inflight.pop_front();
            c.queue.retain(|(t, _)| *t != tag);
            let mut at = At::BeforeResponse;
            if let Some(i) = c.rx.iter().position(|r| r.tag == tag) {
                let rx = c.rx.swap_remove(i);
                if rx.response.status().is_some() {
                    at = At::MidBody;
                }
                if let Some((_, conn)) = c.quic.as_mut() {
                    let id = rx.id;
                    let code = VarInt::from_u32(h3err::H3_REQUEST_CANCELLED as u32);
                    let _ = conn.send_stream(id).reset(code);
                    let _ = conn.recv_stream(id).stop(code);
                }
            }
            cx.rec
                .failed(Reason::new(Kind::Timeout, Cause::Timeout(at)), 1);
            expired = true;
        }
        if self.ending(c) && reqs.inflight.is_empty() {
            return Next::Close(spent());
        }
        if !expired {
            return Next::Idle;
        }
        match self.flush(c, cx.rec, now) {
            Ok(()) => Next::Refill,
            Err(f) => Next::Fail(f),
        }
    }

    /// No answer to the Initial within the connect timeout; no end to the handshake within
    /// the response timeout after that.
    fn setup_expired(&self, c: &Conn, since_ns: u64, now: u64, cfg: &Config) -> Option<Failure> {
        match c.answered_ns {
            Some(a) if now.saturating_sub(a) >= cfg.timeout.as_nanos() as u64 => {
                Some(Reason::new(Kind::Tls, Cause::Timeout(At::Handshake)))
            }
            None if now.saturating_sub(since_ns) >= cfg.connect_timeout.as_nanos() as u64 => {
                Some(Reason::new(Kind::Connect, Cause::Timeout(At::Connect)))
            }
            _ => None,
        }
    }

    fn wake_at(&self, c: &mut Conn) -> Option<u64> {
        let (_, conn) = c.quic.as_mut()?;
        let at = conn.poll_timeout()?;
        Some(at.saturating_duration_since(self.epoch).as_nanos() as u64)
    }

    fn wake(&mut self, c: &mut Conn, reqs: &mut Requests, cx: &mut Cx, now: u64) -> Next {
        let at = self.instant(now);
        if let Some((_, conn)) = c.quic.as_mut() {
            conn.handle_timeout(at);
        }
        self.events(c, Some(reqs), cx, now);
        self.after(c, reqs, cx, now)
    }

    /// Says goodbye (CONNECTION_CLOSE, H3_NO_ERROR) if the connection is still up, and lets
    /// the endpoint forget it. A connection we already closed on an error (its code set
    /// by [`close_with`]) has its CONNECTION_CLOSE sent here: the loop returned before
    /// sending it. Its QUIC statistics are added then, after its last datagram; one that
    /// never came up is a failed handshake.
    fn close(&mut self, c: &mut Conn) {
        self.shut(c, false);
    }

    /// The run's end: a connection up has its path noted (RTT, window) before it closes;
    /// one still in its handshake was cut short, no failed handshake; one lost before the
    /// end is no path then.
    fn end(&mut self, c: &mut Conn) {
        if let (Some((_, conn)), true) = (c.quic.as_ref(), c.open_at_end()) {
            self.quic.note_end(&conn.stats());
        }
        self.shut(c, true);
    }

    /// Its retries and QUIC's figures.
    fn report(self, counts: &mut ProtocolCounts) {
        counts.h3 = Some(crate::H3Counts {
            retries: self.retries,
            quic: self.quic,
        });
    }
}

impl Http3 {
    /// Where a connection goes after reading or a timer: sends what it owes, and closes
    /// when lost or drained after a GOAWAY.
    fn after(&mut self, c: &mut Conn, reqs: &mut Requests, cx: &mut Cx, now: u64) -> Next {
        if let Some(f) = c.lost {
            return Next::Fail(f);
        }
        if let Err(f) = self.flush(c, cx.rec, now) {
            return Next::Fail(f);
        }
        if let Some(f) = c.lost {
            return Next::Fail(f);
        }
        if self.ending(c) && reqs.inflight.is_empty() {
            return Next::Close(spent());
        }
        Next::Refill
    }

    /// The connection takes no new request and closes once those in flight end: the
    /// server sent a GOAWAY, or under `--no-keepalive` its one request was issued.
    fn ending(&self, c: &Conn) -> bool {
        c.goaway.is_some() || (!self.keepalive && c.issued)
    }
}

/// A bidirectional stream we opened: only those carry requests (a server may open none,
/// RFC 9114 6.1, and the transport gives it no credit to).
fn ours(id: StreamId) -> bool {
    id.initiator() == Side::Client
}

/// A request's tag on its connection ([`Pending::stream`]): counted at issue and wrapping
/// at 2^32. Two requests in flight at once cannot share one, since no more than
/// [`crate::MAX_PIPELINE`] are ever in flight on a connection, far below 2^32; and a tag
/// never names a stream ([`Rx::id`] does), so wrapping changes nothing on the wire.
#[derive(Debug, Default, Clone, Copy)]
struct Tag(u32);

impl Tag {
    /// The next request's tag.
    fn next(&mut self) -> u32 {
        let tag = self.0;
        self.0 = self.0.wrapping_add(1);
        tag
    }
}

/// A drained connection with nothing in flight: the reason counts no request.
fn spent() -> Failure {
    Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse))
}

#[cfg(test)]
mod tests;
