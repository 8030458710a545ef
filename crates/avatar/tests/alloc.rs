//! A kept-alive HTTP/2 connection answers without allocating: after a warm-up, a thousand
//! more requests on it (302s, SVGs, health checks, with HPACK's dynamic table and Huffman
//! coding in play) allocate nothing.
//!
//! Its own test binary, because it installs a counting allocator; the allocator counts only
//! on the thread that asks it to (the test harness's own threads allocate now and then). It
//! drives the connection sans I/O, as the worker does (the worker's read and write buffers
//! are fixed, so the socket adds no allocation per request either).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use avatar::h2::{frame, Conn, Ctx, Scratch};
use avatar::metrics::Metrics;
use avatar::responder::{Next, Responder};
use avatar::rng::Rng;
use avatar::{Config, Site};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Whether this thread's allocations are counted.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTING.with(Cell::get) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A request's header block, as a browser-like client sends it: `:authority` and
/// `user-agent` indexed into the dynamic table on the first request and referenced after.
fn block(path: &str, first: bool) -> Vec<u8> {
    let mut b = vec![0x82, 0x86, 0x04, path.len() as u8];
    b.extend_from_slice(path.as_bytes());
    if first {
        // :authority (static name 1) and user-agent (58), literal with incremental indexing;
        // the agent's value, "foxbench-test/1", Huffman-coded.
        b.extend_from_slice(&[0x41, 9]);
        b.extend_from_slice(b"localhost");
        b.extend_from_slice(&[
            0x7a, 0x8b, 0x94, 0xfe, 0x63, 0x2d, 0x44, 0x9d, 0x64, 0x95, 0x09, 0x60, 0x3f,
        ]);
    } else {
        b.extend_from_slice(&[0xbf, 0xbe]);
    }
    b
}

fn headers(stream: u32, block: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    frame::put_header(&mut f, block.len(), 1, 0x4 | 0x1, stream);
    f.extend_from_slice(block);
    f
}

#[test]
fn kept_alive_h2_connection_allocates_nothing_per_request() {
    let config = Config::default();
    let site = Arc::new(Site::from_config(&config).unwrap());
    let metrics = Arc::new(Metrics::new(1));
    let mut responder = Responder::new(site, Arc::clone(&metrics), 0, Rng::from_seed(7), 0);
    let mut scratch = Scratch::new();
    let mut conn = Conn::new();
    let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
    let paths = ["/", "/00ff00.svg", "/healthz", "/random.svg"];
    // Every request's bytes are made up front: the client's allocations are not counted.
    let mut input = frame::PREFACE.to_vec();
    frame::put_settings(&mut input, &[]);
    // A large connection window, as h2load and foxbench open with: flow control then never
    // holds a body back (held bodies are the one copy a response may need).
    frame::put_window_update(&mut input, 0, 1 << 30);
    let mut requests = Vec::new();
    for i in 0..1100u32 {
        let path = paths[i as usize % paths.len()];
        requests.push(headers(2 * i + 1, &block(path, i == 0)));
    }
    let mut feed = |bytes: &[u8], out: &mut Vec<u8>| {
        let mut cx = Ctx {
            responder: &mut responder,
            scratch: &mut scratch,
            metrics: metrics.worker(0),
            limits: &config.limits,
            peer: None,
            now_s: 0,
        };
        let o = conn.process(bytes, out, usize::MAX, &mut cx);
        assert_eq!(o.consumed, bytes.len());
        assert_eq!(o.next, Next::NeedInput);
        out.clear();
    };
    feed(&input, &mut out);
    for r in &requests[..100] {
        feed(r, &mut out);
    }
    // The counter itself counts: one allocation on this thread is seen.
    let before = ALLOCS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    drop(std::hint::black_box(Vec::<u8>::with_capacity(1)));
    COUNTING.with(|c| c.set(false));
    assert_eq!(ALLOCS.load(Ordering::Relaxed) - before, 1);

    let before = ALLOCS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    for r in &requests[100..] {
        feed(r, &mut out);
    }
    COUNTING.with(|c| c.set(false));
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert_eq!(allocs, 0, "allocations over 1000 kept-alive h2 requests");
    let answered: u64 = [
        (
            avatar::metrics::Route::Redirect,
            avatar::metrics::Status::Found,
        ),
        (avatar::metrics::Route::Svg, avatar::metrics::Status::Ok),
        (avatar::metrics::Route::Healthz, avatar::metrics::Status::Ok),
        (
            avatar::metrics::Route::RandomSvg,
            avatar::metrics::Status::Found,
        ),
    ]
    .iter()
    .map(|&(r, s)| metrics.requests(r, s))
    .sum();
    assert_eq!(answered, 1100, "every request was answered, none refused");
}
