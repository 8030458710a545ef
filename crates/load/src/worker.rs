//! One worker: an event loop that owns a share of the connections.
//!
//! Per request on a kept-alive connection the loop makes one `write` (several pipelined
//! requests go out in one write) and one `read`; `epoll_wait` is shared by every socket
//! that is ready at once. Sockets are registered once for read and write readiness
//! (edge-triggered), so there is no `epoll_ctl` per request. Timeouts are found by a scan
//! every [`TICK`], not by per-request timers.
//!
//! Evidence: `strace -c -f foxbench load -n 20000 -c 10 -t 1` against targets/c-epoll counts
//! 20,000 `sendto`, 20,000 `recvfrom` and ~2,000 `epoll_wait`; `bench/load.py` (runs in
//! bench/runs/) measures the client CPU per request against wrk, ab, h2load, oha and hey.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::response::{Framer, ParseError, Step};
use crate::{Control, Counts, LoadError, StatusSet};
use stats::Latency;

/// How often connections are scanned for timeouts and retries.
const TICK: Duration = Duration::from_millis(10);

/// Size of the worker's read buffer, shared by all its connections.
const READ_BUF: usize = 64 * 1024;

/// Shared request budget for `-n`: workers claim requests in chunks, not one by one,
/// so there is no atomic operation per request.
#[derive(Debug)]
pub(crate) struct Budget {
    total: u64,
    claimed: AtomicU64,
    chunk: u64,
}

impl Budget {
    pub(crate) fn new(total: u64, threads: usize) -> Self {
        // Small chunks near the end keep workers balanced; large ones keep claims rare.
        // Chunks of at most 1/64 of a worker's share (and 256) keep the workers balanced at
        // the end; anything larger than one keeps claims rare.
        Self {
            total,
            claimed: AtomicU64::new(0),
            chunk: (total / (threads as u64 * 64).max(1)).clamp(1, 256),
        }
    }

    /// Requests not yet claimed by any worker.
    fn remaining(&self) -> u64 {
        self.total
            .saturating_sub(self.claimed.load(Ordering::Relaxed))
    }

    fn claim(&self, want: u64) -> u64 {
        let want = want.max(self.chunk);
        let before = self.claimed.fetch_add(want, Ordering::Relaxed);
        self.total.saturating_sub(before).min(want)
    }
}

pub(crate) struct Config {
    pub id: usize,
    pub addr: SocketAddr,
    /// The encoded request repeated `pipeline` times.
    pub batch: Arc<[u8]>,
    pub request_len: usize,
    pub connections: usize,
    pub pipeline: usize,
    pub keepalive: bool,
    pub head_request: bool,
    /// Open model: this worker's requests per second.
    pub arrival: Option<f64>,
    /// Duration stop, from `epoch`.
    pub end: Option<Duration>,
    pub budget: Option<Arc<Budget>>,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub fail_status: StatusSet,
    pub epoch: Instant,
    pub control: Arc<Control>,
}

pub(crate) struct WorkerResult {
    pub counts: Counts,
    pub latency: Latency,
    pub connect: Latency,
    pub status: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No socket; may connect at `retry_at_ns`.
    Closed,
    /// Connecting; requests may already be assigned.
    Connecting,
    /// Established.
    Open,
}

struct Slot {
    stream: Option<TcpStream>,
    generation: u32,
    phase: Phase,
    /// When the current connect started.
    since_ns: u64,
    retry_at_ns: u64,
    failures: u32,
    /// Start times of the requests issued and not yet answered, oldest first.
    inflight: VecDeque<u64>,
    /// Bytes of issued requests not yet written (always a suffix of the batch).
    unwritten: usize,
    /// Since when the oldest request in flight has been waiting (for the timeout).
    wait_since_ns: u64,
    framer: Framer,
    /// Start of a response head split across reads.
    leftover: Vec<u8>,
    /// Connections this slot has opened.
    opened: u64,
    /// On the open model's free list.
    listed: bool,
}

