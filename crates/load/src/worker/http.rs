//! The seam between the worker and a connection's protocol: the [`Http`] trait. The worker
//! owns the slots, the schedule, the requests' clocks and the outcome counts; an
//! implementation owns one connection's socket, its protocol state and its output, and
//! tells the worker what happened ([`Setup`], [`Sent`], [`Next`]). The worker never asks
//! which protocol runs: [`run`](super::select::run) picks the implementation once, from the plan's
//! [`Protocol`], and the worker is generic over it.
//!
//! - [`Http1`](super::http1::Http1): HTTP/1.1 with pipelining, on a byte stream
//!   ([`Stream`](super::stream::Stream): TCP, or TLS over TCP);
//! - [`Http2`](super::http2::Http2): HTTP/2 on the same byte stream, a request per stream, driving the sans-I/O
//!   [`crate::h2`] connection;
//! - [`Http3`](super::http3::Http3): HTTP/3 over QUIC (`quinn-proto`), a connected UDP
//!   socket per connection, built as the section "HTTP/3" below describes.
//!
//! Static dispatch on purpose: [`run`](super::select::run) makes a `Worker<Http1>` or a `Worker<Http2>`, so each
//! call across the seam is a direct call the compiler inlines, where a `dyn` object or an
//! enum would add an indirect call or a branch per request and per read. The per-request
//! path (`Http::issue`, `Http::send`, `Http::receive`) is written by hand in each
//! implementation, with its buffers reserved up front, for the same reason the rest of the
//! engine is: this loop is measured against wrk and h2load (`bench/load.py`), and a request
//! costs one `write` and usually one `read` whichever implementation runs.
//!
//! # Accounting
//!
//! The worker keeps each connection's requests in flight ([`Requests`]) and counts them
//! out: an implementation hands a completed response to [`Recorder::response`] and a
//! failed request to [`Recorder::failed`], taking it out of [`Requests::inflight`] as it
//! does; [`Next::Fail`] and [`Next::Close`] fail whatever is still in flight, and requests
//! moved to [`Requests::requeue`] are sent again (counted once). So
//! `sent = ok + failed_status + errors + in_flight` holds whatever the implementation.
//!
//! # Requests issued before the connection is up
//!
//! A slot asks for work before it connects, so that a connect that fails is charged to
//! the requests that waited for it: [`Http::issue`] is called on a connection that does
//! not exist yet, then [`Http::connect`]. This happens when a closed slot is (re)opened
//! (`Worker::open_slot`, then `offer` and `assign`), for every request under
//! `--no-keepalive` (each opens its connection), and when requests a server left
//! unprocessed are sent again on a slot whose connection closed (`Worker::reissue`). An
//! implementation must therefore:
//! - accept `issue` at any phase, and keep what it issued across `connect` (only `close`
//!   drops it); HTTP/1.1 and HTTP/2 encode into the stream's output buffer, which the
//!   connect keeps and the first write after the handshake sends;
//! - return the request's tag from `issue` at once: the worker stores it in
//!   [`Pending::stream`] and matches responses by it. The implementation assigns it then,
//!   and must match the request's response to that same tag: HTTP/2 picks the next odd
//!   stream ID itself; HTTP/3 counts tags at issue (wrapping at 2^32) and notes, for each
//!   request it puts on a stream, the stream it got, since a request that expires queued
//!   never gets one and the tag is then no stream index;
//! - queue what cannot go yet: an HTTP/3 `Conn` holds the issued requests until the
//!   handshake ends (there is no `quinn_proto::Connection` to open a stream on before
//!   [`Http::connect`], and no stream credit before the server's transport parameters)
//!   and opens their streams from [`Http::setup`] or [`Http::receive`] once it can;
//! - say in [`Http::room`] no more than the peer is sure to allow before its limits are
//!   known: HTTP/2 reports 1 until the server's SETTINGS arrive (then `--streams` within
//!   its SETTINGS_MAX_CONCURRENT_STREAMS), and HTTP/3 would report 1 until the handshake
//!   brings the server's `initial_max_streams_bidi`. The worker offers the room again
//!   once the connection is up.
//!
//! # HTTP/3: how a datagram protocol slots in
//!
//! QUIC (`quinn-proto`, sans-I/O) is no byte stream and has no TLS-over-TCP layer, and
//! nothing here assumes one: the worker hands an implementation readiness, never bytes.
//! An `Http3` implementation in `worker/http3.rs` would hold:
//! - worker-wide (the `Http3` value): the `quinn_proto::Endpoint` and its client
//!   configuration (rustls with ALPN `h3`), its counts (datagrams, GSO segments, losses),
//!   reported by [`Http::report`] into a field of their own in [`ProtocolCounts`] (beside
//!   HTTP/2's; the worker carries them without looking inside);
//! - per connection ([`Http::Conn`], made once per slot and reused): a non-blocking
//!   `mio::net::UdpSocket` connected to the target, registered in [`Http::connect`] with
//!   the slot's token as TCP sockets are (so readiness reaches the slot), the
//!   `quinn_proto::Connection`, and its QPACK-encoded requests' output.
//!
//! and implement:
//! - [`Http::connect`]: `Endpoint::connect` at the `now` it is given (the worker's clock,
//!   turned into an `Instant` by the run's epoch), then the first `poll_transmit`s (the
//!   Initial);
//! - [`Http::setup`] (any readiness while connecting) and [`Http::receive`] (readable):
//!   read datagrams (recvmmsg/GRO via `quinn-udp`) into the worker's read buffer, hand each
//!   to `handle_event`, then drain `poll()`: `Connected` is [`Setup::Up`], stream data is
//!   framed (HEADERS, DATA) into responses for the [`Recorder`], stream resets and
//!   connection errors are failures, a GOAWAY moves unprocessed requests to
//!   [`Requests::requeue`];
//! - [`Http::up`]: the QUIC handshake, full or resumed, recorded as TLS's are;
//!   [`Http::carries`]: ALPN said `h3`;
//! - [`Http::send`] (writable, and after requests were issued): `poll_transmit(now, ..)`
//!   until it has nothing, sending with GSO; [`Http::owes`] says whether it has something
//!   left;
//! - [`Http::room`]: 1 until the handshake is done, then `--streams` within the server's
//!   stream credit (MAX_STREAMS, read through `streams()`, which is why `room`, `owes` and
//!   `wake_at` get the connection `&mut`);
//! - [`Http::issue`]: once the connection is up, open a bidirectional stream and write the
//!   request on it; before, queue it (see "Requests issued before the connection is up"
//!   above). Its tag ([`Pending::stream`]) is counted at issue and only tells requests
//!   apart; the response is read from the stream the request went out on;
//! - timers: `TIMED = true`, [`Http::wake_at`] returns `poll_timeout()` in the worker's
//!   clock, and the worker calls [`Http::wake`] (`handle_timeout`, then `poll_transmit`)
//!   when it is due: the worker keeps one deadline per slot (`Wakes`, worker/wakes.rs,
//!   updated after each call into the slot) and its loop sleeps no longer than the
//!   earliest (`Wakes::next`), so a QUIC timer is met to the poll's precision (a
//!   millisecond), not the 10 ms tick's;
//! - [`Http::expire`] (each tick): the requests' `--timeout`, stream by stream as HTTP/2
//!   does; [`Http::setup_expired`]: no answer to the Initial within the handshake timeout.
//!
//! A socket per worker instead of per connection would need a token of its own, like the
//! open model's timer, and the endpoint's demultiplexing; that is the one part of the
//! worker HTTP/3 may change.

