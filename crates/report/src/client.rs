//! The load generator's own cost over a measured window ([`Client`]): its CPU, memory,
//! context switches, spin, coalescing and delay, and the one rule that calls it saturated
//! ([`client_saturated`]). Shared by a `foxbench load` result and a shootout repeat.

use serde::{Deserialize, Serialize};

use crate::SATURATED_PERCENT;

/// The load generator's own cost over one measured window: the one record of it, for a
/// `foxbench load` run (`client`) and a shootout repeat (`client`) alike, built by one
/// translator (`measure::record::client`). A figure added here appears in both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Client {
    /// CPUs it could use (its worker threads; a shootout repeat's client CPUs). 0 in
    /// shootout results from before a repeat recorded it.
    #[serde(default)]
    pub cpus: u64,
    /// User CPU seconds.
    pub cpu_user_s: f64,
    /// System CPU seconds.
    pub cpu_sys_s: f64,
    /// Share of its CPUs used over the run, percent.
    pub cpu_percent: f64,
    /// CPU microseconds per completed request.
    pub cpu_us_per_request: Option<f64>,
    /// Work microseconds per completed request: the CPU less the spin (`spin_s`), per
    /// completed request; the same as `cpu_us_per_request` without spin. Absent with no
    /// response, and in results from before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_us_per_request: Option<f64>,
    /// Peak resident memory, bytes. 0 in shootout results from before a repeat recorded it.
    #[serde(default)]
    pub max_rss_bytes: u64,
    /// Voluntary context switches of the load generator's threads per completed request
    /// (getrusage's `ru_nvcsw` over the window: the engine's workers and the thread that
    /// collects their intervals; the helpers, such as the socket reader, the signal
    /// watcher or the shootout's probe, and the threads beside the load left out): a
    /// worker that sleeps in epoll_wait and is woken switches once per wake-up. Absent
    /// with no response, and in results from before 2026-11-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voluntary_ctxt_per_request: Option<f64>,
    /// Involuntary context switches per completed request (`ru_nivcsw`): the kernel took
    /// a worker's CPU away. Absent as `voluntary_ctxt_per_request` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub involuntary_ctxt_per_request: Option<f64>,
    /// Wall seconds the workers spent polling without a timeout, with nothing to do: in the
    /// open model in the last 50 µs before a send instant, and all such polls of workers
    /// that spin (`--idle spin`). That CPU is part of the totals above but is time to
    /// spare, not work. 0 for workers that sleep in the closed model, and in results from
    /// before it was counted.
    #[serde(default)]
    pub spin_s: f64,
    /// Closed model: times a worker found nothing to read and waited before sleeping, to
    /// read several responses per wake-up (`--coalesce`, the suite's `coalesce`). 0 when
    /// none waited, and in results from before it existed.
    #[serde(default)]
    pub coalesced_waits: u64,
    /// Those waits' wall seconds, summed over the workers. Not CPU.
    #[serde(default)]
    pub coalesced_s: f64,
    /// True when the CPU share less the spin's reaches [`SATURATED_PERCENT`] (see
    /// [`client_saturated`]): the result may be client-bound. False in shootout results
    /// from before a repeat recorded it (read [`Client::saturated_by_rule`] there).
    #[serde(default)]
    pub saturated: bool,
    /// foxbench's probe threads over the window, CPU seconds: the shootout's (sampling the
    /// server and the services, running `active` commands, taking thread dumps), or
    /// `foxbench load`'s (reading its own sockets' `tcp_info`). Left out of the figures
    /// above, which are the load generator's; it ran on the client's CPUs. Null or absent
    /// in results from before it was told apart (in a load result, before 2026-11-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_cpu_s: Option<f64>,
    /// `--dashboard`: the CPU seconds its threads (server, pages, sampler) used over the
    /// run, left out of the figures above, which are the load generator's alone. Absent
    /// without a dashboard, and in results from before it was left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashboard_cpu_s: Option<f64>,
    /// What the client itself added to the latencies (read latency minus the latency to
    /// the kernel's receive stamp), and which clock the latency figures hold. Absent in
    /// results from before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_delay: Option<crate::ClientDelay>,
}

/// The share of the client's CPUs that `spin_s` seconds of spin took, on the scale of
/// `cpu_percent` (which `cpu_s` seconds of CPU made over the same window and CPUs): the one
/// formula for a load result's client and for a shootout repeat's. Never more than
/// `cpu_percent`: the spin is counted in wall time, and a worker preempted in the middle of
/// a poll would otherwise spin more than the CPU it is part of.
pub fn spin_percent(cpu_percent: f64, cpu_s: f64, spin_s: f64) -> f64 {
    if cpu_s > 0.0 {
        (cpu_percent * spin_s / cpu_s).min(cpu_percent)
    } else {
        0.0
    }
}

