//! HTTP/3 outside the worker's loop: each request shape encoded once as the bytes of its
//! stream ([`requests`]), a response's frames read for its status ([`response`], sans
//! I/O), and the blocking QUIC handshake of the preflight ([`preflight`]), which turns a
//! server that does not answer QUIC, does not speak h3, or presents a certificate that does
//! not verify into one line before the run. The worker's side is `worker/http3.rs`.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use h3wire::{frame, qpack};
use quinn_proto::{ConnectionError, DatagramEvent, Endpoint, EndpointConfig, Event};

use crate::setting::{Setting, Text};
use crate::setup::SetupError;
use crate::tls::{self, Alpn, Connector};
use crate::{Plan, RequestSpec, Target, TargetError};

/// The largest field section a response may send us (SETTINGS_MAX_FIELD_SECTION_SIZE), and
/// the largest HEADERS frame we hold: the worker's and the blocking client's.
pub(crate) const MAX_FIELD_SECTION: u64 = 64 * 1024;

use crate::h2::request::CONNECTION_SPECIFIC;

/// The largest datagram read or written: QUIC's packets stay below 1500 bytes on any path
/// quinn probes; a GRO read of many is at most this too (the kernel's cap).
pub(crate) const MAX_DATAGRAM: usize = 65_535;

/// HTTP/3's own counts for a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct H3Counts {
    /// Requests sent again: left unprocessed by a GOAWAY, or rejected by the server
    /// (H3_REQUEST_REJECTED), each counted as it goes again.
    pub retries: u64,
    /// QUIC's own figures: datagrams, system calls, losses, frames, the paths at the end.
    pub quic: crate::QuicCounts,
}

impl H3Counts {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &H3Counts) {
        self.retries += other.retries;
        self.quic.merge(&other.quic);
    }
}

/// The most unidirectional streams a server may have open to us at once (see
/// `tls::quic`): its three critical ones and room for unknown ones, which are stopped.
pub(crate) const MAX_SERVER_UNI: u32 = 8;

/// The receive and send buffer each HTTP/3 connection's UDP socket asks for, bytes
/// ([`udp::BUFFER_BYTES`], which says why 1 MiB). The kernel caps it at `net.core.rmem_max`
/// silently, which the run's UDP counters then show (`RcvbufErrors`) and the report words
/// with this figure.
pub const UDP_BUFFER_BYTES: usize = udp::BUFFER_BYTES;

/// Closes `conn` with HTTP/3's `code` and hands each datagram that carries the
/// CONNECTION_CLOSE to `send` at once, so that the server learns of it before the socket
/// goes (dropped unsent, the server would hold the connection until its idle timeout).
/// Returns how many datagrams went.
pub(crate) fn close(
    conn: &mut quinn_proto::Connection,
    now: Instant,
    code: u64,
    buf: &mut Vec<u8>,
    send: impl FnMut(&[u8]),
) -> usize {
    let code = quinn_proto::VarInt::from_u64(code).unwrap_or(quinn_proto::VarInt::MAX);
    conn.close(now, code, bytes::Bytes::new());
    flush(conn, now, buf, send)
}

/// Hands each datagram `conn` has to send to `send` at once (after a close: its
/// CONNECTION_CLOSE). Returns how many went.
pub(crate) fn flush(
    conn: &mut quinn_proto::Connection,
    now: Instant,
    buf: &mut Vec<u8>,
    mut send: impl FnMut(&[u8]),
) -> usize {
    let mut sent = 0;
    buf.clear();
    while let Some(t) = conn.poll_transmit(now, 1, buf) {
        send(&buf[..t.size]);
        buf.clear();
        sent += 1;
    }
    sent
}

/// Each request shape's stream bytes: a HEADERS frame (QPACK, static table only) and, when
/// the request has a body, one DATA frame. Random parts are refused for now.
pub(crate) fn requests(
    target: &Target,
    specs: &[RequestSpec],
) -> Result<Vec<Vec<u8>>, TargetError> {
    specs.iter().map(|s| request(target, s)).collect()
}

