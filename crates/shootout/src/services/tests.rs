use super::*;

/// A front end that queued 10,000 requests at c10000 served them for seconds after the
/// level ended; the counter was read as settled after at most 1 s (or one 50 ms pause),
/// so the backlog's backend calls counted in the next cell (java-blocking, java-async:
/// "hello counted 10965 but foxbench completed 2331").
#[test]
fn settled_count_waits_out_a_backlog_longer_than_a_second() {
    let start = std::time::Instant::now();
    // Grows for 1.5 s, with a 100 ms stall (a GC pause) in the middle, then stops.
    let counter = || {
        let ms = start.elapsed().as_millis().min(1500) as u64;
        let ms = if (700..800).contains(&ms) { 700 } else { ms };
        Some(Ok(ms))
    };
    let got = settle(counter, QUIET, Duration::from_secs(10));
    assert_eq!(got, Some(Ok(1500)));
    assert!(start.elapsed() >= Duration::from_millis(1500) + QUIET);
    // Never past the limit: a backlog that outlasts it is read as it stands.
    let start = std::time::Instant::now();
    let endless = || Some(Ok(start.elapsed().as_millis() as u64));
    let got = settle(endless, QUIET, Duration::from_millis(500))
        .unwrap()
        .unwrap();
    assert!((500..2000).contains(&got), "{got}");
    // A failed read ends it at once.
    let failing = || Some(Err("cannot connect".to_string()));
    assert!(settle(failing, QUIET, Duration::from_secs(10))
        .unwrap()
        .is_err());
}

#[test]
fn sharing_is_said_plainly() {
    // 2 CPUs, services beside the target.
    assert_eq!(
            sharing(&[0], &[1], &[1]),
            ["the services and the targets share CPU 1: their CPU time adds up there, and each slows the other"]
        );
    // 4 CPUs: each on its own.
    assert!(sharing(&[0, 1], &[2], &[3]).is_empty());
    // Services beside the load generator.
    assert_eq!(sharing(&[0], &[1], &[0]).len(), 1);
    assert!(sharing(&[0], &[1], &[0])[0].starts_with("the services and the load generator"));
    assert!(sharing(&[0], &[1], &[]).is_empty());
}

#[test]
fn services_take_the_last_server_cpu_when_there_are_two() {
    let text = |cpus: &str| {
        format!(
                "name = \"s\"\n[plan]\nservice_cpus = \"{cpus}\"\n[[scenario]]\nname = \"a\"\n[scenario.expect]\nstatus = 200\n[[service]]\nname = \"h\"\ndir = \".\"\nstart = \"h {{port}}\"\n[[target]]\nname = \"t\"\nlanguage = \"x\"\ndir = \".\"\nstart = \"t {{port}} {{service.h.url}}\"\n"
            )
    };
    let auto = Suite::parse(&text("auto"), "s.toml").unwrap();
    let cases = [
        (vec![1], vec![1], vec![1]),
        (vec![2, 3], vec![3], vec![2]),
        (vec![1, 2, 3], vec![3], vec![1, 2]),
    ];
    for (server, services, left) in cases {
        let mut s = server.clone();
        assert_eq!(assign_cpus(&auto, &mut s), services, "{server:?}");
        assert_eq!(s, left);
    }
    let fixed = Suite::parse(&text("0"), "s.toml").unwrap();
    let mut s = vec![1];
    assert_eq!(assign_cpus(&fixed, &mut s), [0]);
    assert_eq!(s, [1]);
}
