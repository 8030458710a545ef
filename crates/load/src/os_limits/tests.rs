use super::*;

/// This project's VM, as read on 2026-11-24.
fn vm() -> Machine {
    Machine {
        nofile: Some((20000, 20000)),
        nr_open: Some(1_048_576),
        file_nr: Some((1_344, 2_466_177)),
        port_range: Some((32768, 60999)),
        tw_reuse: Some(2),
        somaxconn: Some(4096),
        syn_backlog: Some(2048),
        conntrack: Some((12, 262_144)),
        tcp_mem: Some([287_901, 383_868, 575_802]),
        tcp_mem_used: Some(182),
        nproc: Some((96_365, 96_365)),
        root: false,
        threads_max: Some(192_730),
        pid_max: Some(32_768),
        tasks_now: Some(306),
        max_map_count: Some(65_530),
        rmem_max: Some(212_992),
        wmem_max: Some(212_992),
    }
}

/// Regression (review of issue 10): `tcp_tw_reuse = 2` counted as reuse for a remote
/// target too, so the ports TIME_WAIT holds were undercounted 60 times.
#[test]
fn tw_reuse_2_helps_loopback_only() {
    let m = vm(); // tcp_tw_reuse 2, 28,232 ports
    let d = |remote| Demand {
        connections: 100,
        closes_per_s: Some(1_000),
        threads: None,
        remote,
        udp: false,
    };
    let find = |d: &Demand, check: &str| {
        let f = super::check(&m, d);
        f.into_iter().find(|f| f.check == check).unwrap()
    };
    // Loopback: 1,000 closes a second held a second each fit.
    assert_eq!(
        find(&d(false), "net.ipv4.ip_local_port_range").severity,
        Severity::Ok
    );
    assert_eq!(
        find(&d(false), "net.ipv4.tcp_tw_reuse").severity,
        Severity::Ok
    );
    // Remote: held 60 s each, 60,100 ports are needed.
    let ports = find(&d(true), "net.ipv4.ip_local_port_range");
    assert_eq!(
        (ports.severity, ports.needed.as_str()),
        (Severity::Short, "60100 ports")
    );
    let tw = find(&d(true), "net.ipv4.tcp_tw_reuse");
    assert_eq!(tw.severity, Severity::Short, "{tw:?}");
    assert_eq!(tw.fix.as_deref(), Some("sysctl -w net.ipv4.tcp_tw_reuse=1"));
}

fn demand(connections: u64) -> Demand {
    Demand {
        connections,
        closes_per_s: None,
        threads: None,
        remote: false,
        udp: false,
    }
}

fn severity(findings: &[Finding], check: &str) -> Severity {
    findings
        .iter()
        .find(|f| f.check == check)
        .unwrap_or_else(|| panic!("no {check}"))
        .severity
}

#[test]
fn every_check_is_in_the_table_once_and_named_as_it_reports() {
    let m = vm();
    let d = demand(10);
    for (name, f) in CHECKS {
        assert_eq!(f(&m, &d).check, *name);
    }
    let mut names: Vec<_> = CHECKS.iter().map(|(n, _)| *n).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), CHECKS.len());
}

