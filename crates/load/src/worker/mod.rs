//! One worker: an event loop that owns a share of the connections.
//!
//! Per request on a kept-alive connection the loop makes one `write` (several pipelined
//! requests go out in one write) and one `read`; `epoll_wait` is shared by every socket
//! that is ready at once. Sockets are registered once for read and write readiness
//! (edge-triggered), so there is no `epoll_ctl` per request. Timeouts are found by a scan
//! every [`TICK`], not by per-request timers; a protocol that asks for timers (QUIC's) gets
//! one deadline per connection, kept by [`wakes`], and the loop sleeps no longer than the
//! earliest.
//!
//! In the closed model a worker that finds nothing to read may wait a little before it
//! sleeps, so that one wake-up reads several responses ([`coalesce`], `--coalesce`). A
//! worker told to spin (`--idle spin`, [`crate::idle`]) never sleeps: each turn polls
//! without a timeout, and the turns that find nothing are counted as spin.
//!
//! The loop does not know the load model: a connection with room asks the [`Schedule`]
//! for work. Nor does it know the protocol: the worker is generic over the [`Http`] seam
//! ([`http`]), whose implementations ([`http1`], [`http2`], [`http3`]) own each connection's socket,
//! protocol state and output, and hand outcomes to the [`Recorder`]; the worker keeps the
//! slots, the requests' clocks and what to do next. Requests come from the
//! [`RequestTable`], encoded into the connection's own output buffer.
//!
//! Evidence: `strace -c -f foxbench load -n 20000 -c 10 -t 1` against targets/c-epoll counts
//! 20,000 `sendto`, 20,000 `recvfrom` and ~2,000 `epoll_wait`; `bench/load.py` (runs in
//! bench/runs/) measures the client CPU per request against wrk, ab, h2load, oha and hey.
//! Since the kernel's receive stamps ([`crate::stamps`]) each `recvfrom` is a `recvmsg`
//! with a control buffer: the same count, no allocation.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::{Events, Poll, Token};
use nix::sys::timerfd::TimerFd;

use crate::interval::CurrentInterval;
use crate::protocol_counts::ProtocolCounts;
use crate::schedule::{Grant, Schedule};
use crate::stamps::{ClockOffset, ControlBuf};
use crate::table::{Picker, RequestTable};
use crate::tls::{Connector, TlsInfo};
use crate::{Control, Counts, LoadError, StatusSet};
use stats::reason::Reason;

mod coalesce;
mod conn;
mod http;
mod http1;
mod http2;
mod http3;
mod recorder;
mod select;
mod send_sample;
mod stream;
mod timer;
mod wakes;

use conn::{Pending, Phase, Readiness, Slot};
use http::{Cx, Http, Requests};
use recorder::Recorder;
use stats::Latency;
use timer::open_timer;
use wakes::Wakes;

pub(crate) use select::run;

/// How often connections are scanned for timeouts and retries.
const TICK: Duration = Duration::from_millis(10);

