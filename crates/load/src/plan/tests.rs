use super::*;

#[test]
fn each_bad_setting_is_its_own_error() {
    let ok = Plan::new(Target::parse("http://127.0.0.1:1/").unwrap());
    assert_eq!(ok.validate(), Ok(()));
    type Spoil = fn(&mut Plan);
    let cases: [(Spoil, PlanError); 15] = [
        (|p| p.connections = 0, PlanError::Connections),
        (|p| p.threads = 0, PlanError::Threads),
        (|p| p.pipeline = 0, PlanError::Pipeline),
        (|p| p.pipeline = MAX_PIPELINE + 1, PlanError::Pipeline),
        (
            |p| {
                p.keepalive = false;
                p.pipeline = 2
            },
            PlanError::PipelineWithoutKeepalive,
        ),
        (
            |p| {
                p.arrival = Arrival::Open {
                    rate: Rate::constant(0.0),
                }
            },
            PlanError::Rate(0.0),
        ),
        (|p| p.stop = Stop::Requests(0), PlanError::Requests),
        (
            |p| p.stop = Stop::Duration(Duration::ZERO),
            PlanError::Duration,
        ),
        (|p| p.timeout = Duration::ZERO, PlanError::Timeout),
        (|p| p.interval = Duration::ZERO, PlanError::Interval),
        (|p| p.requests.clear(), PlanError::NoRequests),
        (
            |p| p.coalesce = Coalesce::Fixed(COALESCE_LIMIT + Duration::from_nanos(1)),
            PlanError::Coalesce,
        ),
        (
            |p| {
                p.arrival = Arrival::Open {
                    rate: Rate::constant(100.0),
                };
                p.coalesce = Coalesce::Fixed(Duration::from_micros(50))
            },
            PlanError::CoalesceWithRate,
        ),
        (
            |p| {
                p.idle = crate::Idle::Spin;
                p.coalesce = Coalesce::Off
            },
            PlanError::CoalesceWithSpin,
        ),
        (
            |p| {
                p.idle = crate::Idle::Spin;
                p.coalesce = Coalesce::Fixed(Duration::from_micros(50))
            },
            PlanError::CoalesceWithSpin,
        ),
    ];
    for (spoil, want) in cases {
        let mut p = ok.clone();
        spoil(&mut p);
        assert_eq!(p.validate(), Err(want.clone()));
        let text = want.to_string();
        assert!(text.starts_with(want.setting().name()), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }
    assert_eq!(
        PlanError::Pipeline.to_string(),
        format!("pipeline must be between 1 and {MAX_PIPELINE}")
    );
    let mut p = ok.clone();
    p.arrival = Arrival::Open {
        rate: Rate::constant(f64::NAN),
    };
    assert!(matches!(p.validate(), Err(PlanError::Rate(_))));
}

#[test]
fn http2_settings_that_make_no_sense_are_refused_one_line_each() {
    let mut ok = Plan::new(Target::parse("http://127.0.0.1:1/").unwrap());
    fn h2(streams: u32, window: u32, connection_window: u32) -> Protocol {
        Protocol::Http2(H2Options {
            streams,
            window,
            connection_window,
            ..H2Options::default()
        })
    }
    ok.protocol = h2(10, 65_535, 65_535);
    assert_eq!(ok.validate(), Ok(()));
    assert_eq!(ok.per_connection(), 10);
    type Spoil = fn(&mut Plan);
    let cases: [(Spoil, PlanError); 6] = [
        (|p| p.pipeline = 2, PlanError::PipelineWithHttp2),
        (|p| p.keepalive = false, PlanError::StreamsWithoutKeepalive),
        (|p| p.protocol = h2(0, 1, 65_535), PlanError::Streams),
        (|p| p.protocol = h2(1, 0, 65_535), PlanError::Window),
        (|p| p.protocol = h2(1, 1 << 31, 65_535), PlanError::Window),
        (|p| p.protocol = h2(1, 1, 1000), PlanError::ConnectionWindow),
    ];
    for (spoil, want) in cases {
        let mut p = ok.clone();
        spoil(&mut p);
        assert_eq!(p.validate(), Err(want.clone()));
        let text = want.to_string();
        assert!(!text.contains('\n'), "{text}");
    }
    // One stream per connection without keep-alive is what h2 does then.
    let mut p = ok.clone();
    p.protocol = h2(1, 65_535, 65_535);
    p.keepalive = false;
    assert_eq!(p.validate(), Ok(()));
}

#[test]
fn threads_never_outnumber_connections() {
    let mut p = Plan::new(Target::parse("http://127.0.0.1:1/").unwrap());
    p.threads = 8;
    p.connections = 3;
    assert_eq!(p.effective_threads(), 3);
}

#[test]
fn a_coalescing_wait_reads_as_it_is_written() {
    for (text, want) in [
        ("auto", Coalesce::Auto),
        ("off", Coalesce::Off),
        ("0", Coalesce::Off),
        ("50us", Coalesce::Fixed(Duration::from_micros(50))),
        ("1ms", Coalesce::Fixed(Duration::from_millis(1))),
    ] {
        assert_eq!(Coalesce::parse(text), Ok(want), "{text}");
    }
    for bad in ["", "fast", "-5us", "50 parsecs"] {
        let e = Coalesce::parse(bad).unwrap_err();
        assert!(e.contains("auto, off or a duration"), "{bad}: {e}");
    }
    let e = Coalesce::parse("0.5us").unwrap_err();
    assert!(e.contains("a wait under 1us is none, use off"), "{e}");
    // Whole microseconds, as the report writes them.
    assert_eq!(
        Coalesce::parse("1.7us"),
        Ok(Coalesce::Fixed(Duration::from_micros(1)))
    );
    // The report writes the setting as it reads back.
    for c in [
        Coalesce::Auto,
        Coalesce::Off,
        Coalesce::Fixed(Duration::from_micros(75)),
    ] {
        assert_eq!(Coalesce::parse(&c.to_string()), Ok(c));
    }
    let mut p = Plan::new(Target::parse("http://127.0.0.1:1/").unwrap());
    p.arrival = Arrival::Open {
        rate: Rate::constant(100.0),
    };
    assert_eq!(p.validate(), Ok(()), "auto is no error in the open model");
}

/// The decisions the worker takes from the plan, made here once: requests per connection
/// (the pipeline, or the streams) and the coalescing in effect (none in the open model).
#[test]
fn per_connection_and_coalescing_in_effect_follow_the_model_and_protocol() {
    let mut p = Plan::new(Target::parse("http://127.0.0.1:1/").unwrap());
    p.pipeline = 7;
    assert_eq!(p.per_connection(), 7);
    p.pipeline = 1;
    p.protocol = Protocol::Http2(H2Options {
        streams: 12,
        ..H2Options::default()
    });
    assert_eq!(p.per_connection(), 12);
    let fixed = Coalesce::Fixed(Duration::from_micros(50));
    for coalesce in [Coalesce::Off, Coalesce::Auto, fixed] {
        p.coalesce = coalesce;
        p.arrival = Arrival::Closed;
        assert_eq!(p.coalesce_in_effect(), coalesce);
        p.arrival = Arrival::Open {
            rate: crate::Rate::constant(100.0),
        };
        assert_eq!(p.coalesce_in_effect(), Coalesce::Off);
    }
}

#[test]
fn coalescing_is_not_in_effect_in_workers_that_spin() {
    use crate::idle::{CpuList, Placement, Server};
    let mut p = Plan::new(Target::parse("http://127.0.0.1:1/").unwrap());
    p.idle = crate::Idle::Spin;
    assert_eq!(p.validate(), Ok(()));
    assert!(p.idle_in_effect().spin);
    assert_eq!(p.coalesce_in_effect(), Coalesce::Off);
    // auto: spins, and so coalesces not, only on CPUs of its own.
    p.idle = crate::Idle::Auto;
    p.placement = Placement {
        client: CpuList::of([0]),
        server: Server::Found {
            cpus: CpuList::of([0]),
        },
    };
    assert!(!p.idle_in_effect().spin);
    assert_eq!(p.coalesce_in_effect(), Coalesce::Auto);
    p.placement.server = Server::Found {
        cpus: CpuList::of([1]),
    };
    assert!(p.idle_in_effect().spin);
    assert_eq!(p.coalesce_in_effect(), Coalesce::Off);
}

#[test]
fn auto_leaves_a_worker_with_many_requests_in_flight_to_coalescing() {
    use crate::idle::{CpuList, Placement, Server};
    let mut p = Plan::new(Target::parse("http://127.0.0.1:1/").unwrap());
    p.placement = Placement {
        client: CpuList::of([0]),
        server: Server::Found {
            cpus: CpuList::of([1]),
        },
    };
    p.threads = 1;
    p.connections = 100;
    p.protocol = Protocol::Http2(H2Options {
        streams: 10,
        ..H2Options::default()
    });
    // 1000 in flight: coalescing batches the wake-ups.
    assert!(!p.idle_in_effect().spin, "{}", p.idle_in_effect());
    assert_eq!(p.coalesce_in_effect(), Coalesce::Auto);
    // 100 in flight: it would not wait, so the worker spins.
    p.connections = 10;
    assert!(p.idle_in_effect().spin, "{}", p.idle_in_effect());
    // With coalescing off, nothing batches: spin.
    p.connections = 100;
    p.coalesce = Coalesce::Off;
    assert!(p.idle_in_effect().spin);
    // Nor in the open model, which sends on its schedule.
    p.coalesce = Coalesce::Auto;
    p.arrival = Arrival::Open {
        rate: Rate::constant(1000.0),
    };
    assert!(p.idle_in_effect().spin);
}
