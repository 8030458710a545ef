//! The client's own delay: how much of each measured latency the load generator added
//! between a response's arrival (the kernel's receive stamp) and its read, and which of
//! the two clocks the latency figures hold.

use serde::{Deserialize, Serialize};

/// Which clock a run's latency figures hold, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LatencyClock {
    /// The kernel's receive stamps: the client's delay is left out.
    Kernel,
    /// The read, because `--latency-clock read` asked for it.
    ReadAsked,
    /// The read, because the kernel gave no receive stamps on the run's sockets.
    ReadNoStamps,
    /// Merged from parts (agents, repeats) whose clocks differed: some figures are on one,
    /// some on another.
    Mixed,
}

impl LatencyClock {
    /// `latency: kernel receive stamps` and the like: which clock leads, in words.
    pub fn words(self) -> &'static str {
        match self {
            LatencyClock::Kernel => "kernel receive stamps",
            LatencyClock::ReadAsked => "read (--latency-clock read)",
            LatencyClock::ReadNoStamps => {
                "read (the kernel gave no receive stamps on this socket: latencies are from the read)"
            }
            LatencyClock::Mixed => {
                "mixed (merged from runs on different clocks: some latencies are to the kernel's receive stamps, some to the read)"
            }
        }
    }
}

/// The share of the latency's p50 above which the client's p99 delay makes the figures
/// client-bound, percent.
pub const CLIENT_DELAY_SHARE_PERCENT: f64 = 10.0;

/// What the client added to the latencies of one run, µs. Merged from several (agents, a
/// shootout cell's repeats), the delay's p50 and p99 and the latency p50 are the worst
/// part's (the largest p99 to latency-p50 share), `max_us` the largest of all, and the reads
/// summed ([`ClientDelay::merge`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClientDelay {
    /// Which clock the latency figures hold.
    pub latency_clock: LatencyClock,
    /// The delay's median, µs: read latency minus kernel latency, per response.
    pub p50_us: f64,
    /// Its 99th percentile, µs.
    pub p99_us: f64,
    /// Its largest, µs.
    pub max_us: f64,
    /// The latency's median (on the leading clock), µs: what the delay is judged against.
    pub latency_p50_us: f64,
    /// Reads of response bytes that carried a kernel receive stamp.
    pub stamped_reads: u64,
    /// Reads that did not.
    pub unstamped_reads: u64,
    /// The kernel's send stamps, sampled: when requests left the client's socket. Absent
    /// in results written before 2026-11-29.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_stamps: Option<crate::SendStamps>,
}

impl ClientDelay {
    /// True when the client's p99 delay is above [`CLIENT_DELAY_SHARE_PERCENT`] of the
    /// latency's p50: the measured form of "client-bound". Never with no stamps (no delay
    /// measured).
    pub fn client_bound(&self) -> bool {
        self.stamped_reads > 0
            && self.p99_us > self.latency_p50_us * CLIENT_DELAY_SHARE_PERCENT / 100.0
    }

    /// `the client added at most 38 µs (p99 9 µs, p50 2 µs) to any latency`, or why it is
    /// not known. A run some of whose reads had no stamp still counts as on the kernel's
    /// clock; the line then says how many did not, since their latencies are from the read.
    pub fn line(&self) -> String {
        if self.stamped_reads == 0 {
            return "the client's delay is not measured: no read carried a kernel receive stamp"
                .into();
        }
        let mut line = format!(
            "the client added at most {} (p99 {}, p50 {}) to any latency",
            crate::human_us(self.max_us),
            crate::human_us(self.p99_us),
            crate::human_us(self.p50_us)
        );
        if self.unstamped_reads > 0 {
            line.push_str(&format!(
                "; {} of {} reads had no stamp: their latencies are from the read",
                self.unstamped_reads,
                self.stamped_reads + self.unstamped_reads
            ));
        }
        line
    }

