//! A long run's interval series holds constant heap, counted by a counting allocator (issue
//! 25: `foxbench load --interval 10ms -d 5m` grew 1.14 MiB of RSS from minute 1 to minute 5).
//!
//! Its own test binary, because it installs a counting allocator. It counts per thread:
//! the harness's own allocations and frees (a finished test's output) happen alongside.
//!
//! The rows of 30,000 intervals here are sparse histograms, not [`IntervalRow`]s: each
//! merge of two real rows decodes two 270 KB histograms, adds and re-encodes them, which
//! takes about 11 ms in a debug build, 5 minutes for a series of 30,000 intervals. The sparse
//! rows grow with their span as real ones do (one entry per distinct latency at HDR's
//! precision), and [`interval_rows_count_every_byte_they_hold`] checks that real rows count
//! their bytes truly. The real rows' figures, in a release build: `cargo run --release -p
//! foxbench-report --example series_bytes`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

use report::series::{Block, Series};
use report::IntervalRow;

struct Counting;

thread_local! {
    /// Heap bytes this thread allocated minus those it freed. A const initializer and no
    /// destructor: reading it allocates nothing.
    static LIVE: Cell<i64> = const { Cell::new(0) };
}

fn count(bytes: i64) {
    // `try_with`: a thread being torn down has no counter left; it counts nothing here.
    let _ = LIVE.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as i64);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as i64));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as i64 - layout.size() as i64);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap bytes this thread holds, as far as it counted.
fn live() -> i64 {
    LIVE.with(Cell::get)
}

/// Latencies spread log-uniformly over 30 µs to 30 ms (three decades, about 10,000
/// distinct values at HDR's three digits): wider than a healthy server's, so that rows keep
/// growing with their span, as the coarse rows of a soak against avatar did.
struct Latencies(u64);

impl Latencies {
    fn next_ns(&mut self) -> u64 {
        // xorshift64: deterministic, no allocation.
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let u = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        (30_000.0 * 1000f64.powf(u)) as u64
    }
}

/// A histogram kept sparse: (the lowest value of an HDR bucket, ns; its count), sorted.
/// Its heap grows with the distinct buckets it holds, as a compressed histogram's text does.
#[derive(Debug, Clone)]
struct Sparse {
    span: u64,
    counts: Vec<(u32, u32)>,
}

impl Sparse {
    fn interval(latencies: &mut Latencies, hdr: &stats::Latency, samples: usize) -> Self {
        let mut values: Vec<u32> = (0..samples)
            .map(|_| hdr.lowest_equivalent(latencies.next_ns()) as u32)
            .collect();
        values.sort_unstable();
        let mut counts: Vec<(u32, u32)> = Vec::new();
        for v in values {
            match counts.last_mut() {
                Some((last, n)) if *last == v => *n += 1,
                _ => counts.push((v, 1)),
            }
        }
        counts.shrink_to_fit();
        Self { span: 1, counts }
    }

    fn samples(&self) -> u64 {
        self.counts.iter().map(|&(_, n)| u64::from(n)).sum()
    }
}

impl Block for Sparse {
    type Error = ();

    fn set_span(&mut self, span: u64) {
        self.span = span;
    }

    fn absorb(&mut self, later: &Self) -> Result<(), ()> {
        let (mut a, mut b) = (
            self.counts.iter().peekable(),
            later.counts.iter().peekable(),
        );
        let mut out = Vec::with_capacity(self.counts.len() + later.counts.len());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(&&x), Some(&&y)) if x.0 == y.0 => {
                    a.next();
                    b.next();
                    (x.0, x.1 + y.1)
                }
                (Some(&&x), Some(&&y)) if x.0 < y.0 => *a.next().unwrap_or(&y),
                (Some(_), Some(_)) | (None, Some(_)) => *b.next().expect("peeked"),
                (Some(_), None) => *a.next().expect("peeked"),
                (None, None) => break,
            };
            out.push(next);
        }
        out.shrink_to_fit();
        self.counts = out;
        Ok(())
    }

    fn heap_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<(u32, u32)>()
    }
}

