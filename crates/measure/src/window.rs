//! Running one measured window: the process's own usage, the kernel's TCP counters and
//! foxbench's own sockets to the target read around `load::run_with_intervals`.
//!
//! The CPU of threads that run beside the load in the same process (a dashboard, the
//! shootout's live view and probe, the socket reader here) is read at the same edges and
//! left out of the load generator's: [`Spent::client`] is the load's alone.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use load::{Control, Interval, LoadError, Plan, RunResult};
use report::tcp::TcpCounts;
use report::udp::UdpCounts;

/// The CPU so far of threads beside the load (a dashboard's, a live view's), read at a
/// window's edges.
pub type Beside<'a> = Option<&'a dyn Fn() -> probe::OwnUsage>;

/// The process read at one edge of a window.
#[derive(Debug, Clone)]
pub struct Edge {
    own: probe::OwnUsage,
    beside: Option<probe::OwnUsage>,
    tcp: Option<probe::TcpCounters>,
    udp: Option<probe::UdpCounters>,
}

impl Edge {
    /// Now: the process's CPU, then the threads' beside it (which report after each piece
    /// of work, so that the figure is current while they live), then the TCP and UDP
    /// counters.
    pub fn now(beside: Beside) -> Edge {
        let own = probe::own_usage();
        let beside = beside.map(|f| f());
        let (tcp, udp) = probe::net_counters();
        Edge {
            own,
            beside,
            tcp,
            udp,
        }
    }

    /// What was spent from this edge to `end` over the load's `wall` time, with
    /// `helpers`' CPU (threads that served the measurement, such as the socket reader or
    /// the shootout's probe) left out of the load generator's.
    pub fn until(&self, end: &Edge, wall: Duration, helpers: probe::OwnUsage) -> Spent {
        let own = end.own.since(&self.own);
        let beside = self.beside.zip(end.beside).map(|(a, b)| b.since(&a));
        Spent {
            wall,
            client: load_usage(&own, beside.as_ref(), &helpers),
            beside,
            helpers,
            tcp: self
                .tcp
                .as_ref()
                .zip(end.tcp.as_ref())
                .map(|(a, b)| tcp_delta(a, b)),
            udp: self
                .udp
                .as_ref()
                .zip(end.udp.as_ref())
                .map(|(a, b)| udp_delta(a, b)),
        }
    }
}

/// The load generator's part of the process's usage `own` over a span: the threads'
/// beside the load and the helpers' left out. The one subtraction, for a window's record
/// ([`Edge::until`]) and a dashboard's once-a-second gauge alike.
pub fn load_usage(
    own: &probe::OwnUsage,
    beside: Option<&probe::OwnUsage>,
    helpers: &probe::OwnUsage,
) -> probe::OwnUsage {
    beside.map_or(*own, |d| own.without(d)).without(helpers)
}

/// The kernel's TCP counters' growth between a window's edges, as the report holds them.
pub fn tcp_delta(from: &probe::TcpCounters, to: &probe::TcpCounters) -> TcpCounts<u64> {
    TcpCounts::from_named(to.since(from).named())
}

/// The kernel's UDP counters' growth between a window's edges, as the report holds them.
pub fn udp_delta(from: &probe::UdpCounters, to: &probe::UdpCounters) -> UdpCounts {
    let d = to.since(from);
    UdpCounts {
        in_datagrams: d.in_datagrams,
        out_datagrams: d.out_datagrams,
        in_errors: d.in_errors,
        rcvbuf_errors: d.rcvbuf_errors,
        sndbuf_errors: d.sndbuf_errors,
    }
}

/// What one window spent, between its edges.
#[derive(Debug, Clone)]
pub struct Spent {
    /// The window's one time base, which the client's CPU share is taken over: the wall
    /// time from just before `load::run_with_intervals` to its end. The engine's own
    /// `RunResult::elapsed` starts later (after its setup, whose CPU the edges count) and
    /// is the base of its rates, not of the CPU.
    pub wall: Duration,
    /// The load generator's CPU: the process's, the threads' beside it and the helpers'
    /// left out.
    pub client: probe::OwnUsage,
    /// The threads' beside the load, when any ran.
    pub beside: Option<probe::OwnUsage>,
    /// The helper threads' (the socket reader, the shootout's probe).
    pub helpers: probe::OwnUsage,
    /// The kernel's TCP counters' growth; `None` when either edge could not read them.
    pub tcp: Option<TcpCounts<u64>>,
    /// The kernel's UDP counters' growth; `None` when either edge could not read them.
    pub udp: Option<UdpCounts>,
}

