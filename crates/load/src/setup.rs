//! What a run needs from the machine before it starts: enough open files, and a target
//! that answers a first connect (and, for https, completes a first TLS handshake with a
//! certificate that verifies); and the blocking connection outside a run that the
//! shootout verifies answers over ([`connect_blocking`]).

use std::io;
use std::net::TcpStream;
use std::time::Duration;

use crate::setting::{Setting, Text};
use crate::tls::{self, Connector, TlsError, TlsOptions};
use crate::{Plan, Protocol, Scheme, Target};

/// Why a run cannot start on this machine or against this target. Its advice names
/// settings ([`SetupError::text`]), which each caller words.
#[derive(Debug)]
pub enum SetupError {
    /// Nothing listens at the target's address.
    Refused {
        /// The target's address.
        addr: std::net::SocketAddr,
    },
    /// The first connect got no answer.
    ConnectTimeout {
        /// The target's address.
        addr: std::net::SocketAddr,
        /// The connect timeout.
        timeout: Duration,
    },
    /// The first connect failed otherwise.
    Connect {
        /// The target's address.
        addr: std::net::SocketAddr,
        /// The operating system's reason.
        reason: std::io::Error,
    },
    /// The hard open-files limit is below what the run needs.
    FdLimit {
        /// Connections asked for.
        connections: usize,
        /// Open files needed.
        need: u64,
        /// The hard limit.
        hard: u64,
    },
    /// The TLS configuration could not be built (a bad CA file, no system roots).
    TlsConfig(TlsError),
    /// The first TLS handshake failed: a certificate that does not verify, a server that
    /// does not speak TLS or HTTP/1.1 over it. Never counted as load errors.
    Tls {
        /// The target's address.
        addr: std::net::SocketAddr,
        /// What went wrong and what to do, in one line.
        message: Text,
    },
    /// HTTP/2 asked of a server that does not speak it.
    NoHttp2 {
        /// The target's address.
        addr: std::net::SocketAddr,
        /// What it did instead, and what to do.
        reason: Text,
    },
    /// HTTP/3 asked of a server that does not speak it: nothing answered QUIC's Initial,
    /// or ALPN chose no `h3`.
    NoHttp3 {
        /// The target's address.
        addr: std::net::SocketAddr,
        /// What happened, and what to do.
        reason: Text,
    },
    /// The limit could not be read or raised.
    Rlimit(nix::Error),
}

impl SetupError {
    /// What went wrong and how to fix it, its settings left for the caller to word.
    pub fn text(&self) -> Text {
        match self {
            SetupError::Refused { addr } => {
                format!("connection refused by {addr}: is the server running?").into()
            }
            SetupError::ConnectTimeout { addr, timeout } => Text::plain(format!(
                "cannot connect to {addr}: no answer within {timeout:?} ("
            ))
            .name(Setting::ConnectTimeout)
            .then(")"),
            SetupError::Connect { addr, reason } => {
                format!("cannot connect to {addr}: {reason}").into()
            }
            SetupError::FdLimit { connections, need, hard } => format!(
                "{connections} connections need {need} open files but the hard limit is {hard}: raise it (ulimit -Hn, or LimitNOFILE= in systemd) or use fewer connections"
            )
            .into(),
            SetupError::TlsConfig(e) => e.text(),
            SetupError::Tls { addr, message } => {
                Text::plain(format!("TLS to {addr}: ")).and(message.clone())
            }
            SetupError::NoHttp2 { addr, reason } => {
                Text::plain(format!("{addr} does not speak HTTP/2: ")).and(reason.clone())
            }
            SetupError::NoHttp3 { addr, reason } => {
                Text::plain(format!("{addr} does not speak HTTP/3: ")).and(reason.clone())
            }
            SetupError::Rlimit(e) => {
                format!("cannot raise the open-files limit (RLIMIT_NOFILE): {e}").into()
            }
        }
    }
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text().fmt(f)
    }
}

impl std::error::Error for SetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SetupError::TlsConfig(e) => e.source(),
            _ => None,
        }
    }
}

impl From<TlsError> for SetupError {
    fn from(e: TlsError) -> SetupError {
        SetupError::TlsConfig(e)
    }
}

/// A blocking connection to a target, plain or TLS: what [`connect_blocking`] opens.
pub struct Connection {
    stream: Stream,
}

enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Connection {
    /// The TCP socket under it, to set timeouts or options on.
    pub fn tcp(&self) -> &TcpStream {
        match &self.stream {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }

    /// Over TLS, whether the server selected `h2` by ALPN; `None` over plain TCP.
    fn h2_by_alpn(&self) -> Option<bool> {
        match &self.stream {
            Stream::Plain(_) => None,
            Stream::Tls(s) => Some(s.conn.alpn_protocol() == Some(b"h2")),
        }
    }
}

impl From<TcpStream> for Connection {
    /// A plain connection already open.
    fn from(sock: TcpStream) -> Connection {
        Connection {
            stream: Stream::Plain(sock),
        }
    }
}

impl io::Read for Connection {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.stream {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl io::Write for Connection {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.stream {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.stream {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// The advice for a TLS handshake that `timeout` (the response timeout, which bounds a
/// handshake) ran out on: a server that speaks no TLS keeps waiting for a request.
pub fn handshake_timed_out(timeout: Duration) -> Text {
    Text::plain(format!("no TLS handshake within {timeout:?} ("))
        .name(Setting::Timeout)
        .then("): is it a TLS server?")
}

/// A blocking TLS handshake on `sock` with `target`, bounded by `timeout`.
fn handshake(
    target: &Target,
    tls: &TlsOptions,
    timeout: Duration,
    mut sock: TcpStream,
    http2: bool,
) -> Result<rustls::StreamOwned<rustls::ClientConnection, TcpStream>, SetupError> {
    let addr = target.addr;
    let host = &target.host;
    let alpn = match http2 {
        true => tls::Alpn::H2,
        false => tls::Alpn::Http1,
    };
    let connector = Connector::new(host, tls, alpn)?;
    let fail = |message: Text| SetupError::Tls { addr, message };
    let mut session = connector
        .session()
        .map_err(|e| fail(tls::explain(&e, host)))?;
    let _ = sock.set_read_timeout(Some(timeout));
    let _ = sock.set_write_timeout(Some(timeout));
    while session.is_handshaking() {
        if let Err(e) = session.complete_io(&mut sock) {
            let message = match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                Some(rustls::Error::AlertReceived(
                    rustls::AlertDescription::NoApplicationProtocol,
                )) if http2 => {
                    return Err(SetupError::NoHttp2 {
                        addr,
                        reason: no_h2_over_alpn(host),
                    })
                }
                Some(tls_err) => tls::explain(tls_err, host),
                None => match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                        handshake_timed_out(timeout)
                    }
                    io::ErrorKind::UnexpectedEof
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe => {
                        "the server closed the connection during the TLS handshake: is it a TLS server? use http:// for plain HTTP".into()
                    }
                    _ => format!("TLS handshake failed: {e}").into(),
                },
            };
            return Err(fail(message));
        }
    }
    let mut stream = rustls::StreamOwned::new(session, sock);
    if connector.client_cert_asked()
        && stream.conn.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3)
    {
        refused_after_handshake(&mut stream, timeout, host).map_err(fail)?;
    }
    Ok(stream)
}

/// TLS 1.3 finishes the client's side of the handshake before the server has judged its
/// certificate: a server that refuses it (or its absence) says so in the first record
/// after. So when the server asked for one, wait for that first record before calling the
/// handshake good: the alert, or what a server that accepted sends at once (its session
/// tickets: nginx, OpenSSL, rustls and Go all send them unasked). A server that sends
/// nothing is taken as accepting once `timeout` (the run's --timeout) has passed; before,
/// the preflight waited a fixed second every time, and missed a refusal slower than that.
fn refused_after_handshake(
    stream: &mut rustls::StreamOwned<rustls::ClientConnection, TcpStream>,
    timeout: Duration,
    host: &str,
) -> Result<(), Text> {
    use std::io::Read as _;
    let closed = || {
        Text::plain("the server closed the connection right after the TLS handshake: it may require a client certificate (")
            .give(&[Setting::ClientCert])
            .then(")")
    };
    let deadline = std::time::Instant::now() + timeout;
    // Bytes read, kept only to tell when a whole record has come (5-byte header, length).
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    // The client's last flight (its certificate and Finished) may still be queued.
    while stream.conn.wants_write() {
        if stream.conn.write_tls(&mut stream.sock).is_err() {
            return Err(closed());
        }
    }
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        let _ = stream.sock.set_read_timeout(Some(left));
        let n = match stream.sock.read(&mut chunk) {
            Ok(0) => return Err(closed()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // Nothing came: the server kept the connection, certificate accepted.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(())
            }
            Err(_) => return Err(closed()),
        };
        // Every byte goes to the session, which keeps what it does not process yet.
        let mut rest = &chunk[..n];
        while !rest.is_empty() {
            match stream.conn.read_tls(&mut rest) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => return Err(closed()),
            }
            match stream.conn.process_new_packets() {
                Err(e) => return Err(tls::explain(&e, host)),
                Ok(state) if state.peer_has_closed() => return Err(closed()),
                Ok(_) => {}
            }
        }
        seen.extend_from_slice(&chunk[..n]);
        if whole_record(&seen) {
            return Ok(());
        }
    }
}