/// Size of the worker's read buffer, shared by all its connections.
const READ_BUF: usize = 64 * 1024;
// A GRO read of many datagrams is at most 65,535 bytes: it must fit whole, or the
// datagrams past the buffer would be cut off unseen.
const _: () = assert!(READ_BUF >= u16::MAX as usize);

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
    /// Requests in flight per connection: [`crate::Plan::per_connection`], the one decision
    /// (the pipeline depth, or the streams).
    pub per_connection: usize,
    /// Reuse connections: connect eagerly and keep them. Otherwise a connection is opened
    /// for each request, when the request is granted.
    pub keepalive: bool,
    /// The wait before sleeping that batches wake-ups, as in effect:
    /// [`crate::Plan::coalesce_in_effect`], the one decision (`Off` in the open model).
    pub coalesce: crate::Coalesce,
    /// Poll without a timeout instead of sleeping: [`crate::Plan::idle_in_effect`], the one
    /// decision. Timers, due instants and the stop are checked on each turn as ever.
    pub spin: bool,
    /// Which clock the latency recorded as `latency` is taken on.
    pub latency_clock: crate::LatencyClock,
    /// Which stamps to ask the kernel for ([`crate::stamps`]): each socket's reads, and a
    /// sample of its sends.
    pub kernel_stamps: crate::KernelStamps,
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
    /// The protocol's own counts, filled in by its implementation ([`Http::report`]).
    pub protocol: ProtocolCounts,
    /// Interval hand-offs that waited for the collector.
    pub interval_waits: u64,
    /// Wall time spent in zero-timeout polls that found nothing: in the open model while
    /// the next due instant was less than [`SPIN_NS`] away, and every such turn of a worker
    /// that spins ([`Config::spin`]): CPU burnt waiting, not working.
    pub spin: Duration,
    /// Closed model: the waits before sleeping that batched wake-ups.
    pub coalesced: crate::Coalesced,
    /// Reads with and without a kernel receive stamp.
    pub stamps: crate::StampCounts,
    /// The kernel latency when the read's clock leads ([`Recorder::kernel_latency`]).
    pub kernel_latency: Option<Latency>,
    /// Send stamps: sampled, come back, matched (`every` is the run's to fill in).
    pub send_stamps: crate::SendStampCounts,
    /// Open model: sampled requests' lateness by the kernel ([`crate::RunResult`]).
    pub send_lateness_kernel: Latency,
    /// Sampled requests' send delay by the kernel.
    pub send_delay_kernel: Latency,
}

/// Why the requests in flight on a connection fail: the error counter and the cause, a
/// `Copy` code that costs no more to carry than the kind alone.
type Failure = Reason;

struct Worker<P: Http> {
    cfg: Config,
    poll: Poll,
    /// The protocol: its worker-wide state; each slot holds its connection's.
    http: P,
    slots: Vec<Slot<P::Conn>>,
    rec: Recorder,
    picker: Picker,
    rbuf: Vec<u8>,
    /// The control buffer every read's kernel stamp comes in, shared by the connections.
    cmsg: ControlBuf,
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
    /// The instants protocols asked to be woken at ([`Http::wake_at`]), one per slot.
    /// Empty, and never touched, unless [`Http::TIMED`].
    wakes: Wakes,
    /// Connections established and not closed yet, published for live displays.
    open: u64,
    /// Nanoseconds of empty zero-timeout polls made only to wait (see
    /// [`WorkerResult::spin`]).
    spin_ns: u64,
    /// Closed model: the wait before sleeping, and the waits made.
    coalesce: coalesce::Coalescer,
}

/// How long before a due instant the open model stops sleeping and polls instead.
const SPIN_NS: u64 = 50_000;

/// The longest empty turn of the loop counted as spin: one that took longer was preempted
/// (a scheduler's time slice is milliseconds, an empty poll's turn microseconds).
const SPIN_TURN_MAX_NS: u64 = 200_000;