#[test]
fn recorded_machines_against_demands() {
    type Edit = fn(&mut Machine);
    /// What, an edit of the VM, connections, closes/s, the check, its severity and fix.
    type Case<'a> = (
        &'a str,
        Edit,
        u64,
        Option<u64>,
        &'a str,
        Severity,
        Option<&'a str>,
    );
    let cases: &[Case] = &[
        ("the VM at 10,000", |_| {}, 10_000, None, "ulimit -Hn", Severity::Ok, None),
        ("ulimit -n 1024 (both)", |m| m.nofile = Some((1024, 1024)), 10_000, None, "ulimit -Hn", Severity::Short, Some("ulimit -n 10064")),
        ("1024 is enough for 900", |m| m.nofile = Some((1024, 1024)), 900, None, "ulimit -Hn", Severity::Ok, None),
        ("soft 1024, hard 1M", |m| m.nofile = Some((1024, 1_048_576)), 10_000, None, "ulimit -n", Severity::Short, Some("ulimit -n 1048576")),
        ("soft 1024, hard 1M, hard ok", |m| m.nofile = Some((1024, 1_048_576)), 10_000, None, "ulimit -Hn", Severity::Ok, None),
        ("nr_open below the need", |m| m.nr_open = Some(8192), 10_000, None, "fs.nr_open", Severity::Short, Some("sysctl -w fs.nr_open=10064")),
        ("file-max small", |m| m.file_nr = Some((1000, 15_000)), 10_000, None, "fs.file-max", Severity::Short, Some("sysctl -w fs.file-max=21128")),
        ("default range at 10,000", |_| {}, 10_000, None, "net.ipv4.ip_local_port_range", Severity::Ok, None),
        ("default range at 30,000", |_| {}, 30_000, None, "net.ipv4.ip_local_port_range", Severity::Short, Some("sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"")),
        ("1,000 ports at 2,000 (the netns run)", |m| m.port_range = Some((61000, 61999)), 2_000, None, "net.ipv4.ip_local_port_range", Severity::Short, Some("sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"")),
        ("70,000 connections from one address", |_| {}, 70_000, None, "net.ipv4.ip_local_port_range", Severity::Short, Some("70000 ports is more than one source address has: spread the connections over more addresses (127.0.0.2, ...) or fewer connections")),
        // 1,000 closes/s held 60 s: 60,000 ports in TIME_WAIT.
        ("closes without reuse", |m| m.tw_reuse = Some(0), 100, Some(1000), "net.ipv4.ip_local_port_range", Severity::Short, Some("sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"")),
        ("closes without reuse: tw_reuse", |m| m.tw_reuse = Some(0), 100, Some(1000), "net.ipv4.tcp_tw_reuse", Severity::Short, Some("sysctl -w net.ipv4.tcp_tw_reuse=1")),
        ("closes with reuse", |_| {}, 100, Some(1000), "net.ipv4.ip_local_port_range", Severity::Ok, None),
        ("no closes: tw_reuse 0 harmless", |m| m.tw_reuse = Some(0), 10_000, None, "net.ipv4.tcp_tw_reuse", Severity::Ok, None),
        ("somaxconn 128 at 10,000", |m| m.somaxconn = Some(128), 10_000, None, "net.core.somaxconn", Severity::Short, Some("sysctl -w net.core.somaxconn=4096")),
        ("somaxconn 128 at 100", |m| m.somaxconn = Some(128), 100, None, "net.core.somaxconn", Severity::Ok, None),
        ("syn backlog 128", |m| m.syn_backlog = Some(128), 10_000, None, "net.ipv4.tcp_max_syn_backlog", Severity::Short, Some("sysctl -w net.ipv4.tcp_max_syn_backlog=2048")),
        ("conntrack not loaded", |m| m.conntrack = None, 10_000, None, "net.netfilter.nf_conntrack_max", Severity::Ok, None),
        ("conntrack small", |m| m.conntrack = Some((500, 8192)), 10_000, None, "net.netfilter.nf_conntrack_max", Severity::Short, Some("sysctl -w net.netfilter.nf_conntrack_max=10500")),
        ("conntrack TIME_WAIT", |m| m.conntrack = Some((0, 65536)), 100, Some(1000), "net.netfilter.nf_conntrack_max", Severity::Short, Some("sysctl -w net.netfilter.nf_conntrack_max=120100")),
        ("tcp_mem small", |m| m.tcp_mem = Some([1000, 2000, 3000]), 10_000, None, "net.ipv4.tcp_mem", Severity::Short, Some("sysctl -w net.ipv4.tcp_mem=\"10091 20182 30273\"")),
        ("tcp_mem on the VM", |_| {}, 10_000, None, "net.ipv4.tcp_mem", Severity::Ok, None),
        ("unreadable", |m| *m = Machine::default(), 10_000, None, "net.core.somaxconn", Severity::Unknown, None),
        ("unreadable conntrack is not loaded", |m| *m = Machine::default(), 10_000, None, "net.netfilter.nf_conntrack_max", Severity::Ok, None),
    ];
    for (what, edit, connections, closes, check, want, fix) in cases {
        let mut m = vm();
        edit(&mut m);
        let d = Demand {
            connections: *connections,
            closes_per_s: *closes,
            threads: None,
            remote: false,
            udp: false,
        };
        let findings = super::check(&m, &d);
        let f = findings.iter().find(|f| f.check == *check).unwrap();
        assert_eq!(f.severity, *want, "{what}: {f:?}");
        assert_eq!(f.fix.as_deref(), *fix, "{what}: {f:?}");
    }
}

#[test]
fn thread_checks_against_recorded_machines() {
    type Edit = fn(&mut Machine);
    /// What, an edit of the VM, threads, the check, its severity and fix.
    type Case<'a> = (
        &'a str,
        Edit,
        Option<u64>,
        &'a str,
        Severity,
        Option<&'a str>,
    );
    let cases: &[Case] = &[
        ("not asked", |_| {}, None, "ulimit -u", Severity::Ok, None),
        (
            "not asked, even if tiny",
            |m| m.pid_max = Some(300),
            None,
            "kernel.pid_max",
            Severity::Ok,
            None,
        ),
        (
            "10,000 threads on the VM",
            |_| {},
            Some(10_000),
            "ulimit -u",
            Severity::Ok,
            None,
        ),
        (
            "ulimit -u 300 (the setpriv run)",
            |m| m.nproc = Some((300, 300)),
            Some(1_000),
            "ulimit -u",
            Severity::Short,
            Some("ulimit -u 1064"),
        ),
        (
            "root ignores ulimit -u",
            |m| {
                m.nproc = Some((300, 300));
                m.root = true
            },
            Some(1_000),
            "ulimit -u",
            Severity::Ok,
            None,
        ),
        (
            "pid_max 32768 at 10,000",
            |_| {},
            Some(10_000),
            "kernel.pid_max",
            Severity::Ok,
            None,
        ),
        (
            "pid_max 32768 at 40,000",
            |_| {},
            Some(40_000),
            "kernel.pid_max",
            Severity::Short,
            Some("sysctl -w kernel.pid_max=4194304"),
        ),
        (
            "threads-max",
            |m| m.threads_max = Some(8_000),
            Some(10_000),
            "kernel.threads-max",
            Severity::Short,
            Some("sysctl -w kernel.threads-max=10306"),
        ),
        (
            "max_map_count at 10,000",
            |_| {},
            Some(10_000),
            "vm.max_map_count",
            Severity::Ok,
            None,
        ),
        (
            "max_map_count at 40,000",
            |_| {},
            Some(40_000),
            "vm.max_map_count",
            Severity::Short,
            Some("sysctl -w vm.max_map_count=84096"),
        ),
        (
            "unreadable",
            |m| *m = Machine::default(),
            Some(10),
            "kernel.threads-max",
            Severity::Unknown,
            None,
        ),
    ];
    for (what, edit, threads, check, want, fix) in cases {
        let mut m = vm();
        edit(&mut m);
        let d = Demand {
            connections: 100,
            closes_per_s: None,
            threads: *threads,
            remote: false,
            udp: false,
        };
        let findings = super::check(&m, &d);
        let f = findings.iter().find(|f| f.check == *check).unwrap();
        assert_eq!(f.severity, *want, "{what}: {f:?}");
        assert_eq!(f.fix.as_deref(), *fix, "{what}: {f:?}");
    }
}

#[test]
fn the_vm_is_enough_for_10000_connections() {
    let findings = check(&vm(), &demand(10_000));
    assert_eq!(short(&findings).count(), 0, "{findings:#?}");
    assert_eq!(severity(&findings, "ulimit -n"), Severity::Ok, "soft 20000");
}

/// The UDP buffer caps are judged only for a run over HTTP/3, against what each of its
/// sockets asks for; Debian's default cap (208 KiB) is short of it.
#[test]
fn the_udp_buffer_caps_are_short_for_http3_only() {
    let m = vm(); // rmem_max and wmem_max 212,992
    let find = |udp: bool, check: &str| {
        let d = Demand { udp, ..demand(100) };
        super::check(&m, &d)
            .into_iter()
            .find(|f| f.check == check)
            .unwrap()
    };
    for check in ["net.core.rmem_max", "net.core.wmem_max"] {
        let tcp = find(false, check);
        assert_eq!(
            (tcp.severity, tcp.needed.as_str()),
            (Severity::Ok, "-"),
            "{tcp:?}"
        );
        assert_eq!(tcp.observed, "212992");
        let h3 = find(true, check);
        assert_eq!(h3.severity, Severity::Short, "{h3:?}");
        assert_eq!(h3.needed, crate::UDP_BUFFER_BYTES.to_string());
        assert_eq!(
            h3.fix,
            Some(format!("sysctl -w {check}={}", crate::UDP_BUFFER_BYTES))
        );
    }
    let big = Machine {
        rmem_max: Some(crate::UDP_BUFFER_BYTES as u64),
        wmem_max: None,
        ..vm()
    };
    let d = Demand {
        udp: true,
        ..demand(100)
    };
    let f = super::check(&big, &d);
    assert_eq!(severity(&f, "net.core.rmem_max"), Severity::Ok);
    assert_eq!(severity(&f, "net.core.wmem_max"), Severity::Unknown);
}
