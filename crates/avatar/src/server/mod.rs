//! The event loops: one thread per worker, each with its own `SO_REUSEPORT` listener and epoll
//! instance (through mio), owning its connections.
//!
//! Per readiness a connection gets one `read` into the worker's shared buffer (a short read
//! means the socket is drained, since registration is edge-triggered; after the peer's FIN we
//! read on to EOF, since a FIN that came with the data raises no new edge), every complete request
//! in it is answered into the worker's output buffer, and that buffer goes out in one `write`.
//! A connection is registered once, for both directions, so a request costs no `epoll_ctl`.
//! Bytes are kept per connection only when a head is split or the peer reads slowly.
//! The first bytes pick HTTP/1.1 or HTTP/2 ([`crate::h2::sniff`]); an HTTP/2 connection's
//! bytes go to its [`crate::h2::Conn`], which answers through the same responder.
//! With `--h3-listen`, each worker also has its own UDP socket on that address (`SO_REUSEPORT`)
//! and QUIC endpoint ([`quic`]), whose connections' requests go to the same responder.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use socket2::{Domain, Protocol, Socket, Type};

use crate::access_log::{AccessLog, LogSender};
use crate::config::{Config, ConfigError, Limits};
use crate::date;
use crate::h2;
use crate::metrics::{Metrics, Timeout};
use crate::responder::{ConnState, Responder};
use crate::rng::Rng;
use crate::site::Site;
use crate::slab::{Slab, Slot};

mod conn;
mod quic;

use conn::{linger, write_nb, Action, Conn, ConnIo};

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
const FIRST_CONN: usize = 2;
const UDP: Token = Token(usize::MAX);

/// Output collected before it is written mid-batch.
const OUT_LIMIT: usize = 64 * 1024;
/// How long a closing connection's unread input is drained, so the peer sees our last response
/// rather than a reset.
const LINGER_SECS: u32 = 2;
/// How long a stopping server waits for the access log's queued lines to be written.
const LOG_FLUSH_LIMIT: Duration = Duration::from_secs(1);
/// Worker stack: the loop needs a few KiB; this leaves a wide margin and little address space.
const WORKER_STACK_BYTES: usize = 256 * 1024;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A setting or file was refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source} (is another server using the port? is the address on this machine?)")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        source: io::Error,
    },
    /// The event loop could not be set up.
    #[error("cannot set up the event loop: {0}")]
    Poll(io::Error),
}

#[derive(Debug)]
struct Shared {
    shutdown: AtomicBool,
    wakers: Vec<Waker>,
    open: AtomicUsize,
    /// HTTP/3 connections over all workers not yet closed: a stopping worker keeps its UDP
    /// socket until this is 0, since dropping it rehashes the other workers' flows.
    h3_live: AtomicUsize,
}

/// Asks a running server to stop: stop accepting, finish in-flight responses, then return.
#[derive(Debug, Clone)]
pub struct ShutdownHandle(Arc<Shared>);

impl ShutdownHandle {
    /// Starts the graceful shutdown; returns at once.
    pub fn shutdown(&self) {
        self.0.shutdown.store(true, Ordering::SeqCst);
        for waker in &self.0.wakers {
            // A failed wake only delays shutdown to the next one-second tick.
            let _ = waker.wake();
        }
    }
}

/// A bound server, ready to [`run`](Server::run).
#[derive(Debug)]
pub struct Server {
    config: Config,
    site: Arc<Site>,
    metrics: Arc<Metrics>,
    shared: Arc<Shared>,
    workers: Vec<(Poll, std::net::TcpListener, Option<std::net::UdpSocket>)>,
    local_addr: SocketAddr,
    h3: Option<(
        SocketAddr,
        Arc<quinn_proto::ServerConfig>,
        Arc<quinn_proto::EndpointConfig>,
    )>,
}

