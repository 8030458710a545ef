//! One worker: an event loop that owns a share of the connections.
//!
//! Per request on a kept-alive connection the loop makes one `write` (several pipelined
//! requests go out in one write) and one `read`; `epoll_wait` is shared by every socket
//! that is ready at once. Sockets are registered once for read and write readiness
//! (edge-triggered), so there is no `epoll_ctl` per request. Timeouts are found by a scan
//! every [`TICK`], not by per-request timers.
//!
//! In the closed model a worker that finds nothing to read may wait a little before it
//! sleeps, so that one wake-up reads several responses ([`coalesce`], `--coalesce`).
//!
//! The loop does not know the load model: a connection with room asks the [`Schedule`]
//! for work. Nor does it know the byte stream: it talks to a [`Transport`]. Requests come
//! from the [`RequestTable`], encoded into the connection's own output buffer.
//!
//! Evidence: `strace -c -f foxbench load -n 20000 -c 10 -t 1` against targets/c-epoll counts
//! 20,000 `sendto`, 20,000 `recvfrom` and ~2,000 `epoll_wait`; `bench/load.py` (runs in
//! bench/runs/) measures the client CPU per request against wrk, ab, h2load, oha and hey.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token};
use nix::sys::timerfd::TimerFd;

use crate::cause;
use crate::h2::{self as http2, H2Counts};
use crate::interval::CurrentInterval;
use crate::response::Framer;
use crate::schedule::{Grant, Schedule};
use crate::table::{Picker, RequestTable};
use crate::tls::{Connector, TlsInfo};
use crate::transport::{Read, Transport};
use crate::{Control, Counts, LoadError, Protocol, StatusSet};
use stats::reason::{At, Cause, Kind, Reason};

mod coalesce;
mod conn;
mod connect;
mod h2;
mod http1;
mod read;
mod recorder;
mod timer;

use conn::{Flow, Pending, Phase, Readiness, Slot};
use http1::feed;
use recorder::Recorder;
use stats::Latency;
use timer::open_timer;

/// How often connections are scanned for timeouts and retries.
const TICK: Duration = Duration::from_millis(10);

/// Size of the worker's read buffer, shared by all its connections.
const READ_BUF: usize = 64 * 1024;

/// Connections opened at the start between two looks at the stop switch and the clock.
const OPEN_BATCH: usize = 64;

pub(crate) struct Config {
    pub id: usize,
    pub addr: SocketAddr,
    /// For https targets: the run's TLS configuration.
    pub tls: Option<Connector>,
    pub table: Arc<RequestTable>,
    pub seed: u64,
    pub connections: usize,
    pub pipeline: usize,
    /// HTTP/1.1, or HTTP/2 with its streams and windows.
    pub protocol: Protocol,
    /// Reuse connections: connect eagerly and keep them. Otherwise a connection is opened
    /// for each request, when the request is granted.
    pub keepalive: bool,
    /// The wait before sleeping that batches wake-ups, as in effect: `Off` in the open
    /// model.
    pub coalesce: crate::Coalesce,
    pub schedule: Schedule,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub fail_status: StatusSet,
    pub epoch: Instant,
    pub control: Arc<Control>,
}

pub(crate) struct WorkerResult {
    pub counts: Counts,
    /// Open model: how late each request was handed to a connection that was free at its
    /// due instant (the client's own dispatch error).
    pub lateness: Latency,
    /// Open model: how late each request was sent that fell due while every connection was
    /// busy.
    pub late: Latency,
    pub connect: Latency,
    pub handshake_full: Latency,
    pub handshake_resumed: Latency,
    pub tls: Option<TlsInfo>,
    pub status: Vec<u64>,
    /// Per request shape: (sent, completed).
    pub shapes: Vec<(u64, u64)>,
    /// HTTP/2's own counts; zero under HTTP/1.1.
    pub h2: H2Counts,
    /// Interval hand-offs that waited for the collector.
    pub interval_waits: u64,
    /// Open model: wall time spent in zero-timeout polls that found nothing while the next
    /// due instant was less than [`SPIN_NS`] away: CPU burnt waiting, not working.
    pub spin: Duration,
    /// Closed model: the waits before sleeping that batched wake-ups.
    pub coalesced: crate::Coalesced,
}