use mio::Token;

use super::{Config, Failure, Pending, Recorder};
use crate::protocol_counts::ProtocolCounts;
use crate::table::Picker;

/// What an implementation may use while the worker calls it: the worker's own parts,
/// borrowed for the call.
pub(super) struct Cx<'a> {
    pub(super) cfg: &'a Config,
    pub(super) rec: &'a mut Recorder,
    pub(super) picker: &'a mut Picker,
    pub(super) registry: &'a mio::Registry,
    /// The worker's read buffer, shared by its connections.
    pub(super) rbuf: &'a mut [u8],
    /// The worker's control buffer for the reads' kernel stamps.
    pub(super) cmsg: &'a mut crate::stamps::ControlBuf,
}

/// A connection's requests, as the worker and its protocol both see them.
pub(super) struct Requests {
    /// Issued and not yet answered, oldest first.
    pub(super) inflight: std::collections::VecDeque<Pending>,
    /// Left unprocessed by the server (a graceful GOAWAY, a refused stream): sent again
    /// before new ones, on this connection or the next. Not in `inflight`: nothing carries
    /// them.
    pub(super) requeue: Vec<Pending>,
    /// Since when the oldest request in flight has been waiting (for the timeout).
    pub(super) wait_since_ns: u64,
}

/// A connection being set up, after an event on its socket.
pub(super) enum Setup {
    /// Not yet.
    Waiting,
    /// Established: it may carry requests.
    Up,
    /// The connect or the handshake failed.
    Failed(Failure),
}

