use super::*;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("foxbench-cache-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn postgres_bin_dirs_newest_major_first_and_only_numbered_with_bin() {
    let base = tmp("pg");
    for d in ["9/bin", "15/bin", "13/bin", "common/bin", "16"] {
        fs::create_dir_all(base.join(d)).unwrap();
    }
    let dirs = postgres_bin_dirs(&base);
    assert_eq!(
        dirs,
        vec![base.join("15/bin"), base.join("13/bin"), base.join("9/bin")]
    );
    assert!(postgres_bin_dirs(&base.join("absent")).is_empty());
    fs::remove_dir_all(&base).unwrap();
}

#[test]
fn the_key_follows_content_and_the_build_is_reused() {
    let src = tmp("src");
    fs::write(src.join("a.txt"), "one").unwrap();
    let k1 = key("cp a.txt {out}", &[], &[], &src, std::slice::from_ref(&src)).unwrap();
    assert_eq!(
        k1,
        key("cp a.txt {out}", &[], &[], &src, std::slice::from_ref(&src)).unwrap()
    );
    fs::write(src.join("a.txt"), "two").unwrap();
    let k2 = key("cp a.txt {out}", &[], &[], &src, std::slice::from_ref(&src)).unwrap();
    assert_ne!(k1, k2);
    assert_ne!(
        k2,
        key(
            "cp -v a.txt {out}",
            &[],
            &[],
            &src,
            std::slice::from_ref(&src)
        )
        .unwrap()
    );

    let out = tmp("out").join(&k2);
    let log = tmp("log").join("build.log");
    let stop = AtomicBool::new(false);
    let cmd = format!("cp a.txt {}/", out.display());
    let (cached, _) = build(&cmd, &src, &out, &[], &log, Duration::from_secs(30), &stop).unwrap();
    assert!(!cached);
    assert_eq!(fs::read_to_string(out.join("a.txt")).unwrap(), "two");
    assert_eq!(size(&out), Some(3));
    let (cached, _) = build(&cmd, &src, &out, &[], &log, Duration::from_secs(30), &stop).unwrap();
    assert!(cached);
}

/// Two shootouts building one cache entry at once (the tests quick_default_suite_* and
/// quick_svg_and_jvm_rows both build avatar): the second deleted the first's build in
/// progress as half-finished, and cargo failed to write into it.
#[test]
fn a_build_in_progress_is_waited_for_not_thrown_away() {
    let src = tmp("concurrent");
    let out = src.join("entry");
    let never = AtomicBool::new(false);
    // Another run holds the entry, half built.
    let held = lock_entry(&out, Duration::from_secs(5), &never).unwrap();
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("made"), "first").unwrap();
    let cmd = format!("echo second > {}/made", out.display());
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| {
            let log = src.join("b.log");
            build(&cmd, &src, &out, &[], &log, Duration::from_secs(30), &never)
        });
        // While the entry is held, the half-built files stay (no false failure on a
        // slow machine: a late thread only makes this window test less).
        let until = Instant::now() + Duration::from_millis(300);
        while Instant::now() < until {
            assert!(!waiting.is_finished(), "{:?}", waiting.join());
            assert_eq!(fs::read_to_string(out.join("made")).unwrap(), "first");
            std::thread::sleep(Duration::from_millis(10));
        }
        // The other run finishes its build and lets go: this one uses it.
        fs::write(out.join(".foxbench-built"), "first").unwrap();
        drop(held);
        let (cached, _) = waiting.join().unwrap().unwrap();
        assert!(cached);
    });
    assert_eq!(fs::read_to_string(out.join("made")).unwrap(), "first");

    // Waiting is bounded by the build's limit, and Ctrl-C ends it.
    let held = lock_entry(&out, Duration::from_secs(5), &never).unwrap();
    let r = lock_entry(&out, Duration::from_millis(50), &never);
    assert!(matches!(r, Err(BuildError::TimedOut(_))), "{r:?}");
    let r = lock_entry(&out, Duration::from_secs(30), &AtomicBool::new(true));
    assert!(matches!(r, Err(BuildError::Interrupted)), "{r:?}");
    assert!(lock_entry(&src.join("other"), Duration::from_secs(1), &never).is_ok());
    drop(held);
    assert!(lock_entry(&out, Duration::from_secs(1), &never).is_ok());
    let _ = fs::remove_dir_all(&src);
}

