//! The dashboard's unit tests: its server, streams and threads, over loopback.

use super::stream::new_rows;
use super::*;
use std::io::Read as _;
use std::sync::atomic::AtomicBool;

fn dashboard() -> Dashboard {
    let series: Shared = Arc::new(Mutex::new(Series::for_load()));
    Dashboard::bind("127.0.0.1:0".parse().unwrap(), &Meta::default(), series).unwrap()
}

/// A GET of `path` on `addr`: the whole response.
fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn row(i: u64) -> IntervalRow {
    IntervalRow {
        start_s: i as f64,
        duration_s: 1.0,
        requests: 0,
        errors: 0,
        errors_by_kind: report::Errors::default(),
        errors_by_reason: Vec::new(),
        requests_per_sec: 0.0,
        p50_us: 0.0,
        p99_us: 0.0,
        max_us: 0.0,
        hdr_base64: None,
        span_intervals: 1,
        client_delay_p99_us: None,
    }
}

/// Reads the event stream of `dash` until `done` holds for what came so far (or 20 s).
fn read_events(addr: SocketAddr, token: &str, done: impl Fn(&str) -> bool) -> String {
    Page::open(addr, token).read_until(done)
}

/// A page's open event stream.
struct Page(TcpStream);

impl Page {
    fn open(addr: SocketAddr, token: &str) -> Page {
        let mut s = TcpStream::connect(addr).unwrap();
        write!(s, "GET /{token}/events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        Page(s)
    }

    /// Reads on until `done` holds for what came in this call (or 20 s).
    fn read_until(&mut self, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        let (mut out, mut buf) = (String::new(), [0u8; 4096]);
        while !done(&out) && Instant::now() < deadline {
            if let Ok(n) = self.0.read(&mut buf) {
                out += &String::from_utf8_lossy(&buf[..n]);
            }
        }
        out
    }
}

#[test]
fn the_next_run_sends_its_plan_and_its_own_rows_from_the_start() {
    let first: Shared = Arc::new(Mutex::new(Series::for_load()));
    let meta = Meta {
        title: "first".into(),
        ..Meta::default()
    };
    let dash = Dashboard::bind("127.0.0.1:0".parse().unwrap(), &meta, first.clone()).unwrap();
    let token = dash.inner.token.clone();
    for i in 0..3 {
        first.lock().unwrap().push(i, row(i)).unwrap();
        dash.pushed();
    }
    dash.push(Feed::Cells, &"kept across runs");
    let second: Shared = Arc::new(Mutex::new(Series::for_load()));
    let meta = Meta {
        kind: Kind::Shootout,
        run: 2,
        title: "second".into(),
        ..Meta::default()
    };
    dash.begin_run(&meta, second.clone());
    second.lock().unwrap().push(0, row(7)).unwrap();
    dash.pushed();
    // A page that joins now: the second run only, and the feeds that outlive runs.
    let late = read_events(dash.addr, &token, |o| {
        o.contains("\"start_s\":7.0") && o.contains("kept across runs")
    });
    assert!(late.contains("\"title\":\"second\""), "{late}");
    assert!(late.contains("\"kind\":\"shootout\""), "{late}");
    assert!(!late.contains("\"title\":\"first\""), "{late}");
    assert!(!late.contains("\"start_s\":1.0"), "{late}");
    assert!(late.contains("kept across runs"), "{late}");
    // Wake-ups count the new series' rows: a page waits, and sees the next one once. It
    // has read what it joined to (row 7) before row 8 comes, so row 8 reaches it through
    // a wake-up, not with its history.
    let mut page = Page::open(dash.addr, &token);
    let joined = page.read_until(|o| o.contains("\"start_s\":7.0"));
    assert!(joined.contains("\"start_s\":7.0"), "{joined}");
    second.lock().unwrap().push(1, row(8)).unwrap();
    dash.pushed();
    let out = joined + &page.read_until(|o| o.contains("\"start_s\":8.0"));
    assert_eq!(out.matches("\"start_s\":8.0").count(), 1, "{out}");
    assert_eq!(out.matches("event: meta").count(), 1, "{out}");
    drop(page);
    // Both pages waited rather than polled (a wake-up count ahead of the rows spun a
    // page's thread until the next row).
    let cpu = dash.finish("<html></html>", "{}", Duration::from_secs(5));
    // Waiting costs well under a millisecond here; spinning cost 87 ms.
    assert!(cpu < Duration::from_millis(30), "{cpu:?}");
}

#[test]
fn a_series_emptied_in_place_is_read_once_then_waited_on() {
    // `--find-max` emptied a window's series in place at its end (mem::replace), so a
    // page that had read its rows saw fewer pushed than it had seen, and its thread
    // spun until the next window: the wait compared rows read with wake-ups told.
    let series: Shared = Arc::new(Mutex::new(Series::for_load()));
    let dash = Dashboard::bind(
        "127.0.0.1:0".parse().unwrap(),
        &Meta::default(),
        series.clone(),
    )
    .unwrap();
    let token = dash.inner.token.clone();
    for i in 0..3 {
        series.lock().unwrap().push(i, row(i)).unwrap();
        dash.pushed();
    }
    let mut page = Page::open(dash.addr, &token);
    let mut read_until = |what: &str| page.read_until(|o| o.contains(what));
    let first = read_until("\"start_s\":2.0");
    assert!(first.contains("\"start_s\":2.0"), "{first}");
    drop(std::mem::replace(
        &mut *series.lock().unwrap(),
        Series::for_load(),
    ));
    dash.pushed();
    let emptied = read_until("event: history");
    assert!(emptied.contains("event: history\ndata: []"), "{emptied}");
    // What the page's thread burns meanwhile, had it been spinning. A window, not a wait
    // for an event: a waiting thread burns nothing however loaded the machine, and a
    // spinning one burns far more than 30 ms of 500 on any machine that runs it at all.
    std::thread::sleep(Duration::from_millis(500));
    let cpu = dash.finish("<html></html>", "{}", Duration::from_secs(5));
    assert!(cpu < Duration::from_millis(30), "{cpu:?}");
}

/// The CPUs `tid` may run on, as `/proc` says.
fn allowed(tid: i32) -> Vec<(u32, u32)> {
    probe::processes::cpus_allowed(tid).unwrap_or_default()
}

#[test]
fn pin_moves_the_dashboards_threads_live_and_to_come_and_no_other() {
    // `shootout --dashboard` bound the dashboard before the runner pinned foxbench to
    // the client CPUs, so its threads ran on the target's.
    let mine = allowed(nix::unistd::gettid().as_raw());
    let cpu = mine.last().map_or(0, |r| r.1) as usize;
    let dash = dashboard();
    let token = dash.inner.token.clone();
    // Kept open: its stream's slot is only given back when a write to it fails, so a page
    // closed here would still count in the slots `open` waits on below.
    let mut first = Page::open(dash.addr, &token);
    let out = first.read_until(|o| o.contains("event: history"));
    assert!(out.contains("event: history"), "{out}");
    let addr = dash.addr;
    let open = |dash: &Dashboard, n: usize| {
        let token = token.clone();
        let page =
            std::thread::spawn(move || read_events(addr, &token, |o| o.contains("event: done")));
        testkit::wait_until(Duration::from_secs(20), "the page's event stream", || {
            dash.inner.streams.load(Ordering::SeqCst) >= n
        });
        page
    };
    // A page open while pinning, and one opened after.
    let early = open(&dash, 2);
    dash.pin(&[cpu]).unwrap();
    let late = open(&dash, 3);
    let tids = dash.inner.threads.tids();
    // The accept thread and the three pages.
    assert!(tids.len() >= 4, "{tids:?}");
    for tid in tids {
        assert_eq!(allowed(tid), vec![(cpu as u32, cpu as u32)], "thread {tid}");
    }
    assert_eq!(allowed(nix::unistd::gettid().as_raw()), mine);
    dash.finish("<html></html>", "{}", Duration::from_secs(10));
    assert!(early.join().unwrap().contains("event: done"));
    assert!(late.join().unwrap().contains("event: done"));
    assert!(first
        .read_until(|o| o.contains("event: done"))
        .contains("event: done"));
}

#[test]
fn a_pages_cpu_is_counted_while_it_lives() {
    // The shootout leaves the dashboard's CPU out of the client's per measured window,
    // so it must be current during the window, not only once the pages end.
    let series: Shared = Arc::new(Mutex::new(Series::for_load()));
    let dash = Dashboard::bind(
        "127.0.0.1:0".parse().unwrap(),
        &Meta::default(),
        series.clone(),
    )
    .unwrap();
    let token = dash.inner.token.clone();
    for i in 0..200 {
        series.lock().unwrap().push(i, row(i)).unwrap();
    }
    dash.pushed();
    let mut page = Page::open(dash.addr, &token);
    let out = page.read_until(|o| o.contains("\"start_s\":199.0"));
    assert!(out.contains("\"start_s\":199.0"));
    // The page is still open: its thread has reported what the history cost.
    testkit::wait_until(Duration::from_secs(20), "the page's CPU reported", || {
        !dash.cpu().cpu().is_zero()
    });
    let during = dash.cpu();
    assert!(!during.cpu().is_zero(), "{during:?}");
    assert_eq!(dash.inner.streams.load(Ordering::SeqCst), 1);
    let total = dash.finish("<html></html>", "{}", Duration::from_secs(5));
    assert!(total >= during.cpu(), "{total:?} < {during:?}");
}

#[test]
fn accept_errors_back_off_instead_of_spinning() {
    let t = Instant::now();
    let emfile = std::io::Error::from_raw_os_error(24);
    assert!(accepted_or_back_off(Err(emfile)).is_none());
    assert!(t.elapsed() >= ACCEPT_BACKOFF);
}

#[test]
fn new_rows_counts_pushes_under_the_series_lock() {
    let series: Shared = Arc::new(Mutex::new(Series::for_load()));
    let push = |i: u64| series.lock().unwrap().push(i, row(i)).unwrap();
    for i in 0..3 {
        push(i);
    }
    let (whole, rows, seen) = new_rows(&series, None);
    assert!(whole);
    assert_eq!((rows.len(), seen), (3, 3));
    // Rows pushed with no wake-up told yet (the CLI pushes, then tells): the next read
    // sends each exactly once, whatever the wake-ups say.
    push(3);
    push(4);
    let (whole, rows, seen) = new_rows(&series, Some(seen));
    assert!(!whole);
    let starts: Vec<f64> = rows.iter().map(|r| r.start_s).collect();
    assert_eq!((starts, seen), (vec![3.0, 4.0], 5));
    let (_, rows, seen) = new_rows(&series, Some(seen));
    assert_eq!((rows.len(), seen), (0, 5));
}

#[test]
fn head_timeout_is_one_deadline_so_tricklers_neither_lock_out_nor_hold_the_exit() {
    let dash = dashboard();
    let addr = dash.addr;
    // More trickling clients than event-stream slots: a byte every 300 ms, never a head.
    let mut tricklers: Vec<TcpStream> = (0..MAX_CLIENTS + 4)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let trickle = {
        let stop = stop.clone();
        let mut socks: Vec<TcpStream> = tricklers.iter().map(|s| s.try_clone().unwrap()).collect();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for s in &mut socks {
                    let _ = s.write_all(b"G");
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        })
    };
    // Every trickler holds a head slot before the page asks.
    let pending = || dash.inner.pending.load(Ordering::SeqCst);
    testkit::wait_until(Duration::from_secs(20), "every trickler accepted", || {
        pending() == MAX_CLIENTS + 4
    });
    let path = format!("/{}/", dash.inner.token);
    let page = get(addr, &path);
    assert!(
        page.starts_with("HTTP/1.1 200"),
        "{}",
        &page[..page.len().min(80)]
    );