/// What sending did.
pub(super) enum Sent {
    /// Sent everything, or what the socket took, the rest waiting for writability: the
    /// worker does the same either way (nothing), so one answer serves both.
    Wait,
    /// Sending finished setting the connection up (a TLS handshake's last flight). It
    /// returns as soon as it has, perhaps with output left: the worker records the
    /// connection, then sends again.
    Up,
}

/// Where a connection goes after its protocol ran.
///
/// `Idle` and `Refill` differ only after [`Http::expire`] and [`Http::wake`]
/// (`Worker::then`), where the worker offers room only on `Refill`. After
/// [`Http::receive`] it offers whatever room there is on either, since reading is when
/// responses end.
pub(super) enum Next {
    /// Nothing changed that the worker acts on.
    Idle,
    /// Requests ended (timed out, or answered within a timer's work): offer the room they
    /// freed.
    Refill,
    /// Close and replace the connection; requests still in flight fail as this.
    Close(Failure),
    /// The connection failed: every request in flight fails as this.
    Fail(Failure),
}

/// One connection's protocol, as the worker drives it. See the module's doc.
pub(super) trait Http: Sized {
    /// One connection's state: made once per slot, its buffers (output, framing) reserved
    /// then and reused by every connection the slot opens. A plain-TCP reconnect allocates
    /// nothing of ours; an https one allocates what a TLS session needs (rustls's
    /// `ClientConnection` and its buffers, and the boxed TLS stream, in
    /// `Transport::connect`).
    type Conn;
    /// Requests may be sent again on a new connection ([`Requests::requeue`]): its room is
    /// reserved up front.
    const RESENDS: bool;
    /// It asks for timers ([`Http::wake_at`]); false compiles the worker's deadlines
    /// ([`super::wakes::Wakes`]) out.
    const TIMED: bool = false;

    /// A slot's connection state, before any connect.
    fn conn(&self, cfg: &Config) -> Self::Conn;

    /// Opens a connection at `now`; its socket registered with `token`, for read and write
    /// readiness, once. Requests may already be issued on it: they go once it is up (see
    /// the module's doc, "Requests issued before the connection is up").
    fn connect(
        &mut self,
        c: &mut Self::Conn,
        cx: &mut Cx,
        token: Token,
        now: u64,
    ) -> Result<(), Failure>;

    /// Makes progress on a connection being set up, on any event of its socket.
    fn setup(&mut self, c: &mut Self::Conn, cx: &mut Cx, error: bool, now: u64) -> Setup;

    /// The connection is up: records its handshake, if any. Returns when the transport
    /// under any handshake came up (the connect time ends there).
    fn up(&mut self, c: &mut Self::Conn, cx: &mut Cx, now: u64) -> u64;

