//! Small real servers for tests: well-behaved and hostile, over loopback sockets.
//!
//! Each server listens on 127.0.0.1:0, serves every connection on its own thread with a
//! behaviour closure, and counts accepted connections and request heads. Dropping the
//! server stops accepting.
#![allow(dead_code)]

pub mod tls;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Counters shared between a test and its server.
#[derive(Default)]
pub struct Counters {
    pub accepts: AtomicU64,
    pub requests: AtomicU64,
}

/// A running test server.
pub struct Server {
    pub addr: SocketAddr,
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Starts a server whose connections are handled by `handle`.
    pub fn spawn<F>(handle: F) -> Server
    where
        F: Fn(Conn) + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let handle = Arc::new(handle);
        {
            let counters = counters.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    counters.accepts.fetch_add(1, Ordering::Relaxed);
                    let handle = handle.clone();
                    let counters = counters.clone();
                    std::thread::spawn(move || {
                        handle(Conn {
                            stream,
                            counters,
                            buf: Vec::new(),
                        })
                    });
                }
            });
        }
        Server {
            addr,
            counters,
            stop,
        }
    }

    /// The URL of path `/` on this server.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    pub fn accepts(&self) -> u64 {
        self.counters.accepts.load(Ordering::Relaxed)
    }

    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::Relaxed)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
    }
}

/// One accepted connection, with helpers to read request heads.
pub struct Conn {
    pub stream: TcpStream,
    pub counters: Arc<Counters>,
    buf: Vec<u8>,
}

/// A request head as the server saw it.
pub struct Req {
    pub head: String,
}

impl Req {
    pub fn wants_close(&self) -> bool {
        self.head
            .to_ascii_lowercase()
            .contains("\r\nconnection: close")
    }
    pub fn is_head(&self) -> bool {
        self.head.starts_with("HEAD ")
    }
}

impl Conn {
    /// Wraps a stream accepted by a listener the test made itself.
    pub fn from_parts(stream: TcpStream, counters: Arc<Counters>) -> Conn {
        Conn {
            stream,
            counters,
            buf: Vec::new(),
        }
    }

    /// Complete request heads already read but not yet returned by `next_request`.
    pub fn buffered_heads(&self) -> usize {
        self.buf.windows(4).filter(|w| *w == b"\r\n\r\n").count()
    }

    /// Reads the next request head (requests in these tests have no body).
    /// Returns None at EOF or error.
    pub fn next_request(&mut self) -> Option<Req> {
        loop {
            if let Some(end) = find(&self.buf, b"\r\n\r\n") {
                let head: Vec<u8> = self.buf.drain(..end + 4).collect();
                self.counters.requests.fetch_add(1, Ordering::Relaxed);
                return Some(Req {
                    head: String::from_utf8_lossy(&head).into_owned(),
                });
            }
            let mut tmp = [0u8; 4096];
            match self.stream.read(&mut tmp) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(&tmp[..n]),
            }
        }
    }

    /// Takes the next `n` body bytes after a head (fewer at EOF).
    pub fn take_body(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            let mut tmp = [0u8; 4096];
            match self.stream.read(&mut tmp) {
                Ok(0) | Err(_) => break,
                Ok(k) => self.buf.extend_from_slice(&tmp[..k]),
            }
        }
        let n = n.min(self.buf.len());
        self.buf.drain(..n).collect()
    }

    /// Writes bytes, ignoring errors (the client may have gone).
    pub fn send(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok()
    }

    /// Closes with a TCP reset instead of a FIN.
    pub fn reset(self) {
        let sock = socket2::SockRef::from(&self.stream);
        let _ = sock.set_linger(Some(Duration::ZERO));
        drop(self.stream);
    }

    /// Keeps the connection open, reading and discarding, until the peer goes.
    pub fn hold(mut self) {
        let mut tmp = [0u8; 4096];
        let _ = self.stream.set_read_timeout(Some(Duration::from_secs(30)));
        while let Ok(n) = self.stream.read(&mut tmp) {
            if n == 0 {
                break;
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

pub const REDIRECT: &[u8] =
    b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-7.png\r\nContent-Length: 0\r\n\r\n";

/// Answers every request with a 302; closes when asked to.
pub fn redirect_server() -> Server {
    Server::spawn(|mut c| {
        while let Some(req) = c.next_request() {
            if req.wants_close() {
                c.send(b"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                return;
            }
            if !c.send(REDIRECT) {
                return;
            }
        }
    })
}