impl Server {
    /// Loads the content and binds one listener per worker (all on the same port).
    pub fn bind(config: Config) -> Result<Server, StartError> {
        let site = Arc::new(Site::from_config(&config)?);
        let metrics = Arc::new(Metrics::new(config.workers));
        let mut addr = config.listen;
        // SO_REUSEPORT would let a second server join a running one's port and take half its
        // traffic. A probe bound without it fails with EADDRINUSE instead; with port 0 it
        // picks the port the workers then share.
        // The probe is closed on return, before the workers bind.
        addr = bind_probe(addr).map_err(|source| StartError::Bind { addr, source })?;
        let h3 = match &config.h3 {
            None => None,
            Some(h3) => {
                let tls = crate::h3::tls::server_config(
                    &h3.cert,
                    &h3.key,
                    &config.limits,
                    config.idle_timeout,
                )?;
                let udp = h3.listen;
                let bind_err = |source| StartError::Bind { addr: udp, source };
                // Port 0: worker 0's own socket picks the port (no probe to race for it);
                // a given port is probed without SO_REUSEPORT, so nobody else holds it.
                let first = if udp.port() == 0 {
                    Some(quic::bind_udp(udp).map_err(bind_err)?)
                } else {
                    bind_udp_probe(udp).map_err(bind_err)?;
                    None
                };
                let udp = match &first {
                    Some(s) => s.local_addr().map_err(bind_err)?,
                    None => udp,
                };
                // One endpoint configuration for all workers: the same stateless-reset key,
                // whichever worker a datagram reaches.
                let endpoint = Arc::new(quinn_proto::EndpointConfig::default());
                Some((udp, tls, endpoint, first))
            }
        };
        let mut workers = Vec::with_capacity(config.workers);
        let mut wakers = Vec::with_capacity(config.workers);
        let mut h3 = h3;
        for _ in 0..config.workers {
            let listener =
                bind_listener(addr).map_err(|source| StartError::Bind { addr, source })?;
            let udp = match &mut h3 {
                Some((_, _, _, first @ Some(_))) => first.take(),
                Some((udp, ..)) => Some(
                    quic::bind_udp(*udp)
                        .map_err(|source| StartError::Bind { addr: *udp, source })?,
                ),
                None => None,
            };
            let poll = Poll::new().map_err(StartError::Poll)?;
            wakers.push(Waker::new(poll.registry(), WAKER).map_err(StartError::Poll)?);
            workers.push((poll, listener, udp));
        }
        Ok(Server {
            config,
            site,
            metrics,
            shared: Arc::new(Shared {
                shutdown: AtomicBool::new(false),
                wakers,
                open: AtomicUsize::new(0),
                h3_live: AtomicUsize::new(0),
            }),
            workers,
            local_addr: addr,
            h3: h3.map(|(udp, tls, endpoint, _)| (udp, tls, endpoint)),
        })
    }

    /// The address the listeners are bound to (with the real port when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The UDP address HTTP/3 is served on, if it is (with the real port when 0 was asked).
    pub fn h3_addr(&self) -> Option<SocketAddr> {
        self.h3.as_ref().map(|(a, ..)| *a)
    }

    /// The counters, shared with the workers.
    pub fn metrics(&self) -> Arc<Metrics> {
        Arc::clone(&self.metrics)
    }

    /// A handle that stops the server from another thread or a signal handler thread.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle(Arc::clone(&self.shared))
    }

    /// Runs the workers until a shutdown completes.
    pub fn run(self) -> io::Result<()> {
        let start_unix = date::unix_now_secs();
        let access_log = if self.config.access_log {
            Some(AccessLog::start()?)
        } else {
            None
        };
        let mut threads = Vec::with_capacity(self.workers.len());
        for (index, (poll, listener, udp)) in self.workers.into_iter().enumerate() {
            let mut responder = Responder::new(
                Arc::clone(&self.site),
                Arc::clone(&self.metrics),
                index,
                Rng::from_entropy(index as u64),
                start_unix,
            );
            if self.config.access_log {
                responder.enable_access_log();
            }
            let mut worker = Worker::new(
                index,
                poll,
                listener,
                responder,
                &self.config,
                &self.shared,
                &self.metrics,
            )?;
            worker.log = access_log.as_ref().map(AccessLog::sender);
            if let (Some(udp), Some((_, tls, endpoint))) = (udp, &self.h3) {
                let mut q = quic::Quic::new(udp, Arc::clone(tls), Arc::clone(endpoint));
                worker.poll.registry().register(
                    &mut q.socket,
                    UDP,
                    Interest::READABLE | Interest::WRITABLE,
                )?;
                worker.quic = Some(q);
            }
            let thread = std::thread::Builder::new()
                .name(format!("avatar-worker-{index}"))
                .stack_size(WORKER_STACK_BYTES)
                .spawn(move || worker.run())?;
            threads.push(thread);
        }
        let mut result = Ok(());
        for thread in threads {
            match thread.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => result = Err(e),
                Err(_) => result = Err(io::Error::other("a worker panicked")),
            }
        }
        if let Some(log) = access_log {
            // Stdout may be stuck for good; the shutdown stays bounded.
            log.close(LOG_FLUSH_LIMIT);
        }
        result
    }
}