/// True when `bytes` begin with a whole TLS record.
fn whole_record(bytes: &[u8]) -> bool {
    bytes.len() >= 5 && bytes.len() >= 5 + usize::from(u16::from_be_bytes([bytes[3], bytes[4]]))
}

/// Open files a run of `connections` needs: one per connection, and 64 for the rest
/// (stdio, epoll and timer fds, the sampler's files).
pub fn fds_needed(connections: u64) -> u64 {
    connections + 64
}

/// Raises the soft open-files limit to the hard one when `connections` need more than the
/// soft limit allows (one file per connection, and a margin for the rest). Fails when even
/// the hard limit is too low, after raising the soft limit as far as it goes: a caller that
/// only warns (the shootout) still runs with every file the machine allows. Processes
/// started afterwards inherit the raised limit.
pub fn raise_fd_limit(connections: usize) -> Result<(), SetupError> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let need = fds_needed(connections as u64);
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(SetupError::Rlimit)?;
    if soft >= need {
        return Ok(());
    }
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).map_err(SetupError::Rlimit)?;
    if hard < need {
        return Err(SetupError::FdLimit {
            connections,
            need,
            hard,
        });
    }
    Ok(())
}

/// One blocking connect before the run, so that a dead target is one clear error, not a
/// report full of connect failures. For https it also completes one TLS handshake with
/// the run's settings, so that a certificate that does not verify, or a server that does
/// not speak TLS, stops the run with one line rather than counting as load errors.
///
/// Under `--http3` it is a QUIC handshake instead ([`crate::h3::preflight`]).
///
/// Under `--http2` it also checks that the server speaks HTTP/2: over TLS, that it selected
/// `h2` by ALPN; over plain TCP, that it answers the h2c preface with SETTINGS.
pub fn preflight(plan: &Plan) -> Result<(), SetupError> {
    if let Protocol::Http3(_) = plan.protocol {
        return crate::h3::preflight(plan);
    }
    let http2 = matches!(plan.protocol, Protocol::Http2(_));
    let conn = open(
        &plan.target,
        &plan.tls,
        plan.connect_timeout,
        plan.timeout,
        http2,
    )?;
    if http2 {
        check_h2(conn, &plan.target, plan.timeout)?;
    }
    Ok(())
}

fn no_h2_over_alpn(host: &str) -> Text {
    Text::plain(format!("{host} did not select h2 by ALPN: enable HTTP/2 on the server (nginx: `listen ... ssl http2;`), or "))
        .drop(Setting::Http2)
}

/// Checks that the server at the other end of `conn` speaks HTTP/2.
fn check_h2(mut conn: Connection, target: &Target, timeout: Duration) -> Result<(), SetupError> {
    use std::io::{Read as _, Write as _};
    let addr = target.addr;
    let fail = |reason: Text| SetupError::NoHttp2 { addr, reason };
    if conn.h2_by_alpn() == Some(false) {
        return Err(fail(no_h2_over_alpn(&target.host)));
    }
    let _ = conn.tcp().set_read_timeout(Some(timeout));
    let mut hello = crate::h2::frame::PREFACE.to_vec();
    crate::h2::frame::put_settings(&mut hello, &[]);
    let mut head = [0u8; crate::h2::frame::HEADER_LEN];
    let got = conn
        .write_all(&hello)
        .and_then(|()| conn.read_exact(&mut head));
    preface_answer(got.map(|()| &head[..]), timeout).map_err(fail)?;
    // Its SETTINGS (at most our frame size: a larger one is the run's to refuse).
    let len = crate::h2::frame::Header::parse(&head).len;
    let mut payload = vec![0u8; len.min(crate::h2::frame::DEFAULT_MAX_FRAME as usize)];
    if conn.read_exact(&mut payload).is_ok() && allows_no_streams(&payload) {
        return Err(fail(
            "it allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0): raise the server's limit (nginx: http2_max_concurrent_streams)".into(),
        ));
    }
    Ok(())
}

