//! Outcome and traffic counters of a run: every request issued ends in exactly one outcome.

use crate::reason::{Kind, Reasons};

/// Outcome and traffic counters. Merged by adding ([`Counts::merge`]).
///
/// The conservation law `sent = ok + failed_status + errors() + in_flight` holds for every
/// run, of every worker and of any merge of them ([`Counts::conserved`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests issued: written, or assigned to a connection that was being opened.
    pub sent: u64,
    /// Complete responses whose status is not a failure.
    pub ok: u64,
    /// Complete responses whose status is a failure (see `--fail-status`).
    pub failed_status: u64,
    /// Requests lost because their connection could not be established.
    pub connect: u64,
    /// Of `connect`: refused by the peer (ECONNREFUSED).
    pub connect_refused: u64,
    /// Of `connect`: no local address or port free (EADDRNOTAVAIL: ephemeral ports exhausted).
    pub connect_ports_exhausted: u64,
    /// Of `connect`: not established within the connect timeout.
    pub connect_timeout: u64,
    /// Requests lost because writing them failed.
    pub write: u64,
    /// Requests lost to a reset, or to EOF before their response was complete.
    pub read: u64,
    /// Requests whose response was malformed.
    pub parse: u64,
    /// Requests with no complete response within the timeout.
    pub timeout: u64,
    /// Requests lost to TLS: a failed or stalled handshake, an alert, a bad record.
    pub tls: u64,
    /// HTTP/2: requests whose stream the server reset (RST_STREAM), by any error code
    /// other than REFUSED_STREAM (refused streams are sent again).
    pub reset: u64,
    /// HTTP/2: requests lost to a connection error: a GOAWAY with an error code, a
    /// malformed frame, an HPACK failure, a response without `:status`.
    pub protocol: u64,
    /// Requests still unanswered when the run stopped.
    pub in_flight: u64,
    /// Open model: requests that fell due but found no free connection before the stop.
    pub unsent: u64,
    /// Open model: requests sent late because every connection was busy when they fell
    /// due (a subset of `sent`, not an outcome).
    pub late: u64,
    /// Bytes read from sockets.
    pub bytes_read: u64,
    /// Bytes written to sockets.
    pub bytes_written: u64,
    /// TCP connections established.
    pub connections_opened: u64,
    /// Connections opened to replace one that closed (not counting the first per slot).
    pub reconnects: u64,
    /// Idle connections the server closed.
    pub closed_by_server: u64,
    /// Requests in the largest single write.
    pub max_batch: u64,
    /// TLS handshakes completed in full (key exchange and certificate).
    pub handshakes_full: u64,
    /// TLS handshakes that resumed a session.
    pub handshakes_resumed: u64,
    /// The errors (`connect` .. `tls`) by reason; of each kind as many as its counter.
    pub reasons: Reasons,
}

impl Counts {
    /// Requests that ended in an error of any kind.
    pub fn errors(&self) -> u64 {
        self.connect
            + self.write
            + self.read
            + self.parse
            + self.timeout
            + self.tls
            + self.reset
            + self.protocol
    }

    /// Complete responses, whatever their status.
    pub fn completed(&self) -> u64 {
        self.ok + self.failed_status
    }

    /// True when every issued request has exactly one outcome.
    pub fn conserved(&self) -> bool {
        self.sent == self.completed() + self.errors() + self.in_flight
    }

    /// The error counter of `kind`.
    pub fn of_kind(&self, kind: Kind) -> u64 {
        match kind {
            Kind::Connect => self.connect,
            Kind::Write => self.write,
            Kind::Read => self.read,
            Kind::Parse => self.parse,
            Kind::Timeout => self.timeout,
            Kind::Tls => self.tls,
            Kind::Reset => self.reset,
            Kind::Protocol => self.protocol,
        }
    }

    /// True when every error has exactly one reason: for each kind, the reasons counted
    /// sum to its counter.
    pub fn reasons_conserved(&self) -> bool {
        Kind::ALL
            .into_iter()
            .all(|k| self.reasons.of_kind(k) == self.of_kind(k))
    }

    /// Adds `other` into `self`: sums, except `max_batch`, which is the larger of the two.
    pub fn merge(&mut self, other: &Counts) {
        // Destructured so that a new field cannot be forgotten here.
        let Counts {
            sent,
            ok,
            failed_status,
            connect,
            connect_refused,
            connect_ports_exhausted,
            connect_timeout,
            write,
            read,
            parse,
            timeout,
            tls,
            reset,
            protocol,
            in_flight,
            unsent,
            late,
            bytes_read,
            bytes_written,
            connections_opened,
            reconnects,
            closed_by_server,
            max_batch,
            handshakes_full,
            handshakes_resumed,
            reasons,
        } = *other;
        self.sent += sent;
        self.ok += ok;
        self.failed_status += failed_status;
        self.connect += connect;
        self.connect_refused += connect_refused;
        self.connect_ports_exhausted += connect_ports_exhausted;
        self.connect_timeout += connect_timeout;
        self.write += write;
        self.read += read;
        self.parse += parse;
        self.timeout += timeout;
        self.tls += tls;
        self.reset += reset;
        self.protocol += protocol;
        self.in_flight += in_flight;
        self.unsent += unsent;
        self.late += late;
        self.bytes_read += bytes_read;
        self.bytes_written += bytes_written;
        self.connections_opened += connections_opened;
        self.reconnects += reconnects;
        self.closed_by_server += closed_by_server;
        self.max_batch = self.max_batch.max(max_batch);
        self.handshakes_full += handshakes_full;
        self.handshakes_resumed += handshakes_resumed;
        self.reasons.merge(&reasons);
    }

    /// What happened between `earlier` and `self` (two readings of the same counters).
    /// `max_batch` is the later reading's.
    pub fn since(&self, earlier: &Counts) -> Counts {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        Counts {
            sent: d(self.sent, earlier.sent),
            ok: d(self.ok, earlier.ok),
            failed_status: d(self.failed_status, earlier.failed_status),
            connect: d(self.connect, earlier.connect),
            connect_refused: d(self.connect_refused, earlier.connect_refused),
            connect_ports_exhausted: d(
                self.connect_ports_exhausted,
                earlier.connect_ports_exhausted,
            ),
            connect_timeout: d(self.connect_timeout, earlier.connect_timeout),
            write: d(self.write, earlier.write),
            read: d(self.read, earlier.read),
            parse: d(self.parse, earlier.parse),
            timeout: d(self.timeout, earlier.timeout),
            tls: d(self.tls, earlier.tls),
            reset: d(self.reset, earlier.reset),
            protocol: d(self.protocol, earlier.protocol),
            in_flight: d(self.in_flight, earlier.in_flight),
            unsent: d(self.unsent, earlier.unsent),
            late: d(self.late, earlier.late),
            bytes_read: d(self.bytes_read, earlier.bytes_read),
            bytes_written: d(self.bytes_written, earlier.bytes_written),
            connections_opened: d(self.connections_opened, earlier.connections_opened),
            reconnects: d(self.reconnects, earlier.reconnects),
            closed_by_server: d(self.closed_by_server, earlier.closed_by_server),
            max_batch: self.max_batch,
            handshakes_full: d(self.handshakes_full, earlier.handshakes_full),
            handshakes_resumed: d(self.handshakes_resumed, earlier.handshakes_resumed),
            reasons: self.reasons.since(&earlier.reasons),
        }
    }
}

#[cfg(test)]
mod tests;
