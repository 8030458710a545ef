use super::*;

fn brief(p99_us: f64) -> Brief {
    Brief {
        count: 10,
        p50_us: 3.0,
        p99_us,
        max_us: 190.0,
    }
}

fn stamps(matched: u64) -> SendStamps {
    SendStamps {
        every: 64,
        sampled: matched,
        returned: matched,
        matched,
        lateness: (matched > 0).then(|| brief(41.0)),
        delay: (matched > 0).then(|| brief(20.0)),
    }
}

#[test]
fn the_lines_say_the_stamps_were_sampled_and_how_many_came_back() {
    let lines = stamps(812).lines();
    assert_eq!(
        lines[0],
        "Send lateness (kernel, 1 in 64 requests sampled, 812 stamps): p50 3.0µs p99 41.0µs max 190.0µs"
    );
    assert!(
        lines[1].starts_with("Send delay    (kernel, 1 in 64"),
        "{lines:?}"
    );
}

#[test]
fn no_stamp_back_and_stamps_off_are_said() {
    assert!(stamps(0).lines()[0].contains("none came back"));
    let off = SendStamps {
        every: 0,
        ..stamps(0)
    };
    assert!(off.lines()[0].contains("off"));
}

#[test]
fn merging_sums_the_counts_and_keeps_the_worst_distribution() {
    let mut b = stamps(5);
    b.lateness = Some(brief(90.0));
    let m = stamps(10).merge(b);
    assert_eq!((m.sampled, m.matched), (15, 15));
    assert_eq!(m.lateness.unwrap().p99_us, 90.0);
    assert_eq!(m.delay.unwrap().p99_us, 20.0);
}
