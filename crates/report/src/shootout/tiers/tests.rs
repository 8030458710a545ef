use super::*;

#[test]
fn counter_checks_allow_only_requests_in_flight() {
    let cases = [
        // (service, completed, failed status, sent) → matches
        ((1000, 1000, 0, 1000), true),
        ((1003, 1000, 0, 1010), true),
        ((999, 1000, 0, 1010), false),
        ((2000, 1000, 0, 1010), false),
        ((0, 1000, 0, 1000), false),
        // Regression (go's default Transport at c10000): 751 of the completed were 502s
        // answered without a backend call; the backend counted the rest.
        ((30_281, 31_032, 751, 51_032), true),
        ((30_280, 31_032, 751, 51_032), false),
    ];
    for ((service, completed, failed, sent), want) in cases {
        let c = CounterCheck::new("hello", service, (completed, failed), sent);
        assert_eq!(c.matches, want, "{c:?}");
        assert_eq!(
            c.line().contains("not one backend call"),
            !want,
            "{}",
            c.line()
        );
    }
}

#[test]
fn failed_requests_show_their_share_against_the_bar() {
    assert_eq!(failed(0, 40_000), "0");
    assert_eq!(failed(12, 40_000), "12 (0.030%)");
    assert_eq!(failed(400, 40_000), "400 (1.0%)");
    // Never more than all: a failure counted without a send (a connect that failed).
    assert_eq!(failed(5, 0), "5 (100.0%)");
}

#[test]
fn requests_cut_by_a_counted_levels_cap_are_not_hidden() {
    let r = |sent, completed, in_flight, unsent| crate::Requests {
        sent,
        ok: completed,
        failed_status: 0,
        completed,
        errors: 0,
        in_flight,
        unsent,
    };
    // 0 errors, but 20,709 of 40,000 never answered: the row must not read "0" alone.
    let capped = r(29_291, 19_291, 10_000, 10_709);
    assert_eq!(
        unanswered_of([(true, &capped)].into_iter()),
        "; 20709 of 40000 unanswered at the cap"
    );
    // A timed repeat always ends with requests in flight: not a cap.
    let timed = r(2_615, 2_515, 100, 0);
    assert_eq!(unanswered_of([(false, &timed)].into_iter()), "");
}

#[test]
fn memory_per_connection_is_above_idle() {
    let idle = ProbePoint {
        t_s: 0.0,
        cpu_percent: 0.0,
        rss_bytes: 10 << 20,
        pss_bytes: 0,
        threads: 1,
        processes: 1,
        fds: 3,
    };
    assert_eq!(per_connection(20 << 20, Some(&idle), 1024), "10.0 KiB");
    assert_eq!(per_connection(20 << 20, None, 10), "2.0 MiB");
    assert_eq!(per_connection(5 << 20, Some(&idle), 10), "0.0 KiB");
}