/// What an event says about the read side of a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Readiness {
    None,
    Data,
    /// The peer closed or reset: the EOF or error is queued behind any data.
    Closed,
}

/// Where a connection goes after bytes were processed.
enum Flow {
    Continue,
    /// Close the connection; requests still in flight fail as `read`.
    Close,
}

/// Counters, histograms and status counts of one worker.
struct Recorder {
    counts: Counts,
    latency: Latency,
    connect: Latency,
    status: Vec<u64>,
    fail_status: StatusSet,
}

impl Recorder {
    #[inline]
    fn response(&mut self, status: u16, start_ns: u64, now_ns: u64) {
        self.latency.record_ns(now_ns.saturating_sub(start_ns));
        self.status[usize::from(status.min(999))] += 1;
        if self.fail_status.contains(status) {
            self.counts.failed_status += 1;
        } else {
            self.counts.ok += 1;
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Failure {
    Connect(io::ErrorKind, Option<i32>),
    ConnectTimeout,
    Write,
    Read,
    Parse,
    Timeout,
}

struct Worker {
    cfg: Config,
    poll: Poll,
    slots: Vec<Slot>,
    rec: Recorder,
    rbuf: Vec<u8>,
    /// Requests this worker may still issue under `-n` without claiming more.
    credit: u64,
    budget_done: bool,
    /// Open model: requests issued so far by this worker (due index).
    issued: u64,
    interval_ns: f64,
    free: Vec<usize>,
    stopping: bool,
}

fn now_ns(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Open model: when the `k`-th request of a worker falls due, in ns from the start.
fn due_ns(k: u64, interval_ns: f64) -> u64 {
    (k as f64 * interval_ns) as u64
}

fn token(idx: usize, generation: u32) -> Token {
    Token((idx & 0xffff_ffff) | ((generation as usize) << 32))
}

pub(crate) fn run(cfg: Config) -> Result<WorkerResult, LoadError> {
    let poll = Poll::new().map_err(LoadError::Poll)?;
    let slots = (0..cfg.connections)
        .map(|_| Slot {
            stream: None,
            generation: 0,
            phase: Phase::Closed,
            since_ns: 0,
            retry_at_ns: 0,
            failures: 0,
            inflight: VecDeque::with_capacity(cfg.pipeline),
            unwritten: 0,
            wait_since_ns: 0,
            framer: Framer::new(),
            leftover: Vec::new(),
            opened: 0,
            listed: false,
        })
        .collect();
    let interval_ns = cfg.arrival.map_or(0.0, |r| 1e9 / r);
    let mut w = Worker {
        rec: Recorder {
            counts: Counts::default(),
            latency: Latency::new(),
            connect: Latency::new(),
            status: vec![0; 1000],
            fail_status: cfg.fail_status.clone(),
        },
        poll,
        slots,
        rbuf: vec![0; READ_BUF],
        credit: 0,
        budget_done: false,
        issued: 0,
        interval_ns,
        free: Vec::with_capacity(cfg.connections),
        stopping: false,
        cfg,
    };
    w.event_loop();
    Ok(WorkerResult {
        counts: w.rec.counts,
        latency: w.rec.latency,
        connect: w.rec.connect,
        status: w.rec.status,
    })
}

impl Worker {
    fn event_loop(&mut self) {
        let mut events = Events::with_capacity(self.slots.len().clamp(16, 1024));
        let open_model = self.cfg.arrival.is_some();
        let now = now_ns(self.cfg.epoch);
        for idx in 0..self.slots.len() {
            if open_model && !self.cfg.keepalive {
                self.list_free(idx);
            } else {
                self.start_slot(idx, now);
            }
        }
        let mut next_tick = now + TICK.as_nanos() as u64;
        loop {
            let now = now_ns(self.cfg.epoch);
            if self.cfg.control.stopped()
                || self.cfg.end.is_some_and(|e| now >= e.as_nanos() as u64)
            {
                self.stopping = true;
            }
            if self.stopping || self.finished() {
                break;
            }
            let mut wait = next_tick.saturating_sub(now);
            if let Some(end) = self.cfg.end {
                wait = wait.min((end.as_nanos() as u64).saturating_sub(now));
            }
            if open_model && !self.free.is_empty() {
                wait = wait.min(self.next_due_ns().saturating_sub(now));
            }
            match self
                .poll
                .poll(&mut events, Some(Duration::from_nanos(wait)))
            {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
            let now = now_ns(self.cfg.epoch);
            for ev in events.iter() {
                let idx = ev.token().0 & 0xffff_ffff;
                let generation = (ev.token().0 >> 32) as u32;
                let Some(slot) = self.slots.get(idx) else {
                    continue;
                };
                if slot.generation != generation || slot.stream.is_none() {
                    continue; // a stale event for a socket closed earlier in this batch
                }
                let read = if ev.is_read_closed() || ev.is_error() {
                    Readiness::Closed
                } else if ev.is_readable() {
                    Readiness::Data
                } else {
                    Readiness::None
                };
                self.on_event(idx, read, ev.is_writable(), ev.is_error(), now);
            }
            if open_model {
                self.dispatch_open(now);
            }
            if now >= next_tick {
                self.tick(now);
                next_tick = now + TICK.as_nanos() as u64;
            }
            self.publish();
        }
        self.finish();
    }

    /// True when `-n` is used up and every request has its outcome.
    fn finished(&self) -> bool {
        self.cfg.budget.is_some()
            && self.budget_done
            && self.credit == 0
            && self.slots.iter().all(|s| s.inflight.is_empty())
    }

    fn publish(&self) {
        let p = &self.cfg.control.progress[self.cfg.id];
        let c = &self.rec.counts;
        p.sent.store(c.sent, Ordering::Relaxed);
        p.completed.store(c.completed(), Ordering::Relaxed);
        p.errors.store(c.errors(), Ordering::Relaxed);
    }

    /// Counts everything still unanswered as in flight and closes every socket.
    fn finish(&mut self) {
        for slot in &mut self.slots {
            self.rec.counts.in_flight += slot.inflight.len() as u64;
            slot.inflight.clear();
            slot.stream = None;
        }
        if self.cfg.arrival.is_some() {
            let now = now_ns(self.cfg.epoch);
            let mut unsent = self.due_by(now).saturating_sub(self.issued);
            if let Some(budget) = &self.cfg.budget {
                // Under -n, only requests the budget still held were ever going to be sent.
                unsent = unsent.min(self.credit + budget.remaining());
            }
            self.rec.counts.unsent += unsent;
        }
        self.publish();
    }

    /// Takes up to `want` requests from the `-n` budget (always `want` without one).
    fn take(&mut self, want: u64) -> u64 {
        if self.stopping {
            return 0;
        }
        let Some(budget) = &self.cfg.budget else {
            return want;
        };
        if self.credit < want && !self.budget_done {
            let got = budget.claim(want - self.credit);
            if got == 0 {
                self.budget_done = true;
            }
            self.credit += got;
        }
        let n = want.min(self.credit);
        self.credit -= n;
        n
    }

    /// Closed model: opens a connection and assigns it its first requests.
    /// Open model with keep-alive: opens a connection with nothing assigned.
    fn start_slot(&mut self, idx: usize, now: u64) {
        if self.cfg.arrival.is_some() {
            self.connect(idx, now);
            return;
        }
        let n = self.take(self.cfg.pipeline as u64);
        if n == 0 {
            return;
        }
        self.assign(idx, n, now);
        self.connect(idx, now);
    }

    /// Issues `n` requests on a slot. Their latency clock starts `now` in the closed
    /// model, and at each one's due time in the open model.
    fn assign(&mut self, idx: usize, n: u64, now: u64) {
        let open = self.cfg.arrival.is_some();
        let (issued, interval_ns) = (self.issued, self.interval_ns);
        let slot = &mut self.slots[idx];
        if slot.inflight.is_empty() {
            slot.wait_since_ns = now;
        }
        for i in 0..n {
            let t = if open {
                due_ns(issued + i, interval_ns)
            } else {
                now
            };
            slot.inflight.push_back(t);
        }
        if self.cfg.arrival.is_some() {
            self.issued += n;
        }
        slot.unwritten += n as usize * self.cfg.request_len;
        self.rec.counts.sent += n;
        self.rec.counts.max_batch = self.rec.counts.max_batch.max(n);
    }

    fn connect(&mut self, idx: usize, now: u64) {
        let slot = &mut self.slots[idx];
        slot.generation = slot.generation.wrapping_add(1);
        slot.since_ns = now;
        slot.framer = Framer::new();
        slot.leftover.clear();
        let mut stream = match TcpStream::connect(self.cfg.addr) {
            Ok(s) => s,
            Err(e) => {
                let f = Failure::Connect(e.kind(), e.raw_os_error());
                self.fail(idx, f, now);
                return;
            }
        };
        if let Err(e) = self.poll.registry().register(
            &mut stream,
            token(idx, slot.generation),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            let f = Failure::Connect(e.kind(), e.raw_os_error());
            self.fail(idx, f, now);
            return;
        }
        if self.cfg.keepalive {
            let _ = stream.set_nodelay(true);
        }
        slot.stream = Some(stream);
        slot.phase = Phase::Connecting;
        slot.opened += 1;
        if slot.opened > 1 {
            self.rec.counts.reconnects += 1;
        }
        // On loopback the handshake has usually finished by now: write at once rather
        // than spend an epoll_wait on the writable edge.
        if slot.unwritten > 0 {
            self.flush(idx, now);
        }
    }

    fn on_event(&mut self, idx: usize, read: Readiness, writable: bool, error: bool, now: u64) {
        let generation = self.slots[idx].generation;
        // A failure below may close the socket and open a new one in the same slot; the
        // rest of this event belongs to the old socket and must not touch the new one.
        let same = |w: &Worker| w.slots[idx].generation == generation;
        if self.slots[idx].phase == Phase::Connecting {
            if self.slots[idx].unwritten > 0 {
                self.flush(idx, now);
            } else {
                self.check_connected(idx, now);
            }
            if !same(self) {
                return;
            }
            if self.slots[idx].phase != Phase::Open {
                if error {
                    let e = self.slots[idx]
                        .stream
                        .as_ref()
                        .and_then(|s| s.take_error().ok().flatten())
                        .unwrap_or_else(|| io::Error::from(io::ErrorKind::ConnectionRefused));
                    self.fail(idx, Failure::Connect(e.kind(), e.raw_os_error()), now);
                }
                return;
            }
        } else if writable && self.slots[idx].unwritten > 0 {
            self.flush(idx, now);
            if !same(self) {
                return;
            }
        }
        if read != Readiness::None {
            self.read(idx, read == Readiness::Closed, now);
        }
    }

    /// Confirms a connection with nothing to write yet (open model warm-up).
    fn check_connected(&mut self, idx: usize, now: u64) {
        let Some(stream) = self.slots[idx].stream.as_ref() else {
            return;
        };
        match stream.take_error() {
            Ok(Some(e)) | Err(e) => {
                self.fail(idx, Failure::Connect(e.kind(), e.raw_os_error()), now);
                return;
            }
            Ok(None) => {}
        }
        match stream.peer_addr() {
            Ok(_) => self.established(idx),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {}
            Err(e) => self.fail(idx, Failure::Connect(e.kind(), e.raw_os_error()), now),
        }
    }

    fn established(&mut self, idx: usize) {
        // A fresh clock read: the caller's `now` may be from before the connect started.
        let now = now_ns(self.cfg.epoch);
        let slot = &mut self.slots[idx];
        slot.phase = Phase::Open;
        slot.failures = 0;
        self.rec
            .connect
            .record_ns(now.saturating_sub(slot.since_ns));
        self.rec.counts.connections_opened += 1;
        if self.cfg.keepalive && self.cfg.arrival.is_none() {
            // Kept-alive latency is timed from the write; the connect is timed apart.
            for t in slot.inflight.iter_mut() {
                *t = now;
            }
            slot.wait_since_ns = now;
        }
        if self.cfg.arrival.is_some() && slot.inflight.len() < self.cfg.pipeline {
            self.list_free(idx);
        }
    }

    /// Writes whatever issued requests are not written yet.
    fn flush(&mut self, idx: usize, now: u64) {
        let total = self.cfg.batch.len();
        loop {
            let slot = &mut self.slots[idx];
            if slot.unwritten == 0 {
                return;
            }
            let Some(stream) = slot.stream.as_mut() else {
                return;
            };
            let connecting = slot.phase == Phase::Connecting;
            match stream.write(&self.cfg.batch[total - slot.unwritten..]) {
                Ok(n) => {
                    if connecting {
                        self.established(idx);
                    }
                    let slot = &mut self.slots[idx];
                    slot.unwritten -= n;
                    self.rec.counts.bytes_written += n as u64;
                    if slot.unwritten > 0 {
                        // A short write means the socket buffer is full: wait for the edge.
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if connecting && e.kind() == io::ErrorKind::NotConnected => return,
                Err(e) => {
                    let f = if connecting {
                        Failure::Connect(e.kind(), e.raw_os_error())
                    } else {
                        Failure::Write
                    };
                    self.fail(idx, f, now);
                    return;
                }
            }
        }
    }

    /// Reads what the socket holds. `peer_closed` (EPOLLRDHUP/HUP) means a FIN or reset
    /// is queued behind the data: then read on to the EOF, since no new edge will come.
    fn read(&mut self, idx: usize, peer_closed: bool, now: u64) {
        loop {
            let Some(stream) = self.slots[idx].stream.as_mut() else {
                return;
            };
            match stream.read(&mut self.rbuf) {
                Ok(0) => {
                    self.eof(idx, now);
                    return;
                }
                Ok(n) => {
                    self.rec.counts.bytes_read += n as u64;
                    let flow = feed(
                        &mut self.slots[idx],
                        &mut self.rec,
                        &self.rbuf[..n],
                        now,
                        self.cfg.head_request,
                        self.cfg.keepalive,
                    );
                    match flow {
                        Ok(Flow::Continue) => {}
                        Ok(Flow::Close) => {
                            self.close_and_replace(idx, Failure::Read, now);
                            return;
                        }
                        Err(_) => {
                            self.fail(idx, Failure::Parse, now);
                            return;
                        }
                    }
                    if n < self.rbuf.len() && !peer_closed {
                        // Edge-triggered: a short read drained the socket, and any later
                        // data raises a new edge, so a read that would return EAGAIN is
                        // skipped.
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.fail(idx, Failure::Read, now);
                    return;
                }
            }
        }
        self.refill(idx);
    }

    /// Closed model: tops the connection's pipeline back up, in one write.
    fn refill(&mut self, idx: usize) {
        if self.cfg.arrival.is_some() {
            if self.slots[idx].inflight.len() < self.cfg.pipeline {
                self.list_free(idx);
            }
            return;
        }
        let room = self.cfg.pipeline - self.slots[idx].inflight.len();
        if room == 0 || !self.cfg.keepalive {
            return;
        }
        let n = self.take(room as u64);
        if n > 0 {
            let t = now_ns(self.cfg.epoch);
            self.assign(idx, n, t);
            self.flush(idx, t);
        }
    }

    fn eof(&mut self, idx: usize, now: u64) {
        let slot = &mut self.slots[idx];
        if let Some(status) = slot.framer.eof() {
            if let Some(start) = slot.inflight.pop_front() {
                self.rec.response(status, start, now);
            }
            self.close_and_replace(idx, Failure::Read, now);
        } else if slot.inflight.is_empty() {
            self.rec.counts.closed_by_server += 1;
            self.close_and_replace(idx, Failure::Read, now);
        } else {
            self.fail(idx, Failure::Read, now);
        }
    }

    /// Every request in flight on the slot fails with `f`; the slot is closed and,
    /// unless the run is ending, reopened (after a backoff for repeated connect failures).
    fn fail(&mut self, idx: usize, f: Failure, now: u64) {
        let n = self.slots[idx].inflight.len() as u64;
        let c = &mut self.rec.counts;
        match f {
            Failure::Connect(kind, os) => {
                c.connect += n;
                if kind == io::ErrorKind::ConnectionRefused {
                    c.connect_refused += n;
                } else if kind == io::ErrorKind::AddrNotAvailable || os == Some(libc::EADDRNOTAVAIL)
                {
                    c.connect_ports_exhausted += n;
                }
                self.slots[idx].failures += 1;
            }
            Failure::ConnectTimeout => {
                c.connect += n;
                c.connect_timeout += n;
                self.slots[idx].failures += 1;
            }
            Failure::Write => c.write += n,
            Failure::Read => c.read += n,
            Failure::Parse => c.parse += n,
            Failure::Timeout => c.timeout += n,
        }
        self.slots[idx].inflight.clear();
        self.close_and_replace(idx, f, now);
    }

    /// Closes the slot's socket. Requests still in flight fail as `remaining`; then the
    /// slot is reopened now, or after a backoff if connecting keeps failing.
    fn close_and_replace(&mut self, idx: usize, remaining: Failure, now: u64) {
        if !self.slots[idx].inflight.is_empty() {
            self.fail(idx, remaining, now);
            return;
        }
        let slot = &mut self.slots[idx];
        slot.stream = None; // close(2) also removes the socket from the epoll set
        slot.phase = Phase::Closed;
        slot.unwritten = 0;
        slot.framer = Framer::new();
        slot.leftover.clear();
        slot.generation = slot.generation.wrapping_add(1);
        // Back off only on repeated connect failures: 0, 1, 2, 4 ... 64 ms.
        let backoff_ms = match slot.failures {
            0 | 1 => 0,
            f => 1u64 << (f - 2).min(6),
        };
        slot.retry_at_ns = now + backoff_ms * 1_000_000;
        if self.stopping {
            return;
        }
        if backoff_ms == 0 {
            self.reopen(idx, now);
        }
    }

    fn reopen(&mut self, idx: usize, now: u64) {
        if self.cfg.arrival.is_some() {
            if self.cfg.keepalive {
                self.connect(idx, now);
            } else {
                self.list_free(idx);
            }
        } else {
            self.start_slot(idx, now);
        }
    }

    fn tick(&mut self, now: u64) {
        let timeout = self.cfg.timeout.as_nanos() as u64;
        let connect_timeout = self.cfg.connect_timeout.as_nanos() as u64;
        for idx in 0..self.slots.len() {
            let slot = &self.slots[idx];
            match slot.phase {
                Phase::Connecting if now.saturating_sub(slot.since_ns) >= connect_timeout => {
                    // With nothing in flight this only counts the failure and retries.
                    self.fail(idx, Failure::ConnectTimeout, now);
                }
                Phase::Open
                    if !slot.inflight.is_empty()
                        && now.saturating_sub(slot.wait_since_ns) >= timeout =>
                {
                    self.fail(idx, Failure::Timeout, now);
                }
                Phase::Closed
                    if slot.stream.is_none() && !slot.listed && slot.retry_at_ns <= now =>
                {
                    self.reopen(idx, now);
                }
                _ => {}
            }
        }
    }

    fn list_free(&mut self, idx: usize) {
        let slot = &mut self.slots[idx];
        if !slot.listed {
            slot.listed = true;
            self.free.push(idx);
        }
    }

    fn next_due_ns(&self) -> u64 {
        due_ns(self.issued, self.interval_ns)
    }

    /// Requests due by `now` in the open model (due times are k * interval from start).
    fn due_by(&self, now: u64) -> u64 {
        (now as f64 / self.interval_ns).floor() as u64 + 1
    }

    /// Open model: hands the requests that are due to connections with room.
    fn dispatch_open(&mut self, now: u64) {
        let due = self.due_by(now);
        while self.issued < due {
            let Some(idx) = self.free.pop() else { break };
            self.slots[idx].listed = false;
            let slot = &self.slots[idx];
            let ready = match slot.phase {
                Phase::Open => slot.inflight.len() < self.cfg.pipeline,
                Phase::Closed => {
                    !self.cfg.keepalive && slot.stream.is_none() && slot.retry_at_ns <= now
                }
                Phase::Connecting => false,
            };
            if !ready {
                continue;
            }
            let room = (self.cfg.pipeline - slot.inflight.len()) as u64;
            let n = self.take(room.min(due - self.issued));
            if n == 0 {
                break;
            }
            self.assign(idx, n, now);
            if self.slots[idx].phase == Phase::Closed {
                self.connect(idx, now);
            } else {
                self.flush(idx, now);
                if self.slots[idx].inflight.len() < self.cfg.pipeline
                    && self.slots[idx].phase == Phase::Open
                {
                    self.list_free(idx);
                }
            }
        }
    }
}

/// Frames the responses in `data` for one connection, recording each complete one.
fn feed(
    slot: &mut Slot,
    rec: &mut Recorder,
    data: &[u8],
    now: u64,
    head_request: bool,
    keepalive: bool,
) -> Result<Flow, ParseError> {
    if slot.leftover.is_empty() {
        return feed_slice(slot, rec, data, now, head_request, keepalive);
    }
    // Rare path: a head was split across reads; parse it from the joined bytes.
    let mut joined = std::mem::take(&mut slot.leftover);
    joined.extend_from_slice(data);
    let flow = feed_slice(slot, rec, &joined, now, head_request, keepalive);
    if slot.leftover.is_empty() {
        joined.clear();
        slot.leftover = joined; // keep the capacity for next time
    }
    flow
}

fn feed_slice(
    slot: &mut Slot,
    rec: &mut Recorder,
    data: &[u8],
    now: u64,
    head_request: bool,
    keepalive: bool,
) -> Result<Flow, ParseError> {
    let mut i = 0;
    while i < data.len() {
        if slot.inflight.is_empty() && slot.framer.between_responses() {
            // Bytes nobody asked for (a body longer than its Content-Length, or a
            // response sent early). Like wrk, they are read as the start of the next
            // response, which then fails to parse: the error is charged to a request,
            // and the conservation law holds.
            if slot.leftover.len() + data.len() - i > crate::MAX_HEAD {
                return Err(ParseError::HeadTooLarge);
            }
            slot.leftover.extend_from_slice(&data[i..]);
            return Ok(Flow::Continue);
        }
        match slot.framer.next(&data[i..], head_request)? {
            Step::Complete {
                status,
                close,
                used,
            } => {
                i += used;
                let start = slot.inflight.pop_front().unwrap_or(now);
                rec.response(status, start, now);
                slot.wait_since_ns = now;
                if close || !keepalive {
                    return Ok(Flow::Close);
                }
            }
            Step::Body => return Ok(Flow::Continue),
            Step::PartialHead { used } => {
                slot.leftover.extend_from_slice(&data[i + used..]);
                return Ok(Flow::Continue);
            }
        }
    }
    Ok(Flow::Continue)
}
