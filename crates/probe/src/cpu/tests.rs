use super::*;
use std::time::{Duration, Instant};

#[test]
fn shares_are_percentages_of_the_windows_ticks() {
    let t = |user, system, idle, softirq| CpuTicks {
        user,
        system,
        idle,
        softirq,
        ..Default::default()
    };
    let a = SystemStat {
        cpus: [(0, t(100, 100, 100, 100)), (1, t(0, 0, 0, 0))].into(),
        ctxt: 1000,
    };
    let b = SystemStat {
        cpus: [(0, t(130, 120, 107, 143)), (1, t(0, 0, 0, 0))].into(),
        ctxt: 3000,
    };
    let s = b.shares_since(&a, &[0, 1, 7]);
    assert_eq!(s.len(), 2, "CPU 7 has no line: {s:?}");
    assert_eq!(
        (s[0].cpu, s[0].user, s[0].system, s[0].softirq, s[0].idle),
        (0, 30.0, 20.0, 43.0, 7.0)
    );
    assert_eq!(s[0].busy(), 93.0, "softirq counts as busy");
    assert_eq!((s[1].cpu, s[1].idle, s[1].busy()), (1, 100.0, 0.0));
    assert_eq!(b.ctxt_per_s_since(&a, 2.0), 1000.0);
}

/// Regression (review of issue 11): the lines of `/proc/stat` were taken as CPU numbers
/// by position, so with a CPU offline a pinned CPU's figures came from another one.
#[test]
fn cpus_are_numbered_from_the_online_list() {
    assert_eq!(parse_cpu_list("0-1\n"), Some(vec![0, 1]));
    assert_eq!(parse_cpu_list("0,2-3,6"), Some(vec![0, 2, 3, 6]));
    assert_eq!(parse_cpu_list("5"), Some(vec![5]));
    for bad in ["", "a", "3-1", "0,0", "1,0", "0-", "-1"] {
        assert_eq!(parse_cpu_list(bad), None, "{bad:?}");
    }
}

#[test]
fn a_busy_thread_shows_in_proc_stat() {
    let before = system().unwrap();
    assert!(!before.cpus.is_empty() && before.ctxt > 0, "{before:?}");
    // Spin until this process has had 100 ms of CPU (ten ticks at 100 Hz), within a
    // deadline: a busy machine gives a spinning thread less than its wall time.
    let u0 = crate::own_usage();
    let end = Instant::now() + Duration::from_secs(20);
    let mut x = 0u64;
    while crate::own_usage().since(&u0).cpu() < Duration::from_millis(100) && Instant::now() < end {
        for _ in 0..10_000 {
            x = x.wrapping_add(std::hint::black_box(1));
        }
    }
    let after = system().unwrap();
    let all: Vec<usize> = after.cpus.keys().copied().collect();
    let shares = after.shares_since(&before, &all);
    assert_eq!(shares.len(), all.len());
    // 100 ms of this thread's CPU is at least some busy ticks on some CPU.
    assert!(shares.iter().any(|s| s.busy() > 0.0), "{shares:?} {x}");
    for s in &shares {
        let sum = s.busy() + s.idle + s.iowait + s.steal;
        assert!((sum - 100.0).abs() < 1e-6 || sum == 100.0, "{s:?}");
    }
}