/// The one rule that calls a client saturated: its CPU share (`cpu_percent`, of its own
/// CPUs) less the share it spent spinning in empty polls (`spin_percent`: the open model's
/// last stretch before a due instant, every empty turn of a worker that spins), clamped
/// at 0, is at least [`SATURATED_PERCENT`]. A spinning client is early: it has time to
/// spare. With no spin this is `cpu_percent >= SATURATED_PERCENT`.
pub fn client_saturated(cpu_percent: f64, spin_percent: f64) -> bool {
    (cpu_percent - spin_percent).max(0.0) >= SATURATED_PERCENT
}

impl Client {
    /// The client's cost over a run: `cpu_user_s` and `cpu_sys_s` spent by `cpus` worker
    /// threads in `wall_s`, for `completed` responses. Holds the one rule that calls a
    /// client saturated ([`client_saturated`]), for `foxbench load` and the shootout. No
    /// spin: see [`Client::with_spin`].
    pub fn measure(
        cpus: u64,
        cpu_user_s: f64,
        cpu_sys_s: f64,
        wall_s: f64,
        completed: u64,
        max_rss_bytes: u64,
    ) -> Client {
        let cpu = cpu_user_s + cpu_sys_s;
        let cpu_percent = 100.0 * cpu / (wall_s.max(1e-9) * cpus.max(1) as f64);
        Client {
            cpus,
            cpu_user_s,
            cpu_sys_s,
            cpu_percent,
            cpu_us_per_request: (completed > 0).then(|| cpu * 1e6 / completed as f64),
            work_us_per_request: (completed > 0).then(|| cpu * 1e6 / completed as f64),
            max_rss_bytes,
            voluntary_ctxt_per_request: None,
            involuntary_ctxt_per_request: None,
            spin_s: 0.0,
            coalesced_waits: 0,
            coalesced_s: 0.0,
            saturated: client_saturated(cpu_percent, 0.0),
            probe_cpu_s: None,
            dashboard_cpu_s: None,
            client_delay: None,
        }
    }

    /// `, of which N s spun with nothing to do (time to spare)` when the run spun, else
    /// nothing: the words that follow the CPU share in the text and HTML reports.
    pub fn spin_note(&self) -> String {
        if self.spin_s > 0.0 {
            format!(
                ", of which {:.2}s spun with nothing to do (time to spare)",
                self.spin_s
            )
        } else {
            String::new()
        }
    }

    /// ` (work 1.20µs, less the spin)` when the run spun, else nothing: the work per
    /// request that follows the CPU per request in the text and HTML reports.
    pub fn work_note(&self) -> String {
        match self.work_us_per_request {
            Some(w) if self.spin_s > 0.0 => format!(" (work {w:.2}µs, less the spin)"),
            _ => String::new(),
        }
    }

    /// `, the dashboard's 0.012s left out` when a dashboard ran, else nothing: the words
    /// that follow the CPU share in the text and HTML reports.
    pub fn dashboard_note(&self) -> String {
        match self.dashboard_cpu_s {
            Some(s) => format!(", the dashboard's {s:.3}s left out"),
            None => String::new(),
        }
    }

    /// `Coalescing:` and the waits made, per 1000 requests and on average, when some were
    /// made (`--coalesce`); `None` otherwise.
    pub fn coalesced_note(&self, completed: u64) -> Option<String> {
        if self.coalesced_waits == 0 {
            return None;
        }
        let mean_us = self.coalesced_s * 1e6 / self.coalesced_waits as f64;
        let per_1000 = 1000.0 * self.coalesced_waits as f64 / completed.max(1) as f64;
        // A few waits in a long run would round to "0 per 1000".
        let digits = match per_1000 {
            x if x < 1.0 => 2,
            x if x < 10.0 => 1,
            _ => 0,
        };
        Some(format!(
            "{} waits of {mean_us:.0}µs on average before sleeping, {per_1000:.digits$} per 1000 requests, to read several responses per wake-up",
            self.coalesced_waits
        ))
    }

    /// The spin's share of the client's CPUs, percent, on the scale of `cpu_percent`
    /// ([`spin_percent`]).
    pub fn spin_percent(&self) -> f64 {
        spin_percent(
            self.cpu_percent,
            self.cpu_user_s + self.cpu_sys_s,
            self.spin_s,
        )
    }

    /// The saturation rule ([`client_saturated`]) applied to the figures: what `saturated`
    /// records, for results written before a shootout repeat recorded it.
    pub fn saturated_by_rule(&self) -> bool {
        client_saturated(self.cpu_percent, self.spin_percent())
    }

    /// The same cost with `spin_s` seconds of spin over the same run: the totals stay as
    /// measured, the work per request and the saturation verdict leave the spin out.
    pub fn with_spin(self, spin_s: f64) -> Client {
        let spun = Client { spin_s, ..self };
        let cpu_s = spun.cpu_user_s + spun.cpu_sys_s;
        let work_share = if cpu_s > 0.0 {
            (cpu_s - spin_s.min(cpu_s)) / cpu_s
        } else {
            1.0
        };
        Client {
            saturated: client_saturated(spun.cpu_percent, spun.spin_percent()),
            work_us_per_request: spun.cpu_us_per_request.map(|v| v * work_share),
            ..spun
        }
    }
}
