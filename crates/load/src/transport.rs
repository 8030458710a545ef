//! A connection's byte stream, behind one type: plain TCP, or TLS over TCP with its
//! handshake inside "connecting".
//!
//! The worker's byte stream (`worker/stream.rs`, under its HTTP/1.1 and HTTP/2
//! implementations) never touches the socket itself. It asks the transport to connect, to
//! make progress while connecting ([`Transport::poll_connect`]), to write and to read; a read
//! says whether the stream may hold more ([`Read::drained`]), so that the edge-triggered
//! loop skips the read that would only return `EAGAIN` where that is safe.
//!
//! TLS uses rustls's buffered connection, non-blocking: `read_tls`, `process_new_packets`
//! and `write_tls`, driven by the worker's readiness edges, never `complete_io`. A request
//! is encrypted into rustls's output queue and leaves in one `writev`; ciphertext that the
//! socket did not take stays queued ([`Transport::pending`]) until the next writable edge.
//! rustls queues at most 64 KiB of ciphertext, so it takes a larger write (a large request
//! body, a pipelined batch) in part even when the socket has room; no edge comes then, and
//! [`Transport::socket_full`] tells the worker to write on.
//! A socket read that came back short proves the socket drained, as for plain TCP, so a
//! kept-alive TLS request costs one write and usually one read.
//!
//! Every read of the socket is a `recvmsg` that takes the kernel's receive stamp
//! ([`crate::stamps`]), plain or under TLS (rustls reads its ciphertext through
//! [`ShortRead`], which does the same); a read returns the stamp of the latest socket read
//! behind its bytes ([`Read::Data`]).
//!
//! A sample of the writes is stamped too, as the bytes leave the TCP stack
//! ([`Transport::stamp_sends`]); the transport counts the bytes it gave the socket
//! ([`Transport::sent_bytes`], ciphertext under TLS), which is what the kernel's keys count,
//! and drains the stamps from the socket's error queue ([`Transport::drain_sends`]).

use std::io::{self, Read as _, Write as _};
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd};

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use rustls::ClientConnection;

use crate::stamps::{self, ControlBuf, SendStamp};
use crate::tls::{self, Connector, Handshake, TlsInfo};

/// What one read returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// `n` bytes. `drained`: nothing more can be read until a new readiness edge.
    /// `stamp_ns`: when the kernel received them (the latest socket read behind them), on
    /// CLOCK_REALTIME; `None` when the socket gave no stamp.
    Data {
        n: usize,
        drained: bool,
        stamp_ns: Option<i64>,
    },
    /// The peer closed its side: with TLS's close_notify, or at the TCP level.
    Eof {
        /// The close was TLS's close_notify, not a bare TCP close.
        close_notify: bool,
    },
}

/// The byte stream of one connection.
#[derive(Debug)]
pub(crate) enum Transport {
    /// Plain TCP.
    Tcp {
        stream: TcpStream,
        /// True once the connect is known to have completed.
        established: bool,
        /// What the socket was given: its bytes, and whether they can be stamped.
        sends: Sends,
    },
    /// TLS over TCP.
    Tls(Box<TlsStream>),
}

/// A TLS session and its socket.
#[derive(Debug)]
pub(crate) struct TlsStream {
    stream: TcpStream,
    session: ClientConnection,
    /// The TCP connect completed (a first write went through).
    tcp_up: bool,
    /// The server sent close_notify: once its plaintext is read, the stream has ended.
    peer_closed: bool,
    /// The kernel's stamp of the latest ciphertext read from the socket.
    stamp_ns: Option<i64>,
    /// What the socket was given: its ciphertext bytes, and whether they can be stamped.
    sends: Sends,
}

/// The bytes a connection gave its socket, and whether its sends can be stamped.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sends {
    /// Bytes the socket took since stamping was enabled (at the connect): the kernel keys
    /// a send stamp by the offset of the write's last byte among them.
    bytes: u64,
    /// The socket accepted the send stamping flags ([`stamps::enable`]).
    stampable: bool,
}

