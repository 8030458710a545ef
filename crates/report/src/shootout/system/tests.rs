use super::*;

#[test]
fn waits_merge_and_read_as_a_line() {
    let mut a = ThreadWaits {
        samples: 2,
        threads_peak: 100,
        futex: 196,
        running: 2,
        epoll: 2,
        wchans: vec![WchanCount {
            wchan: "futex_do_wait".into(),
            count: 196,
        }],
        ..Default::default()
    };
    assert_eq!(
            a.line(),
            "threads over 2 samples, 100 on average: 98% futex, 1% running, 1% epoll (mostly in futex_do_wait)"
        );
    let b = ThreadWaits {
        samples: 1,
        threads_peak: 120,
        socket: 100,
        wchans: vec![
            WchanCount {
                wchan: "wait_woken".into(),
                count: 100,
            },
            WchanCount {
                wchan: "futex_do_wait".into(),
                count: 4,
            },
        ],
        ..Default::default()
    };
    a.merge(&b);
    assert_eq!((a.samples, a.threads_peak, a.total()), (3, 120, 300));
    assert_eq!(a.threads_mean(), 100.0);
    assert_eq!(
        a.wchans,
        vec![
            WchanCount {
                wchan: "futex_do_wait".into(),
                count: 200
            },
            WchanCount {
                wchan: "wait_woken".into(),
                count: 100
            },
        ]
    );
    assert_eq!(ThreadWaits::default().threads_mean(), 0.0);
}