/// Binds (without listening) a socket that shares the port with nobody.
fn bind_probe(addr: SocketAddr) -> io::Result<SocketAddr> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // SO_REUSEADDR only allows a restart over TIME_WAIT connections; on Linux it never lets two
    // sockets bind a port one of them listens on.
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket
        .local_addr()?
        .as_socket()
        .ok_or_else(|| io::Error::other("the probe socket has no IP address"))
}

/// Binds a UDP socket that shares the port with nobody, as [`bind_probe`] does for TCP.
fn bind_udp_probe(addr: SocketAddr) -> io::Result<SocketAddr> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    socket.bind(&addr.into())?;
    socket
        .local_addr()?
        .as_socket()
        .ok_or_else(|| io::Error::other("the probe socket has no IP address"))
}

fn bind_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}

struct Timers {
    head_s: u32,
    idle_s: u32,
}

struct Worker {
    index: usize,
    poll: Poll,
    listener: Option<TcpListener>,
    quic: Option<quic::Quic>,
    conns: Slab<Conn>,
    responder: Responder,
    log: Option<LogSender>,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    h2_scratch: h2::Scratch,
    limits: Limits,
    shared: Arc<Shared>,
    metrics: Arc<Metrics>,
    max_connections: usize,
    timers: Timers,
    shutdown_timeout: Duration,
    start: Instant,
    now_s: u32,
    accept_paused: bool,
    shutdown_deadline: Option<Instant>,
}

fn secs_u32(d: Duration) -> u32 {
    u32::try_from(d.as_secs()).unwrap_or(u32::MAX / 2)
}

impl Worker {
    fn new(
        index: usize,
        poll: Poll,
        listener: std::net::TcpListener,
        responder: Responder,
        config: &Config,
        shared: &Arc<Shared>,
        metrics: &Arc<Metrics>,
    ) -> io::Result<Self> {
        let mut listener = TcpListener::from_std(listener);
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let rbuf_len = (32 * 1024).max(2 * config.limits.max_head_bytes);
        Ok(Worker {
            index,
            poll,
            listener: Some(listener),
            quic: None,
            conns: Slab::new(),
            responder,
            log: None,
            rbuf: vec![0; rbuf_len],
            wbuf: Vec::with_capacity(OUT_LIMIT),
            h2_scratch: h2::Scratch::new(),
            limits: config.limits,
            shared: Arc::clone(shared),
            metrics: Arc::clone(metrics),
            max_connections: config.max_connections,
            timers: Timers {
                head_s: secs_u32(config.head_timeout),
                idle_s: secs_u32(config.idle_timeout),
            },
            shutdown_timeout: config.shutdown_timeout,
            start: Instant::now(),
            now_s: 0,
            accept_paused: false,
            shutdown_deadline: None,
        })
    }

