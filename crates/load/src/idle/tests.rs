use super::*;

fn placed(client: &[usize], server: Server) -> Placement {
    Placement {
        client: CpuList::of(client.iter().copied()),
        server,
    }
}

fn found(cpus: &[usize]) -> Server {
    Server::Found {
        cpus: CpuList::of(cpus.iter().copied()),
    }
}

#[test]
fn auto_spins_on_cpus_no_server_uses() {
    let c = decide(Idle::Auto, 1, None, &placed(&[0], found(&[1])));
    assert!(c.spin);
    assert_eq!(
        c.to_string(),
        "spin (foxbench on CPU 0, the server on CPU 1)"
    );
    assert_eq!(c.warning(), None);
}

#[test]
fn auto_sleeps_where_the_server_shares_a_cpu() {
    let c = decide(Idle::Auto, 1, None, &placed(&[0, 1], found(&[1, 2])));
    assert!(!c.spin);
    assert_eq!(c.to_string(), "sleep (the server shares CPU 1)");
}

#[test]
fn auto_sleeps_for_a_target_that_is_not_local() {
    let c = decide(Idle::Auto, 1, None, &placed(&[0], Server::NotLocal));
    assert!(!c.spin);
    assert_eq!(c.to_string(), "sleep (the target is not a local process)");
}

#[test]
fn auto_sleeps_when_no_listener_is_found_or_nothing_was_looked_for() {
    let c = decide(
        Idle::Auto,
        1,
        None,
        &placed(&[0], Server::NotFound { port: 8080 }),
    );
    assert!(!c.spin);
    assert!(c.to_string().contains("port 8080"), "{c}");
    assert!(!decide(Idle::Auto, 1, None, &placed(&[0], Server::Unknown)).spin);
}

#[test]
fn auto_sleeps_with_more_threads_than_cpus() {
    let c = decide(Idle::Auto, 3, None, &placed(&[0, 1], found(&[2])));
    assert!(!c.spin);
    assert_eq!(c.to_string(), "sleep (3 worker threads on 2 CPUs)");
    assert!(decide(Idle::Auto, 2, None, &placed(&[0, 1], found(&[2]))).spin);
}

#[test]
fn explicit_modes_are_kept_and_a_shared_spin_warns() {
    let shared = placed(&[0, 1], found(&[1]));
    assert!(!decide(Idle::Sleep, 1, None, &placed(&[0], found(&[1]))).spin);
    let c = decide(Idle::Spin, 1, None, &shared);
    assert!(c.spin);
    let warning = c.warning().expect("a spin on the server's CPU warns");
    assert!(warning.contains("CPU 1"), "{warning}");
    assert!(!warning.contains('\n'));
    assert_eq!(
        decide(Idle::Spin, 1, None, &placed(&[0], found(&[1]))).warning(),
        None
    );
}

#[test]
fn idle_modes_parse_and_print_back() {
    for text in ["spin", "sleep", "auto"] {
        assert_eq!(Idle::parse(text).unwrap().to_string(), text);
    }
    let e = Idle::parse("busy").unwrap_err();
    assert!(e.contains("spin, sleep or auto"), "{e}");
}

#[test]
fn auto_sleeps_where_coalescing_batches_the_wake_ups() {
    let c = decide(Idle::Auto, 1, Some(1000), &placed(&[0], found(&[1])));
    assert!(!c.spin);
    assert_eq!(
        c.to_string(),
        "sleep (1000 requests in flight per worker: coalescing batches the wake-ups)"
    );
    // An explicit spin is kept.
    assert!(decide(Idle::Spin, 1, Some(1000), &placed(&[0], found(&[1]))).spin);
}
