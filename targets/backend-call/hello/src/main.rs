//! hello-backend: the backend of the backend-call suite.
//!
//! `hello-backend PORT DELAY_MS` listens on 127.0.0.1:PORT and answers `GET /hello` after
//! DELAY_MS (or `?delay_ms=N`) with `hello <X-Request-Id>\n`, and `GET /stats` with the
//! number of /hello responses sent and connections accepted. One thread, one mio event
//! loop, every pending delay in one binary heap: a delayed request costs a heap entry, not
//! a thread, so the backend stays cheap beside the front ends it serves.
//!
//! SIGTERM keeps its default action (the process ends at once): there is nothing to flush.
#![forbid(unsafe_code)]

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use hello_backend::{parse_delay, parse_one, Parsed, Reply, Stats, MAX_HEAD};

const LISTENER: Token = Token(0);
/// Replies queued on one connection (pipelined, waiting for their delay) before it is read no
/// further until some are sent: bounds a pipelining client's memory.
const MAX_QUEUED: usize = 1024;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (port, delay_ms) = match parse_args(&args) {
        Ok(v) => v,
        Err(why) => {
            eprintln!(
                "hello-backend: {why}; usage: hello-backend PORT DELAY_MS (DELAY_MS 0..=60000)"
            );
            return ExitCode::from(2);
        }
    };
    let listener = match listen(port) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("hello-backend: cannot listen on 127.0.0.1:{port}: {e}: is the port free?");
            return ExitCode::from(2);
        }
    };
    let addr = listener
        .local_addr()
        .expect("a bound listener has an address");
    println!("listening on {addr}");
    let _ = io::stdout().flush();
    match Server::new(listener, Duration::from_millis(delay_ms)).and_then(Server::run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hello-backend: event loop failed: {e}");
            ExitCode::from(1)
        }
    }
}

fn parse_args(args: &[String]) -> Result<(u16, u64), String> {
    let [port, delay] = args else {
        return Err(format!("expected 2 arguments, got {}", args.len()));
    };
    let port = port
        .parse()
        .map_err(|_| format!("PORT {port:?} is not a port number"))?;
    let delay = parse_delay(delay.as_bytes())
        .ok_or_else(|| format!("DELAY_MS {delay:?} is not in 0..=60000"))?;
    Ok((port, delay))
}

/// A listener with the kernel's largest backlog (capped by somaxconn): a front end opening
/// thousands of pooled connections at once must not see SYNs dropped here.
fn listen(port: u16) -> io::Result<TcpListener> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(65535)?;
    Ok(TcpListener::from_std(socket.into()))
}

struct Conn {
    stream: TcpStream,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    wpos: usize,
    queue: VecDeque<Reply>,
    /// Sequence number of `queue.front()`; a timer names its reply by sequence number.
    first_seq: u64,
    /// Bytes of a request body still to skip.
    body_left: u64,
    /// No more requests are read: the peer closed its side, or a reply that closes is queued.
    done_reading: bool,
    /// A reply that closes was written out: close when `wbuf` is empty.
    closing: bool,
}

enum Flow {
    Keep,
    Drop,
}

struct Server {
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<usize, Conn>,
    /// Tokens are never reused, so a timer for a closed connection finds nothing.
    next_token: usize,
    /// (due, token, sequence number) of every reply waiting for its delay.
    timers: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    default_delay: Duration,
    stats: Stats,
}

impl Server {
    fn new(mut listener: TcpListener, default_delay: Duration) -> io::Result<Server> {
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        Ok(Server {
            poll,
            listener,
            conns: HashMap::new(),
            next_token: 1,
            timers: BinaryHeap::new(),
            default_delay,
            stats: Stats::default(),
        })
    }

