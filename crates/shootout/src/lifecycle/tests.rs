use std::collections::BTreeMap;

use super::*;
use crate::failure::stop_note;
use report::shootout::Outcome;

fn spec(requires: &[&str], dir: &str, start: &str) -> TargetSpec {
    TargetSpec {
        name: "t".into(),
        base: "t".into(),
        params: Vec::new(),
        levels: None,
        excluded_levels: BTreeMap::new(),
        language: "sh".into(),
        dir: dir.into(),
        requires: requires.iter().map(|s| s.to_string()).collect(),
        install: Some("the nothing package".into()),
        build: None,
        start: start.into(),
        env: BTreeMap::new(),
        artifact: None,
        ready: Ready::Tcp,
        ready_timeout: Duration::from_secs(5),
        inputs: Vec::new(),
        warmup: None,
        uses: Vec::new(),
    }
}

#[track_caller]
fn failure<T: std::fmt::Debug>(r: Result<T, TargetFailure>) -> (Outcome, String) {
    let f = r.unwrap_err();
    (f.outcome(false), f.to_string())
}

#[test]
fn setup_fails_on_missing_tools_then_on_a_missing_directory() {
    let root = std::env::temp_dir();
    let logs = root.join("logs");
    let cases = [
            (
                spec(
                    &["sh", "no-such-tool-3f9", "nor-this-one"],
                    "nope",
                    "x {port}",
                ),
                Outcome::Skipped,
                "no-such-tool-3f9, nor-this-one not found on PATH; install the nothing package"
                    .to_string(),
            ),
            (
                spec(&["sh"], "no-such-dir-3f9", "x {port}"),
                Outcome::StartFailed,
                format!(
                    "directory {} not found: run from the foxbench checkout or give the checkout's root (the directory that has targets/)",
                    root.join("no-such-dir-3f9").display()
                ),
            ),
        ];
    for (spec, outcome, message) in cases {
        assert_eq!(
            failure(Setup::new(&spec, &root, logs.clone())),
            (outcome, message)
        );
    }
    let mut s = spec(&["sh"], ".", "x {port}");
    s.env.insert("GOMAXPROCS".into(), "1".into());
    let setup = Setup::new(&s, &root, logs).unwrap();
    assert_eq!(setup.tools, vec![cache::which("sh").unwrap()]);
    assert_eq!(setup.env[0], ("GOMAXPROCS".to_string(), "1".to_string()));
}

