use super::*;

fn drops(rcvbuf: u64, sndbuf: u64) -> UdpCounts {
    UdpCounts {
        in_datagrams: 1000,
        out_datagrams: 1000,
        in_errors: rcvbuf,
        rcvbuf_errors: rcvbuf,
        sndbuf_errors: sndbuf,
    }
}

#[test]
fn no_drop_no_warning() {
    let r = report(drops(0, 0), true, &Buffers::default());
    assert_eq!(r.warning, None);
    assert_eq!(r.deltas.in_datagrams, 1000);
}

/// The counters are the namespace's: a run over TCP is not told about UDP drops.
#[test]
fn a_run_over_tcp_is_not_warned_of_udp_drops() {
    assert_eq!(
        report(drops(50, 0), false, &Buffers::default()).warning,
        None
    );
}

#[test]
fn a_capped_buffer_is_named_with_the_sysctl_that_fixes_it() {
    let b = Buffers {
        rmem_max: Some(212_992),
        wmem_max: Some(212_992),
        asked: Some(16 << 20),
    };
    let w = report(drops(120, 3), true, &b).warning.unwrap();
    assert!(w.contains("dropped 123 UDP datagrams"), "{w}");
    assert!(
        w.contains("RcvbufErrors 120, SndbufErrors 3, InErrors 120"),
        "{w}"
    );
    assert!(
        w.contains(
            "16777216-byte receive buffer per socket and net.core.rmem_max (212992) capped it"
        ),
        "{w}"
    );
    assert!(
        w.ends_with("sysctl -w net.core.rmem_max=16777216 net.core.wmem_max=16777216"),
        "{w}"
    );
    assert_eq!(w.lines().count(), 1);
}

#[test]
fn without_what_was_asked_the_limits_and_a_recommended_size_are_named() {
    let b = Buffers {
        rmem_max: Some(212_992),
        wmem_max: None,
        asked: None,
    };
    let w = report(drops(1, 0), true, &b).warning.unwrap();
    assert!(
        w.contains("net.core.rmem_max is 212992, net.core.wmem_max unknown"),
        "{w}"
    );
    assert!(
        w.ends_with("net.core.rmem_max=8388608 net.core.wmem_max=8388608"),
        "{w}"
    );
}

/// A buffer that was not capped points at the other end: the server's sockets.
#[test]
fn an_uncapped_buffer_points_at_the_server() {
    let b = Buffers {
        rmem_max: Some(64 << 20),
        wmem_max: Some(64 << 20),
        asked: Some(4 << 20),
    };
    let w = report(drops(9, 0), true, &b).warning.unwrap();
    assert!(
        w.contains("the server's sockets may be the small ones"),
        "{w}"
    );
}

#[test]
fn the_json_keeps_the_kernels_names() {
    let r = report(drops(2, 0), true, &Buffers::default());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["deltas"]["RcvbufErrors"], 2);
    assert_eq!(v["deltas"]["SndbufErrors"], 0);
    let back: UdpReport = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}

/// The run's text gives the warning as a line of its own, and says nothing of UDP when the
/// run saw no drop.
#[test]
fn the_text_gives_the_warning_on_a_line_of_its_own() {
    let mut r = crate::tests::sample();
    r.udp = Some(report(drops(0, 0), true, &Buffers::default()));
    let quiet = r.to_text(&stats::setting::PlanWording);
    assert!(!quiet.contains("UDP"), "{quiet}");
    r.udp = Some(report(drops(7, 0), true, &Buffers::default()));
    let text = r.to_text(&stats::setting::PlanWording);
    let line = text
        .lines()
        .find(|l| l.starts_with("warning: the kernel dropped 7 UDP datagrams"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("sysctl -w net.core.rmem_max="), "{line}");
}
