//! The request table adds no allocation per request: a run of 10× the requests allocates
//! no more than a run of 1×, give or take the engine's per-run and per-interval setup.
//!
//! Its own test binary, because the counting allocator it installs counts every thread of
//! the process: in the main test binary, other tests running alongside would be counted.
//! The server here reads into a fixed buffer and writes a fixed answer, so it allocates
//! nothing per request either.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use load::{Control, Plan, RequestSpec, Selection, Stop, Target};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const REDIRECT: &[u8] =
    b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-7.png\r\nContent-Length: 0\r\n\r\n";

/// A thread per connection: counts request heads by their blank line (carrying the last 3
/// bytes across reads) and answers each, with no allocation in the loop.
fn serve(listener: TcpListener) {
    for stream in listener.incoming() {
        let Ok(s) = stream else { continue };
        std::thread::spawn(move || answer(s));
    }
}

fn answer(mut s: std::net::TcpStream) {
    {
        let mut buf = [0u8; 65536];
        let mut tail = [0u8; 3];
        loop {
            let n = match s.read(&mut buf[3..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            buf[..3].copy_from_slice(&tail);
            let heads = buf[..n + 3].windows(4).filter(|w| w == b"\r\n\r\n").count();
            tail.copy_from_slice(&buf[n..n + 3]);
            for _ in 0..heads {
                if s.write_all(REDIRECT).is_err() {
                    break;
                }
            }
        }
    }
}

/// The tests of this binary run one at a time: the allocator counts every thread.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn allocations(plan: &Plan) -> u64 {
    let control = Control::new(plan.effective_threads());
    let before = ALLOCS.load(Ordering::Relaxed);
    let r = load::run(plan, &control).expect("run starts");
    let after = ALLOCS.load(Ordering::Relaxed);
    assert!(r.counts.conserved(), "{:?}", r.counts);
    assert_eq!(r.counts.ok, r.counts.sent, "{:?}", r.counts);
    after - before
}

#[test]
fn templated_requests_from_a_table_allocate_nothing_per_request() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || serve(listener));
    let target = Target::parse(&format!("http://{addr}/{{hex:6}}.svg")).unwrap();
    let mut plan = Plan::new(target.clone());
    plan.requests.push(RequestSpec {
        path: "/doc/{int:1-10000}?q={hex:12}".into(),
        ..RequestSpec::get(&target)
    });
    plan.requests.push(RequestSpec {
        method: "POST".into(),
        body: b"{\"k\":1}".to_vec(),
        ..RequestSpec::get(&target)
    });
    plan.selection = Selection::Random;
    plan.connections = 4;
    plan.threads = 2;
    plan.pipeline = 4;
    // Intervals longer than any run here: their hand-off allocates a histogram each.
    plan.interval = Duration::from_secs(600);
    plan.stop = Stop::Requests(2_000);
    let small = allocations(&plan);
    plan.stop = Stop::Requests(20_000);
    let large = allocations(&plan);
    // 18,000 more requests; one allocation per request would add 18,000 or more.
    assert!(
        large <= small + 200,
        "2,000 requests allocated {small} times, 20,000 allocated {large}"
    );
}

#[path = "support/mod.rs"]
mod support;

/// Over TLS foxbench's own code still allocates nothing per request; rustls's buffered
/// connection does: one `Vec` for each record it encrypts (the request) and one for each it
/// decrypts (the response's plaintext). The bound is those two, and it fails on a third.
#[test]
fn tls_keepalive_allocates_only_rustls_records_per_request() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    use support::tls::{nginx_binary, Certs, Nginx};
    let Some(bin) = nginx_binary() else {
        return;
    };
    let certs = Certs::for_names(&["127.0.0.1"]);
    let ng = Nginx::start(&bin, &certs, "TLSv1.3");
    let target = Target::parse(&format!("https://127.0.0.1:{}/", ng.addr.port())).unwrap();
    let mut plan = Plan::new(target);
    plan.tls.verify = load::Verify::CaFile(certs.ca.clone());
    plan.connections = 4;
    plan.threads = 1;
    plan.interval = Duration::from_secs(600);
    plan.stop = Stop::Requests(2_000);
    let small = allocations(&plan);
    plan.stop = Stop::Requests(20_000);
    let large = allocations(&plan);
    let per_request = (large.saturating_sub(small)) as f64 / 18_000.0;
    eprintln!("TLS keep-alive: {small} allocations for 2,000 requests, {large} for 20,000: {per_request:.2} per request");
    assert!(
        per_request <= 2.05,
        "{per_request:.2} allocations per request over TLS (2,000 requests: {small}, 20,000: {large})"
    );
}