    /// The one-line warning when the delay is a large share of the latency.
    pub fn warning(&self) -> Option<String> {
        self.client_bound().then(|| {
            format!(
                "the client's own delay is large: p99 {} against a latency p50 of {} (over {:.0}%): the read latencies are client-bound{}",
                crate::human_us(self.p99_us),
                crate::human_us(self.latency_p50_us),
                CLIENT_DELAY_SHARE_PERCENT,
                match self.latency_clock {
                    LatencyClock::Kernel => ", the kernel latencies reported leave it out",
                    _ => "",
                }
            )
        })
    }

    /// Combines two parts' delays (agents, or a shootout cell's repeats) so that the
    /// verdict is the worst part's: the delay's p50 and p99 and the latency p50 they are
    /// judged against all come from the part whose p99 is the largest share of its latency
    /// p50 (a part with no stamped read has no verdict and gives way to one with), `max_us`
    /// is the largest of all, and the reads are summed. Taking each figure's largest
    /// separately would judge one part's delay against another's latency.
    pub fn merge(self, other: ClientDelay) -> ClientDelay {
        let worst = if other.share() > self.share() {
            other
        } else {
            self
        };
        ClientDelay {
            latency_clock: if self.latency_clock == other.latency_clock {
                self.latency_clock
            } else {
                LatencyClock::Mixed
            },
            max_us: self.max_us.max(other.max_us),
            stamped_reads: self.stamped_reads + other.stamped_reads,
            unstamped_reads: self.unstamped_reads + other.unstamped_reads,
            send_stamps: match (self.send_stamps, other.send_stamps) {
                (Some(a), Some(b)) => Some(a.merge(b)),
                (a, b) => a.or(b),
            },
            ..worst
        }
    }

    /// The delay's p99 over the latency's p50, which [`Self::client_bound`] judges; below
    /// any share for a part with no stamped read.
    fn share(&self) -> f64 {
        if self.stamped_reads == 0 {
            f64::NEG_INFINITY
        } else if self.latency_p50_us > 0.0 {
            self.p99_us / self.latency_p50_us
        } else if self.p99_us > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    }
}

impl crate::LoadReport {
    /// Every response's latency to the kernel's receive stamps, whichever clock leads:
    /// `latency` on the kernel's clock, else `kernel_latency`; `None` when no read carried
    /// a stamp (or a part merged did not keep it).
    pub fn latency_to_stamps(&self) -> Option<&crate::Distribution> {
        match self.client.client_delay.map(|d| d.latency_clock) {
            Some(LatencyClock::Kernel) => Some(&self.latency),
            _ => self.kernel_latency.as_ref(),
        }
    }

    /// `p50 1.10ms, p99 2.30ms (to the kernel's receive stamps; the read latency leads:
    /// p50 1.20ms, p99 4.00ms)` or why it is not known: the kernel latency beside a
    /// latency on the read's clock. `None` when the kernel's clock leads (`latency` is it)
    /// or the clock line already says there were no stamps.
    pub fn kernel_latency_line(&self) -> Option<String> {
        let d = self.client.client_delay?;
        if matches!(
            d.latency_clock,
            LatencyClock::Kernel | LatencyClock::ReadNoStamps
        ) {
            return None;
        }
        let p = |x: &crate::Distribution, q: f64| {
            x.summary.at(q).map_or_else(|| "-".into(), crate::human_us)
        };
        Some(match &self.kernel_latency {
            Some(k) => format!(
                "p50 {}, p99 {} (to the kernel's receive stamps; the read latency leads: p50 {}, p99 {})",
                p(k, 50.0),
                p(k, 99.0),
                p(&self.latency, 50.0),
                p(&self.latency, 99.0)
            ),
            None if d.stamped_reads == 0 => "not measured: no read carried a kernel receive stamp (the kernel gave none, or FOXBENCH_KERNEL_STAMPS=off)".into(),
            None => "not measured by every part merged".into(),
        })
    }
}

#[cfg(test)]
mod tests;
