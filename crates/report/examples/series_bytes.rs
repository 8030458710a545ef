//! The interval series' heap over a long run, with real rows: 30,000 intervals of 100
//! responses each (10 ms at 10,000 requests per second, latencies spread log-uniformly over
//! 30 µs to 30 ms), live heap bytes printed every 3,000 (issue 25).
//!
//! `cargo run --release -p foxbench-report --example series_bytes [INTERVALS]`
//!
//! A debug build takes minutes: each merge of two rows decodes, adds and re-encodes two
//! 270 KB histograms. The test that runs in CI is `tests/series_alloc.rs`, with sparse rows.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use report::series::Series;
use report::IntervalRow;

struct Counting;

/// Heap bytes allocated and not freed (one thread here).
static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let intervals: u64 = match std::env::args().nth(1) {
        None => 30_000,
        Some(n) => match n.parse() {
            Ok(n) => n,
            Err(_) => {
                eprintln!("series_bytes: INTERVALS must be a whole number, not {n:?}");
                std::process::exit(2);
            }
        },
    };
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next_ns = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let u = (rng >> 11) as f64 / (1u64 << 53) as f64;
        (30_000.0 * 1000f64.powf(u)) as u64
    };
    let base = LIVE.load(Ordering::Relaxed);
    let mut series = Series::for_load();
    let started = Instant::now();
    println!("intervals\tlive_heap_bytes\tcoarse_row_bytes\trows");
    for i in 0..intervals {
        let mut iv = stats::Interval {
            index: i,
            start: Duration::from_millis(10 * i),
            duration: Duration::from_millis(10),
            latency: stats::Latency::new(),
            service: stats::Latency::new(),
            read_latency: stats::Latency::new(),
            client_delay: stats::Latency::new(),
            counts: stats::Counts::default(),
        };
        for _ in 0..100 {
            iv.latency.record_ns(next_ns());
        }
        iv.counts.sent = 100;
        iv.counts.ok = 100;
        if let Err(e) = series.push(i, IntervalRow::from(&iv)) {
            eprintln!("series_bytes: rows do not merge: {e}");
            std::process::exit(1);
        }
        if (i + 1) % 3_000 == 0 || i + 1 == intervals {
            println!(
                "{}\t{}\t{}\t{}",
                i + 1,
                LIVE.load(Ordering::Relaxed) - base,
                series.coarse_bytes(),
                series.len()
            );
        }
    }
    let rows = series.into_rows();
    let spans: std::collections::BTreeMap<u64, usize> =
        rows.iter().fold(Default::default(), |mut m, r| {
            *m.entry(r.span_intervals).or_default() += 1;
            m
        });
    println!("rows by span (intervals: rows): {spans:?}");
    println!("{:.1} s", started.elapsed().as_secs_f64());
}