#[test]
fn a_failing_build_reports_its_last_line_and_is_not_cached() {
    let src = tmp("fail");
    let out = src.join("out");
    let log = src.join("log");
    let stop = AtomicBool::new(false);
    let e = build(
        "echo 'error: no such thing' >&2; exit 3",
        &src,
        &out,
        &[],
        &log,
        Duration::from_secs(30),
        &stop,
    )
    .unwrap_err();
    match e {
        BuildError::Failed(m) => assert!(
            m.contains("exit status: 3") && m.contains("no such thing"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(!out.join(".foxbench-built").exists());
    let e = build(
        "sleep 30",
        &src,
        &out,
        &[],
        &log,
        Duration::from_millis(200),
        &stop,
    )
    .unwrap_err();
    assert!(matches!(e, BuildError::TimedOut(_)));
}

fn fake_tool(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, "#!/bin/sh\n").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_glob_finds_the_newest_executable_by_version() {
    let d = tmp("glob");
    // 8 < 17 < 25 only as numbers: as text, "8" would win.
    for v in ["temurin-8-jdk", "temurin-17-jdk", "temurin-25-jdk"] {
        fake_tool(&d.join(v).join("bin/java"));
    }
    // Newer by name but not executable, or not a file: never chosen.
    fs::create_dir_all(d.join("temurin-99-jdk/bin/java")).unwrap();
    fs::create_dir_all(d.join("temurin-98-jdk/bin")).unwrap();
    fs::write(d.join("temurin-98-jdk/bin/java"), "").unwrap();
    fake_tool(&d.join("zulu-30-jdk/bin/java")); // does not match the pattern
    let pattern = format!("{}/temurin-*-jdk/bin/java", d.display());
    assert!(is_glob(&pattern));
    assert_eq!(which(&pattern), Some(d.join("temurin-25-jdk/bin/java")));
    // Two stars in a component, and a star in the last one.
    let two = format!("{}/t*n-*-jdk/bin/ja*", d.display());
    assert_eq!(which(&two), Some(d.join("temurin-25-jdk/bin/java")));
    // Nothing matches: none, as for a command not on PATH.
    assert_eq!(which(&format!("{}/corretto-*/bin/java", d.display())), None);
    assert_eq!(which(&format!("{}/nowhere-*/x/*/java", d.display())), None);
    // A relative pattern is not a glob (a command name with a star is just not found).
    assert!(!is_glob("temurin-*/bin/java"));

    // The glob's directory goes first on the target's PATH, once.
    let java = which(&pattern).unwrap();
    let one = std::slice::from_ref(&java);
    let path = path_with_first(one, one).unwrap();
    let first = std::env::split_paths(&path).next().unwrap();
    assert_eq!(first, d.join("temurin-25-jdk/bin"));
    assert_eq!(
        std::env::split_paths(&path).filter(|p| p == &first).count(),
        1
    );
    let _ = fs::remove_dir_all(&d);
}

#[test]
fn version_order_compares_digit_runs_as_numbers() {
    use std::cmp::Ordering::*;
    let cases = [
        ("jdk-9", "jdk-17", Less),
        ("jdk-17", "jdk-17", Equal),
        ("jdk-25.0.10", "jdk-25.0.9", Greater),
        ("jdk-025", "jdk-25", Equal),
        ("jdk-25", "jdk-25.0.1", Less),
        ("a", "b", Less),
        ("", "x", Less),
    ];
    for (a, b, want) in cases {
        assert_eq!(version_order(a, b), want, "{a} vs {b}");
    }
    for (p, n, want) in [
        ("temurin-*", "temurin-25-jdk-amd64", true),
        ("temurin-*", "temurin-", true),
        ("temurin-*", "openjdk-17", false),
        ("*-jdk", "x-jdk", true),
        ("a*a", "a", false),
        ("java", "java", true),
        ("java", "javac", false),
    ] {
        assert_eq!(wildcard_match(p, n), want, "{p} ~ {n}");
    }
}

#[test]
fn which_finds_sh_and_not_nonsense() {
    assert!(which("sh").is_some());
    assert!(which("no-such-tool-foxbench").is_none());
}
