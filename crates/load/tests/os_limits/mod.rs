//! The limits the doctor reads, read for real: each figure against `sysctl -n` and
//! getrlimit, and every check answering on this machine.

use load::os_limits::{check, Demand, Machine, Severity};

/// `sysctl -n NAME` as numbers, or `None` when the key does not exist here.
fn sysctl(name: &str) -> Option<Vec<u64>> {
    let out = std::process::Command::new("sysctl")
        .args(["-n", name])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout)
        .ok()?
        .split_whitespace()
        .map(|w| w.parse().ok())
        .collect()
}

#[test]
fn the_machine_is_read_as_sysctl_and_getrlimit_read_it() {
    use nix::sys::resource::{getrlimit, Resource};
    let m = Machine::read();
    assert_eq!(m.nofile, getrlimit(Resource::RLIMIT_NOFILE).ok());
    assert_eq!(m.nr_open, sysctl("fs.nr_open").map(|v| v[0]));
    assert_eq!(
        m.port_range,
        sysctl("net.ipv4.ip_local_port_range").map(|v| (v[0], v[1]))
    );
    assert_eq!(m.tw_reuse, sysctl("net.ipv4.tcp_tw_reuse").map(|v| v[0]));
    assert_eq!(m.somaxconn, sysctl("net.core.somaxconn").map(|v| v[0]));
    assert_eq!(
        m.syn_backlog,
        sysctl("net.ipv4.tcp_max_syn_backlog").map(|v| v[0])
    );
    assert_eq!(
        m.tcp_mem,
        sysctl("net.ipv4.tcp_mem").map(|v| [v[0], v[1], v[2]])
    );
    assert_eq!(
        m.file_nr.map(|(_, max)| max),
        sysctl("fs.file-max").map(|v| v[0])
    );
    // conntrack is read when its sysctls exist (the module is loaded), else not loaded.
    let ct_max = sysctl("net.netfilter.nf_conntrack_max").map(|v| v[0]);
    assert_eq!(m.conntrack.map(|(_, max)| max), ct_max);
    assert!(m.tcp_mem_used.is_some(), "/proc/net/sockstat has TCP mem");
    assert_eq!(m.nproc, getrlimit(Resource::RLIMIT_NPROC).ok());
    assert_eq!(m.threads_max, sysctl("kernel.threads-max").map(|v| v[0]));
    assert_eq!(m.pid_max, sysctl("kernel.pid_max").map(|v| v[0]));
    assert_eq!(m.max_map_count, sysctl("vm.max_map_count").map(|v| v[0]));
    assert!(m.tasks_now.is_some_and(|n| n > 1), "{:?}", m.tasks_now);
}

#[test]
fn every_check_answers_on_this_machine() {
    let m = Machine::read();
    for connections in [1, 10_000] {
        let findings = check(
            &m,
            &Demand {
                connections,
                closes_per_s: None,
                threads: Some(connections),
                remote: false,
                udp: false,
            },
        );
        for f in &findings {
            assert_ne!(f.severity, Severity::Unknown, "{f:?}");
            assert_eq!(f.fix.is_some(), f.severity == Severity::Short, "{f:?}");
        }
        if connections == 1 {
            assert!(
                findings.iter().all(|f| f.severity == Severity::Ok),
                "one connection is short of nothing: {findings:#?}"
            );
        }
    }
}