/// HTTP/2 over a kept-alive h2c connection to nginx, templates and 10 streams each: the
/// frames, HPACK (Huffman-coded values from nginx) and stream bookkeeping allocate nothing
/// per request. nginx closes nothing here (keepalive_requests is 1,000,000).
#[test]
fn h2c_keepalive_streams_allocate_nothing_per_request() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    use support::tls::{nginx_binary, Nginx};
    let Some(bin) = nginx_binary() else {
        return;
    };
    let ng = Nginx::h2(&bin, None, 128);
    let target = Target::parse(&format!("http://{}/doc/{{hex:6}}.svg", ng.addr)).unwrap();
    let mut plan = Plan::new(target.clone());
    plan.requests.push(RequestSpec {
        path: "/doc/{int:1-10000}?q={hex:12}".into(),
        ..RequestSpec::get(&target)
    });
    plan.selection = Selection::Random;
    plan.protocol = load::Protocol::Http2(load::H2Options {
        streams: 10,
        ..load::H2Options::default()
    });
    plan.connections = 4;
    plan.threads = 2;
    plan.interval = Duration::from_secs(600);
    plan.stop = Stop::Requests(2_000);
    let small = allocations(&plan);
    plan.stop = Stop::Requests(20_000);
    let large = allocations(&plan);
    assert!(
        large <= small + 200,
        "h2c: 2,000 requests allocated {small} times, 20,000 allocated {large}"
    );
}

/// HTTP/2 with a new h2c connection per request (`--no-keepalive`): the connection's state
/// is reset in place, its buffers and HPACK tables kept, so a reconnect allocates nothing
/// (it built a new connection state, buffers and all, each time).
#[test]
fn h2c_reconnect_per_request_allocates_nothing_per_connection() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    use support::tls::{nginx_binary, Nginx};
    let Some(bin) = nginx_binary() else {
        return;
    };
    let ng = Nginx::h2(&bin, None, 128);
    let target = Target::parse(&format!("http://{}/", ng.addr)).unwrap();
    let mut plan = Plan::new(target);
    plan.protocol = load::Protocol::Http2(load::H2Options::default());
    plan.keepalive = false;
    plan.connections = 2;
    plan.threads = 1;
    plan.interval = Duration::from_secs(600);
    plan.stop = Stop::Requests(200);
    let small = allocations(&plan);
    plan.stop = Stop::Requests(2_000);
    let large = allocations(&plan);
    assert!(
        large <= small + 100,
        "h2c without keep-alive: 200 requests allocated {small} times, 2,000 allocated {large}"
    );
}

/// Failures carry their reasons with no allocation: a run in which every request fails to
/// parse (and its connection is replaced) allocates no more per failure than the
/// reconnect itself does. The server is a separate process, so its own allocations are not
/// counted.
#[test]
fn failures_record_their_reasons_without_allocating() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(python) =
        testkit::require("python3", &["/usr/bin/python3"], "apt-get install python3")
    else {
        return;
    };
    // Answers each connection's first request with a malformed status line, then waits
    // for the client to close.
    let script = "import socket,threading\n\
        s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
        s.bind(('127.0.0.1',0)); s.listen(1024); print(s.getsockname()[1], flush=True)\n\
        def h(c):\n\
        \x20   try:\n\
        \x20       c.recv(65536); c.sendall(b'HTTP/1.1 OK 200 whatever\\r\\n\\r\\n'); c.recv(65536)\n\
        \x20   finally: c.close()\n\
        while True:\n\
        \x20   c,_=s.accept(); threading.Thread(target=h,args=(c,),daemon=True).start()\n";
    /// Kills the server however the test ends.
    struct Child(std::process::Child);
    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Child(
        std::process::Command::new(python)
            .args(["-c", script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 starts"),
    );
    let mut port = String::new();
    {
        use std::io::BufRead as _;
        let out = child.0.stdout.take().unwrap();
        std::io::BufReader::new(out).read_line(&mut port).unwrap();
    }
    let target = Target::parse(&format!("http://127.0.0.1:{}/", port.trim())).unwrap();
    let mut plan = Plan::new(target);
    plan.connections = 2;
    plan.threads = 1;
    plan.interval = Duration::from_secs(600);
    let failures = |plan: &Plan| {
        let control = Control::new(plan.effective_threads());
        let before = ALLOCS.load(Ordering::Relaxed);
        let r = load::run(plan, &control).expect("run starts");
        let after = ALLOCS.load(Ordering::Relaxed);
        assert!(
            r.counts.conserved() && r.counts.reasons_conserved(),
            "{:?}",
            r.counts
        );
        assert_eq!(r.counts.parse, r.counts.sent, "{:?}", r.counts);
        after - before
    };
    plan.stop = Stop::Requests(200);
    let small = failures(&plan);
    plan.stop = Stop::Requests(2_000);
    let large = failures(&plan);
    drop(child);
    let per_failure = (large.saturating_sub(small)) as f64 / 1_800.0;
    eprintln!("parse failures: {small} allocations for 200, {large} for 2,000: {per_failure:.2} per failure");
    assert!(
        per_failure < 0.5,
        "{per_failure:.2} allocations per failed request (200: {small}, 2,000: {large})"
    );
}
