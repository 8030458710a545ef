use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::*;

use crate::suite::{Suite, DEFAULT_SUITE};

#[test]
fn a_task_pipelines_only_with_keepalive() {
    let suite = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
    let mut s = suite.scenarios[0].clone();
    s.pipeline = 8;
    let level = |keepalive| Level {
        keepalive,
        ..suite.plan.levels[0].clone()
    };
    let cases = [
        // (scenario keep-alive, level's) → (keep-alive, pipeline)
        ((true, None), (true, 8)),
        ((true, Some(false)), (false, 1)),
        ((false, None), (false, 1)),
        ((false, Some(true)), (true, 8)),
    ];
    for ((scenario_ka, level_ka), (keepalive, pipeline)) in cases {
        s.keepalive = scenario_ka;
        let l = level(level_ka);
        let task = Task::new(&s, &l, Duration::ZERO, ("out", "dir"));
        let cell = task.cell();
        assert_eq!((task.keepalive, task.pipeline()), (keepalive, pipeline));
        assert_eq!(
            (cell.keepalive, cell.pipeline),
            (keepalive, pipeline as u64)
        );
        assert_eq!(cell.status, CellStatus::Excluded);
        assert_eq!((task.tls, cell.tls_resume), (None, None), "plain HTTP");
    }
}

/// Regression (the merge of capacity and rate levels): the measured window set the
/// closed model over a `rate` level's open model, so such a level ran closed.
#[test]
fn a_rate_level_keeps_its_open_model_and_a_search_window_sets_its_own() {
    let suite = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
    let mut s = suite.scenarios[0].clone();
    // A closed level's wait, which the open model refuses: its windows never coalesce.
    let wait = load::Coalesce::Fixed(Duration::from_micros(50));
    s.coalesce = wait;
    let rate = load::Rate::parse("400").unwrap();
    let level = Level {
        rate: Some(crate::suite::LevelRate {
            text: "400".into(),
            rate: rate.clone(),
        }),
        ..suite.plan.levels[0].clone()
    };
    let task = Task::new(&s, &level, Duration::ZERO, ("/o", "/d"));
    let interrupt = Arc::new(AtomicBool::new(false));
    let meter = Meter {
        plan: &suite.plan,
        client_threads: 1,
        server_cpus: 1,
        interrupt: &interrupt,
        cpu_ids: (&[0], &[1]),
        dumps: None,
        services: &[],
        service_cpus: 0,
        watch: None,
        net: crate::summary::Net::default(),
    };
    let addr: SocketAddr = "127.0.0.1:8080".parse().unwrap();
    let stop = Stop::Duration(Duration::from_secs(1));
    let own = meter.window_plan(addr, &task, None, stop);
    assert_eq!(own.arrival, Arrival::Open { rate });
    assert_eq!(
        (own.coalesce, own.validate()),
        (load::Coalesce::Off, Ok(()))
    );
    assert_eq!(own.interval, suite.plan.sample_interval);
    let search = Arrival::Open {
        rate: load::Rate::constant(1000.0),
    };
    let set = meter.window_plan(addr, &task, Some(search.clone()), stop);
    assert_eq!(set.arrival, search);
    assert_eq!(
        (set.coalesce, set.validate()),
        (load::Coalesce::Off, Ok(()))
    );
    let closed = Task::new(&s, &suite.plan.levels[0], Duration::ZERO, ("/o", "/d"));
    let closed = meter.window_plan(addr, &closed, None, stop);
    assert_eq!((closed.arrival, closed.coalesce), (Arrival::Closed, wait));
}

#[test]
fn a_tls_task_loads_https_with_the_levels_resumption_and_the_targets_cacert() {
    let suite = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
    let mut s = suite.scenarios[0].clone();
    s.tls = Some(crate::suite::ScenarioTls {
        client: None,
        cert: crate::suite::CertCheck::CaFile("{out}/cert.pem".into()),
    });
    let full = Level {
        tls_resume: Some(false),
        ..suite.plan.levels[0].clone()
    };
    let task = Task::new(&s, &full, Duration::ZERO, ("/o", "/d"));
    let want = load::TlsOptions {
        client: None,
        verify: load::Verify::CaFile("/o/cert.pem".into()),
        resume: false,
    };
    assert_eq!(task.tls.as_ref(), Some(&want));
    assert_eq!(task.cell().tls_resume, Some(false));
    let interrupt = Arc::new(AtomicBool::new(false));
    let meter = Meter {
        plan: &suite.plan,
        client_threads: 1,
        server_cpus: 1,
        interrupt: &interrupt,
        cpu_ids: (&[0], &[1]),
        dumps: None,
        services: &[],
        service_cpus: 0,
        watch: None,
        net: crate::summary::Net::default(),
    };
    let addr: SocketAddr = "127.0.0.1:8443".parse().unwrap();
    let plan = meter.load_plan(addr, &task, Stop::Requests(1));
    assert_eq!(plan.target.scheme, load::Scheme::Https);
    assert!(
        plan.target.url.starts_with("https://127.0.0.1:8443/"),
        "{}",
        plan.target.url
    );
    assert_eq!(plan.tls, want);
    let resumed = Task::new(&s, &suite.plan.levels[0], Duration::ZERO, ("/o", "/d"));
    assert!(
        resumed.tls.unwrap().resume,
        "resumption is on unless the level turns it off"
    );
}

#[test]
fn a_client_pinned_apart_from_the_server_spins_and_one_sharing_its_cpus_sleeps() {
    let suite = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
    let s = suite.scenarios[0].clone();
    let task = Task::new(&s, &suite.plan.levels[0], Duration::ZERO, ("/o", "/d"));
    let interrupt = Arc::new(AtomicBool::new(false));
    let meter = |cpu_ids| Meter {
        plan: &suite.plan,
        client_threads: 1,
        server_cpus: 1,
        interrupt: &interrupt,
        cpu_ids,
        dumps: None,
        services: &[],
        service_cpus: 0,
        watch: None,
        net: crate::summary::Net::default(),
    };
    let addr: SocketAddr = "127.0.0.1:8080".parse().unwrap();
    let apart = meter((&[0], &[1]));
    let plan = apart.load_plan(addr, &task, Stop::Requests(1));
    assert!(plan.idle_in_effect().spin);
    assert_eq!(plan.coalesce_in_effect(), load::Coalesce::Off);
    assert_eq!(
        apart.idle_of(addr, &task),
        "spin (foxbench on CPU 0, the server on CPU 1)"
    );
    // One CPU for both (a 1-CPU machine): the runner notes the overlap, the client sleeps.
    let shared = meter((&[0], &[0]));
    assert!(
        !shared
            .load_plan(addr, &task, Stop::Requests(1))
            .idle_in_effect()
            .spin
    );
    assert_eq!(
        shared.idle_of(addr, &task),
        "sleep (the server shares CPU 0)"
    );
    // The suite's `idle` is carried: sleep where it could spin.
    let mut sleeping = s.clone();
    sleeping.idle = load::Idle::Sleep;
    let task = Task::new(
        &sleeping,
        &suite.plan.levels[0],
        Duration::ZERO,
        ("/o", "/d"),
    );
    assert_eq!(apart.idle_of(addr, &task), "sleep (asked)");
}
