//! What one worker measured: its counters, histograms and status counts.

use stats::reason::{Cause, Kind, EADDRNOTAVAIL, ECONNREFUSED};
use stats::Latency;

use std::time::Instant;

use super::send_sample::{Sample, Sampler};
use super::{now_ns, Failure, Pending};
use crate::interval::CurrentInterval;
use crate::stamps::{self, ClockOffset, SendStamp};
use crate::tls::TlsInfo;
use crate::{Counts, StatusSet};

/// Counters, histograms and status counts of one worker.
pub(super) struct Recorder {
    pub(super) counts: Counts,
    /// The current interval's latency, handed off at each boundary.
    pub(super) interval: CurrentInterval,
    pub(super) connect: Latency,
    /// TLS handshake time, from the TCP connect to the handshake's end, by kind.
    pub(super) handshake_full: Latency,
    pub(super) handshake_resumed: Latency,
    /// What the first TLS handshake negotiated.
    pub(super) tls: Option<TlsInfo>,
    pub(super) status: Vec<u64>,
    pub(super) shapes: Vec<(u64, u64)>,
    pub(super) fail_status: StatusSet,
    /// Open model: service times and send lateness are recorded.
    pub(super) open: bool,
    pub(super) lateness: Latency,
    pub(super) late: Latency,
    /// The recent mean latency, ns: a moving mean over about the last
    /// [`RECENT_RESPONSES`] responses, for the coalescing wait ([`super::coalesce`]).
    pub(super) recent_latency_ns: u64,
    /// Which clock `interval.latency` is taken on.
    pub(super) clock: crate::LatencyClock,
    /// The kernel latency of every response, run-wide, when it is not `interval.latency`:
    /// `Some` while the read's clock leads and stamps were asked for, `None` on the
    /// kernel's clock (where `latency` is it), so that no histogram is kept twice.
    pub(super) kernel_latency: Option<Latency>,
    /// CLOCK_REALTIME's distance from the worker's clock, re-taken every tick.
    pub(super) offset: ClockOffset,
    /// When the current read's bytes arrived, by the kernel's stamp, on the worker's clock;
    /// `None` for a read without a stamp.
    pub(super) arrived_ns: Option<u64>,
    /// When the current read returned, on the worker's clock: the read instant of the
    /// responses it completes.
    pub(super) read_ns: u64,
    /// The worker's clock's zero.
    pub(super) epoch: Instant,
    pub(super) stamps: crate::StampCounts,
    /// Which requests have their send stamped.
    pub(super) sampler: Sampler,
    /// Send stamps: sampled, come back, matched.
    pub(super) send_stamps: crate::SendStampCounts,
    /// Open model: a sampled request's lateness by the kernel, from its due instant to its
    /// last byte's departure (requests handed over on time only, as `lateness`).
    pub(super) send_lateness_kernel: Latency,
    /// A sampled request's send delay by the kernel: from its handing over to its
    /// connection to its last byte's departure.
    pub(super) send_delay_kernel: Latency,
}

/// How many responses [`Recorder::recent_latency_ns`] follows (a power of two).
const RECENT_RESPONSES: u64 = 64;

impl Recorder {
    /// A recorder on a clock whose zero was `age` ago, with stamps read on the monotonic
    /// clock as they are (a zero offset), for unit tests.
    #[cfg(test)]
    pub(super) fn for_test(age: std::time::Duration) -> Recorder {
        let (tx, _rx) = std::sync::mpsc::channel();
        let (_spare_tx, spares) = std::sync::mpsc::channel();
        Recorder {
            counts: crate::Counts::default(),
            interval: CurrentInterval::new(0, std::time::Duration::from_secs(3600), tx, spares),
            connect: Latency::new(),
            handshake_full: Latency::new(),
            handshake_resumed: Latency::new(),
            tls: None,
            status: vec![0; 1000],
            shapes: vec![(0, 0); 1],
            fail_status: crate::StatusSet::none(),
            open: false,
            lateness: Latency::new(),
            late: Latency::new(),
            recent_latency_ns: 0,
            clock: crate::LatencyClock::Kernel,
            kernel_latency: None,
            offset: ClockOffset::from_readings(0, 0),
            arrived_ns: None,
            read_ns: 0,
            epoch: Instant::now() - age,
            stamps: crate::StampCounts::default(),
            sampler: Sampler::new(true),
            send_stamps: crate::SendStampCounts::default(),
            send_lateness_kernel: Latency::new(),
            send_delay_kernel: Latency::new(),
        }
    }