fn tls_error(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Reads from the socket and notes whether the read came back short: then the socket is
/// drained, and edge-triggered readiness will announce the next byte. With a control
/// buffer it reads with `recvmsg` and keeps the kernel's stamp of the latest read that
/// brought bytes (`None` when that read had none).
struct ShortRead<'a> {
    stream: &'a mut TcpStream,
    short: bool,
    cmsg: Option<&'a mut ControlBuf>,
    stamp_ns: &'a mut Option<i64>,
}

impl io::Read for ShortRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match self.cmsg.as_deref_mut() {
            Some(cmsg) => {
                let got = stamps::receive(self.stream.as_raw_fd(), buf, cmsg)?;
                // Every read that brings bytes sets the stamp, an unstamped one too: its
                // bytes must not pass for ones that arrived with an earlier read.
                if got.n > 0 {
                    *self.stamp_ns = got.stamp_ns;
                }
                got.n
            }
            None => self.stream.read(buf)?,
        };
        self.short = n < buf.len();
        Ok(n)
    }
}

impl Transport {
    /// Starts a non-blocking connect and registers the socket with `registry` for read and
    /// write readiness, once (edge-triggered). With `tls`, the session's ClientHello goes
    /// out as soon as the socket is writable. `stamps`: which stamps to ask the kernel for
    /// ([`crate::stamps::enable`]); a kernel that refuses gives none.
    pub fn connect(
        addr: SocketAddr,
        registry: &Registry,
        token: Token,
        nodelay: bool,
        tls: Option<&Connector>,
        stamps: crate::KernelStamps,
    ) -> io::Result<Self> {
        let session = tls.map(Connector::session).transpose().map_err(tls_error)?;
        let mut stream = TcpStream::connect(addr)?;
        registry.register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)?;
        if nodelay {
            let _ = stream.set_nodelay(true);
        }
        let mut sends = Sends::default();
        if stamps.receive() {
            sends.stampable = stamps::enable(&stream, stamps.send()).unwrap_or(false);
        }
        Ok(match session {
            None => Transport::Tcp {
                stream,
                established: false,
                sends,
            },
            Some(session) => Transport::Tls(Box::new(TlsStream {
                stream,
                session,
                tcp_up: false,
                peer_closed: false,
                stamp_ns: None,
                sends,
            })),
        })
    }

    /// True once the stream carries requests (for TLS: the handshake is done).
    #[inline]
    pub fn is_established(&self) -> bool {
        match self {
            Transport::Tcp { established, .. } => *established,
            Transport::Tls(t) => t.tcp_up && !t.session.is_handshaking(),
        }
    }

    /// True once the TCP connect has completed (for TLS, the handshake may go on).
    pub fn tcp_established(&self) -> bool {
        match self {
            Transport::Tcp { established, .. } => *established,
            Transport::Tls(t) => t.tcp_up,
        }
    }

    /// Makes progress on a connect with nothing to write: `Ok(true)` once established.
    pub fn poll_connect(&mut self) -> io::Result<bool> {
        match self {
            Transport::Tcp {
                stream,
                established,
                ..
            } => {
                if let Some(e) = stream.take_error()? {
                    return Err(e);
                }
                match stream.peer_addr() {
                    Ok(_) => *established = true,
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => {}
                    Err(e) => return Err(e),
                }
                Ok(*established)
            }
            Transport::Tls(t) => {
                t.handshake()?;
                Ok(self.is_established())
            }
        }
    }

    /// The error that ended a connect, if the socket holds one.
    pub fn connect_error(&self) -> Option<io::Error> {
        match self {
            Transport::Tcp { stream, .. } => stream.take_error().ok().flatten(),
            Transport::Tls(t) => t.stream.take_error().ok().flatten(),
        }
    }

    /// Writes what it can of `buf`. While connecting, `NotConnected` means "not yet" and is
    /// returned as `WouldBlock`; so does a TLS handshake still under way.
    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp {
                stream,
                established,
                sends,
            } => match stream.write(buf) {
                Ok(n) => {
                    sends.bytes += n as u64;
                    // On loopback the handshake has usually finished by the time connect
                    // returns: a write that goes through proves it, without a syscall
                    // spent on asking.
                    *established = true;
                    Ok(n)
                }
                Err(e) if !*established && e.kind() == io::ErrorKind::NotConnected => {
                    Err(io::ErrorKind::WouldBlock.into())
                }
                Err(e) => Err(e),
            },
            Transport::Tls(t) => t.write(buf),
        }
    }

    /// After a write that took only part of its buffer: true when the socket is full, so
    /// that a writable edge will come. Over TCP a short write means just that. Over TLS it
    /// may not: rustls takes no more plaintext than fits its queue of unsent ciphertext
    /// (64 KiB, `DEFAULT_BUFFER_LIMIT`), so a larger write comes back short even when the
    /// socket took every record; the socket is full only if ciphertext is still queued.
    #[inline]
    pub fn socket_full(&self) -> bool {
        match self {
            Transport::Tcp { .. } => true,
            Transport::Tls(t) => t.session.wants_write(),
        }
    }

    /// True when ciphertext is queued that the socket has not taken yet.
    #[inline]
    pub fn pending(&self) -> bool {
        match self {
            Transport::Tcp { .. } => false,
            Transport::Tls(t) => t.tcp_up && t.session.wants_write(),
        }
    }

    /// Reads into `buf`, with the kernel's receive stamp (`cmsg` takes the control
    /// message; one buffer serves every connection of a worker).
    #[inline]
    pub fn read(&mut self, buf: &mut [u8], cmsg: Option<&mut ControlBuf>) -> io::Result<Read> {
        match self {
            Transport::Tcp { stream, .. } => {
                // Without stamps a plain read: `recvmsg`'s msghdr costs the kernel a copy in
                // and out that `recvfrom` does without (about 1% of the client's CPU against
                // c-epoll), so a run with stamps off costs what it did before them.
                let got = match cmsg {
                    Some(cmsg) => stamps::receive(stream.as_raw_fd(), buf, cmsg)?,
                    None => stamps::Stamped {
                        n: io::Read::read(stream, buf)?,
                        stamp_ns: None,
                        segment: None,
                    },
                };
                match got.n {
                    0 => Ok(Read::Eof {
                        close_notify: false,
                    }),
                    // Edge-triggered: a short read drained the kernel's buffer, and any
                    // later data raises a new edge.
                    n => Ok(Read::Data {
                        n,
                        drained: n < buf.len(),
                        stamp_ns: got.stamp_ns,
                    }),
                }
            }
            Transport::Tls(t) => t.read(buf, cmsg),
        }
    }

    /// Bytes the socket took since stamping was enabled: ciphertext under TLS.
    #[inline]
    pub fn sent_bytes(&self) -> u64 {
        self.sends().bytes
    }

    /// The socket can stamp what it sends.
    #[inline]
    pub fn stampable(&self) -> bool {
        self.sends().stampable
    }

    fn sends(&self) -> &Sends {
        match self {
            Transport::Tcp { sends, .. } => sends,
            Transport::Tls(t) => &t.sends,
        }
    }

    fn socket(&self) -> &TcpStream {
        match self {
            Transport::Tcp { stream, .. } => stream,
            Transport::Tls(t) => &t.stream,
        }
    }

    /// Turns the stamping of the socket's sends on or off ([`stamps::stamp_sends`]).
    #[inline]
    pub fn stamp_sends(&self, on: bool) -> io::Result<()> {
        stamps::stamp_sends(self.socket(), on)
    }

    /// Reads the send stamps the socket's error queue holds ([`stamps::drain_sends`]).
    pub fn drain_sends(
        &self,
        cmsg: &mut ControlBuf,
        each: impl FnMut(SendStamp),
    ) -> io::Result<usize> {
        stamps::drain_sends(self.socket().as_raw_fd(), cmsg, each)
    }

    /// True when the socket says EPOLLERR now: an error of its own, or a non-empty error
    /// queue. A `poll` with no wait, which leaves the error in place (`SO_ERROR` would
    /// clear it, and the next read would no longer return it).
    pub fn error_raised(&self) -> io::Result<bool> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let mut fds = [PollFd::new(self.socket().as_fd(), PollFlags::empty())];
        poll(&mut fds, PollTimeout::ZERO).map_err(io::Error::from)?;
        Ok(fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLERR)))
    }

    /// The kind of the completed TLS handshake; `None` for plain TCP.
    pub fn handshake(&self) -> Option<Handshake> {
        match self {
            Transport::Tcp { .. } => None,
            Transport::Tls(t) => Some(tls::handshake_kind(&t.session)),
        }
    }

    /// The protocol the server selected by ALPN; `None` for plain TCP or none selected.
    pub fn alpn(&self) -> Option<&[u8]> {
        match self {
            Transport::Tcp { .. } => None,
            Transport::Tls(t) => t.session.alpn_protocol(),
        }
    }

    /// What the TLS handshake negotiated; `None` for plain TCP or before it is done.
    pub fn tls_info(&self) -> Option<TlsInfo> {
        match self {
            Transport::Tcp { .. } => None,
            Transport::Tls(t) => TlsInfo::of(&t.session),
        }
    }
}