/// Why the requests in flight on a connection fail: the error counter and the cause, a
/// `Copy` code that costs no more to carry than the kind alone.
type Failure = Reason;

/// Where a slot's oldest request in flight stands in its response.
fn stage(slot: &Slot) -> At {
    if !slot.framer.between_responses() {
        At::MidBody
    } else if slot.leftover.is_empty() {
        At::BeforeResponse
    } else {
        At::MidHead
    }
}

struct Worker {
    cfg: Config,
    poll: Poll,
    slots: Vec<Slot>,
    rec: Recorder,
    picker: Picker,
    rbuf: Vec<u8>,
    /// Connections with room, waiting for a request to fall due.
    free: Vec<usize>,
    /// Open model: wakes the loop at the next due instant with nanosecond precision, where
    /// epoll_wait's timeout would round up to a whole millisecond.
    timer: Option<TimerFd>,
    /// The due instant the timer is set for.
    armed_ns: Option<u64>,
    /// This worker's requests numbered below this fell due while every connection was
    /// busy: they are counted late.
    late_until: u64,
    /// HTTP/2's counts, apart from `rec` so that a connection's events can reach both.
    h2: H2Counts,
    /// HTTP/2: where a value with random parts is filled before its length is written.
    scratch: Vec<u8>,
    /// Connections established and not closed yet, published for live displays.
    open: u64,
    /// Open model: nanoseconds of empty zero-timeout polls before a due instant (see
    /// [`WorkerResult::spin`]).
    spin_ns: u64,
    /// Closed model: the wait before sleeping, and the waits made.
    coalesce: coalesce::Coalescer,
}

/// How long before a due instant the open model stops sleeping and polls instead.
const SPIN_NS: u64 = 50_000;