fn request(target: &Target, spec: &RequestSpec) -> Result<Vec<u8>, TargetError> {
    if !spec.checked_path()?.is_literal() || !spec.random_headers.is_empty() {
        return Err(TargetError::RandomOverHttp3);
    }
    let authority = spec
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("host"))
        .map_or(target.host_header.as_str(), |(_, v)| v.as_str());
    let defaults = spec.default_headers(target, false);
    let mut fields: Vec<(String, &str)> = defaults
        .iter()
        .map(|(k, v)| (*k, v.as_str()))
        .chain(spec.headers.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map(|(k, v)| (k.to_ascii_lowercase(), v))
        .filter(|(k, _)| k != "host" && !CONNECTION_SPECIFIC.contains(&k.as_str()))
        .collect();
    let length = spec.body.len().to_string();
    if !spec.body.is_empty() && !fields.iter().any(|(k, _)| k == "content-length") {
        fields.push(("content-length".into(), &length));
    }
    let headers: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let section = qpack::Request {
        method: &spec.method,
        scheme: "https",
        authority,
        path: &spec.path,
        headers: &headers,
    }
    .encode();
    let mut out = Vec::with_capacity(section.len() + spec.body.len() + 16);
    frame::put_headers(&mut out, &section);
    if !spec.body.is_empty() {
        frame::put_data_header(&mut out, spec.body.len() as u64);
        out.extend_from_slice(&spec.body);
    }
    Ok(out)
}

/// One QUIC handshake before the run, blocking: a server that does not answer QUIC's
/// Initial within the connect timeout, closes the port (ICMP), picks no `h3`, or presents a
/// certificate that does not verify stops the run with one line, worded as over TCP.
pub(crate) fn preflight(plan: &Plan) -> Result<(), SetupError> {
    let tls = tls::TlsOptions {
        resume: plan.tls_resumption(),
        ..plan.tls.clone()
    };
    let mut quic = Quic::handshake(
        &plan.target,
        &tls,
        (plan.connect_timeout, plan.timeout),
        ClosedPort::Refuses,
    )?;
    quic.close(h3wire::error::H3_NO_ERROR);
    Ok(())
}

/// One blocking QUIC connection that has chosen `h3`: the preflight's, and the blocking
/// client's ([`blocking::H3Client`]). Its socket is connected to the server.
pub(crate) struct Quic {
    sock: UdpSocket,
    endpoint: Endpoint,
    handle: quinn_proto::ConnectionHandle,
    pub(crate) conn: quinn_proto::Connection,
    addr: SocketAddr,
    buf: Vec<u8>,
    rbuf: Vec<u8>,
}

/// What the handshake does when the server's UDP port is closed (ICMP port unreachable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClosedPort {
    /// Fails at once: the preflight, before a run, of a server that should be up.
    Refuses,
    /// Goes on until the connect timeout, QUIC sending its Initial again as it does when
    /// unanswered: a server just started may bind its TCP port before its UDP one (the
    /// shootout's verification, right after the TCP readiness check).
    WaitsForIt,
}

/// What [`Quic::turn`] saw.
pub(crate) enum Turn {
    /// A datagram came and was handed to QUIC.
    Datagram,
    /// Nothing came before the deadline or QUIC's next timer (which was met).
    Quiet,
}