/// Whether the first bytes a server sent after our connection preface are its SETTINGS:
/// the reason it does not speak HTTP/2 when they are not (or when none came).
pub(crate) fn preface_answer(head: io::Result<&[u8]>, timeout: Duration) -> Result<(), Text> {
    match head {
        Ok(head)
            if head.len() >= crate::h2::frame::HEADER_LEN
                && crate::h2::frame::Header::parse(head).kind == crate::h2::frame::kind::SETTINGS =>
        {
            Ok(())
        }
        Ok(head) if head.starts_with(b"HTTP/") => Err(Text::plain(
            "it answered the h2c preface with HTTP/1: enable h2c (nginx: `listen ... http2;`), use https:// for h2 over TLS, or ",
        )
        .drop(Setting::Http2)),
        Ok(head) => Err(format!(
            "it answered the connection preface with {head:02x?}, not SETTINGS: is it an HTTP/2 server?"
        )
        .into()),
        Err(e) => Err(Text::plain(format!(
            "no SETTINGS in answer to the connection preface within {timeout:?} ({e}): enable HTTP/2 on the server, or "
        ))
        .drop(Setting::Http2)),
    }
}

/// A blocking connection for HTTP/2 outside a run ([`crate::h2::blocking`]): over TLS, `h2`
/// offered alone by ALPN and required; over plain TCP, the caller checks the answer to
/// its preface ([`preface_answer`]).
pub(crate) fn connect_h2(
    target: &Target,
    tls: &TlsOptions,
    timeout: Duration,
) -> Result<Connection, SetupError> {
    let conn = open(target, tls, timeout, timeout, true)?;
    if conn.h2_by_alpn() == Some(false) {
        return Err(SetupError::NoHttp2 {
            addr: target.addr,
            reason: no_h2_over_alpn(&target.host),
        });
    }
    Ok(conn)
}

/// A SETTINGS payload that sets MAX_CONCURRENT_STREAMS to 0 (the last value of a setting
/// counts, RFC 9113 6.5.3).
fn allows_no_streams(settings: &[u8]) -> bool {
    settings
        .chunks_exact(6)
        .rfind(|p| {
            u16::from_be_bytes([p[0], p[1]]) == crate::h2::frame::setting::MAX_CONCURRENT_STREAMS
        })
        .is_some_and(|p| p[2..] == [0, 0, 0, 0])
}

/// A blocking connection to `target` for a few requests outside a run (the shootout's
/// verification): the connect bounded by `timeout`, and for https the handshake too, with
/// the same client configuration and the same one-line errors as [`preflight`]. Reads
/// and writes have no timeout until the caller sets one on [`Connection::tcp`].
pub fn connect_blocking(
    target: &Target,
    tls: &TlsOptions,
    timeout: Duration,
) -> Result<Connection, SetupError> {
    open(target, tls, timeout, timeout, false)
}

fn open(
    target: &Target,
    tls: &TlsOptions,
    connect_timeout: Duration,
    timeout: Duration,
    http2: bool,
) -> Result<Connection, SetupError> {
    let addr = target.addr;
    let sock = match TcpStream::connect_timeout(&addr, connect_timeout) {
        Ok(sock) => sock,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            return Err(SetupError::Refused { addr })
        }
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            return Err(SetupError::ConnectTimeout {
                addr,
                timeout: connect_timeout,
            })
        }
        Err(reason) => return Err(SetupError::Connect { addr, reason }),
    };
    let stream = match target.scheme {
        Scheme::Http => Stream::Plain(sock),
        Scheme::Https => {
            let s = handshake(target, tls, timeout, sock, http2)?;
            let _ = s.sock.set_read_timeout(None);
            let _ = s.sock.set_write_timeout(None);
            Stream::Tls(Box::new(s))
        }
    };
    Ok(Connection { stream })
}

#[cfg(test)]
mod tests;
