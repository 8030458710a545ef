use super::*;

fn log() -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!(
        "foxbench-proc-{}-{}.log",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_file(&p);
    p
}

fn alive(pid: i32) -> bool {
    probe::processes::get(pid).is_some()
}

#[test]
fn stop_kills_a_target_that_ignores_sigterm_and_its_setsid_daemon() {
    let l = log();
    // The daemon escapes the process group with setsid; the root ignores SIGTERM.
    let cmd = "sh -c 'trap \"\" TERM; setsid sh -c \"trap \\\"\\\" TERM; sleep 600\" & echo started; while :; do sleep 1; done'";
    let mut s = spawn(cmd, Shell::Exec, Path::new("/"), &[], &allowed_cpus(), &l).unwrap();
    testkit::wait_until(
        Duration::from_secs(10),
        "root, daemon and sleep to be members",
        || s.members().len() >= 3,
    );
    let members = s.members();
    assert!(members.len() >= 3, "root, daemon and sleep: {members:?}");
    let r = s.stop(Duration::from_millis(300));
    assert!(
        r.killed,
        "SIGTERM was ignored, so SIGKILL was needed: {r:?}"
    );
    assert_eq!(r.survivors, 0);
    assert!(r.leftovers >= 2, "{r:?}");
    testkit::wait_until(
        Duration::from_secs(10),
        "every stopped member to be gone",
        || members.iter().all(|&p| !alive(p)),
    );
    assert!(tail(&l, 1).contains("started"));
}

#[test]
fn a_polite_target_stops_on_sigterm_and_is_pinned() {
    let l = log();
    let cpus = allowed_cpus();
    let one = vec![*cpus.last().unwrap()];
    let mut s = spawn(
        "sleep 600",
        Shell::Exec,
        Path::new("/"),
        &[("X".into(), "1".into())],
        &one,
        &l,
    )
    .unwrap();
    assert_eq!(
        probe::processes::cpus_allowed(s.pid).unwrap(),
        vec![(one[0] as u32, one[0] as u32)]
    );
    // The spawning thread got its own mask back.
    assert_eq!(allowed_cpus(), cpus);
    let r = s.stop(Duration::from_secs(5));
    assert!(!r.killed && r.survivors == 0, "{r:?}");
    assert!(s.exited().is_some());
}
