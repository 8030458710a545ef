// The Rust reader's answer: std::net only, one connection at a time, no threads.
// Every request gets a 302 to one of N avatars and the connection is closed.
//
//   rustc -C opt-level=3 -o server main.rs
//   ./server PORT N [TEMPLATE]        TEMPLATE's {n} becomes 1..=N

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};
use std::{env, process};

const DEFAULT_TEMPLATE: &str = "https://avatar.example/Renard-{n}.png";
// A request head bigger than this is not a browser asking for an avatar.
const MAX_HEAD: usize = 8192;
// One client at a time means a silent one stalls everybody: the whole head
// must arrive within this long (a deadline, not a per-read timeout, so a
// client dribbling one byte at a time can't stretch it either).
const HEAD_DEADLINE: Duration = Duration::from_secs(1);

// xorshift64*: plenty for picking an avatar, and std has no RNG of its own.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        // RandomState is keyed from the OS's random source: a free seed.
        let seed = RandomState::new().build_hasher().finish();
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    // 1..=n by multiply-shift; the bias for n <= 65535 is below 2^-48.
    fn pick(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64 + 1
    }
}

fn usage() -> ! {
    eprintln!("usage: server PORT N [TEMPLATE]   (N in 1..=65535, TEMPLATE default {DEFAULT_TEMPLATE})");
    process::exit(2);
}

// Reads until the end of the request head; None for EOF, timeout, reset or
// a head that outgrows the buffer.
fn read_head(stream: &mut TcpStream, buf: &mut [u8; MAX_HEAD]) -> Option<usize> {
    let deadline = Instant::now() + HEAD_DEADLINE;
    let mut len = 0;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        stream.set_read_timeout(Some(left.max(Duration::from_millis(1)))).ok()?;
        let got = match stream.read(&mut buf[len..]) {
            Ok(0) => return None,
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        // Only the new bytes (and 3 before them) can complete "\r\n\r\n".
        let from = len.saturating_sub(3);
        len += got;
        if let Some(end) = buf[from..len].windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(from + end);
        }
        if len == buf.len() {
            return None;
        }
    }
}

// "METHOD SP target SP HTTP/1.x": enough to tell a request from noise.
fn is_request_line(head: &[u8]) -> bool {
    let line = head.split(|&b| b == b'\r').next().unwrap_or(b"");
    let mut parts = line.split(|&b| b == b' ');
    let method = parts.next().unwrap_or(b"");
    let target = parts.next().unwrap_or(b"");
    let version = parts.next().unwrap_or(b"");
    !method.is_empty()
        && method.iter().all(|b| b.is_ascii_alphabetic() || *b == b'-')
        && !target.is_empty()
        && version.starts_with(b"HTTP/1.")
        && parts.next().is_none()
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.len() < 3 || args.len() > 4 {
        usage();
    }
    let port: u16 = args[1].parse().unwrap_or_else(|_| usage());
    let n: u64 = match args[2].parse() {
        Ok(n) if (1..=65535).contains(&n) => n,
        _ => usage(),
    };
    let template = args.get(3).map_or(DEFAULT_TEMPLATE, String::as_str);
    // The number is the glue between the pieces, however many {n} there are.
    let pieces: Vec<&str> = template.split("{n}").collect();

    let listener = TcpListener::bind(("127.0.0.1", port)).unwrap_or_else(|e| {
        eprintln!("bind 127.0.0.1:{port}: {e}");
        process::exit(1);
    });
    let addr = listener.local_addr().expect("local_addr");
    eprintln!("listening on {addr}");

    let mut rng = Rng::new();
    let mut head = [0u8; MAX_HEAD];
    let mut response = Vec::with_capacity(256);

    // SIGPIPE is already ignored by the Rust runtime, so a client that
    // resets costs a write error, not the process. SIGTERM keeps its default
    // action: there is nothing to flush, so dying at once is the clean exit.
    for stream in listener.incoming() {
        let mut stream = match stream {
            Ok(s) => s,
            Err(_) => continue, // ECONNABORTED and friends: next one
        };
        response.clear();
        match read_head(&mut stream, &mut head) {
            Some(end) if is_request_line(&head[..end]) => {
                let number = rng.pick(n).to_string();
                response.extend_from_slice(b"HTTP/1.1 302 Found\r\nLocation: ");
                response.extend_from_slice(pieces.join(&number).as_bytes());
                response.extend_from_slice(
                    b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
            Some(_) => response.extend_from_slice(
                b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            ),
            None => continue,
        }
        // About 100 bytes into a fresh socket's send buffer: this never blocks.
        // Errors mean the client left; dropping the stream closes it either way.
        let _ = stream.write_all(&response);
    }
}
