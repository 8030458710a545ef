//! QUIC's own figures in an `--http3` run's report (`http3.quic`): datagrams, UDP system
//! calls and bytes per completed request, datagrams per send call (what GSO will raise),
//! losses and congestion, frames by type, the paths' RTT and congestion window at the
//! end, and the QUIC handshakes that failed.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::units::bytes_one_decimal;
use crate::{human_us, TlsReport};

/// What QUIC did over an `--http3` run. Datagrams, bytes and system calls are counted by
/// the worker at each `send` and `recvmsg` of the connections' UDP sockets; packets,
/// losses, congestion events and frames are `quinn-proto`'s (`Connection::stats()`),
/// summed over every connection as it closed, those open at the run's end included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QuicReport {
    /// Datagrams the sockets took.
    pub datagrams_sent: u64,
    /// Datagrams received.
    pub datagrams_received: u64,
    /// `send` system calls, those a full socket refused included.
    pub send_calls: u64,
    /// `recvmsg` system calls, those that found nothing (EAGAIN, ending each read)
    /// included.
    pub receive_calls: u64,
    /// UDP payload bytes sent (QUIC packets, headers and encryption included).
    pub bytes_sent: u64,
    /// UDP payload bytes received.
    pub bytes_received: u64,
    /// The above divided by the requests completed (`requests.completed`, ok and failure
    /// statuses); absent when none completed.
    pub per_request: Option<QuicPerRequest>,
    /// Datagrams per `send` call: GSO's segments per send, up to 10. 1.0 when each send
    /// carried one datagram (small transmits, or GSO refused by the route), below it when a
    /// full socket refused some; absent with no send.
    pub datagrams_per_send_call: Option<f64>,
    /// Datagrams per `recvmsg` call: GRO's, and how many reads found nothing; absent
    /// with no receive call.
    pub datagrams_per_receive_call: Option<f64>,
    /// Connections whose `quinn-proto` statistics are summed here.
    pub connections: u64,
    /// QUIC connections closed before their handshake completed, other than by the run's
    /// end (those completed are `tls.handshakes_full`).
    pub handshakes_failed: u64,
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets declared lost; QUIC sends what is still needed of them again, in new
    /// packets.
    pub packets_lost: u64,
    /// Their bytes.
    pub bytes_lost: u64,
    /// `packets_lost` per 100 `packets_sent`; absent with none sent.
    pub loss_percent: Option<f64>,
    /// Congestion events: each cut the congestion window.
    pub congestion_events: u64,
    /// Frames sent, by type.
    pub frames_sent: QuicFrames,
    /// Frames received, by type.
    pub frames_received: QuicFrames,
    /// The connections open when the run ended: their paths' smoothed RTT and congestion
    /// window then; absent when none was open.
    pub at_end: Option<PathsAtEnd>,
}

/// A QUIC figure per completed request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QuicPerRequest {
    /// The divisor: requests completed (ok and failure statuses).
    pub requests: u64,
    /// Datagrams sent per request.
    pub datagrams_sent: f64,
    /// Datagrams received per request.
    pub datagrams_received: f64,
    /// `send` calls per request.
    pub send_calls: f64,
    /// `recvmsg` calls per request.
    pub receive_calls: f64,
    /// UDP payload bytes sent per request.
    pub bytes_sent: f64,
    /// UDP payload bytes received per request.
    pub bytes_received: f64,
}

/// Frames of the types a request's life shows, as `quinn-proto` counts them.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct QuicFrames {
    /// ACK.
    pub acks: u64,
    /// CRYPTO (the handshake's).
    pub crypto: u64,
    /// STREAM.
    pub stream: u64,
    /// PING.
    pub ping: u64,
    /// MAX_DATA.
    pub max_data: u64,
    /// MAX_STREAM_DATA.
    pub max_stream_data: u64,
    /// MAX_STREAMS (bidirectional: request credit).
    pub max_streams_bidi: u64,
    /// STREAMS_BLOCKED (bidirectional).
    pub streams_blocked_bidi: u64,
    /// RESET_STREAM.
    pub reset_stream: u64,
    /// STOP_SENDING.
    pub stop_sending: u64,
    /// CONNECTION_CLOSE: received only; `quinn-proto` 0.11 does not count those it sends.
    pub connection_close: u64,
}

