//! The HTML report in a real browser: headless Chromium loads the report of the committed
//! `tests/data/results.json` (a real `foxbench shootout --quick` run), and
//!
//! - no script error or console message comes from the page: Chromium, run with
//!   `--enable-logging=stderr --v=0`, prints every console message and uncaught exception of
//!   the page as an `INFO:CONSOLE` line naming the page's `file://` URL (it does not print
//!   the console level, so any message fails: the report has no reason to log);
//! - the screenshot shows the charts: each measured target's colour (read from its swatch in
//!   the report) covers many more pixels than the page's swatches and text could.
//!
//! Both checks are themselves checked: a planted `throw` must be caught, and the same page
//! with its `<svg>` charts removed must fail the pixel check.
//!
//! Chromium is required: without it these tests fail and say which package to install.
//! It runs in its own process group, bounded to 60 s, and the whole group is killed and
//! found gone before a test ends.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use report::shootout::{to_html, ShootoutResults};

mod load_page;
mod old_capacity;

const CHROMIUM: &str = "chromium";
const LIMIT: Duration = Duration::from_secs(60);
/// Wide like a laptop browser, tall enough for the whole report of the fixture.
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 12_000;
/// Pixels of a target's colour the charts must add: bars, lines and markers cover several
/// thousand per target; swatches and text cover about 1,000 at most.
const MIN_PIXELS: usize = 2_500;