impl Spent {
    /// The same window with `usage` (work done for a thread beside the load on the load's
    /// own thread, such as the live view's on each interval) moved from the client's CPU
    /// to the beside threads'.
    pub fn also_beside(self, usage: &probe::OwnUsage) -> Spent {
        Spent {
            client: self.client.without(usage),
            beside: Some(self.beside.map_or(*usage, |b| b.plus(usage))),
            ..self
        }
    }
}

/// One window run by [`run`].
#[derive(Debug)]
pub struct Window {
    /// The engine's result.
    pub result: Result<RunResult, LoadError>,
    /// What it spent, and over what time ([`Spent::wall`]).
    pub spent: Spent,
    /// foxbench's own sockets to the target over the window, as the [`SocketWatch`] read
    /// them (`None` when the caller's helpers read them, [`Sockets::Caller`]);
    /// `record::tcp_link` makes them the report's.
    pub link: Option<probe::LinkSeries>,
}

/// Who reads foxbench's own sockets to the target during a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// A [`SocketWatch`] started by [`run`].
    Watch,
    /// The caller's own helper (the shootout's probe reads them with the target's links).
    Caller,
}

/// Runs `plan` as one window, the one place a window is measured: edges read around
/// `load::run_with_intervals` (each interval goes to `on_interval`), foxbench's sockets
/// to the target read meanwhile when `sockets` says so. `started` is called just after
/// the opening edge, to start the caller's helpers there (a probe whose first readings
/// would otherwise fall before the edge and be left out of CPU the window never counted).
/// Once the load ends, `control` is stopped (which ends a caller's watcher) and `ended` is
/// called before the closing edge: it stops what runs beside the load and joins the
/// caller's helper threads (a signal watcher, a probe), returning their CPU, which is left
/// out of the load generator's as the socket reader's is.
pub fn run(
    plan: &Plan,
    control: &Arc<Control>,
    beside: Beside,
    sockets: Sockets,
    started: &mut dyn FnMut(),
    on_interval: &mut dyn FnMut(&Interval),
    ended: &mut dyn FnMut() -> probe::OwnUsage,
) -> Window {
    let before = Edge::now(beside);
    started();
    let watch =
        (sockets == Sockets::Watch).then(|| SocketWatch::start(plan.target.addr, control.clone()));
    let started = Instant::now();
    let result = load::run_with_intervals(plan, control, on_interval);
    let wall = started.elapsed();
    control.stop(); // ends the socket reader and a caller's watcher
    let helpers = ended();
    let (link, reader) = match watch.map(SocketWatch::finish) {
        Some((link, reader)) => (Some(link), reader),
        None => (None, probe::OwnUsage::default()),
    };
    let after = Edge::now(beside);
    Window {
        result,
        spent: before.until(&after, wall, reader.plus(&helpers)),
        link,
    }
}

/// A thread that reads foxbench's own sockets to the target (their `tcp_info`, through
/// the probe) every 250 ms while a load runs: the delayed-ACK timeout and round trip the
/// Nagle rule times its band by, and the link's retransmits.
pub struct SocketWatch {
    handle: Option<std::thread::JoinHandle<(probe::LinkSeries, probe::OwnUsage)>>,
}

impl SocketWatch {
    const EVERY: Duration = Duration::from_millis(250);

    /// Starts reading the sockets connected to `addr` until `control` stops.
    pub fn start(addr: SocketAddr, control: Arc<Control>) -> SocketWatch {
        let handle = std::thread::Builder::new()
            .name("foxbench-sockets".into())
            .spawn(move || {
                let mut link = probe::LinkSeries::to(addr);
                let mut next = Instant::now() + Self::EVERY;
                while !control.stopped() {
                    std::thread::sleep(Duration::from_millis(25));
                    if Instant::now() < next {
                        continue;
                    }
                    next += Self::EVERY;
                    if let Ok(sockets) = probe::tcp_sockets() {
                        link.push(&sockets);
                    }
                }
                (link, probe::thread_usage())
            })
            .ok();
        SocketWatch { handle }
    }

    /// The link it saw (empty when its thread could not start), and the CPU its thread
    /// used, which is not the load generator's.
    pub fn finish(self) -> (probe::LinkSeries, probe::OwnUsage) {
        self.handle.and_then(|h| h.join().ok()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