impl QuicFrames {
    fn merge(&mut self, o: &QuicFrames) {
        let QuicFrames {
            acks,
            crypto,
            stream,
            ping,
            max_data,
            max_stream_data,
            max_streams_bidi,
            streams_blocked_bidi,
            reset_stream,
            stop_sending,
            connection_close,
        } = o;
        for (a, b) in [
            (&mut self.acks, acks),
            (&mut self.crypto, crypto),
            (&mut self.stream, stream),
            (&mut self.ping, ping),
            (&mut self.max_data, max_data),
            (&mut self.max_stream_data, max_stream_data),
            (&mut self.max_streams_bidi, max_streams_bidi),
            (&mut self.streams_blocked_bidi, streams_blocked_bidi),
            (&mut self.reset_stream, reset_stream),
            (&mut self.stop_sending, stop_sending),
            (&mut self.connection_close, connection_close),
        ] {
            *a = a.saturating_add(*b);
        }
    }
}

/// The paths of the connections open at a run's end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathsAtEnd {
    /// Connections open then.
    pub connections: u64,
    /// Their smoothed RTTs, µs.
    pub rtt_us: Spread,
    /// Their congestion windows, bytes.
    pub cwnd_bytes: Spread,
    /// Merged from several shards' paths: each median is the largest of theirs, an upper
    /// bound. Absent (false) for one run's, exact, and in results written before
    /// 2026-11-29.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub median_upper_bound: bool,
}

