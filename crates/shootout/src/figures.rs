//! The figures a cell's diagnosis is made from: the input of the CPU, error, TCP and
//! waiting verdicts ([`crate::diagnosis`], [`crate::waiting`], [`crate::pools`]).

use report::shootout::{SystemSummary, ThreadWaits};
use report::tcp::TcpWarning;

/// The figures a diagnosis is made from (medians over a cell's repeats).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// foxbench's share of its CPUs, percent.
    pub client_cpu_percent: f64,
    /// Of that, the spin (before the open model's send instants, or a spinning client's;
    /// median over the repeats), percent of the same CPUs: time to spare, left out before
    /// judging saturation.
    pub client_spin_percent: f64,
    /// The server tree's share of its CPUs, percent.
    pub server_cpu_percent: f64,
    /// The busiest server thread's share of one CPU, percent.
    pub busiest_thread_percent: f64,
    /// CPUs the server may use.
    pub server_cpus: usize,
    /// Requests issued.
    pub sent: u64,
    /// Requests that ended in an error.
    pub errors: u64,
    /// Of those: connect failures for lack of ports.
    pub ports_exhausted: u64,
    /// Of those: connects refused.
    pub refused: u64,
    /// Of those: connects not accepted in time.
    pub connect_timeouts: u64,
    /// Of those: other connect failures (fd limits among them).
    pub connect_other: u64,
    /// Of those: requests without a response in time.
    pub timeouts: u64,
    /// Of those: resets or early EOF.
    pub resets: u64,
    /// Of those: malformed responses.
    pub parse: u64,
    /// The errors by reason, most frequent first.
    pub reasons: Vec<report::errors_by_reason::ReasonRow>,
    /// Responses with a failing status.
    pub failed_status: u64,
    /// p99 latency, µs.
    pub p99_us: Option<f64>,
    /// Complete responses.
    pub completed: u64,
    /// The client's and the server's CPUs from `/proc/stat`, when read.
    pub system: Option<SystemSummary>,
    /// What the target's threads waited on, when sampled.
    pub waits: Option<ThreadWaits>,
    /// The level's connections from foxbench: the most requests in flight.
    pub level_connections: usize,
    /// The mean requests in flight at the target over the repeats, by Little's law
    /// (throughput × mean latency); `None` without responses.
    pub in_flight: Option<f64>,
    /// The target's connections to each service it uses, over the repeats.
    pub service_connections: Vec<report::shootout::pool::ServiceConnections>,
    /// Each service's share of its CPUs (median over the repeats), percent.
    pub service_cpu_percent: Vec<(String, f64)>,
    /// What the kernel's TCP counters showed ([`report::tcp::findings`]), most specific
    /// first.
    pub tcp: Vec<TcpWarning>,
    /// What foxbench itself added to the latencies, the worst of the repeats (each figure
    /// its largest); `None` in results from before it was measured.
    pub client_delay: Option<report::ClientDelay>,
}
