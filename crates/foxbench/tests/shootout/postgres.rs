//! PostgreSQL's lifecycle as a suite service (targets/database/postgres/run.sh): started by
//! the suite (initdb, seed, postgres on a port), stopped cleanly at the end of a run with its
//! data directory removed, and nothing left after Ctrl-C in the middle of a level. Each run
//! gets a TMPDIR of its own, so "its data directory" is exactly what appears there.

use std::time::Duration;

use super::*;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// PostgreSQL as the database suite starts it, and a front end that only has to be up while
/// it runs: `python3 -m http.server` listing the service's directory. `duration` per level.
fn suite(duration: &str) -> String {
    format!(
        r#"name = "pg-lifecycle"
[plan]
levels = [2]
duration = "{duration}"
repeats = 1
warmup = "250ms"
warmup_slice = "250ms"
stop_grace = "10s"
sample_interval = "250ms"

[[scenario]]
name = "list"
path = "/"
keepalive = false   # http.server closes after each response
[scenario.expect]
status = 200
body_contains = "run.sh"

[[service]]
name = "postgres"
dir = "targets/database/postgres"
requires = ["initdb", "postgres", "pg_isready"]
install = "postgresql"
build = "true"
start = "bash run.sh {{port}}"
ready = "tcp"
ready_timeout = "90s"
inputs = []
artifact = "{{dir}}/run.sh"
# The suite's own command: client backends running a query. (Counting every client
# backend but this one's also counted the previous reading's psql while its backend was
# still exiting: active_max 1 in a CI run, with nothing else connected.)
active = "psql -h 127.0.0.1 -p {{port}} -U postgres -d postgres -XAtc \"select count(*) from pg_stat_activity where state = 'active' and backend_type = 'client backend' and pid <> pg_backend_pid()\""

[[target]]
name = "lister"
language = "Python"
dir = "targets/database/postgres"
use = ["postgres"]
requires = ["python3"]
build = "true"
inputs = []
artifact = "{{dir}}/run.sh"
start = "python3 -m http.server {{port}} --bind 127.0.0.1 --directory {{dir}}"
ready = "tcp"
"#
    )
}

/// The `foxbench-pg.*` directories in `dir`.
fn data_dirs(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("foxbench-pg."))
        .collect()
}

/// The suite's run, started: its results in `out/results`, its TMPDIR `out/tmp`, its cache
/// `out/cache`.
fn run(out: &Path, duration: &str) -> Running {
    std::fs::write(out.join("suite.toml"), suite(duration)).unwrap();
    let pgtmp = out.join("tmp");
    std::fs::create_dir_all(&pgtmp).unwrap();
    Shootout::new(out.join("suite.toml"), &out.join("results"))
        .root(repo_root())
        .cache(Cache::At(out.join("cache")))
        .env("TMPDIR", &pgtmp)
        .quiet()
        .spawn()
}

/// A whole run: PostgreSQL is ready, measured beside the target, stops on SIGTERM (no
/// SIGKILL), and its data directory is gone.
#[test]
fn postgres_stops_cleanly_and_its_data_directory_is_removed() {
    let out = tmp("pg-clean");
    let o = run(&out, "1s").wait_with_output();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("service postgres: ready in"), "{stderr}");
    assert!(
        !stderr.contains("SIGKILL"),
        "postgres was killed, not stopped: {stderr}"
    );
    assert_eq!(data_dirs(&out.join("tmp")), Vec::<String>::new());
    let v = results(&out.join("results"));
    let pg = v["services"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "postgres")
        .unwrap();
    assert_eq!(pg["outcome"], "measured", "{pg}");
    // The cell sampled the target's connections to postgres (none: it never connects)
    // and postgres's own count of client backends through its `active` command.
    let cell = &v["targets"][0]["cells"][0];
    let conns = &cell["repeats"][0]["service_connections"][0];
    assert_eq!(conns["service"], "postgres", "{cell}");
    assert_eq!(
        (conns["min"].as_u64(), conns["max"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(conns["active_max"].as_u64(), Some(0), "{conns}");
    let _ = std::fs::remove_dir_all(&out);
}

/// Ctrl-C in the middle of a level: foxbench exits 130, postgres and the target are gone,
/// and so is the data directory.
#[test]
fn ctrl_c_mid_level_leaves_no_postgres_and_no_data_directory() {
    let out = tmp("pg-int");
    let mut run = run(&out, "30s");
    let pid = run.pid();
    run.wait_for_load(Duration::from_secs(120));
    // Mid-level: PostgreSQL and its data directory exist now.
    assert_eq!(data_dirs(&out.join("tmp")).len(), 1);
    assert!(
        leftovers(pid).iter().any(|p| p.contains("postgres -D")),
        "{:?}",
        leftovers(pid)
    );
    run.interrupt();
    let o = run.wait_with_output();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert_eq!(
        data_dirs(&out.join("tmp")),
        Vec::<String>::new(),
        "{stderr}"
    );
    assert_eq!(results(&out.join("results"))["interrupted"], true);
    let _ = std::fs::remove_dir_all(&out);
}