    /// Notes the kernel's stamp (CLOCK_REALTIME ns) of the read whose bytes go to the
    /// framing next, and takes the clock once for it: a response completed by them arrived
    /// at the stamp and was read now. `batch_ns`: when the poll that announced the read
    /// returned, a floor for the read instant.
    ///
    /// The clock is taken here, once per socket read (a vDSO read), rather than once per
    /// poll batch: a batch's later reads come after the time spent on its earlier
    /// connections, which is the client's delay, and their bytes may have arrived after
    /// the poll returned.
    #[inline]
    pub(super) fn arrived(&mut self, stamp_ns: Option<i64>, batch_ns: u64) {
        match stamp_ns {
            Some(_) => self.stamps.stamped += 1,
            None => self.stamps.unstamped += 1,
        }
        self.arrived_again(stamp_ns, batch_ns);
    }

    /// Sets the current read's stamp without counting a read: for the end of a stream,
    /// which completes a response framed by the close. [`Self::arrived`] counts the read,
    /// then does this.
    #[inline]
    pub(super) fn arrived_again(&mut self, stamp_ns: Option<i64>, batch_ns: u64) {
        self.read_ns = now_ns(self.epoch).max(batch_ns);
        self.arrived_ns = stamp_ns.map(|t| self.offset.mono_ns(t));
    }

    /// Records a response completed by the current read, read at its instant
    /// ([`Self::arrived`]): its latency on both clocks (the leading one as `latency`), and
    /// what the client added between them.
    #[inline]
    pub(super) fn response(&mut self, status: u16, req: Pending) {
        let now = self.read_ns;
        let read = now.saturating_sub(req.start_ns);
        let kernel = stamps::kernel_ns(req.start_ns, self.arrived_ns, now);
        let latency = match self.clock {
            crate::LatencyClock::Kernel => kernel,
            crate::LatencyClock::Read => read,
        };
        self.interval.latency.record_ns(latency);
        self.interval.read_latency.record_ns(read);
        self.interval.client_delay.record_ns(read - kernel);
        if let Some(h) = &mut self.kernel_latency {
            h.record_ns(kernel);
        }
        // The coalescing wait is sized by the leading latency: on the kernel's clock the
        // wait itself does not feed back into it.
        self.recent_latency_ns = self.recent_latency_ns - self.recent_latency_ns / RECENT_RESPONSES
            + latency / RECENT_RESPONSES;
        if self.open {
            let service = match self.clock {
                crate::LatencyClock::Kernel => stamps::kernel_ns(req.sent_ns, self.arrived_ns, now),
                crate::LatencyClock::Read => now.saturating_sub(req.sent_ns),
            };
            self.interval.service.record_ns(service);
        }
        self.status[usize::from(status.min(999))] += 1;
        self.shapes[req.shape as usize].1 += 1;
        if self.fail_status.contains(status) {
            self.counts.failed_status += 1;
        } else {
            self.counts.ok += 1;
        }
    }

    /// A send stamp came back: when it is the sampled request's, its departure is recorded
    /// and the sample is done.
    pub(super) fn send_stamp(&mut self, sample: &mut Option<Sample>, stamp: SendStamp) {
        self.send_stamps.returned += 1;
        let Some(s) = sample.filter(|s| s.matches(stamp.key)) else {
            return;
        };
        *sample = None;
        self.send_stamps.matched += 1;
        let departed = self.offset.mono_ns(stamp.stamp_ns);
        // A departure before the handing over can only be the clocks' offset taken badly
        // (or a realtime step): it counts as none.
        self.send_delay_kernel
            .record_ns(departed.saturating_sub(s.sent_ns));
        if self.open && s.on_time {
            self.send_lateness_kernel
                .record_ns(departed.saturating_sub(s.start_ns));
        }
    }

    /// Counts `n` requests failed for `f`, in its kind's counter and by its reason.
    pub(super) fn failed(&mut self, f: Failure, n: u64) {
        let c = &mut self.counts;
        match f.kind {
            Kind::Connect => {
                c.connect += n;
                match f.cause {
                    Cause::Errno(ECONNREFUSED) => c.connect_refused += n,
                    Cause::Errno(EADDRNOTAVAIL) => c.connect_ports_exhausted += n,
                    Cause::Timeout(_) => c.connect_timeout += n,
                    _ => {}
                }
            }
            Kind::Write => c.write += n,
            Kind::Read => c.read += n,
            Kind::Parse => c.parse += n,
            Kind::Timeout => c.timeout += n,
            Kind::Tls => c.tls += n,
            Kind::Reset => c.reset += n,
            Kind::Protocol => c.protocol += n,
        }
        c.reasons.add(f, n);
    }
}

#[cfg(test)]
mod tests;
