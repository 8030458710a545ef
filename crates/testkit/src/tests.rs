use super::*;

#[test]
fn wait_until_returns_once_the_condition_holds() {
    let mut calls = 0;
    wait_until(Duration::from_secs(5), "the third call", || {
        calls += 1;
        calls >= 3
    });
    assert_eq!(calls, 3);
}

#[test]
#[should_panic(expected = "did not happen")]
fn wait_until_panics_past_its_deadline() {
    wait_until(Duration::from_millis(20), "never", || false);
}

#[test]
fn find_program_prefers_a_listed_candidate_and_misses_a_nonexistent_one() {
    assert_eq!(
        find_program("no-such-program-foxbench", &["/bin/sh"]),
        Some(PathBuf::from("/bin/sh"))
    );
    assert_eq!(find_program("no-such-program-foxbench", &[]), None);
}
