//! A connection's byte stream, behind one type: plain TCP today, and the place where a
//! TLS session slots in (its handshake inside "connecting", its reads not assumed drained).
//!
//! The worker never touches the socket itself. It asks the transport to connect, to make
//! progress while connecting ([`Transport::poll_connect`]), to write and to read; a read
//! says whether the stream may hold more ([`Read::drained`]), so that the edge-triggered
//! loop skips the read that would only return `EAGAIN` where that is safe.

use std::io::{self, Read as _, Write as _};
use std::net::SocketAddr;

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};

/// What one read returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// `n` bytes. `drained`: nothing more can be read until a new readiness edge.
    Data { n: usize, drained: bool },
    /// The peer closed its side.
    Eof,
}

/// The byte stream of one connection.
#[derive(Debug)]
pub(crate) enum Transport {
    /// Plain TCP.
    Tcp {
        stream: TcpStream,
        /// True once the connect is known to have completed.
        established: bool,
    },
}

impl Transport {
    /// Starts a non-blocking connect and registers the socket with `registry` for read and
    /// write readiness, once (edge-triggered).
    pub fn connect(
        addr: SocketAddr,
        registry: &Registry,
        token: Token,
        nodelay: bool,
    ) -> io::Result<Self> {
        let mut stream = TcpStream::connect(addr)?;
        registry.register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)?;
        if nodelay {
            let _ = stream.set_nodelay(true);
        }
        Ok(Transport::Tcp {
            stream,
            established: false,
        })
    }

    /// True once the stream carries requests (for TLS: the handshake is done).
    #[inline]
    pub fn is_established(&self) -> bool {
        match self {
            Transport::Tcp { established, .. } => *established,
        }
    }

    /// Makes progress on a connect with nothing to write: `Ok(true)` once established.
    pub fn poll_connect(&mut self) -> io::Result<bool> {
        match self {
            Transport::Tcp {
                stream,
                established,
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
        }
    }

    /// The error that ended a connect, if the socket holds one.
    pub fn connect_error(&self) -> Option<io::Error> {
        match self {
            Transport::Tcp { stream, .. } => stream.take_error().ok().flatten(),
        }
    }

    /// Writes what it can of `buf`. While connecting, `NotConnected` means "not yet" and is
    /// returned as `WouldBlock`.
    #[inline]
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp {
                stream,
                established,
            } => match stream.write(buf) {
                Ok(n) => {
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
        }
    }

    /// Reads into `buf`.
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<Read> {
        match self {
            Transport::Tcp { stream, .. } => match stream.read(buf)? {
                0 => Ok(Read::Eof),
                // Edge-triggered: a short read drained the kernel's buffer, and any later
                // data raises a new edge.
                n => Ok(Read::Data {
                    n,
                    drained: n < buf.len(),
                }),
            },
        }
    }
}