fn now_ns(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

fn token(idx: usize, generation: u32) -> Token {
    Token((idx & 0xffff_ffff) | ((generation as usize) << 32))
}

impl<P: Http> Worker<P> {
    /// Runs one worker speaking `http` until its schedule ends.
    fn run(http: P, cfg: Config, interval: CurrentInterval) -> Result<WorkerResult, LoadError> {
        let poll = Poll::new().map_err(LoadError::Poll)?;
        let per_connection = cfg.per_connection;
        let slots = (0..cfg.connections)
            .map(|_| Slot {
                generation: 0,
                phase: Phase::Closed,
                since_ns: 0,
                retry_at_ns: 0,
                failures: 0,
                reqs: Requests {
                    inflight: VecDeque::with_capacity(per_connection),
                    requeue: Vec::with_capacity(if P::RESENDS { per_connection } else { 0 }),
                    wait_since_ns: 0,
                },
                opened: 0,
                on_free_list: false,
                conn: http.conn(&cfg),
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
                clock: cfg.latency_clock,
                kernel_latency: (cfg.latency_clock == crate::LatencyClock::Read
                    && cfg.kernel_stamps.receive())
                .then(Latency::new),
                offset: ClockOffset::take(cfg.epoch),
                arrived_ns: None,
                read_ns: 0,
                epoch: cfg.epoch,
                stamps: crate::StampCounts::default(),
                sampler: send_sample::Sampler::new(cfg.kernel_stamps.send()),
                send_stamps: crate::SendStampCounts::default(),
                send_lateness_kernel: Latency::new(),
                send_delay_kernel: Latency::new(),
            },
            picker: Picker::new(cfg.seed, cfg.id, shapes),
            poll,
            http,
            slots,
            rbuf: vec![0; READ_BUF],
            cmsg: ControlBuf::new(),
            free: Vec::with_capacity(cfg.connections),
            timer: None,
            armed_ns: None,
            late_until: 0,
            wakes: Wakes::new(if P::TIMED { cfg.connections } else { 0 }),
            open: 0,
            spin_ns: 0,
            coalesce: coalesce::Coalescer::new(cfg.coalesce),
            cfg,
        };
        if w.cfg.schedule.is_open() {
            w.timer = open_timer(w.poll.registry());
        }
        w.event_loop();
        let mut result = WorkerResult {
            counts: w.rec.counts,
            lateness: w.rec.lateness,
            late: w.rec.late,
            connect: w.rec.connect,
            handshake_full: w.rec.handshake_full,
            handshake_resumed: w.rec.handshake_resumed,
            tls: w.rec.tls,
            status: w.rec.status,
            shapes: w.rec.shapes,
            protocol: ProtocolCounts::default(),
            interval_waits: w.rec.interval.waits,
            spin: Duration::from_nanos(w.spin_ns),
            coalesced: crate::Coalesced {
                waits: w.coalesce.waits,
                waited: Duration::from_nanos(w.coalesce.waited_ns),
            },
            stamps: w.rec.stamps,
            kernel_latency: w.rec.kernel_latency,
            send_stamps: w.rec.send_stamps,
            send_lateness_kernel: w.rec.send_lateness_kernel,
            send_delay_kernel: w.rec.send_delay_kernel,
        };
        w.http.report(&mut result.protocol);
        Ok(result)
    }

    /// The protocol, slot `idx`, and what the protocol may use of the worker, borrowed
    /// together for one call across the seam.
    #[inline]
    fn at(&mut self, idx: usize) -> (&mut P, &mut Slot<P::Conn>, Cx<'_>) {
        let Worker {
            cfg,
            poll,
            http,
            slots,
            rec,
            picker,
            rbuf,
            cmsg,
            ..
        } = self;
        let cx = Cx {
            cfg,
            rec,
            picker,
            registry: poll.registry(),
            rbuf,
            cmsg,
        };
        (http, &mut slots[idx], cx)
    }

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
            if P::TIMED {
                if let Some(at) = self.wakes.next() {
                    wait = wait.min(at.saturating_sub(now));
                }
            }
            // True for a poll made only to wait: for a due instant still in the future, or
            // for anything at all in a worker that spins.
            let mut spinning = false;
            if self.cfg.spin {
                spinning = true;
                wait = 0;
            } else if !self.free.is_empty() {
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
            // client is not judged saturated. Uses the clock reads the loop makes anyway. An
            // empty turn takes a few µs; one that took longer was preempted, and the time
            // it was off its CPU is neither spin nor work.
            let turn = now.saturating_sub(before);
            if spinning && events.is_empty() && turn <= SPIN_TURN_MAX_NS {
                self.spin_ns += turn;
            }
            self.rec.interval.rotate(now, &self.rec.counts);
            for ev in events.iter() {
                let idx = ev.token().0 & 0xffff_ffff;
                let generation = (ev.token().0 >> 32) as u32;
                let Some(slot) = self.slots.get(idx) else {
                    continue;
                };
                if slot.generation != generation || slot.phase == Phase::Closed {
                    continue; // a stale event for a socket closed earlier in this batch
                }
                // EPOLLERR says the socket has an error or a non-empty error queue: send
                // stamps raise it. Drained first, it is an error only if the socket has one.
                let error = ev.is_error() && self.settle(idx);
                let read = if ev.is_read_closed() || error {
                    Readiness::Closed
                } else if ev.is_readable() {
                    Readiness::Data
                } else {
                    Readiness::None
                };
                self.on_event(idx, read, ev.is_writable(), error, now);
                self.rearm(idx);
            }
            if P::TIMED {
                self.wake_due(now);
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

    /// After EPOLLERR: drains the slot's send stamps; true when its socket has an error.
    fn settle(&mut self, idx: usize) -> bool {
        let (http, slot, mut cx) = self.at(idx);
        http.settle(&mut slot.conn, &mut cx)
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
                .all(|s| s.reqs.inflight.is_empty() && s.reqs.requeue.is_empty())
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
        // Send stamps still queued (a last sampled request's, whose EPOLLERR the loop did
        // not wait for) are read before the sockets close.
        for idx in 0..self.slots.len() {
            if self.slots[idx].phase != Phase::Closed {
                self.settle(idx);
            }
        }
        for slot in &mut self.slots {
            let reqs = &mut slot.reqs;
            self.rec.counts.in_flight += (reqs.inflight.len() + reqs.requeue.len()) as u64;
            reqs.inflight.clear();
            reqs.requeue.clear();
            self.http.end(&mut slot.conn);
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

    /// Requests the slot may take now: what its protocol allows beside those in flight
    /// (HTTP/1.1: the pipeline's room; HTTP/2: the streams the connection may open).
    #[inline]
    fn room(&mut self, idx: usize) -> usize {
        let slot = &mut self.slots[idx];
        self.http
            .room(&mut slot.conn)
            .saturating_sub(slot.reqs.inflight.len())
    }

    /// Offers the slot's room to the schedule and issues what it grants.
    fn offer(&mut self, idx: usize, now: u64) -> Grant {
        if !self.slots[idx].reqs.requeue.is_empty() {
            // Requests the server left unprocessed go before new ones.
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
                    self.send(idx, now);
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
    /// each picks its shape and is started by the protocol.
    fn assign(&mut self, idx: usize, n: u64, first: u64, now: u64) {
        let late_until = self.late_until;
        let (http, slot, mut cx) = self.at(idx);
        let reqs = &mut slot.reqs;
        if reqs.inflight.is_empty() {
            reqs.wait_since_ns = now;
        }
        for seq in first..first + n {
            let shape = cx.picker.pick(&cx.cfg.table);
            let stream = http.issue(
                &mut slot.conn,
                &mut cx,
                shape as u32,
                false,
                reqs.inflight.len() + 1,
            );
            let start_ns = cx.cfg.schedule.start_ns(seq, now);
            if cx.rec.sampler.due() && http.sample(&mut slot.conn, start_ns, now, seq >= late_until)
            {
                cx.rec.send_stamps.sampled += 1;
            }
            reqs.inflight.push_back(Pending {
                start_ns,
                sent_ns: now,
                shape: shape as u32,
                stream,
                retries: 0,
            });
            let rec = &mut *cx.rec;
            rec.shapes[shape].0 += 1;
            if rec.open {
                let behind = now.saturating_sub(start_ns);
                if seq < late_until {
                    rec.counts.late += 1;
                    rec.late.record_ns(behind);
                } else {
                    rec.lateness.record_ns(behind);
                }
            }
        }
        cx.rec.counts.sent += n;
        cx.rec.counts.max_batch = cx.rec.counts.max_batch.max(n);
    }

    /// Sends again, on this slot's connection, what the last one left unprocessed, as many
    /// as its room allows; connects first when the slot is closed.
    fn reissue(&mut self, idx: usize, now: u64) -> Grant {
        let room = self.room(idx);
        if room == 0 {
            return Grant::Never;
        }
        let (http, slot, mut cx) = self.at(idx);
        let reqs = &mut slot.reqs;
        if reqs.inflight.is_empty() {
            reqs.wait_since_ns = now;
        }
        let n = room.min(reqs.requeue.len());
        for req in reqs.requeue.drain(..n) {
            let in_flight = reqs.inflight.len() + 1;
            let stream = http.issue(&mut slot.conn, &mut cx, req.shape, true, in_flight);
            reqs.inflight.push_back(Pending {
                stream,
                sent_ns: now,
                ..req
            });
        }
        if slot.phase == Phase::Closed {
            self.connect(idx, now);
        } else {
            self.send(idx, now);
        }
        Grant::Now { n: 0, first: 0 }
    }

    fn tick(&mut self, now: u64) {
        // The realtime clock's distance from ours, for the kernel stamps: re-taken every
        // tick, so that NTP's slew (at most 500 ppm) moves it by 5 µs at most in between.
        self.rec.offset = ClockOffset::take(self.cfg.epoch);
        for idx in 0..self.slots.len() {
            let slot = &self.slots[idx];
            match slot.phase {
                Phase::Connecting => {
                    let expired =
                        self.http
                            .setup_expired(&slot.conn, slot.since_ns, now, &self.cfg);
                    if let Some(f) = expired {
                        self.fail(idx, f, now);
                    }
                }
                Phase::Open => {
                    let next = {
                        let (http, slot, mut cx) = self.at(idx);
                        http.expire(&mut slot.conn, &mut slot.reqs, &mut cx, now)
                    };
                    self.then(idx, next, now);
                    self.rearm(idx);
                }
                Phase::Closed if !slot.on_free_list && slot.retry_at_ns <= now => {
                    self.open_slot(idx, now);
                }
                Phase::Closed => {}
            }
        }
    }

    /// Notes when the slot's protocol next asks to be woken ([`Http::wake_at`]).
    #[inline]
    fn rearm(&mut self, idx: usize) {
        if !P::TIMED {
            return;
        }
        let slot = &mut self.slots[idx];
        let at = match slot.phase {
            Phase::Closed => None,
            _ => self.http.wake_at(&mut slot.conn),
        };
        self.wakes.set(idx, slot.generation, at);
    }

    /// Wakes the protocol of each slot whose instant has come. A slot woken asks again
    /// through [`Worker::rearm`]; one that asks for an instant already past is woken on the
    /// next turn of the loop, not again here, so that it cannot hold the loop.
    fn wake_due(&mut self, now: u64) {
        for _ in 0..self.slots.len() {
            let Some((idx, generation)) = self.wakes.take_due(now) else {
                break;
            };
            let slot = &self.slots[idx];
            if slot.generation != generation || slot.phase == Phase::Closed {
                continue; // set for a connection closed since
            }
            let next = {
                let (http, slot, mut cx) = self.at(idx);
                http.wake(&mut slot.conn, &mut slot.reqs, &mut cx, now)
            };
            self.then(idx, next, now);
            self.rearm(idx);
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
            let (phase, retry_at_ns) = (self.slots[idx].phase, self.slots[idx].retry_at_ns);
            let ready = match phase {
                Phase::Open => self.room(idx) > 0,
                // A slot waiting out a connect backoff is reopened by the tick.
                Phase::Closed => retry_at_ns <= now,
                // Listed again once established.
                Phase::Connecting => false,
            };
            if ready {
                let _ = self.offer(idx, now);
                self.rearm(idx);
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
