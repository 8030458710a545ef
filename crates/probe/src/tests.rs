use super::*;
use std::process::{Command, Stdio};

#[test]
fn samples_a_tree_with_a_child_and_sees_it_burn_cpu() {
    // sh forks a busy child; the tree must hold both and its CPU must grow.
    let mut sh = Command::new("sh")
        .args(["-c", "while :; do :; done & wait"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let root = sh.id() as i32;
    testkit::wait_until(Duration::from_secs(10), "sh and its busy child", || {
        sample(root).unwrap().processes == 2
    });
    let first = sample(root).unwrap();
    assert_eq!(first.processes, 2, "sh and its busy child: {first:?}");
    assert!(first.threads >= 2);
    assert!(
        first.rss_bytes > 0 && first.pss_bytes > 0 && first.fds > 0,
        "{first:?}"
    );
    let t0 = threads(root).unwrap();
    // The busy child spins: wait until the kernel has charged it a tick more, not for a
    // fixed time that a loaded machine may not give it.
    let mut second = sample(root).unwrap();
    let mut t1 = threads(root).unwrap();
    testkit::wait_until(Duration::from_secs(20), "the busy child to use CPU", || {
        second = sample(root).unwrap();
        t1 = threads(root).unwrap();
        second.cpu_ns() > first.cpu_ns() && t1.busiest_since(&t0) > 0
    });
    assert!(
        second.cpu_ns() > first.cpu_ns(),
        "{first:?} then {second:?}"
    );
    assert!(t1.busiest_since(&t0) > 0);
    assert!(t1.voluntary_ctxt + t1.involuntary_ctxt > 0);
    let tree_pids = tree(root).unwrap();
    nix_kill_tree(&tree_pids);
    let _ = sh.wait();
    assert!(matches!(sample(root), Err(ProbeError::Gone(_))));
}

fn nix_kill_tree(pids: &[i32]) {
    for pid in pids.iter().rev() {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
}

#[test]
fn processes_are_grouped_by_name() {
    let g = group_by_name([("nginx", 5), ("avatar", 2), ("nginx", 7), ("sh", 0)]);
    let want = ByName::from([
        (
            "avatar".into(),
            NamedCpu {
                processes: 1,
                cpu_ns: 2,
            },
        ),
        (
            "nginx".into(),
            NamedCpu {
                processes: 2,
                cpu_ns: 12,
            },
        ),
        (
            "sh".into(),
            NamedCpu {
                processes: 1,
                cpu_ns: 0,
            },
        ),
    ]);
    assert_eq!(g, want);
    assert!(group_by_name([]).is_empty());
}

#[test]
fn a_real_tree_is_named_by_comm_and_its_busy_child_burns_cpu() {
    // sh runs a busy child under another name (a copy of sh called foxbusy).
    let dir = std::env::temp_dir().join(format!("probe-byname-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let busy = dir.join("foxbusy");
    std::fs::copy("/bin/sh", &busy).unwrap();
    let mut sh = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} -c 'while :; do :; done' & wait",
            busy.display()
        ))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let root = sh.id() as i32;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let got = loop {
        let g = by_name(root).unwrap();
        let burnt = g.get("foxbusy").is_some_and(|c| c.cpu_ns > 0);
        if burnt || std::time::Instant::now() > deadline {
            break g;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    nix_kill_tree(&tree(root).unwrap());
    let _ = sh.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(got.get("sh").map(|c| c.processes), Some(1), "{got:?}");
    let busy = got.get("foxbusy").copied().unwrap_or_default();
    assert_eq!(busy.processes, 1, "{got:?}");
    assert!(busy.cpu_ns > 0, "{got:?}");
    assert!(matches!(by_name(root), Err(ProbeError::Gone(_))));
}

#[test]
fn a_missing_root_is_gone() {
    assert!(matches!(sample(i32::MAX - 7), Err(ProbeError::Gone(_))));
}

#[test]
fn stat_lines_and_children_lists_are_read_whatever_the_command_name() {
    let cases = [
        ("12 (sleep) S 1 12 12", Some("S")),
        ("12 (a) b) (c) Z 1", Some("Z")),
        ("12 (no state)", None),
        ("no parenthesis", None),
        ("", None),
    ];
    for (line, want) in cases {
        assert_eq!(stat_state(line), want, "{line:?}");
    }
    let got: Vec<i32> = children_list("101 102 x -3 0 103\n").collect();
    assert_eq!(got, [101, 102, 103]);
    assert_eq!(children_list("").count(), 0);
}

/// The walk down the kernel's children lists finds what the scan of every parent
/// finds: a grandchild, and a child started by another thread than the main one.
#[test]
fn the_children_walk_and_the_parent_scan_agree() {
    use std::os::unix::process::CommandExt as _;
    // In a group of its own, so that its sleeps go with it.
    let mut sh = Command::new("sh")
        .args(["-c", "sleep 30 & sleep 30 & wait"])
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let from_thread = std::thread::spawn(|| {
        Command::new("sleep")
            .arg("30")
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    })
    .join()
    .unwrap();
    let me = std::process::id() as i32;
    let want = [sh.id() as i32, from_thread.id() as i32];
    // Poll until sh has started both sleeps, with a deadline.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let (walk, scan) = loop {
        let Walk::Tree(mut walk) = tree_by_children(me) else {
            panic!("this kernel has CONFIG_PROC_CHILDREN");
        };
        let mut scan = tree_by_parents(me).unwrap();
        walk.sort_unstable();
        scan.sort_unstable();
        if walk == scan && walk.len() >= 5 {
            break (walk, scan);
        }
        assert!(std::time::Instant::now() < deadline, "{walk:?} {scan:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(want.iter().all(|p| walk.contains(p)), "{walk:?}");
    assert_eq!(walk, scan);
    assert_eq!(tree(me).unwrap()[0], me, "root first");
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(sh.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = sh.wait();
    let mut from_thread = from_thread;
    let _ = from_thread.kill();
    let _ = from_thread.wait();
    assert!(matches!(tree_by_children(i32::MAX - 7), Walk::Gone));
}

#[test]
fn own_usage_grows_and_subtracts() {
    let u0 = own_usage();
    let mut x = 0u64;
    // Spin until this process has had 60 ms of CPU (a busy machine gives a spinning
    // thread far less than its wall time), within a deadline.
    let end = std::time::Instant::now() + Duration::from_secs(20);
    while own_usage().since(&u0).cpu() < Duration::from_millis(60)
        && std::time::Instant::now() < end
    {
        for _ in 0..10_000 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
    }
    let u1 = own_usage();
    let d = u1.since(&u0);
    assert!(d.cpu() >= Duration::from_millis(50), "{d:?} {x}");
    assert!(d.cpu() <= u1.cpu());
    assert!(u1.max_rss_bytes > 0);
    assert_eq!(u0.since(&u1).cpu(), Duration::ZERO, "saturates");
}

#[test]
fn a_helper_threads_cpu_is_its_own_and_leaves_the_process_figure() {
    let p0 = own_usage();
    // A helper spins until it has had 40 ms of CPU, within a deadline; it reports its
    // own usage, which the process's figure holds and can leave out.
    let helper = std::thread::spawn(|| {
        let end = std::time::Instant::now() + Duration::from_secs(20);
        let mut x = 0u64;
        while thread_usage().cpu() < Duration::from_millis(40) && std::time::Instant::now() < end {
            for _ in 0..10_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
        }
        (thread_usage(), x)
    });
    let (mine, _) = helper.join().unwrap();
    let all = own_usage().since(&p0);
    assert!(mine.cpu() >= Duration::from_millis(40), "{mine:?}");
    assert!(all.cpu() >= mine.cpu(), "{all:?} {mine:?}");
    // This thread only waited: leaving the helper out leaves little.
    let rest = all.without(&mine);
    assert!(rest.cpu() < all.cpu(), "{rest:?} {all:?}");
    assert_eq!(mine.plus(&mine).cpu(), 2 * mine.cpu());
    // Leaving out more than there is saturates at zero. Checked against a figure made to be
    // larger in each part, not against `all`: the kernel splits a process's CPU into user
    // and system time by its own scaling (cputime_adjust), so a thread's user time can
    // exceed its process's while the total does not (it failed 1 run in 4 that way, off
    // by 2 ms).
    assert_eq!(
        mine.without(&mine.plus(&mine)).cpu(),
        Duration::ZERO,
        "saturates"
    );
}

/// A thread that sleeps gives up its CPU: each sleep is at least one voluntary context
/// switch, counted for the thread and the process, and carried by `since`/`without`/`plus`.
#[test]
fn own_usage_counts_a_sleeping_threads_voluntary_switches() {
    let (p0, t0) = (own_usage(), thread_usage());
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (p1, t1) = (own_usage(), thread_usage());
    let mine = t1.since(&t0);
    assert!(mine.voluntary_ctxt >= 3, "{mine:?}");
    assert!(
        p1.since(&p0).voluntary_ctxt >= mine.voluntary_ctxt,
        "{p0:?} {p1:?}"
    );
    assert_eq!(mine.plus(&mine).voluntary_ctxt, 2 * mine.voluntary_ctxt);
    assert_eq!(mine.without(&mine).voluntary_ctxt, 0);
    assert_eq!(
        mine.without(&mine.plus(&mine)).involuntary_ctxt,
        0,
        "saturates"
    );
}