impl TlsStream {
    /// Writes queued ciphertext until the queue is empty (`Ok`) or the socket is full
    /// (`WouldBlock`). The first write that goes through proves the TCP connect.
    fn send(&mut self) -> io::Result<()> {
        while self.session.wants_write() {
            match self.session.write_tls(&mut self.stream) {
                Ok(n) => {
                    self.tcp_up = true;
                    self.sends.bytes += n as u64;
                }
                Err(e) if !self.tcp_up && e.kind() == io::ErrorKind::NotConnected => {
                    return Err(io::ErrorKind::WouldBlock.into())
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads what the socket holds into the session and processes it. `Ok(true)` when the
    /// socket came back short (drained) or closed. With `cmsg`, the read is stamped.
    fn receive(&mut self, cmsg: Option<&mut ControlBuf>) -> io::Result<bool> {
        let mut probe = ShortRead {
            stream: &mut self.stream,
            short: false,
            cmsg,
            stamp_ns: &mut self.stamp_ns,
        };
        let n = self.session.read_tls(&mut probe)?;
        let drained = probe.short || n == 0;
        let state = self.session.process_new_packets().map_err(tls_error)?;
        self.peer_closed = state.peer_has_closed();
        if n == 0 && self.session.is_handshaking() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection during the TLS handshake",
            ));
        }
        Ok(drained)
    }

    /// Drives the handshake as far as the socket allows. Reads until the socket is
    /// drained, as edge-triggered readiness requires.
    fn handshake(&mut self) -> io::Result<()> {
        loop {
            match self.send() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !self.tcp_up {
                        return Ok(());
                    }
                }
                Err(e) => return Err(e),
            }
            if !self.session.is_handshaking() {
                return Ok(());
            }
            match self.receive(None) {
                // A flight may have left something to send: loop to send it.
                Ok(false) => {}
                Ok(true) => {
                    if self.session.wants_write() {
                        continue;
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.session.wants_write() {
                        continue;
                    }
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.tcp_up || self.session.is_handshaking() {
            self.handshake()?;
            if !self.tcp_up || self.session.is_handshaking() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
        // Earlier ciphertext first, so records stay in order and nothing grows unbounded.
        self.send()?;
        let n = self.session.writer().write(buf)?;
        match self.send() {
            Ok(()) => {}
            // Queued; the worker flushes it on the next writable edge.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        Ok(n)
    }

    fn read(&mut self, buf: &mut [u8], mut cmsg: Option<&mut ControlBuf>) -> io::Result<Read> {
        // Within this call: the socket is known to hold nothing more.
        let mut drained = false;
        loop {
            match self.session.reader().read(buf) {
                Ok(0) => return Ok(Read::Eof { close_notify: true }),
                Ok(n) => {
                    // After a close_notify no edge will come for the end of the stream,
                    // which waits in the session: the caller must read on to it.
                    return Ok(Read::Data {
                        n,
                        drained: drained && n < buf.len() && !self.peer_closed,
                        stamp_ns: self.stamp_ns,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if drained {
                        return Err(e);
                    }
                }
                // A TCP close without close_notify, as many servers do.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Ok(Read::Eof {
                        close_notify: false,
                    })
                }
                Err(e) => return Err(e),
            }
            drained = self.receive(cmsg.as_deref_mut())?;
            if self.session.wants_write() {
                // An alert or key update to answer; a full socket keeps it queued.
                match self.send() {
                    Err(e) if e.kind() != io::ErrorKind::WouldBlock => return Err(e),
                    _ => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
