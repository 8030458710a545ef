//! HdrHistogram's own readers on foxbench's output, for real: the Python `hdrhistogram`
//! package (PyPI) decodes every `hdr_base64`, and the Java `HistogramLogProcessor`
//! (org.hdrhistogram:HdrHistogram from Maven Central) reads the `--hlog` interval log. Each
//! test fetches its reader once into the target directory; without python3/pip or java/mvn
//! (or the registry) it says so in one line and passes, unless `FOXBENCH_INTEROP=require`
//! (set by `.ci/run`) makes that a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use super::support::redirect_server;
use super::{result, run};

/// HdrHistogram's Java release the log test reads with.
const HDR_JAVA: &str = "org.hdrhistogram:HdrHistogram:2.2.2";

/// Serialises the one-time installs of the tests in this binary.
static SETUP: Mutex<()> = Mutex::new(());

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// Says why a test cannot run; a failure when `FOXBENCH_INTEROP=require`.
fn skip(why: std::fmt::Arguments) {
    if std::env::var("FOXBENCH_INTEROP").as_deref() == Ok("require") {
        panic!("FOXBENCH_INTEROP=require, but {why}");
    }
    eprintln!("skipped: {why}");
}

fn ok(cmd: &mut Command) -> bool {
    cmd.output().is_ok_and(|o| o.status.success())
}

/// A venv with HdrHistogram's Python package, made once; None (after one line) without it.
fn python_with_hdrh() -> Option<PathBuf> {
    let _once = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    let venv = tmp().join("hdrh-venv");
    let python = venv.join("bin/python");
    if ok(Command::new(&python).args(["-c", "import hdrh.histogram"])) {
        return Some(python);
    }
    if !ok(Command::new("python3").arg("-m").arg("venv").arg(&venv)) {
        skip(format_args!(
            "python3 -m venv is unavailable (Debian: apt-get install python3-venv)"
        ));
        return None;
    }
    let pip = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "-q",
            "--disable-pip-version-check",
            "hdrhistogram",
        ])
        .output();
    match pip {
        Ok(o) if o.status.success() => Some(python),
        Ok(o) => {
            let err = String::from_utf8_lossy(&o.stderr);
            skip(format_args!(
                "pip install hdrhistogram failed (is PyPI reachable?): {}",
                err.lines().last().unwrap_or("")
            ));
            None
        }
        Err(e) => {
            skip(format_args!("cannot run pip: {e}"));
            None
        }
    }
}

/// HdrHistogram's Java jar, copied once from Maven Central; None (after one line) without
/// java or mvn.
fn hdr_jar() -> Option<PathBuf> {
    let _once = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if !ok(Command::new("java").arg("-version")) || !ok(Command::new("mvn").arg("-v")) {
        skip(format_args!(
            "java or mvn is missing (Debian: openjdk-17-jdk-headless, maven)"
        ));
        return None;
    }
    let dir = tmp().join("hdr-java");
    let version = HDR_JAVA.rsplit(':').next().unwrap();
    let jar = dir.join(format!("HdrHistogram-{version}.jar"));
    if jar.exists() {
        return Some(jar);
    }
    let out = Command::new("mvn")
        .args(["-q", "-B", "dependency:copy"])
        .arg(format!("-Dartifact={HDR_JAVA}"))
        .arg(format!("-DoutputDirectory={}", dir.display()))
        .output();
    match out {
        Ok(o) if o.status.success() && jar.exists() => Some(jar),
        Ok(o) => {
            skip(format_args!(
                "mvn dependency:copy {HDR_JAVA} failed (is Maven Central reachable?): {}",
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .last()
                    .unwrap_or("")
            ));
            None
        }
        Err(e) => {
            skip(format_args!("cannot run mvn: {e}"));
            None
        }
    }
}

/// A fresh, empty directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = tmp().join(format!("interop-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs an open-model load with 500 ms intervals; returns the validated JSON.
#[track_caller]
fn load(json: &Path, extra: &[&str]) -> serde_json::Value {
    let s = redirect_server();
    let json_arg = json.to_str().unwrap();
    let mut args = vec![
        "load",
        "-q",
        "-d",
        "2500ms",
        "-R",
        "400",
        "-c",
        "4",
        "-t",
        "1",
        "--interval",
        "500ms",
        "--json",
        json_arg,
    ];
    args.extend_from_slice(extra);
    let url = s.url();
    args.push(&url);
    let out = run(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    result(&std::fs::read(json).unwrap())
}

#[test]
fn python_hdrhistogram_decodes_every_histogram_of_a_load_result() {
    let Some(python) = python_with_hdrh() else {
        return;
    };
    let dir = scratch("python");
    let json = dir.join("load.json");
    // Without keep-alive the result carries a second histogram, the connect times.
    let v = load(&json, &["--no-keepalive"]);
    assert!(v["connect"]["count"].as_u64().unwrap() > 0);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop/check_hdr.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(&json)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for path in ["$.latency:", "$.connect:"] {
        assert!(said.contains(path), "{path} not checked: {said}");
    }
    let n = v["intervals"].as_array().unwrap().len();
    assert!(
        n > 0 && said.contains(&format!("$.intervals: {n} interval histograms agree")),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn java_log_processor_reads_the_hlog_as_the_json_series() {
    let Some(jar) = hdr_jar() else {
        return;
    };
    let dir = scratch("java");
    let (json, hlog, out) = (
        dir.join("load.json"),
        dir.join("load.hlog"),
        dir.join("processed"),
    );
    let v = load(&json, &["--hlog", hlog.to_str().unwrap()]);
    let processed = Command::new("java")
        .arg("-cp")
        .arg(&jar)
        .arg("org.HdrHistogram.HistogramLogProcessor")
        .args(["-csv", "-tag", "corrected", "-i"])
        .arg(&hlog)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        processed.status.success(),
        "{}",
        String::from_utf8_lossy(&processed.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('"'))
        .map(|l| l.split(',').map(|f| f.trim().parse().unwrap()).collect())
        .collect();
    let intervals = v["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 5, "{}", v["intervals"]);
    assert_eq!(rows.len(), intervals.len(), "{text}");
    // Columns: Timestamp, Int_Count, Int_50%, Int_90%, Int_Max, Total_Count, ...; values in ms.
    let mut total = 0;
    for (row, iv) in rows.iter().zip(intervals) {
        let f = |k: &str| iv[k].as_f64().unwrap();
        let end_s = f("start_s") + f("duration_s");
        assert!((row[0] - end_s).abs() < 0.002, "end {} vs {end_s}", row[0]);
        assert_eq!(
            row[1] as u64,
            iv["requests"].as_u64().unwrap(),
            "{row:?} {iv}"
        );
        // Java prints ms with 3 decimals.
        assert!(
            (row[4] - f("max_us") / 1e3).abs() <= 0.0006,
            "max {row:?} {iv}"
        );
        assert!(
            (row[2] - f("p50_us") / 1e3).abs() <= 0.0006,
            "p50 {row:?} {iv}"
        );
        total += iv["requests"].as_u64().unwrap();
        assert_eq!(row[5] as u64, total);
    }
    assert_eq!(total, v["latency"]["count"].as_u64().unwrap());
    let _ = std::fs::remove_dir_all(dir);
}
