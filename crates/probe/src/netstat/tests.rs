use super::*;

const NETSTAT: &str = include_str!("../fixtures/netstat-6.18.txt");
const SNMP: &str = include_str!("../fixtures/snmp-6.18.txt");

/// The files of a 6.18 kernel, as read on the project's machine.
#[test]
fn reads_a_real_kernels_files_by_name() {
    let c = parse_tcp_counters(NETSTAT, SNMP);
    let pairs = counter_pairs(NETSTAT);
    let find = |n: &str| {
        pairs
            .iter()
            .find(|p| p.0 == "TcpExt" && p.1 == n)
            .unwrap()
            .2
    };
    assert_eq!(c.delayed_acks, find("DelayedACKs"));
    assert_eq!(c.listen_overflows, find("ListenOverflows"));
    assert_eq!(c.tcp_syn_retrans, find("TCPSynRetrans"));
    let snmp = counter_pairs(SNMP);
    let tcp = |n: &str| snmp.iter().find(|p| p.0 == "Tcp" && p.1 == n).unwrap().2;
    assert_eq!(c.retrans_segs, tcp("RetransSegs"));
    assert_eq!(c.estab_resets, tcp("EstabResets"));
    // Every counter the diagnosis uses is in this kernel's files.
    for (section, name) in TcpCounters::NAMES {
        let all = if *section == "Tcp" { &snmp } else { &pairs };
        assert!(
            all.iter().any(|p| p.0 == *section && p.1 == *name),
            "{section} {name} missing"
        );
    }
    // MaxConn is -1: skipped, the names after it keep their own values.
    assert!(!snmp.iter().any(|p| p.1 == "MaxConn"));
    assert!(snmp.iter().any(|p| p.1 == "ActiveOpens"));
}

#[test]
fn by_name_not_by_position() {
    let table: &[(&str, &str, TcpCounters)] = &[
        // A new kernel reordered and added fields.
        (
            "TcpExt: NewThing DelayedACKs ListenOverflows\nTcpExt: 9 7 3\n",
            "Tcp: RetransSegs Foo\nTcp: 5 1\n",
            TcpCounters {
                delayed_acks: 7,
                listen_overflows: 3,
                retrans_segs: 5,
                ..Default::default()
            },
        ),
        // An older kernel without a counter: 0.
        (
            "TcpExt: DelayedACKs\nTcpExt: 4\nIpExt: DelayedACKs\nIpExt: 99\n",
            "",
            TcpCounters {
                delayed_acks: 4,
                ..Default::default()
            },
        ),
        // Names and values of different lengths: nothing shifts onto another name.
        (
            "TcpExt: DelayedACKs ListenOverflows\nTcpExt: 4\n",
            "Tcp: RetransSegs\nUdp: 5\n",
            TcpCounters::default(),
        ),
        // Garbage and a header without its values.
        (
            "no colon\n\nTcpExt: DelayedACKs",
            "Tcp:",
            TcpCounters::default(),
        ),
    ];
    for (netstat, snmp, want) in table {
        assert_eq!(
            parse_tcp_counters(netstat, snmp),
            *want,
            "{netstat:?} {snmp:?}"
        );
    }
}

/// This kernel's files with every section's fields reversed, new fields added at the
/// front, middle and end, and the sections in reverse order: the same counters, by
/// name. (A reader by position would read every counter from another's column.)
#[test]
fn a_real_kernels_fields_reordered_and_extended_read_the_same() {
    let want = parse_tcp_counters(NETSTAT, SNMP);
    assert_ne!(want.delayed_acks, 0, "the fixture has counts to move");
    let rewrite = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        let mut sections: Vec<String> = lines
            .chunks(2)
            .map(|pair| {
                let (section, names) = pair[0].split_once(':').unwrap();
                let (_, values) = pair[1].split_once(':').unwrap();
                let mut cols: Vec<(&str, &str)> = names
                    .split_whitespace()
                    .zip(values.split_whitespace())
                    .collect();
                cols.reverse();
                cols.insert(0, ("TCPNewFront", "11"));
                cols.insert(cols.len() / 2, ("TCPNewMiddle", "22"));
                cols.push(("TCPNewEnd", "18446744073709551615"));
                let (n, v): (Vec<&str>, Vec<&str>) = cols.into_iter().unzip();
                format!("{section}: {}\n{section}: {}\n", n.join(" "), v.join(" "))
            })
            .collect();
        sections.reverse();
        sections.concat()
    };
    let (netstat, snmp) = (rewrite(NETSTAT), rewrite(SNMP));
    assert_ne!(netstat, NETSTAT);
    assert_eq!(parse_tcp_counters(&netstat, &snmp), want);
    let pairs = counter_pairs(&netstat);
    assert!(
        pairs.contains(&("TcpExt", "TCPNewEnd", u64::MAX)),
        "{pairs:?}"
    );
}

/// `counter_pairs` took the line after a header as its values even when its prefix
/// differed, consuming it: one stray line shifted the pairing and zeroed the section
/// after it. Only adjacent lines of the same prefix pair now.
#[test]
fn a_stray_line_does_not_zero_the_next_section() {
    let want = TcpCounters {
        delayed_acks: 7,
        listen_overflows: 3,
        ..Default::default()
    };
    let pair = "TcpExt: DelayedACKs ListenOverflows\nTcpExt: 7 3\n";
    for stray in [
        "Stray: 1 2 3\n",
        "IpExt: InNoRoutes\n",
        "TcpExt: DelayedACKs\n",
        "no colon\n",
    ] {
        let before = format!("{stray}{pair}");
        assert_eq!(parse_tcp_counters(&before, ""), want, "{before:?}");
        let after = format!("IpExt: A B\nIpExt: 1 2\n{stray}{pair}");
        assert_eq!(parse_tcp_counters(&after, ""), want, "{after:?}");
    }
    // A stray line between a header and its values: that pair is lost, not shifted.
    let split = "TcpExt: DelayedACKs\nStray: 5\nTcpExt: 4\n";
    assert_eq!(parse_tcp_counters(split, ""), TcpCounters::default());
    // The snmp file's sections each survive a stray line before them.
    let snmp = "Ip: Forwarding\nIp: 1\nstray: x\nTcp: RetransSegs EstabResets\nTcp: 5 2\n";
    let c = parse_tcp_counters("", snmp);
    assert_eq!((c.retrans_segs, c.estab_resets), (5, 2));
}

#[test]
fn since_is_the_growth_and_never_wraps() {
    let a = TcpCounters {
        delayed_acks: 10,
        retrans_segs: 5,
        ..Default::default()
    };
    let b = TcpCounters {
        delayed_acks: 25,
        retrans_segs: 3,
        ..Default::default()
    };
    let d = b.since(&a);
    assert_eq!((d.delayed_acks, d.retrans_segs), (15, 0));
    assert_eq!(d.named()[0], ("DelayedACKs", 15));
    assert_eq!(d.named().len(), TcpCounters::NAMES.len());
}

#[test]
fn reads_this_namespaces_files() {
    // The counters only grow between two readings.
    let a = tcp_counters().expect("/proc/net is readable");
    let b = tcp_counters().expect("/proc/net is readable");
    for ((name, x), (_, y)) in a.named().into_iter().zip(b.named()) {
        assert!(y >= x, "{name} went from {x} to {y}");
    }
}
