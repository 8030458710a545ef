use super::*;

fn ms(user: u64, sys: u64) -> probe::OwnUsage {
    probe::OwnUsage {
        user: Duration::from_millis(user),
        sys: Duration::from_millis(sys),
        max_rss_bytes: 7,
    }
}

/// `foxbench load --dashboard` counted the dashboard's threads as the client: their CPU
/// over the run is left out of the client's, and kept apart for the result.
#[test]
fn load_counted_the_dashboards_cpu_as_the_clients() {
    let before = Edge {
        own: ms(1_000, 500),
        dashboard: Some(ms(10, 20)),
    };
    let after = Edge {
        own: ms(4_000, 1_500),
        dashboard: Some(ms(60, 120)),
    };
    let spent = before.until(&after);
    assert_eq!(spent.dashboard, Some(ms(50, 100)));
    assert_eq!(spent.client, ms(3_000 - 50, 1_000 - 100));
    // Without a dashboard, the process's CPU is the client's.
    let none = |own| Edge {
        own,
        dashboard: None,
    };
    let spent = none(ms(1_000, 500)).until(&none(ms(4_000, 1_500)));
    assert_eq!((spent.client, spent.dashboard), (ms(3_000, 1_000), None));
}