    fn run(mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        loop {
            let elapsed = self.start.elapsed();
            // Wake at the next whole second of the worker clock, for the Date and the timers.
            let mut timeout =
                Duration::from_secs(1) - Duration::from_nanos(u64::from(elapsed.subsec_nanos()));
            if let Some(at) = self.quic.as_ref().and_then(quic::Quic::next_timeout) {
                timeout = timeout.min(at.saturating_duration_since(Instant::now()));
            }
            // Datagrams left on the socket at the last read's budget: no new edge will come.
            let udp_more = self.quic.as_ref().is_some_and(quic::Quic::more);
            if let Err(e) = self.poll.poll(
                &mut events,
                Some(if udp_more {
                    Duration::ZERO
                } else {
                    timeout + Duration::from_millis(1)
                }),
            ) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            let now_s = secs_u32(self.start.elapsed());
            if now_s != self.now_s {
                self.now_s = now_s;
                self.tick();
            }
            let mut udp_read = false;
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept_all(),
                    WAKER => {}
                    // Writable: room again after a send found the socket full.
                    UDP if event.is_writable() && !event.is_readable() => {
                        self.with_quic(quic::Quic::writable);
                    }
                    UDP => {
                        udp_read = true;
                        self.with_quic(quic::Quic::readable);
                        if event.is_writable() {
                            self.with_quic(quic::Quic::writable);
                        }
                    }
                    // A FIN that came with the data raises no new edge: pass it on.
                    Token(t) => {
                        self.drive(t - FIRST_CONN, event.is_read_closed() || event.is_error())
                    }
                }
            }
            if udp_more && !udp_read {
                self.with_quic(quic::Quic::readable);
            }
            self.with_quic(quic::Quic::timers);
            self.flush_access_log();
            if self.shared.shutdown.load(Ordering::Relaxed) {
                let deadline = match self.shutdown_deadline {
                    Some(d) => d,
                    None => self.begin_shutdown(),
                };
                let quic_done = self.quic.as_ref().is_none_or(quic::Quic::done)
                    && self.shared.h3_live.load(Ordering::Relaxed) == 0;
                if (self.conns.len == 0 && quic_done) || Instant::now() >= deadline {
                    self.metrics.worker(self.index).set_open(0);
                    self.with_quic(|q, cx| q.release(cx));
                    return Ok(());
                }
            }
        }
    }

    /// Once per second: refresh the Date, close timed-out connections, retry a paused accept.
    fn tick(&mut self) {
        self.responder.set_date(date::unix_now_secs());
        let now = self.now_s;
        for index in 0..self.conns.slots.len() {
            let Slot::Full(conn) = &self.conns.slots[index] else {
                continue;
            };
            if conn.deadline_s <= now {
                if !conn.lingering {
                    let kind = if conn.in_head {
                        Timeout::Head
                    } else if conn.in_body {
                        Timeout::Body
                    } else {
                        Timeout::Idle
                    };
                    self.metrics.worker(self.index).timeout(kind);
                }
                self.close(index);
            }
        }
        if self.accept_paused {
            self.accept_paused = false;
            self.accept_all();
        }
        self.metrics.worker(self.index).set_open(self.conns.len);
    }

    /// Runs `f` on the QUIC side, if there is one, with what it borrows of the worker.
    fn with_quic(&mut self, f: impl FnOnce(&mut quic::Quic, &mut quic::Ctx<'_>)) {
        let Some(q) = self.quic.as_mut() else {
            return;
        };
        let mut cx = quic::Ctx {
            responder: &mut self.responder,
            metrics: self.metrics.worker(self.index),
            limits: &self.limits,
            shared: &self.shared,
            max_connections: self.max_connections,
        };
        f(q, &mut cx);
    }

    fn begin_shutdown(&mut self) -> Instant {
        let deadline = Instant::now() + self.shutdown_timeout;
        self.shutdown_deadline = Some(deadline);
        // HTTP/3 is told at once (GOAWAY), as HTTP/2 is; new QUIC connections are refused.
        self.with_quic(quic::Quic::begin_shutdown);
        if let Some(mut listener) = self.listener.take() {
            let _ = self.poll.registry().deregister(&mut listener);
        }
        self.responder.set_closing();
        for index in 0..self.conns.slots.len() {
            let Slot::Full(conn) = &mut self.conns.slots[index] else {
                continue;
            };
            if let (Some(h2), false) = (conn.h2.as_deref_mut(), conn.lingering) {
                // HTTP/2 is told at once (GOAWAY NO_ERROR with the last stream), so the client
                // opens no more streams; held responses are still sent.
                let mut goaway = Vec::new();
                h2.goaway(&mut goaway);
                if conn.output.is_empty() {
                    match write_nb(&mut conn.stream, &goaway) {
                        Ok(n) => conn.output.extend_from_slice(&goaway[n..]),
                        Err(_) => conn.output.clear(),
                    }
                } else {
                    conn.output.extend_from_slice(&goaway);
                }
            }
            let holding = conn.h2.as_deref().is_some_and(h2::Conn::has_streams);
            let idle = conn.input.is_empty()
                && conn.output.is_empty()
                && conn.state.body_remaining == 0
                && !holding;
            if idle || conn.lingering {
                self.close(index);
            }
        }
        deadline
    }

    fn accept_all(&mut self) {
        loop {
            let Some(listener) = &self.listener else {
                return;
            };
            match listener.accept() {
                Ok((stream, peer)) => self.admit(stream, peer),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => {}
                Err(_) => {
                    // Out of descriptors or memory: the pending connections stay queued,
                    // and the next tick tries again (edge-triggered, so no new event comes).
                    self.accept_paused = true;
                    return;
                }
            }
        }
    }

    fn admit(&mut self, stream: TcpStream, peer: SocketAddr) {
        let metrics = self.metrics.worker(self.index);
        if self.shared.open.fetch_add(1, Ordering::Relaxed) >= self.max_connections {
            self.shared.open.fetch_sub(1, Ordering::Relaxed);
            metrics.rejected();
            return; // Dropping the stream closes it with a FIN.
        }
        metrics.accepted();
        let _ = stream.set_nodelay(true);
        let conn = Box::new(Conn {
            stream,
            peer,
            state: ConnState::default(),
            input: Vec::new(),
            output: Vec::new(),
            deadline_s: self.now_s.saturating_add(self.timers.head_s),
            in_head: true,
            in_body: false,
            close_after_write: false,
            lingering: false,
            peer_closed: false,
            sniffing: true,
            h2: None,
        });
        let index = self.conns.insert(conn);
        metrics.set_open(self.conns.len);
        let conn = self.conns.get_mut(index).expect("just inserted");
        let token = Token(index + FIRST_CONN);
        if self
            .poll
            .registry()
            .register(
                &mut conn.stream,
                token,
                Interest::READABLE | Interest::WRITABLE,
            )
            .is_err()
        {
            self.close(index);
        }
    }

    fn close(&mut self, index: usize) {
        if self.conns.remove(index).is_some() {
            self.shared.open.fetch_sub(1, Ordering::Relaxed);
            self.metrics.worker(self.index).set_open(self.conns.len);
        }
    }

    fn drive(&mut self, index: usize, peer_closed: bool) {
        let shutting_down = self.shutdown_deadline.is_some();
        let Some(conn) = self.conns.get_mut(index) else {
            return;
        };
        conn.peer_closed |= peer_closed;
        let action = if conn.lingering {
            linger(conn, &mut self.rbuf)
        } else {
            let mut io = ConnIo {
                rbuf: &mut self.rbuf,
                wbuf: &mut self.wbuf,
                h2_scratch: &mut self.h2_scratch,
                limits: &self.limits,
                metrics: &self.metrics,
                worker: self.index,
                responder: &mut self.responder,
                timers: &self.timers,
                now_s: self.now_s,
                shutting_down,
            };
            io.drive(conn)
        };
        if action == Action::Close {
            self.close(index);
        }
        if self.wbuf.capacity() > 4 * OUT_LIMIT {
            self.wbuf = Vec::with_capacity(OUT_LIMIT);
        }
    }

    fn flush_access_log(&mut self) {
        let (Some(lines), Some(sender)) = (self.responder.access_log(), &self.log) else {
            return;
        };
        if lines.is_empty() {
            return;
        }
        // The log is opt-in; its queue's lock is taken once per loop turn, not per request,
        // and never waits for stdout.
        if !sender.send(lines) {
            let dropped = lines.iter().filter(|&&b| b == b'\n').count();
            self.metrics.worker(self.index).log_dropped(dropped as u64);
        }
        lines.clear();
    }
}