    // The tricklers are cut off by the head deadline, though they keep sending.
    testkit::wait_until(HEAD_TIMEOUT * 10, "every trickler's head given up", || {
        pending() == 0
    });
    for s in &mut tricklers {
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.starts_with("HTTP/1.1 400"), "{out:?}");
    }

    // New tricklers connected at the end do not hold `finish` up either.
    let _late: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(b"GE").unwrap();
            s
        })
        .collect();
    testkit::wait_until(
        Duration::from_secs(20),
        "the late tricklers accepted",
        || pending() == 4,
    );
    let t = Instant::now();
    dash.finish("<html></html>", "{}", Duration::from_secs(10));
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    stop.store(true, Ordering::Relaxed);
    trickle.join().unwrap();
}

/// The live page drew p99 red and max orange, the load report the other way round, from
/// two palettes: the page's script names no colour of its own and is served the report's.
#[test]
fn a_second_palette_swapped_p99_and_max() {
    let script = include_str!("../assets/dashboard.js");
    let hex = script
        .as_bytes()
        .windows(7)
        .find(|w| w[0] == b'#' && w[1..].iter().all(u8::is_ascii_hexdigit));
    assert!(
        hex.is_none(),
        "dashboard.js names a colour: {:?}",
        hex.map(String::from_utf8_lossy)
    );
    let page = page();
    assert!(!page.contains("/*COLOURS*/"));
    let at = page.find("var C = ").expect("the colours") + "var C = ".len();
    let table: serde_json::Value = serde_json::Deserializer::from_str(&page[at..])
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    for line in report::palette::Line::ALL {
        assert_eq!(table[line.key()], line.colour(), "{line:?}");
    }
}