/// The least, the median and the largest of a figure across connections. Merged from
/// several agents, the median is the largest of theirs: an upper bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spread {
    /// The least.
    pub min: f64,
    /// The median (of an even count, the mean of the middle two).
    pub median: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` when there are none.
    pub fn of(values: &mut [f64]) -> Option<Spread> {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let (&min, &max) = (values.first()?, values.last()?);
        let median = match n % 2 {
            1 => values[n / 2],
            _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
        };
        Some(Spread { min, median, max })
    }

    /// Two agents' spreads: the least of the least, the largest of the largest, and the
    /// largest median.
    fn merge(&self, o: &Spread) -> Spread {
        Spread {
            min: self.min.min(o.min),
            median: self.median.max(o.median),
            max: self.max.max(o.max),
        }
    }
}

impl PathsAtEnd {
    /// The paths of connections open at the end, each (smoothed RTT in ns, congestion
    /// window in bytes); `None` when there are none.
    pub fn of(paths: impl Iterator<Item = (u64, u64)>) -> Option<PathsAtEnd> {
        let (mut rtt, mut cwnd): (Vec<f64>, Vec<f64>) = paths
            .map(|(rtt_ns, cwnd)| (rtt_ns as f64 / 1e3, cwnd as f64))
            .unzip();
        Some(PathsAtEnd {
            connections: rtt.len() as u64,
            rtt_us: Spread::of(&mut rtt)?,
            cwnd_bytes: Spread::of(&mut cwnd)?,
            median_upper_bound: false,
        })
    }
}

/// The ratio `n / d`; `None` when `d` is 0.
fn ratio(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

impl QuicReport {
    /// Recomputes the figures derived from the counts: per request (`completed`, the
    /// requests completed), per call, the loss share.
    pub fn derive(&mut self, completed: u64) {
        let per = |n: u64| n as f64 / completed as f64;
        self.per_request = (completed > 0).then(|| QuicPerRequest {
            requests: completed,
            datagrams_sent: per(self.datagrams_sent),
            datagrams_received: per(self.datagrams_received),
            send_calls: per(self.send_calls),
            receive_calls: per(self.receive_calls),
            bytes_sent: per(self.bytes_sent),
            bytes_received: per(self.bytes_received),
        });
        self.datagrams_per_send_call = ratio(self.datagrams_sent, self.send_calls);
        self.datagrams_per_receive_call = ratio(self.datagrams_received, self.receive_calls);
        self.loss_percent = ratio(self.packets_lost, self.packets_sent).map(|r| 100.0 * r);
    }

    /// Several agents' figures as one run's: counts summed, the paths at the end as
    /// [`Spread`] merges them, the ratios recomputed for `completed` (the merged requests
    /// completed). `None` when no agent has any.
    pub fn merge<'a>(
        parts: impl Iterator<Item = &'a QuicReport>,
        completed: u64,
    ) -> Option<QuicReport> {
        let mut m: Option<QuicReport> = None;
        for p in parts {
            let Some(a) = m.as_mut() else {
                m = Some(p.clone());
                continue;
            };
            for (sum, v) in [
                (&mut a.datagrams_sent, p.datagrams_sent),
                (&mut a.datagrams_received, p.datagrams_received),
                (&mut a.send_calls, p.send_calls),
                (&mut a.receive_calls, p.receive_calls),
                (&mut a.bytes_sent, p.bytes_sent),
                (&mut a.bytes_received, p.bytes_received),
                (&mut a.connections, p.connections),
                (&mut a.handshakes_failed, p.handshakes_failed),
                (&mut a.packets_sent, p.packets_sent),
                (&mut a.packets_lost, p.packets_lost),
                (&mut a.bytes_lost, p.bytes_lost),
                (&mut a.congestion_events, p.congestion_events),
            ] {
                *sum = sum.saturating_add(v);
            }
            a.frames_sent.merge(&p.frames_sent);
            a.frames_received.merge(&p.frames_received);
            a.at_end = match (a.at_end.take(), &p.at_end) {
                (Some(x), Some(y)) => Some(PathsAtEnd {
                    connections: x.connections.saturating_add(y.connections),
                    rtt_us: x.rtt_us.merge(&y.rtt_us),
                    cwnd_bytes: x.cwnd_bytes.merge(&y.cwnd_bytes),
                    median_upper_bound: true,
                }),
                (x, y) => x.or_else(|| y.clone()),
            };
        }
        if let Some(a) = m.as_mut() {
            a.derive(completed);
        }
        m
    }

    /// The report's QUIC lines (text, and the HTML page's `QUIC` entries), the handshakes
    /// completed and their time from `tls`.
    pub fn lines(&self, tls: Option<&TlsReport>) -> [String; 2] {
        let traffic = match &self.per_request {
            Some(p) => format!(
                "{:.1} datagrams sent and {:.1} received per request, {:.1} send and {:.1} receive calls per request, {} sent and {} received per request",
                p.datagrams_sent,
                p.datagrams_received,
                p.send_calls,
                p.receive_calls,
                bytes_one_decimal(p.bytes_sent),
                bytes_one_decimal(p.bytes_received),
            ),
            None => format!(
                "{} datagrams sent and {} received, no request completed",
                self.datagrams_sent, self.datagrams_received
            ),
        };
        let per_send = self
            .datagrams_per_send_call
            .map_or("-".to_string(), |r| format!("{r:.2}"));
        let first = format!("{traffic}; {per_send} datagrams per send call");
        let loss = self
            .loss_percent
            .map_or(String::new(), |p| format!(" ({p:.2}%)"));
        let mut second = format!(
            "{} of {} packets lost{loss}, {} congestion events",
            self.packets_lost, self.packets_sent, self.congestion_events
        );
        if let Some(e) = &self.at_end {
            // A merged median is the largest shard's: an upper bound, said so.
            let median = match e.median_upper_bound {
                true => "median ≤",
                false => "median",
            };
            let _ = write!(
                second,
                "; at the end ({} connections) RTT {median} {} (min {}, max {}), cwnd {median} {} (max {})",
                e.connections,
                human_us(e.rtt_us.median),
                human_us(e.rtt_us.min),
                human_us(e.rtt_us.max),
                bytes_one_decimal(e.cwnd_bytes.median),
                bytes_one_decimal(e.cwnd_bytes.max),
            );
        }
        let done = tls.map_or(0, |t| t.handshakes_full);
        let mean = tls
            .and_then(|t| t.handshake_full.as_ref())
            .map_or(String::new(), |d| {
                format!(" (mean {})", human_us(d.summary.mean_us))
            });
        let _ = write!(
            second,
            "; {done} handshakes{mean}, {} failed",
            self.handshakes_failed
        );
        [first, second]
    }

    /// The text report's QUIC lines, under `HTTP/3:`.
    pub fn write_text(&self, o: &mut String, tls: Option<&TlsReport>) {
        let [first, second] = self.lines(tls);
        let _ = writeln!(o, "QUIC:          {first}");
        let _ = writeln!(o, "               {second}");
    }
}

#[cfg(test)]
mod tests;