fn fixture() -> ShootoutResults {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/results.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    ShootoutResults::from_json(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A fresh temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("foxbench-report-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What Chromium made of one page.
struct Rendered {
    /// The page's console lines from Chromium's log.
    console: Vec<String>,
    /// The screenshot as RGB rows.
    rgb: Vec<u8>,
    width: usize,
    height: usize,
}

/// Live (not zombie) processes in process group `pgid`.
fn group_members(pgid: u32) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" && fields[0] != "X"
        {
            found.push(format!("{pid} {}", &stat[..=close]));
        }
    }
    found
}

fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Renders `html` in headless Chromium: its console lines and a screenshot.
fn render(html: &str, tag: &str) -> Rendered {
    // One Chromium at a time: the machine may be busy, and the limit is per run.
    static ONE: Mutex<()> = Mutex::new(());
    let _guard = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let present = Command::new(CHROMIUM)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        present,
        "`{CHROMIUM}` is missing: these tests need it; apt-get install chromium"
    );

    let dir = TempDir::new(tag);
    let page = dir.path().join("report.html");
    std::fs::write(&page, html).unwrap();
    let shot = dir.path().join("shot.png");
    let log = dir.path().join("chromium.log");
    let url = format!("file://{}", page.display());
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .args(["--hide-scrollbars", "--enable-logging=stderr", "--v=0"])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size={WIDTH},{HEIGHT}"))
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `{CHROMIUM}` ({e}): apt-get install chromium"));
    let pgid = child.id();
    let start = Instant::now();
    let status = loop {
        match child.try_wait().unwrap() {
            Some(status) => break Some(status),
            None if start.elapsed() > LIMIT => break None,
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    // Chromium's helpers share its group: end them all, then make sure they are gone.
    kill_group(pgid);
    if status.is_none() {
        let _ = child.wait();
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left = group_members(pgid);
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        kill_group(pgid);
        left = group_members(pgid);
    }
    assert!(left.is_empty(), "chromium left processes behind: {left:?}");
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    let tail = || {
        stderr
            .lines()
            .rev()
            .take(15)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        status.is_some(),
        "chromium did not finish within {LIMIT:?}:\n{}",
        tail()
    );
    assert!(
        shot.exists(),
        "chromium made no screenshot ({:?}):\n{}",
        status,
        tail()
    );

    let name = page.file_name().unwrap().to_str().unwrap();
    let console = stderr
        .lines()
        .filter(|l| {
            l.contains("CONSOLE") && (l.contains(name) || l.contains(&url))
                || l.contains("Uncaught")
        })
        .map(str::to_string)
        .collect();
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "unexpected PNG depth");
    let channels = info.color_type.samples();
    assert!(
        channels >= 3,
        "unexpected PNG colour type {:?}",
        info.color_type
    );
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    Rendered {
        console,
        rgb,
        width: info.width as usize,
        height: info.height as usize,
    }
}

/// The real report, rendered once for the tests that only look.
fn report_render() -> &'static (String, Rendered) {
    static R: OnceLock<(String, Rendered)> = OnceLock::new();
    R.get_or_init(|| {
        let html = to_html(&fixture());
        let rendered = render(&html, "report");
        (html, rendered)
    })
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Each measured target's name and colour, as the report's swatches give them.
fn target_colours(html: &str, r: &ShootoutResults) -> Vec<(String, [u8; 3])> {
    const SWATCH: &str = "<span class=\"sw\" style=\"background:#";
    r.ranked()
        .map(|t| {
            let needle = format!("\"></span>{}</th>", esc(&t.name));
            let at = html
                .find(&needle)
                .unwrap_or_else(|| panic!("no swatch for {}", t.name));
            let start = html[..at].rfind(SWATCH).expect("swatch") + SWATCH.len();
            let hex = &html[start..at];
            assert_eq!(hex.len(), 6, "colour {hex:?}");
            let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap();
            (t.name.clone(), [byte(0), byte(2), byte(4)])
        })
        .collect()
}

/// How many pixels lie within a small distance of each colour (anti-aliasing blends edges).
fn pixels_near(img: &Rendered, colours: &[[u8; 3]]) -> Vec<usize> {
    let mut counts = vec![0; colours.len()];
    for p in img.rgb.chunks_exact(3) {
        for (c, n) in colours.iter().zip(counts.iter_mut()) {
            if p.iter().zip(c).all(|(&a, &b)| a.abs_diff(b) <= 10) {
                *n += 1;
            }
        }
    }
    counts
}

/// The targets whose colour covers fewer than [`MIN_PIXELS`] pixels, with their counts.
fn undrawn(html: &str, img: &Rendered) -> Vec<(String, usize)> {
    let r = fixture();
    let colours = target_colours(html, &r);
    assert!(
        colours.len() >= 2,
        "the fixture should have several measured targets"
    );
    let counts = pixels_near(img, &colours.iter().map(|c| c.1).collect::<Vec<_>>());
    colours
        .into_iter()
        .zip(counts)
        .map(|((name, _), n)| (name, n))
        .filter(|(_, n)| *n < MIN_PIXELS)
        .collect()
}

#[test]
fn the_fixture_is_a_real_run_with_several_targets() {
    let r = fixture();
    assert!(r.ranked().count() >= 2);
    assert!(r.targets.iter().any(|t| t
        .cells
        .iter()
        .any(|c| c.repeats.iter().any(|p| p.series.len() > 1))));
}

#[test]
fn chromium_shows_the_report_without_console_errors() {
    let (_, img) = report_render();
    assert!(
        img.console.is_empty(),
        "the page logged to the console:\n{}",
        img.console.join("\n")
    );
}

#[test]
fn chromium_draws_every_measured_target_in_the_charts() {
    let (html, img) = report_render();
    assert_eq!(img.width, WIDTH as usize);
    assert!(img.height >= 1000);
    let missing = undrawn(html, img);
    assert!(
        missing.is_empty(),
        "colours that barely appear (fewer than {MIN_PIXELS} pixels): {missing:?}"
    );
    // Something besides white was drawn at all (a blank page has one colour).
    let white = pixels_near(img, &[[255, 255, 255]])[0];
    assert!(white < img.width * img.height, "the screenshot is blank");
}

#[test]
fn the_console_check_catches_a_planted_error() {
    let html = to_html(&fixture()).replace(
        "</body>",
        "<script>throw new Error(\"planted-error\")</script></body>",
    );
    let img = render(&html, "planted");
    assert!(
        img.console.iter().any(|l| l.contains("planted-error")),
        "a thrown error went unnoticed; Chromium's log format may have changed: {:?}",
        img.console
    );
}

#[test]
fn the_chart_check_fails_on_the_report_without_its_charts() {
    let mut html = to_html(&fixture());
    let mut removed = 0;
    while let (Some(a), Some(b)) = (html.find("<svg"), html.find("</svg>")) {
        assert!(a < b);
        html.replace_range(a..b + "</svg>".len(), "");
        removed += 1;
    }
    assert!(removed >= 5, "only {removed} charts");
    let img = render(&html, "no-charts");
    let r = fixture();
    let missing = undrawn(&html, &img);
    assert_eq!(
        missing.len(),
        r.ranked().count(),
        "without charts every target should fall short of {MIN_PIXELS} pixels: {missing:?}"
    );
}

/// The fixture with every repeat given `n` intervals at its own rate, p99 growing by 1 ms
/// per interval, as a run since 2026-11-24 records them.
fn with_intervals(n: usize) -> ShootoutResults {
    let mut r = fixture();
    for t in &mut r.targets {
        for c in &mut t.cells {
            for rep in &mut c.repeats {
                let d = rep.elapsed_s / n as f64;
                rep.intervals = (0..n)
                    .map(|i| report::IntervalRow {
                        start_s: i as f64 * d,
                        duration_s: d,
                        requests: ((rep.rps * d) as u64).max(1),
                        errors: 0,
                        errors_by_kind: Default::default(),
                        errors_by_reason: Vec::new(),
                        requests_per_sec: rep.rps,
                        p50_us: 100.0,
                        p99_us: 1000.0 * (i + 1) as f64,
                        max_us: 1000.0 * (i + 2) as f64,
                        hdr_base64: None,
                        span_intervals: 1,
                        client_delay_p99_us: None,
                    })
                    .collect();
            }
        }
    }
    r
}

#[test]
fn the_charts_over_time_draw_every_interval_of_every_repeat() {
    let old = to_html(&fixture());
    assert!(
        !old.contains("id=\"chart-rps-time\""),
        "a results file without intervals gets no chart over time"
    );
    let r = with_intervals(4);
    let html = to_html(&r);
    for id in ["chart-rps-time", "chart-p99-time"] {
        let at = html
            .find(&format!("<figure id=\"{id}\""))
            .unwrap_or_else(|| panic!("no {id}"));
        let figure = &html[at..at + html[at..].find("</figure>").unwrap()];
        // One vertex per interval: every repeat's four intervals, of every target drawn,
        // each repeat's line starting afresh (M) and going on (L).
        let intervals: usize = r
            .ranked()
            .flat_map(|t| &t.cells)
            .flat_map(|c| &c.repeats)
            .map(|rep| rep.intervals.len())
            .sum();
        let vertices: usize = figure
            .split("<path d=\"")
            .skip(1)
            .filter(|p| p.contains("stroke-width=\"2\" stroke-linejoin"))
            .map(|p| p[..p.find('"').unwrap()].matches(['M', 'L']).count())
            .sum();
        assert_eq!(vertices, intervals, "{id}");
        for t in r.ranked() {
            assert!(figure.contains(&esc(&t.name)), "{id}: {} missing", t.name);
        }
    }
    // The round trip keeps the series.
    let back = ShootoutResults::from_json(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back.targets[0].cells[0].repeats[0].intervals.len(), 4);
}