impl Quic {
    /// Connects to `target` with `tls` and completes the handshake: QUIC's Initial must be
    /// answered within `connect_timeout`, the handshake done within `timeout` more, and
    /// the server must select `h3`; a closed UDP port as `closed` says. Each failure is
    /// the preflight's one line.
    pub(crate) fn handshake(
        target: &Target,
        tls: &crate::TlsOptions,
        (connect_timeout, timeout): (Duration, Duration),
        closed: ClosedPort,
    ) -> Result<Quic, SetupError> {
        let addr = target.addr;
        let connector = Connector::new(&target.host, tls, Alpn::H3)?;
        let client = connector.quic().map_err(|e| SetupError::Tls {
            addr,
            message: e.into(),
        })?;
        let connect_err = |reason: io::Error| SetupError::Connect { addr, reason };
        let bind: SocketAddr = match addr {
            SocketAddr::V4(_) => "0.0.0.0:0".parse().expect("a literal address"),
            SocketAddr::V6(_) => "[::]:0".parse().expect("a literal address"),
        };
        let sock = UdpSocket::bind(bind).map_err(connect_err)?;
        sock.connect(addr).map_err(connect_err)?;
        let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
        let start = Instant::now();
        let (handle, conn) = endpoint
            .connect(start, client, addr, &connector.server_name())
            .map_err(|e| connect_err(io::Error::other(e.to_string())))?;
        let mut quic = Quic {
            sock,
            endpoint,
            handle,
            conn,
            addr,
            buf: Vec::with_capacity(MAX_DATAGRAM),
            rbuf: vec![0u8; MAX_DATAGRAM],
        };
        let answer_by = start + connect_timeout;
        let done_by = answer_by + timeout;
        let mut answered = false;
        let mut refused = false;
        let port_closed = || SetupError::NoHttp3 {
            addr,
            reason: Text::plain(format!(
                "nothing listens on UDP port {} (ICMP port unreachable): enable HTTP/3 on the \
                 server (caddy: `protocols h1 h2 h3`), or ",
                addr.port()
            ))
            .drop(Setting::Http3),
        };
        loop {
            quic.flush();
            while let Some(ev) = quic.conn.poll() {
                match ev {
                    Event::Connected => match check_alpn(&quic.conn, addr) {
                        Ok(()) => return Ok(quic),
                        Err(e) => {
                            quic.close(h3wire::error::H3_NO_ERROR);
                            return Err(e);
                        }
                    },
                    Event::ConnectionLost { reason } => {
                        return Err(lost(&reason, &connector, target, timeout))
                    }
                    _ => {}
                }
            }
            let limit = if answered { done_by } else { answer_by };
            if Instant::now() >= limit {
                return Err(match answered {
                    false if refused => port_closed(),
                    false => no_answer(addr, connect_timeout),
                    true => SetupError::Tls {
                        addr,
                        message: crate::setup::handshake_timed_out(timeout),
                    },
                });
            }
            match quic.turn(limit) {
                Ok(Turn::Datagram) => answered = true,
                Ok(Turn::Quiet) => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => match closed {
                    ClosedPort::Refuses => return Err(port_closed()),
                    ClosedPort::WaitsForIt => refused = true,
                },
                Err(e) => return Err(connect_err(e)),
            }
        }
    }

    /// Sends what the connection has to send and passes its endpoint events on.
    pub(crate) fn flush(&mut self) {
        let now = Instant::now();
        let sock = &self.sock;
        flush(&mut self.conn, now, &mut self.buf, |d| {
            let _ = sock.send(d);
        });
        while let Some(ev) = self.conn.poll_endpoint_events() {
            if let Some(ev) = self.endpoint.handle_event(self.handle, ev) {
                self.conn.handle_event(ev);
            }
        }
    }

    /// Waits for one datagram until `limit` or QUIC's next timer, whichever is first, and
    /// hands it to QUIC; a timer that came due is met. An error is the socket's (ICMP port
    /// unreachable: `ConnectionRefused`).
    pub(crate) fn turn(&mut self, limit: Instant) -> io::Result<Turn> {
        let now = Instant::now();
        let wake = self.conn.poll_timeout().map_or(limit, |t| t.min(limit));
        let _ = self.sock.set_read_timeout(Some(
            wake.saturating_duration_since(now)
                .max(Duration::from_millis(1)),
        ));
        match self.sock.recv(&mut self.rbuf) {
            Ok(n) => {
                let data = bytes::BytesMut::from(&self.rbuf[..n]);
                self.buf.clear();
                match self.endpoint.handle(
                    Instant::now(),
                    self.addr,
                    None,
                    None,
                    data,
                    &mut self.buf,
                ) {
                    Some(DatagramEvent::ConnectionEvent(_, ev)) => self.conn.handle_event(ev),
                    Some(DatagramEvent::Response(t)) => {
                        let _ = self.sock.send(&self.buf[..t.size]);
                    }
                    _ => {}
                }
                self.buf.clear();
                Ok(Turn::Datagram)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                let now = Instant::now();
                if self.conn.poll_timeout().is_some_and(|t| t <= now) {
                    self.conn.handle_timeout(now);
                }
                Ok(Turn::Quiet)
            }
            Err(e) => Err(e),
        }
    }