    /// Whether an established connection can carry this protocol (TLS's ALPN choice).
    fn carries(&self, c: &Self::Conn) -> Result<(), Failure>;

    /// Requests the connection may carry at once now, those in flight included; before the
    /// peer's limits are known (or before the connection exists), no more than it is sure
    /// to allow (HTTP/2: 1).
    /// `&mut`: QUIC reads its stream credit through `Connection::streams()`, which needs it.
    fn room(&self, c: &mut Self::Conn) -> usize;

    /// Starts a request of row `shape` (`resend`: one the server left unprocessed);
    /// `in_flight` counts it. Returns its tag for [`Pending::stream`], assigned now, even
    /// when the connection is not up yet (or not opened: the slot connects after), and
    /// kept by the stream the request goes out on later.
    fn issue(
        &mut self,
        c: &mut Self::Conn,
        cx: &mut Cx,
        shape: u32,
        resend: bool,
        in_flight: usize,
    ) -> u32;

    /// Samples the request just issued for a send stamp ([`super::send_sample`]): it was
    /// due at `start_ns`, handed over at `sent_ns`, `on_time` (not counted late). False
    /// when it cannot be sampled (one is awaited on this connection already, or the
    /// protocol has no stamps).
    fn sample(
        &mut self,
        _c: &mut Self::Conn,
        _start_ns: u64,
        _sent_ns: u64,
        _on_time: bool,
    ) -> bool {
        false
    }

    /// After EPOLLERR: drains the send stamps the socket's error queue holds, and says
    /// whether the socket has an error of its own (then the next step fails with it).
    fn settle(&mut self, _c: &mut Self::Conn, _cx: &mut Cx) -> bool {
        true
    }

    /// Sends what is waiting to go, at `now` (QUIC's pacing and loss timers need it).
    fn send(&mut self, c: &mut Self::Conn, cx: &mut Cx, now: u64) -> Result<Sent, Failure>;

    /// Something of its own waits to go (acknowledgements, window updates). `&mut`, as
    /// [`Http::room`].
    fn owes(&self, c: &mut Self::Conn) -> bool;

    /// Takes in what the connection received (`peer_closed`: the peer closed or reset, and
    /// no new readiness will come), recording responses and failures.
    fn receive(
        &mut self,
        c: &mut Self::Conn,
        reqs: &mut Requests,
        cx: &mut Cx,
        peer_closed: bool,
        now: u64,
    ) -> Next;

    /// An established connection's timeouts, checked each tick.
    fn expire(&mut self, c: &mut Self::Conn, reqs: &mut Requests, cx: &mut Cx, now: u64) -> Next;

    /// A connection being set up since `since_ns` that has waited too long: why it fails.
    fn setup_expired(
        &self,
        c: &Self::Conn,
        since_ns: u64,
        now: u64,
        cfg: &Config,
    ) -> Option<Failure>;

    /// When it next needs [`Http::wake`], if it asks for timers (`TIMED`), in the worker's
    /// clock. `&mut`: QUIC's `Connection::poll_timeout` needs it.
    fn wake_at(&self, _c: &mut Self::Conn) -> Option<u64> {
        None
    }

    /// Its timer is due.
    fn wake(&mut self, _c: &mut Self::Conn, _reqs: &mut Requests, _cx: &mut Cx, _now: u64) -> Next {
        Next::Idle
    }

    /// Closes the connection and forgets its state, keeping its buffers.
    fn close(&mut self, c: &mut Self::Conn);

    /// Closes a connection (open, being set up, or closed already) because the run ended:
    /// what it was then is no failure.
    fn end(&mut self, c: &mut Self::Conn) {
        self.close(c);
    }

    /// Fills in its own counts (its field of [`ProtocolCounts`]) for the worker's result.
    fn report(self, counts: &mut ProtocolCounts);
}

#[cfg(test)]
mod tests;
