//! QUIC's own figures for a run over HTTP/3: what went through the connections' UDP
//! sockets (counted by the worker at each system call), and what `quinn-proto` counted of
//! each connection (`Connection::stats()`: packets, losses, congestion, frames), summed as
//! each connection closes, those still open at the run's end included; and the path's
//! smoothed RTT and congestion window of the connections open at the end.

use quinn_proto::{ConnectionStats, FrameStats};

/// A run's (or one worker's) QUIC figures. Plain counters: the per-datagram ones are one
/// add each, in `worker/http3.rs`'s send and receive loops.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuicCounts {
    /// `send` system calls on the connections' UDP sockets, those the socket refused
    /// (full) included.
    pub send_calls: u64,
    /// Datagrams the sockets took (up to `udp::MAX_SEGMENTS` a `send` call with GSO).
    pub datagrams_sent: u64,
    /// Their UDP payload bytes.
    pub bytes_sent: u64,
    /// `recvmsg` system calls, those that found nothing (EAGAIN, which ends each read)
    /// included.
    pub receive_calls: u64,
    /// Datagrams received (one per successful `recvmsg`: no GRO).
    pub datagrams_received: u64,
    /// Their UDP payload bytes.
    pub bytes_received: u64,
    /// Connections whose `quinn-proto` statistics are summed below (each once, at its
    /// close, the run's end included).
    pub connections: u64,
    /// QUIC connections closed before their handshake completed, other than by the run's
    /// end: failed handshakes.
    pub handshakes_failed: u64,
    /// Packets sent (quinn's `path.sent_packets`).
    pub packets_sent: u64,
    /// Packets declared lost (`path.lost_packets`): QUIC sends their frames again in new
    /// packets, so each is a retransmission of its content (what is still needed of it).
    pub packets_lost: u64,
    /// Their bytes (`path.lost_bytes`).
    pub bytes_lost: u64,
    /// Congestion events (`path.congestion_events`): the window was cut.
    pub congestion_events: u64,
    /// Frames sent, by type.
    pub frames_sent: QuicFrames,
    /// Frames received, by type.
    pub frames_received: QuicFrames,
    /// The path of each connection open at the run's end, as it was then.
    pub at_end: Vec<PathAtEnd>,
}

/// A connection's path when the run ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathAtEnd {
    /// Its smoothed RTT (`path.rtt`), ns.
    pub rtt_ns: u64,
    /// Its congestion window (`path.cwnd`), bytes.
    pub cwnd_bytes: u64,
}

/// Frames of the types a request's life shows, counted by `quinn-proto`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
    /// MAX_STREAMS for bidirectional streams (request credit).
    pub max_streams_bidi: u64,
    /// STREAMS_BLOCKED for bidirectional streams.
    pub streams_blocked_bidi: u64,
    /// RESET_STREAM.
    pub reset_stream: u64,
    /// STOP_SENDING.
    pub stop_sending: u64,
    /// CONNECTION_CLOSE: received only; `quinn-proto` 0.11 does not count those it sends.
    pub connection_close: u64,
}

impl QuicFrames {
    /// Adds `other` into these. Destructured so that a new type cannot be forgotten.
    pub fn merge(&mut self, other: &QuicFrames) {
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
        } = other;
        self.acks += acks;
        self.crypto += crypto;
        self.stream += stream;
        self.ping += ping;
        self.max_data += max_data;
        self.max_stream_data += max_stream_data;
        self.max_streams_bidi += max_streams_bidi;
        self.streams_blocked_bidi += streams_blocked_bidi;
        self.reset_stream += reset_stream;
        self.stop_sending += stop_sending;
        self.connection_close += connection_close;
    }

    fn add(&mut self, f: &FrameStats) {
        self.merge(&QuicFrames {
            acks: f.acks,
            crypto: f.crypto,
            stream: f.stream,
            ping: f.ping,
            max_data: f.max_data,
            max_stream_data: f.max_stream_data,
            max_streams_bidi: f.max_streams_bidi,
            streams_blocked_bidi: f.streams_blocked_bidi,
            reset_stream: f.reset_stream,
            stop_sending: f.stop_sending,
            connection_close: f.connection_close,
        });
    }
}

impl QuicCounts {
    /// Adds a closing connection's statistics: once per connection, after its last
    /// datagram (its CONNECTION_CLOSE) went.
    pub(crate) fn add_connection(&mut self, s: &ConnectionStats) {
        self.connections += 1;
        self.packets_sent += s.path.sent_packets;
        self.packets_lost += s.path.lost_packets;
        self.bytes_lost += s.path.lost_bytes;
        self.congestion_events += s.path.congestion_events;
        self.frames_sent.add(&s.frame_tx);
        self.frames_received.add(&s.frame_rx);
    }

    /// Notes a connection's path as the run ends (before it closes).
    pub(crate) fn note_end(&mut self, s: &ConnectionStats) {
        self.at_end.push(PathAtEnd {
            rtt_ns: u64::try_from(s.path.rtt.as_nanos()).unwrap_or(u64::MAX),
            cwnd_bytes: s.path.cwnd,
        });
    }

    /// Adds `other` into `self`: counts summed, the paths at the end put together.
    pub fn merge(&mut self, other: &QuicCounts) {
        let QuicCounts {
            send_calls,
            datagrams_sent,
            bytes_sent,
            receive_calls,
            datagrams_received,
            bytes_received,
            connections,
            handshakes_failed,
            packets_sent,
            packets_lost,
            bytes_lost,
            congestion_events,
            frames_sent,
            frames_received,
            at_end,
        } = other;
        self.send_calls += send_calls;
        self.datagrams_sent += datagrams_sent;
        self.bytes_sent += bytes_sent;
        self.receive_calls += receive_calls;
        self.datagrams_received += datagrams_received;
        self.bytes_received += bytes_received;
        self.connections += connections;
        self.handshakes_failed += handshakes_failed;
        self.packets_sent += packets_sent;
        self.packets_lost += packets_lost;
        self.bytes_lost += bytes_lost;
        self.congestion_events += congestion_events;
        self.frames_sent.merge(frames_sent);
        self.frames_received.merge(frames_received);
        self.at_end.extend_from_slice(at_end);
    }
}

#[cfg(test)]
mod tests;