/// Issue 25: the series was bounded in rows only, and its coarse rows' histograms grow with
/// the span they cover (more distinct latencies), so the heap grew with the run's length:
/// about 1 MB from 6,000 to 30,000 intervals of 100 responses (10 ms at 10,000 requests per
/// second). Bounded in bytes too, it grows by less than 64 KiB (a few rows' worth).
#[test]
fn coarse_rows_grow_with_their_span_so_the_series_is_bounded_in_bytes() {
    let hdr = stats::Latency::new();
    let mut latencies = Latencies(0x9e37_79b9_7f4a_7c15);
    let base = live();
    let mut series = Series::for_load();
    let mut at_6000 = 0;
    for i in 0..30_000u64 {
        let row = Sparse::interval(&mut latencies, &hdr, 100);
        series.push(i, row).expect("sparse rows merge");
        if i + 1 == 6_000 {
            at_6000 = live() - base;
        }
        assert!(series.len() <= series.max_rows());
    }
    let at_30000 = live() - base;
    let samples: u64 = series.rows().map(Sparse::samples).sum();
    assert_eq!(samples, 3_000_000, "every response is in one row");
    let spans: u64 = series.rows().map(|r| r.span).sum();
    assert_eq!(spans, 30_000, "every interval is in one row");
    let growth = at_30000 - at_6000;
    eprintln!(
        "live heap: {at_6000} bytes after 6,000 intervals, {at_30000} after 30,000 (+{growth}); \
         coarse rows {} bytes, {} rows",
        series.coarse_bytes(),
        series.len()
    );
    assert!(
        series.coarse_bytes() <= report::series::COARSE_BYTES,
        "the coarse rows hold {} bytes, over the bound of {}",
        series.coarse_bytes(),
        report::series::COARSE_BYTES
    );
    assert!(
        growth < 64 * 1024,
        "the series' heap grew {growth} bytes from 6,000 to 30,000 intervals ({at_6000} to {at_30000})"
    );
}

/// An interval of `samples` responses and `errors` read resets, at 10 ms.
fn interval(index: u64, latencies: &mut Latencies, samples: u64, errors: u64) -> stats::Interval {
    let mut latency = stats::Latency::new();
    for _ in 0..samples {
        latency.record_ns(latencies.next_ns());
    }
    let mut counts = stats::Counts {
        sent: samples + errors,
        ok: samples,
        read: errors,
        ..stats::Counts::default()
    };
    let reset = stats::Reason::new(
        stats::reason::Kind::Read,
        stats::reason::Cause::Reset(stats::reason::At::MidBody),
    );
    counts.reasons.add(reset, errors);
    stats::Interval {
        index,
        start: Duration::from_millis(10 * index),
        duration: Duration::from_millis(10),
        latency,
        service: stats::Latency::new(),
        read_latency: stats::Latency::new(),
        client_delay: stats::Latency::new(),
        counts,
    }
}

/// The series bounds its coarse rows by the bytes they say they hold: a real row's count
/// must be every byte it keeps on the heap, its histogram's text and its error reasons,
/// before and after a merge.
#[test]
fn interval_rows_count_every_byte_they_hold() {
    let mut latencies = Latencies(7);
    let (a, b) = (
        interval(0, &mut latencies, 500, 3),
        interval(1, &mut latencies, 300, 0),
    );
    // Once before counting: anything made once per process (tables) is not the row's.
    drop(IntervalRow::from(&a));
    let before = live();
    let mut row = IntervalRow::from(&a);
    assert!(!row.errors_by_reason.is_empty(), "a row with reasons");
    assert_eq!(live() - before, row.heap_bytes() as i64, "a new row");
    let later = IntervalRow::from(&b);
    let before = live();
    let (row_bytes, later_bytes) = (row.heap_bytes() as i64, later.heap_bytes() as i64);
    row.absorb(&later).expect("rows merge");
    drop(later);
    assert_eq!(
        live() - before,
        row.heap_bytes() as i64 - row_bytes - later_bytes,
        "a merged row"
    );
    assert!(row.heap_bytes() > 0);
}
