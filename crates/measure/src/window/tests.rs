use std::time::Duration;

use report::tcp::TcpCounts;

use super::{tcp_delta, Edge};

#[test]
fn the_cpu_beside_the_load_is_left_out_of_the_clients() {
    // `shootout --dashboard` charged the page threads and the view's per-interval work
    // to the client, which subtracted only its probe threads.
    let ms = |user: u64, sys: u64| probe::OwnUsage {
        user: Duration::from_millis(user),
        sys: Duration::from_millis(sys),
        ..probe::OwnUsage::default()
    };
    let edge = |own, beside| Edge {
        own,
        beside,
        tcp: None,
        udp: None,
    };
    let probe_usage = ms(1_000, 500);
    // The process: 10 s user and 5 s system; the view's threads 300 ms user and 2 s
    // system during the window, and 50 ms of its work on the load's thread.
    let (from, to) = (
        edge(ms(1_000, 1_000), Some(ms(700, 1_000))),
        edge(ms(11_000, 6_000), Some(ms(1_000, 3_000))),
    );
    let spent = from
        .until(&to, Duration::from_secs(1), probe_usage)
        .also_beside(&ms(50, 0));
    // What the record holds as `dashboard_cpu_s`.
    assert_eq!(spent.beside, Some(ms(300 + 50, 2_000)));
    assert_eq!(
        spent.client,
        ms(10_000 - 1_000 - 300 - 50, 5_000 - 500 - 2_000)
    );
    assert_eq!(spent.helpers, probe_usage);
    assert_eq!(spent.tcp, None, "no counters read");
    // Without a view, only the probe's.
    let (from, to) = (edge(ms(1_000, 1_000), None), edge(ms(11_000, 6_000), None));
    let spent = from.until(&to, Duration::from_secs(1), probe_usage);
    assert_eq!((spent.client, spent.beside), (ms(9_000, 4_500), None));
}

/// The counter names live in two lists (the probe's, the report's) joined only by
/// strings, and `from_named` skips a name it does not know: a typo in either list read 0
/// forever. The two lists must be the same names in the same order, and every counter
/// the probe reads must land in the report.
#[test]
fn probe_and_report_tcp_counter_names_are_one_list() {
    let probe: Vec<&str> = probe::TcpCounters::NAMES.iter().map(|p| p.1).collect();
    let report: Vec<&str> = TcpCounts::<u64>::default()
        .named()
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert_eq!(probe, report);
    let all_ones = TcpCounts::from_named(probe.iter().map(|&n| (n, 1)));
    assert!(all_ones.named().iter().all(|p| p.1 == 1), "{all_ones:?}");
    // Every counter of a reading crosses: a parse of a text holding each name once.
    let header: Vec<&str> = probe::TcpCounters::NAMES
        .iter()
        .filter(|p| p.0 == "TcpExt")
        .map(|p| p.1)
        .collect();
    let snmp: Vec<&str> = probe::TcpCounters::NAMES
        .iter()
        .filter(|p| p.0 == "Tcp")
        .map(|p| p.1)
        .collect();
    let ones = |n: usize| vec!["1"; n].join(" ");
    let after = probe::parse_tcp_counters(
        &format!(
            "TcpExt: {}\nTcpExt: {}\n",
            header.join(" "),
            ones(header.len())
        ),
        &format!("Tcp: {}\nTcp: {}\n", snmp.join(" "), ones(snmp.len())),
    );
    let got = tcp_delta(&probe::TcpCounters::default(), &after);
    assert!(got.named().iter().all(|p| p.1 == 1), "{got:?}");
}