fn now_ns(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

fn token(idx: usize, generation: u32) -> Token {
    Token((idx & 0xffff_ffff) | ((generation as usize) << 32))
}

pub(crate) fn run(cfg: Config, interval: CurrentInterval) -> Result<WorkerResult, LoadError> {
    let poll = Poll::new().map_err(LoadError::Poll)?;
    // Room for a full pipeline and a partly written request before it: no growth later.
    // HTTP/2 adds its preface and control frames.
    let per_connection = match cfg.protocol {
        Protocol::Http1 => cfg.pipeline,
        Protocol::Http2(o) => o.streams as usize,
    };
    let control_room = match cfg.protocol {
        Protocol::Http1 => 0,
        Protocol::Http2(_) => h2::CONTROL_ROOM,
    };
    let out_capacity = (per_connection + 1) * cfg.table.max_len + control_room;
    let slots = (0..cfg.connections)
        .map(|_| Slot {
            conn: None,
            generation: 0,
            phase: Phase::Closed,
            since_ns: 0,
            tcp_up_ns: None,
            retry_at_ns: 0,
            failures: 0,
            inflight: VecDeque::with_capacity(per_connection),
            out: Vec::with_capacity(out_capacity),
            out_pos: 0,
            wait_since_ns: 0,
            framer: Framer::new(),
            leftover: Vec::new(),
            opened: 0,
            on_free_list: false,
            h2: match cfg.protocol {
                Protocol::Http1 => None,
                Protocol::Http2(o) => Some(http2::Conn::new(o)),
            },
            requeue: Vec::with_capacity(match cfg.protocol {
                Protocol::Http1 => 0,
                Protocol::Http2(_) => per_connection,
            }),
        })
        .collect();
    let shapes = cfg.table.shapes.len();
    let mut w = Worker {
        rec: Recorder {
            counts: Counts::default(),
            interval,
            connect: Latency::new(),
            handshake_full: Latency::new(),
            handshake_resumed: Latency::new(),
            tls: None,
            status: vec![0; 1000],
            shapes: vec![(0, 0); shapes],
            fail_status: cfg.fail_status.clone(),
            open: cfg.schedule.is_open(),
            lateness: Latency::new(),
            late: Latency::new(),
            recent_latency_ns: 0,
        },
        picker: Picker::new(cfg.seed, cfg.id, shapes),
        poll,
        slots,
        rbuf: vec![0; READ_BUF],
        free: Vec::with_capacity(cfg.connections),
        timer: None,
        armed_ns: None,
        late_until: 0,
        h2: H2Counts::default(),
        scratch: Vec::with_capacity(cfg.table.h2_max_value),
        open: 0,
        spin_ns: 0,
        coalesce: coalesce::Coalescer::new(cfg.coalesce),
        cfg,
    };
    if w.cfg.schedule.is_open() {
        w.timer = open_timer(w.poll.registry());
    }
    w.event_loop();
    Ok(WorkerResult {
        counts: w.rec.counts,
        lateness: w.rec.lateness,
        late: w.rec.late,
        connect: w.rec.connect,
        handshake_full: w.rec.handshake_full,
        handshake_resumed: w.rec.handshake_resumed,
        tls: w.rec.tls,
        status: w.rec.status,
        shapes: w.rec.shapes,
        h2: w.h2,
        interval_waits: w.rec.interval.waits,
        spin: Duration::from_nanos(w.spin_ns),
        coalesced: crate::Coalesced {
            waits: w.coalesce.waits,
            waited: Duration::from_nanos(w.coalesce.waited_ns),
        },
    })
}

impl Worker {
    fn event_loop(&mut self) {
        let mut events = Events::with_capacity(self.slots.len().clamp(16, 1024));
        let now = now_ns(self.cfg.epoch);
        for idx in 0..self.slots.len() {
            // Opening thousands of connections can take seconds: against a server whose
            // accept queue is full each connect cost ~1 ms (10,000 took 10 s, a shootout
            // repeat capped at 6 s ran 27 s). A stop or the schedule's end ends the opening
            // too; the slots left closed have issued nothing.
            if idx % OPEN_BATCH == OPEN_BATCH - 1 && self.stop_due(now_ns(self.cfg.epoch)) {
                break;
            }
            self.open_slot(idx, now);
        }
        let mut next_tick = now + TICK.as_nanos() as u64;
        loop {
            let now = now_ns(self.cfg.epoch);
            if self.stop_due(now) || self.finished() {
                break;
            }
            let mut wait = next_tick.saturating_sub(now);
            if let Some(end) = self.cfg.schedule.end_ns() {
                wait = wait.min(end.saturating_sub(now));
            }
            // True for a poll made only to wait for a due instant still in the future.
            let mut spinning = false;
            if !self.free.is_empty() {
                if let Some(due) = self.cfg.schedule.next_due_ns() {
                    // The last stretch before a due instant is spent polling without a
                    // timeout: waking from a timer costs ~30-40 µs on the VMs measured
                    // (bench/open.py), more than the precision the open model needs.
                    if due <= now + SPIN_NS {
                        spinning = due > now;
                        wait = 0;
                    } else if !self.arm(due - SPIN_NS, now) {
                        wait = wait.min(due - now);
                    }
                }
            }
            match self.poll_events(&mut events, wait, spinning) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
            let before = now;
            let now = now_ns(self.cfg.epoch);
            // The spin's CPU is time to spare, not work: counted apart so that a spinning
            // client is not judged saturated. Uses the clock reads the loop makes anyway.
            if spinning && events.is_empty() {
                self.spin_ns += now.saturating_sub(before);
            }
            self.rec.interval.rotate(now, &self.rec.counts);
            for ev in events.iter() {
                let idx = ev.token().0 & 0xffff_ffff;
                let generation = (ev.token().0 >> 32) as u32;
                let Some(slot) = self.slots.get(idx) else {
                    continue;
                };
                if slot.generation != generation || slot.conn.is_none() {
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
            self.dispatch(now);
            if now >= next_tick {
                self.tick(now);
                next_tick = now + TICK.as_nanos() as u64;
            }
            self.publish();
        }
        self.finish();
    }

    /// True once the run is to end: stopped by the caller, or the schedule's end reached.
    fn stop_due(&mut self, now: u64) -> bool {
        if self.cfg.control.stopped() {
            self.cfg.schedule.stop();
        }
        self.cfg.schedule.ended(now)
    }

    /// True when `-n` is used up and every request has its outcome.
    fn finished(&self) -> bool {
        self.cfg.schedule.exhausted()
            && self
                .slots
                .iter()
                .all(|s| s.inflight.is_empty() && s.requeue.is_empty())
    }

    fn publish(&self) {
        let p = &self.cfg.control.progress[self.cfg.id];
        let c = &self.rec.counts;
        p.sent.store(c.sent, Ordering::Relaxed);
        p.completed.store(c.completed(), Ordering::Relaxed);
        p.errors.store(c.errors(), Ordering::Relaxed);
        p.connections_open.store(self.open, Ordering::Relaxed);
        p.spin_ns.store(self.spin_ns, Ordering::Relaxed);
    }

    /// Counts everything still unanswered as in flight, closes every socket and hands off
    /// the last interval.
    fn finish(&mut self) {
        for slot in &mut self.slots {
            self.rec.counts.in_flight += (slot.inflight.len() + slot.requeue.len()) as u64;
            slot.inflight.clear();
            slot.requeue.clear();
            slot.conn = None;
        }
        self.open = 0;
        let now = now_ns(self.cfg.epoch);
        self.rec.counts.unsent += self.cfg.schedule.unsent(now);
        self.publish();
        self.rec.interval.finish(&self.rec.counts);
    }

    /// (Re)opens a slot: it asks for work first, and connects with what it gets, so that a
    /// connect that fails is charged to the requests that waited for it. A kept-alive slot
    /// told to wait (the open model) connects at once, ready for the due instant; a slot
    /// that will get no more work stays closed.
    fn open_slot(&mut self, idx: usize, now: u64) {
        if self.offer(idx, now) == Grant::Later
            && self.cfg.keepalive
            && self.slots[idx].phase == Phase::Closed
        {
            self.connect(idx, now);
        }
    }

    /// Requests the slot may take now: the pipeline's room, or the streams the HTTP/2
    /// connection may open beside those in flight.
    #[inline]
    fn room(&self, idx: usize) -> usize {
        let slot = &self.slots[idx];
        let capacity = match &slot.h2 {
            None => self.cfg.pipeline,
            Some(conn) => conn.capacity(),
        };
        capacity.saturating_sub(slot.inflight.len())
    }

    /// Offers the slot's room to the schedule and issues what it grants.
    fn offer(&mut self, idx: usize, now: u64) -> Grant {
        if !self.slots[idx].requeue.is_empty() {
            // Requests a GOAWAY or REFUSED_STREAM left go before new ones.
            return self.reissue(idx, now);
        }
        let room = self.room(idx) as u64;
        if room == 0 {
            return Grant::Never;
        }
        let grant = self.cfg.schedule.grant(room, now);
        match grant {
            Grant::Now { n, first } => {
                self.assign(idx, n, first, now);
                if self.slots[idx].phase == Phase::Closed {
                    self.connect(idx, now);
                } else {
                    self.flush(idx, now);
                }
                if self.slots[idx].phase == Phase::Open && self.room(idx) > 0 {
                    self.list_free(idx);
                }
            }
            Grant::Later => self.list_free(idx),
            Grant::Never => {}
        }
        grant
    }

    /// Issues `n` requests on a slot, the schedule's sequence numbers `first..first + n`:
    /// each picks its shape and is encoded into the slot's output buffer.
    fn assign(&mut self, idx: usize, n: u64, first: u64, now: u64) {
        let Worker {
            cfg,
            slots,
            rec,
            picker,
            late_until,
            h2,
            scratch,
            ..
        } = self;
        let slot = &mut slots[idx];
        if slot.inflight.is_empty() {
            slot.wait_since_ns = now;
        }
        if slot.out_pos > 0 {
            // Keep the unwritten tail at the front, within the reserved capacity.
            slot.out.drain(..slot.out_pos);
            slot.out_pos = 0;
        }
        for seq in first..first + n {
            let shape = picker.pick(&cfg.table);
            let stream = match slot.h2.as_mut() {
                None => {
                    picker.encode(&cfg.table, shape, &mut slot.out);
                    0
                }
                Some(conn) => {
                    h2::open_stream(conn, cfg, shape as u32, picker, scratch, &mut slot.out, h2)
                }
            };
            let start_ns = cfg.schedule.start_ns(seq, now);
            slot.inflight.push_back(Pending {
                start_ns,
                sent_ns: now,
                shape: shape as u32,
                stream,
                retries: 0,
            });
            rec.shapes[shape].0 += 1;
            if rec.open {
                let behind = now.saturating_sub(start_ns);
                if seq < *late_until {
                    rec.counts.late += 1;
                    rec.late.record_ns(behind);
                } else {
                    rec.lateness.record_ns(behind);
                }
            }
        }
        rec.counts.sent += n;
        rec.counts.max_batch = rec.counts.max_batch.max(n);
        if slot.h2.is_some() {
            h2.streams_used_max = h2.streams_used_max.max(slot.inflight.len() as u64);
        }
    }

    fn on_event(&mut self, idx: usize, read: Readiness, writable: bool, error: bool, now: u64) {
        let generation = self.slots[idx].generation;
        // A failure below may close the socket and open a new one in the same slot; the
        // rest of this event belongs to the old socket and must not touch the new one.
        let same = |w: &Worker| w.slots[idx].generation == generation;
        if self.slots[idx].phase == Phase::Connecting {
            if self.slots[idx].unwritten() {
                self.flush(idx, now);
            } else {
                self.poll_connect(idx, now);
            }
            if !same(self) {
                return;
            }
            if self.slots[idx].phase != Phase::Open {
                if error {
                    let e = self.slots[idx]
                        .conn
                        .as_ref()
                        .and_then(Transport::connect_error)
                        .unwrap_or_else(|| io::Error::from(io::ErrorKind::ConnectionRefused));
                    let f = self.connecting_failure(idx, &e);
                    self.fail(idx, f, now);
                }
                return;
            }
            if self.cfg.keepalive && self.room(idx) > 0 {
                let _ = self.offer(idx, now);
                if !same(self) {
                    return;
                }
            }
        } else if writable && self.slots[idx].unwritten() {
            self.flush(idx, now);
            if !same(self) {
                return;
            }
        }
        if read != Readiness::None {
            self.read(idx, read == Readiness::Closed, now);
        }
    }

    /// Writes whatever issued requests are not written yet.
    fn flush(&mut self, idx: usize, now: u64) {
        loop {
            let slot = &mut self.slots[idx];
            if !slot.unwritten() {
                return;
            }
            let Some(conn) = slot.conn.as_mut() else {
                return;
            };
            let connecting = slot.phase == Phase::Connecting;
            let written = conn.write(&slot.out[slot.out_pos..]);
            if connecting {
                self.note_tcp_up(idx);
            }
            let slot = &mut self.slots[idx];
            match written {
                Ok(n) => {
                    slot.out_pos += n;
                    let done = !slot.unwritten();
                    if done {
                        slot.out.clear();
                        slot.out_pos = 0;
                    }
                    self.rec.counts.bytes_written += n as u64;
                    if connecting
                        && self.slots[idx]
                            .conn
                            .as_ref()
                            .is_some_and(Transport::is_established)
                        && !self.established(idx)
                    {
                        return;
                    }
                    if !done {
                        // A short write means the socket buffer is full: wait for the edge.
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let f = if connecting {
                        self.connecting_failure(idx, &e)
                    } else {
                        let kind = match cause::tls_error(&e) {
                            Some(_) => Kind::Tls,
                            None => Kind::Write,
                        };
                        Reason::new(kind, cause::of_io(&e, stage(&self.slots[idx])))
                    };
                    self.fail(idx, f, now);
                    return;
                }
            }
        }
    }

    /// Every request in flight on the slot fails with `f`; the slot is closed and,
    /// unless the run is ending, reopened (after a backoff for repeated connect failures).
    fn fail(&mut self, idx: usize, f: Failure, now: u64) {
        let n = self.slots[idx].inflight.len() as u64;
        self.rec.failed(f, n);
        if matches!(f.kind, Kind::Connect | Kind::Tls) {
            // Repeated connect and handshake failures back off.
            self.slots[idx].failures += 1;
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
        slot.conn = None; // close(2) also removes the socket from the epoll set
        if slot.phase == Phase::Open {
            self.open -= 1;
        }
        slot.phase = Phase::Closed;
        slot.out.clear();
        slot.out_pos = 0;
        slot.framer = Framer::new();
        slot.leftover.clear();
        if let Some(h2) = slot.h2.as_mut() {
            h2.reset();
        }
        slot.generation = slot.generation.wrapping_add(1);
        // Back off only on repeated connect failures: 0, 1, 2, 4 ... 64 ms.
        let backoff_ms = match slot.failures {
            0 | 1 => 0,
            f => 1u64 << (f - 2).min(6),
        };
        slot.retry_at_ns = now + backoff_ms * 1_000_000;
        if self.cfg.schedule.ended(now) {
            return;
        }
        if backoff_ms == 0 {
            self.open_slot(idx, now);
        }
    }

    fn tick(&mut self, now: u64) {
        let timeout = self.cfg.timeout.as_nanos() as u64;
        let connect_timeout = self.cfg.connect_timeout.as_nanos() as u64;
        for idx in 0..self.slots.len() {
            let slot = &self.slots[idx];
            match slot.phase {
                // A TLS handshake gets the response timeout once TCP is up.
                Phase::Connecting
                    if slot
                        .tcp_up_ns
                        .is_some_and(|up| now.saturating_sub(up) >= timeout) =>
                {
                    self.fail(
                        idx,
                        Reason::new(Kind::Tls, Cause::Timeout(At::Handshake)),
                        now,
                    );
                }
                Phase::Connecting
                    if slot.tcp_up_ns.is_none()
                        && now.saturating_sub(slot.since_ns) >= connect_timeout =>
                {
                    // With nothing in flight this only counts the failure and retries.
                    let f = Reason::new(Kind::Connect, Cause::Timeout(At::Connect));
                    self.fail(idx, f, now);
                }
                // HTTP/2 times out each stream alone: the others go on.
                Phase::Open if slot.h2.is_some() => self.h2_timeouts(idx, now),
                Phase::Open
                    if !slot.inflight.is_empty()
                        && now.saturating_sub(slot.wait_since_ns) >= timeout =>
                {
                    let f = Reason::new(Kind::Timeout, Cause::Timeout(stage(slot)));
                    self.fail(idx, f, now);
                }
                Phase::Closed
                    if slot.conn.is_none() && !slot.on_free_list && slot.retry_at_ns <= now =>
                {
                    self.open_slot(idx, now);
                }
                _ => {}
            }
        }
    }

    fn list_free(&mut self, idx: usize) {
        let slot = &mut self.slots[idx];
        if !slot.on_free_list {
            slot.on_free_list = true;
            self.free.push(idx);
        }
    }

    /// Offers the on_free_list connections' room while requests are due. Requests still due
    /// when no connection is free are marked late.
    fn dispatch(&mut self, now: u64) {
        if !self.cfg.schedule.is_open() {
            return;
        }
        // A fresh reading: handling this batch's events took time since the poll returned.
        let now = now_ns(self.cfg.epoch).max(now);
        while self
            .cfg
            .schedule
            .next_due_ns()
            .is_some_and(|due| due <= now)
        {
            let Some(idx) = self.free.pop() else { break };
            self.slots[idx].on_free_list = false;
            let slot = &self.slots[idx];
            let ready = match slot.phase {
                Phase::Open => self.room(idx) > 0,
                // A slot waiting out a connect backoff is reopened by the tick.
                Phase::Closed => slot.conn.is_none() && slot.retry_at_ns <= now,
                // Listed again once established.
                Phase::Connecting => false,
            };
            if ready {
                let _ = self.offer(idx, now);
            }
        }
        if self.free.is_empty()
            && self
                .cfg
                .schedule
                .next_due_ns()
                .is_some_and(|due| due <= now)
        {
            self.late_until = self.late_until.max(self.cfg.schedule.due_count(now));
        }
    }
}