/// A glob in `requires` (a JDK beside the system's): missing, the target is skipped
/// with the glob named; found, its directory is first on the build's and start's PATH.
#[test]
fn a_glob_requirement_skips_or_goes_first_on_path() {
    use std::os::unix::fs::PermissionsExt;
    let root = std::env::temp_dir().join(format!("foxbench-globreq-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let missing = format!("{}/jdk-*/bin/java", root.display());
    assert_eq!(
        failure(Setup::new(
            &spec(&["sh", &missing], ".", "x {port}"),
            &root,
            root.join("logs")
        )),
        (
            Outcome::Skipped,
            format!("{missing} not found on PATH; install the nothing package")
        )
    );
    for v in ["jdk-9", "jdk-21"] {
        let bin = root.join(v).join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("java"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(bin.join("java"), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let s = spec(&["sh", &missing], ".", "x {port}");
    let setup = Setup::new(&s, &root, root.join("logs")).unwrap();
    assert_eq!(setup.tools[1], root.join("jdk-21/bin/java"));
    let path = setup.env.iter().find(|(k, _)| k == "PATH").unwrap();
    assert_eq!(
        std::env::split_paths(&path.1).next(),
        Some(root.join("jdk-21/bin"))
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// Rows of one target share a build, unless a parameter is in the build command (or
/// its environment): then each value is its own cache key and directory.
#[test]
fn parameter_rows_share_a_build_unless_the_build_uses_the_parameter() {
    let tmp = |tag: &str| {
        let d = std::env::temp_dir().join(format!("foxbench-rows-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    };
    let (root, cache) = (tmp("root"), tmp("cache"));
    std::fs::write(root.join("src"), "source").unwrap();
    std::fs::create_dir_all(cache.join("logs")).unwrap();
    let text = r#"
name = "p"
[[scenario]]
name = "s"
[scenario.expect]
status = 200
[[target]]
name = "in-build"
language = "sh"
dir = "."
build = "echo {param.v} > {out}/v"
start = "x {port}"
params = { v = ["1", "2"] }
[[target]]
name = "in-start"
language = "sh"
dir = "."
build = "echo same > {out}/v"
start = "x {param.v} {port}"
params = { v = ["1", "2"] }
"#;
    let suite = crate::suite::Suite::parse(text, "p.toml").unwrap();
    let interrupt = AtomicBool::new(false);
    let cpus = process::allowed_cpus();
    let builder = Builder {
        cache: &cache,
        timeout: Duration::from_secs(30),
        interrupt: &interrupt,
        build_cpus: &cpus,
        client_cpus: &cpus,
    };
    let built: Vec<Built> = suite
        .targets
        .iter()
        .map(|t| {
            let setup = Setup::new(t, &root, cache.join("logs")).unwrap();
            builder.build(&setup).unwrap()
        })
        .collect();
    let v = |b: &Built| std::fs::read_to_string(b.out.join("v")).unwrap();
    assert_ne!(built[0].info.key, built[1].info.key);
    assert_eq!((v(&built[0]), v(&built[1])), ("1\n".into(), "2\n".into()));
    assert_eq!(built[2].info.key, built[3].info.key);
    assert_eq!(built[2].out, built[3].out);
    assert!(
        !built[2].info.cached && built[3].info.cached,
        "the second row reuses the first's build"
    );
    assert!(built[2]
        .out
        .ends_with(format!("in-start-{}", built[2].info.key)));
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn the_start_command_fills_every_placeholder() {
    let root = std::env::temp_dir();
    let s = spec(
        &[],
        ".",
        "{out}/srv --port {port} -n {images} -t {template} -C {dir}",
    );
    let setup = Setup::new(&s, &root, root.join("logs")).unwrap();
    let built = Built {
        info: BuildInfo {
            command: "true".into(),
            key: "k".into(),
            cached: true,
            seconds: 0.0,
            artifact_bytes: None,
            artifact: None,
        },
        out: PathBuf::from("/cache/t-k"),
    };
    assert_eq!(
        setup.start_command(&built, 8080, 21, "x-{n}", &[]),
        format!(
            "/cache/t-k/srv --port 8080 -n 21 -t x-{{n}} -C {}",
            root.join(".").display()
        )
    );
}

#[test]
fn a_target_that_listens_is_ready_and_one_that_exits_is_not() {
    let root = std::env::temp_dir().join(format!("foxbench-lifecycle-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let logs = root.clone();
    let never = AtomicBool::new(false);

    // Regression (CI, 2026-11-25): a listener held open by another process (this test)
    // accepts on the target's port; the target does not listen there, so it is not
    // ready. Another test's avatar once took a port between its choice and a target's
    // bind, and the target's verification read avatar's answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let s = spec(&[], ".", "sleep 30");
    let setup = Setup::new(&s, &root, logs.clone()).unwrap();
    let mut running = setup.spawn("sleep 30".into(), port, &[]).unwrap();
    let e = running
        .wait_ready(Ready::Tcp, Duration::from_secs(5), &never)
        .unwrap_err();
    assert!(matches!(e, NotReady::PortTaken { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        format!("127.0.0.1:{port} answered, but another process listens on it, not the target")
    );
    assert_eq!(stop_note(&running.stop(Duration::from_secs(2))), "");

    // A target that listens on its port itself is ready, through `start`.
    let script = "import socket,sys,time\ns=socket.socket()\ns.bind(('127.0.0.1',int(sys.argv[1])))\ns.listen()\ntime.sleep(30)";
    let s = spec(&[], ".", "x");
    let setup = Setup::new(&s, &root, logs.clone()).unwrap();
    let (mut running, command, _) = setup
        .start(
            &|port| format!("python3 -c \"{script}\" {port}"),
            &[],
            (Ready::Tcp, Duration::from_secs(20)),
            &never,
            Duration::from_secs(2),
        )
        .unwrap();
    assert!(
        command.ends_with(&running.addr.port().to_string()),
        "{command}"
    );
    assert_eq!(stop_note(&running.stop(Duration::from_secs(2))), "");

    // One that prints and exits is reported with its last line.
    let s = spec(&[], ".", "x");
    let setup = Setup::new(&s, &root, logs).unwrap();
    let mut running = setup
        .spawn(
            "sh -c 'echo cannot bind; exit 3'".into(),
            free_port().unwrap(),
            &[],
        )
        .unwrap();
    let e = running
        .wait_ready(Ready::Tcp, Duration::from_secs(5), &never)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "exited (exit status: 3) before it was ready: cannot bind"
    );
    drop(listener);
    let _ = std::fs::remove_dir_all(&root);
}
