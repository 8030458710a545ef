use std::time::Duration;

use super::*;

#[test]
fn finds_a_child_its_group_its_environment_and_its_executable() {
    let me = std::process::id() as i32;
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .env("FOXBENCH_PROBE_TEST", "marked")
        .spawn()
        .expect("sleep runs");
    let pid = child.id() as i32;
    // Until its exec is through, the child's environment and executable are this
    // process's (the kernel switches the executable before it sets up the new environment).
    testkit::wait_until(
        Duration::from_secs(10),
        "the child's own environment",
        || has_env(pid, "FOXBENCH_PROBE_TEST", "marked"),
    );
    assert!(exe(pid).is_some_and(|e| e.ends_with("sleep")));
    let p = get(pid).expect("the child is alive");
    assert_eq!((p.pid, p.ppid), (pid, me));
    assert_eq!(p.pgrp, get(me).unwrap().pgrp, "it stays in this group");
    assert!(live().contains(&p));
    assert!(!has_env(pid, "FOXBENCH_PROBE_TEST", "other"));
    assert!(cpus_allowed(pid).is_some_and(|c| !c.is_empty()));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(get(pid), None, "reaped");
}
