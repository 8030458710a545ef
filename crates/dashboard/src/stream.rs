//! The event stream of one page: the current run's plan and rows, each feed's new items,
//! and `done`, written as they come; the page's thread waits on the dashboard's condition
//! variable in between.

use std::io::Write as _;
use std::net::TcpStream;
use std::time::Duration;

use report::IntervalRow;
use serde::Serialize;

use crate::threads::Member;
use crate::{Inner, Shared};

/// A row as the page draws it: the figures, not the histogram (a tenth of the size).
#[derive(Serialize)]
pub(crate) struct LiveRow {
    pub(crate) start_s: f64,
    duration_s: f64,
    span_intervals: u64,
    requests: u64,
    errors: u64,
    errors_by_kind: report::Errors,
    requests_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    max_us: f64,
}

impl From<&IntervalRow> for LiveRow {
    fn from(r: &IntervalRow) -> Self {
        LiveRow {
            start_s: r.start_s,
            duration_s: r.duration_s,
            span_intervals: r.span_intervals,
            requests: r.requests,
            errors: r.errors,
            errors_by_kind: r.errors_by_kind.clone(),
            requests_per_sec: r.requests_per_sec,
            p50_us: r.p50_us,
            p99_us: r.p99_us,
            max_us: r.max_us,
        }
    }
}

/// Rows per `history`/`rows` event: small writes, so that a late page costs no large buffer.
const ROWS_PER_EVENT: usize = 100;

fn event(name: &str, data: &str) -> String {
    // `data` is one line of JSON: serde_json escapes every newline inside strings.
    format!("event: {name}\ndata: {data}\n\n")
}

/// The rows pushed after the first `seen` (false), or every row (true) when the page is new
/// or fell further behind than the series' full-resolution window; and the rows pushed so
/// far, read under the same lock as the rows. Copied out without their histograms, so the
/// lock is held only for the copy.
pub(crate) fn new_rows(series: &Shared, seen: Option<u64>) -> (bool, Vec<LiveRow>, u64) {
    let series = series.lock().unwrap_or_else(|e| e.into_inner());
    let pushed = series.pushed();
    let held = series.len();
    let (whole, rows) = match seen {
        Some(seen)
            if seen <= pushed
                && ((pushed - seen) as usize) <= report::series::FULL_ROWS.min(held) =>
        {
            let new = (pushed - seen) as usize;
            (
                false,
                series.rows().skip(held - new).map(LiveRow::from).collect(),
            )
        }
        _ => (true, series.rows().map(LiveRow::from).collect()),
    };
    (whole, rows, pushed)
}

/// Whether the page's rows (`seen` pushed so far, None before the first read) differ from
/// the series': more pushed, or a series that is not the one read (its count is lower).
pub(crate) fn rows_behind(series: &Shared, seen: Option<u64>) -> bool {
    let pushed = series.lock().unwrap_or_else(|e| e.into_inner()).pushed();
    seen != Some(pushed)
}

/// Writes `rows` as events: a whole history (`history`, then `rows` to append) or new rows
/// (`interval` each).
fn write_rows(stream: &mut TcpStream, whole: bool, rows: &[LiveRow]) -> std::io::Result<()> {
    if !whole {
        let mut out = String::new();
        for r in rows {
            out += &event(
                "interval",
                &serde_json::to_string(r).expect("row serializes"),
            );
        }
        return stream.write_all(out.as_bytes());
    }
    if rows.is_empty() {
        return stream.write_all(event("history", "[]").as_bytes());
    }
    for (k, chunk) in rows.chunks(ROWS_PER_EVENT).enumerate() {
        let name = if k == 0 { "history" } else { "rows" };
        let data = serde_json::to_string(chunk).expect("rows serialize");
        stream.write_all(event(name, &data).as_bytes())?;
    }
    Ok(())
}

/// Streams events until the run is over or the page left, reporting the thread's CPU
/// (`me`) after each write and before it returns.
pub(crate) fn events(mut stream: TcpStream, inner: &Inner, me: &mut Member) {
    let mut me = Reporting(me);
    events_until_done(&mut stream, inner, &mut me);
}

/// Reports its thread's CPU when dropped: on every return.
struct Reporting<'a, 'b>(&'a mut Member<'b>);

impl Drop for Reporting<'_, '_> {
    fn drop(&mut self) {
        self.0.report();
    }
}

fn events_until_done(stream: &mut TcpStream, inner: &Inner, me: &mut Reporting) -> bool {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).is_err() {
        return false;
    }
    let (mut rows_seen, mut feeds_seen) = (None::<u64>, [0u64; 4]);
    let mut generation = None::<u64>;
    loop {
        let (series, run, feeds, done, closing) = {
            let s = inner.lock();
            // A new run: its plan first, then its rows from the start.
            let run = (generation != Some(s.generation)).then(|| s.meta.clone());
            if run.is_some() {
                generation = Some(s.generation);
                rows_seen = None;
            }
            let (feeds, seen) = s.feeds.since(feeds_seen);
            feeds_seen = seen;
            (s.series.clone(), run, feeds, s.done.clone(), s.closing)
        };
        if let Some(meta) = run {
            if stream.write_all(event("meta", &meta).as_bytes()).is_err() {
                return false;
            }
        }
        if let Some(series) = series.filter(|s| rows_behind(s, rows_seen)) {
            let (whole, rows, total) = new_rows(&series, rows_seen);
            rows_seen = Some(total);
            if write_rows(stream, whole, &rows).is_err() {
                return false;
            }
        }
        let mut out = String::new();
        for (feed, items) in &feeds {
            out += &event(feed.event(), items);
        }
        if let Some(d) = &done {
            out += &event("done", d);
        }
        if stream.write_all(out.as_bytes()).is_err() {
            return false;
        }
        if done.is_some() {
            let _ = stream.flush();
            return true;
        }
        if closing {
            return false;
        }
        me.0.report();
        let s = inner.lock();
        // The series' own count, read while the state is locked: a push after this read
        // tells the pages ([`crate::Dashboard::pushed`]) only once the wait below has let
        // the lock go, so no wake-up is lost; and a series emptied or replaced in place
        // (fewer rows than seen) is read once, as a whole, rather than forever.
        if !s.series.as_ref().is_some_and(|x| rows_behind(x, rows_seen))
            && s.feeds.pushed() == feeds_seen
            && generation == Some(s.generation)
            && s.done.is_none()
            && !s.closing
        {
            let (s, timeout) = inner
                .changed
                .wait_timeout(s, Duration::from_secs(15))
                .unwrap_or_else(|e| e.into_inner());
            drop(s);
            // A comment line: keeps proxies and the browser from timing the stream out.
            if timeout.timed_out() && stream.write_all(b":\n\n").is_err() {
                return false;
            }
        }
    }
}