    /// Closes the connection with HTTP/3's `code`, its CONNECTION_CLOSE sent at once.
    pub(crate) fn close(&mut self, code: u64) {
        let sock = &self.sock;
        close(&mut self.conn, Instant::now(), code, &mut self.buf, |d| {
            let _ = sock.send(d);
        });
    }
}

fn no_answer(addr: SocketAddr, timeout: Duration) -> SetupError {
    SetupError::NoHttp3 {
        addr,
        reason: Text::plain(format!(
            "nothing answered QUIC's Initial on UDP port {} within {timeout:?} (",
            addr.port()
        ))
        .name(Setting::ConnectTimeout)
        .then("): enable HTTP/3 on the server and open its UDP port, or ")
        .drop(Setting::Http3),
    }
}

/// True once the handshake ended with the server choosing `h3` by ALPN.
pub(crate) fn chose_h3(conn: &quinn_proto::Connection) -> bool {
    let alpn = conn
        .crypto_session()
        .handshake_data()
        .and_then(|d| {
            d.downcast::<quinn_proto::crypto::rustls::HandshakeData>()
                .ok()
        })
        .and_then(|d| d.protocol);
    alpn.as_deref() == Some(b"h3")
}

/// The handshake ended with the server's choice of ALPN: `h3` or nothing else.
fn check_alpn(conn: &quinn_proto::Connection, addr: SocketAddr) -> Result<(), SetupError> {
    match chose_h3(conn) {
        true => Ok(()),
        false => Err(SetupError::NoHttp3 {
            addr,
            reason: Text::plain("it did not select h3 by ALPN: enable HTTP/3 on the server, or ")
                .drop(Setting::Http3),
        }),
    }
}

/// TLS alerts travel in QUIC as transport error 0x100 + the alert (RFC 9001 4.8).
fn alert_of(code: u64) -> Option<u8> {
    (0x100..0x200).contains(&code).then(|| (code - 0x100) as u8)
}

/// No application protocol: the server knows no `h3`.
const NO_APPLICATION_PROTOCOL: u8 = 120;

/// Why the preflight's handshake failed, worded as the same failure over TCP is: a
/// certificate the verifier refused by [`tls::explain`].
fn lost(
    reason: &ConnectionError,
    connector: &Connector,
    target: &Target,
    timeout: Duration,
) -> SetupError {
    let addr = target.addr;
    if let Some(e) = connector.refused() {
        return SetupError::Tls {
            addr,
            message: tls::explain(&e, &target.host),
        };
    }
    let code = match reason {
        ConnectionError::TransportError(e) => Some(u64::from(e.code)),
        ConnectionError::ConnectionClosed(c) => Some(u64::from(c.error_code)),
        _ => None,
    };
    if code.and_then(alert_of) == Some(NO_APPLICATION_PROTOCOL) {
        return SetupError::NoHttp3 {
            addr,
            reason: Text::plain("it knows no h3 by ALPN: enable HTTP/3 on the server, or ")
                .drop(Setting::Http3),
        };
    }
    let message: Text = match reason {
        ConnectionError::TimedOut => crate::setup::handshake_timed_out(timeout),
        ConnectionError::TransportError(e) => format!("the QUIC handshake failed: {e}").into(),
        ConnectionError::ConnectionClosed(c) => {
            format!("the server closed the QUIC handshake: {c}").into()
        }
        ConnectionError::ApplicationClosed(c) => {
            format!("the server closed the connection: {c}").into()
        }
        other => format!("the QUIC handshake failed: {other}").into(),
    };
    SetupError::Tls { addr, message }
}

pub mod blocking;
pub(crate) mod response;
pub(crate) mod uni;

#[cfg(test)]
mod tests;