    fn run(mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        let mut touched = Vec::new();
        loop {
            let timeout = self
                .timers
                .peek()
                .map(|Reverse((due, _, _))| due.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept(),
                    Token(t) => touched.push(t),
                }
            }
            let now = Instant::now();
            while let Some(&Reverse((due, token, seq))) = self.timers.peek() {
                if due > now {
                    break;
                }
                self.timers.pop();
                if let Some(conn) = self.conns.get_mut(&token) {
                    if let Some(i) = seq.checked_sub(conn.first_seq) {
                        if let Some(reply) = conn.queue.get_mut(i as usize) {
                            reply.ready = true;
                            touched.push(token);
                        }
                    }
                }
            }
            for token in touched.drain(..) {
                let Some(conn) = self.conns.get_mut(&token) else {
                    continue;
                };
                if let Flow::Drop = pump(
                    conn,
                    token,
                    &mut self.timers,
                    &mut self.stats,
                    self.default_delay,
                ) {
                    self.conns.remove(&token);
                }
            }
        }
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    let token = self.next_token;
                    self.next_token += 1;
                    let _ = stream.set_nodelay(true);
                    if let Err(e) = self.poll.registry().register(
                        &mut stream,
                        Token(token),
                        Interest::READABLE | Interest::WRITABLE,
                    ) {
                        eprintln!("hello-backend: cannot register a connection: {e}");
                        continue;
                    }
                    self.stats.connections += 1;
                    self.conns.insert(token, Conn::new(stream));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // EMFILE and the like: the next connection attempt wakes the listener again.
                    eprintln!("hello-backend: accept failed: {e}: raise `ulimit -n`?");
                    return;
                }
            }
        }
    }
}

impl Conn {
    fn new(stream: TcpStream) -> Conn {
        Conn {
            stream,
            rbuf: Vec::with_capacity(4096),
            wbuf: Vec::with_capacity(4096),
            wpos: 0,
            queue: VecDeque::new(),
            first_seq: 0,
            body_left: 0,
            done_reading: false,
            closing: false,
        }
    }
}

/// Moves a connection as far as it can go: parse what was read, send the replies that are
/// ready in order, write, read more; until nothing moves.
fn pump(
    conn: &mut Conn,
    token: usize,
    timers: &mut BinaryHeap<Reverse<(Instant, usize, u64)>>,
    stats: &mut Stats,
    default_delay: Duration,
) -> Flow {
    loop {
        parse_requests(conn, token, timers, stats, default_delay);
        while conn.queue.front().is_some_and(|r| r.ready) && !conn.closing {
            let reply = conn.queue.pop_front().expect("front checked");
            conn.first_seq += 1;
            conn.wbuf.extend_from_slice(&reply.bytes);
            stats.requests += u64::from(reply.hello);
            conn.closing = reply.close;
        }
        while conn.wpos < conn.wbuf.len() {
            match conn.stream.write(&conn.wbuf[conn.wpos..]) {
                Ok(0) => return Flow::Drop,
                Ok(n) => conn.wpos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Flow::Drop,
            }
        }
        if conn.wpos == conn.wbuf.len() {
            conn.wbuf.clear();
            conn.wpos = 0;
            if conn.closing {
                let _ = conn.stream.shutdown(std::net::Shutdown::Write);
                return Flow::Drop;
            }
            if conn.done_reading && conn.queue.is_empty() {
                return Flow::Drop;
            }
        }
        // Read only while there is room: the rest waits in the kernel (and backs up to the
        // client) until queued replies are sent; each send pumps again.
        if conn.done_reading || conn.queue.len() >= MAX_QUEUED || conn.rbuf.len() >= MAX_HEAD {
            return Flow::Keep;
        }
        let mut chunk = [0u8; 16 * 1024];
        match conn.stream.read(&mut chunk) {
            Ok(0) => conn.done_reading = true,
            Ok(n) => conn.rbuf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Flow::Keep,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Flow::Drop,
        }
    }
}

/// Turns every complete request head in `rbuf` into a queued reply (and a timer when delayed).
fn parse_requests(
    conn: &mut Conn,
    token: usize,
    timers: &mut BinaryHeap<Reverse<(Instant, usize, u64)>>,
    stats: &Stats,
    default_delay: Duration,
) {
    let mut used = 0;
    while !conn.done_reading && conn.queue.len() < MAX_QUEUED {
        if conn.body_left > 0 {
            let skip = conn.body_left.min((conn.rbuf.len() - used) as u64);
            used += skip as usize;
            conn.body_left -= skip;
            if conn.body_left > 0 {
                break;
            }
        }
        let (mut reply, delay) = match parse_one(&conn.rbuf[used..], stats, default_delay) {
            Parsed::Partial => break,
            Parsed::Request {
                used: n,
                reply,
                delay,
                body_len,
            } => {
                used += n;
                conn.body_left = body_len;
                (reply, delay)
            }
        };
        let seq = conn.first_seq + conn.queue.len() as u64;
        if delay.is_zero() {
            reply.ready = true;
        } else {
            timers.push(Reverse((Instant::now() + delay, token, seq)));
        }
        conn.done_reading |= reply.close;
        conn.queue.push_back(reply);
    }
    conn.rbuf.drain(..used);
}
