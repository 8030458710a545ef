//! Helpers: a guard that runs the binary, raw HTTP over loopback, and tool checks.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_avatar");
pub const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Generous, for a loaded 2-core machine.
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// A running `avatar`, killed on drop.
pub struct Avatar {
    pub child: Child,
    pub addr: SocketAddr,
    pub stderr: Arc<Mutex<String>>,
}

impl Avatar {
    /// Starts the binary on 127.0.0.1 port 0 with `args`, and waits for its listening line.
    #[track_caller]
    pub fn start(args: &[&str]) -> Avatar {
        let mut full: Vec<&str> = Vec::new();
        if !args.contains(&"--listen") {
            full.extend(["--listen", "127.0.0.1:0"]);
        }
        if !args.contains(&"--workers") {
            full.extend(["--workers", "2"]);
        }
        full.extend(args);
        Avatar::spawn(&full)
    }

    /// Starts the binary with exactly `args`.
    #[track_caller]
    pub fn spawn(args: &[&str]) -> Avatar {
        Avatar::spawn_with_stdout(args, Stdio::null())
    }

    /// Starts the binary with exactly `args` and `stdout` (a pipe stays in `child.stdout`).
    #[track_caller]
    pub fn spawn_with_stdout(args: &[&str], stdout: Stdio) -> Avatar {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the avatar binary");
        let stderr = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let log2 = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("avatar: listening on http://") {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_owned();
                    let _ = tx.send(addr);
                }
                log2.lock().unwrap().push_str(&line);
                log2.lock().unwrap().push('\n');
            }
        });
        let mut guard = Avatar {
            child,
            addr: "127.0.0.1:1".parse().unwrap(),
            stderr: log,
        };
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(addr) => guard.addr = addr.parse().expect("listening address"),
            Err(_) => panic!(
                "avatar did not start; stderr:\n{}",
                guard.stderr.lock().unwrap()
            ),
        }
        guard
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn connect(&self) -> TcpStream {
        connect(self.addr)
    }

    /// Sends a signal with kill(1).
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args(["-s", name, &self.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits up to `limit` for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Fetches `/metrics` and returns the value of the sample line starting with `series`.
    pub fn metric(&self, series: &str) -> u64 {
        let mut s = self.connect();
        let resp = roundtrip(&mut s, b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n");
        let body = String::from_utf8(resp.body).unwrap();
        body.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|v| v.trim().parse().ok()))
            .unwrap_or(0)
    }
}

impl Drop for Avatar {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Any child process, killed on drop.
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[track_caller]
pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT).expect("connect to avatar");
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

/// One parsed response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads responses from a socket, keeping bytes across calls.
pub struct Reader {
    pub buf: Vec<u8>,
}

impl Reader {
    pub fn new() -> Self {
        Reader { buf: Vec::new() }
    }

    /// Reads one response; `head_request` means no body follows.
    #[track_caller]
    pub fn read(&mut self, s: &mut TcpStream, head_request: bool) -> Response {
        loop {
            if let Some((resp, used)) = parse_response(&self.buf, head_request) {
                self.buf.drain(..used);
                return resp;
            }
            let mut chunk = [0u8; 65536];
            let n = s.read(&mut chunk).expect("read a response");
            assert!(
                n > 0,
                "connection closed before a full response; got {:?}",
                String::from_utf8_lossy(&self.buf)
            );
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Whether the peer closes (EOF or reset) with nothing more to read.
    #[track_caller]
    pub fn closed(&mut self, s: &mut TcpStream) -> bool {
        let mut chunk = [0u8; 4096];
        match s.read(&mut chunk) {
            Ok(0) => true,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                false
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                false
            }
            Err(_) => true,
        }
    }
}

pub fn parse_response(buf: &[u8], head_request: bool) -> Option<(Response, usize)> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut r = httparse::Response::new(&mut headers);
    let n = match r.parse(buf).expect("valid response syntax") {
        httparse::Status::Complete(n) => n,
        httparse::Status::Partial => return None,
    };
    let status = r.code.unwrap();
    let headers: Vec<(String, String)> = r
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let len = if head_request || status == 304 {
        0
    } else {
        len
    };
    if buf.len() < n + len {
        return None;
    }
    Some((
        Response {
            status,
            headers,
            body: buf[n..n + len].to_vec(),
        },
        n + len,
    ))
}

/// Sends `req` on `s` and reads one response.
#[track_caller]
pub fn roundtrip(s: &mut TcpStream, req: &[u8]) -> Response {
    s.write_all(req).unwrap();
    Reader::new().read(s, req.starts_with(b"HEAD "))
}

/// Fails with the Debian package to install when `tool` cannot run.
#[track_caller]
pub fn require_tool(tool: &str, version_arg: &str, package: &str) {
    let ok = Command::new(tool)
        .arg(version_arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(ok, "`{tool}` is missing: this test needs it; install the Debian package `{package}` (apt-get install -y {package})");
}

/// A fresh temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("avatar-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a small solid-colour PNG.
pub fn write_png(path: &Path, rgb: [u8; 3]) {
    let file = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), 4, 4);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().unwrap();
    let data: Vec<u8> = (0..16).flat_map(|_| rgb).collect();
    w.write_image_data(&data).unwrap();
}

/// Connects with a receive buffer of about `rcvbuf_bytes`, set before the handshake so the
/// window really is that small.
#[track_caller]
pub fn connect_with_rcvbuf(addr: SocketAddr, rcvbuf_bytes: usize) -> TcpStream {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )
    .unwrap();
    socket.set_recv_buffer_size(rcvbuf_bytes).unwrap();
    socket.connect_timeout(&addr.into(), IO_TIMEOUT).unwrap();
    let s: TcpStream = socket.into();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    s.set_nodelay(true).unwrap();
    s
}
