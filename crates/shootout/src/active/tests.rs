use super::*;

#[test]
fn a_reading_is_the_commands_integer_or_says_why_not() {
    assert_eq!(read("echo ' 7 '", READ_TIMEOUT), Ok(7));
    let e = read("echo many", READ_TIMEOUT).unwrap_err();
    assert!(e.contains("printed \"many\", not an integer"), "{e}");
    let e = read("exit 3", READ_TIMEOUT).unwrap_err();
    assert!(e.contains("exit status: 3"), "{e}");
    let e = read("sleep 5", Duration::from_millis(100)).unwrap_err();
    assert!(e.contains("no answer"), "{e}");
}

#[test]
fn sampling_reads_until_done() {
    let done = Arc::new(AtomicBool::new(false));
    // The command leaves a mark each time it runs: a reading is under way once it is
    // there, and the reader finishes a reading before it looks at `done`.
    let mark = std::env::temp_dir().join(format!("foxbench-active-{}", std::process::id()));
    let _ = std::fs::remove_file(&mark);
    let h = sample(
        vec![Some(format!("touch {} && echo 2", mark.display())), None],
        Duration::from_millis(20),
        done.clone(),
    )
    .expect("a command to read");
    // Poll until a reading has started, with a deadline.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !mark.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    done.store(true, Ordering::Relaxed);
    let (out, usage) = h.join().unwrap();
    let _ = std::fs::remove_file(&mark);
    assert!(Instant::now() < deadline);
    // Spawning `sh` costs the reading thread CPU: its own, told apart from the load's.
    assert!(usage.cpu() > Duration::ZERO, "{usage:?}");
    assert_eq!(out.len(), 2);
    assert!(
        !out[0].is_empty() && out[0].iter().all(|&n| n == 2),
        "{out:?}"
    );
    assert!(out[1].is_empty());
    assert!(sample(vec![None], Duration::from_millis(20), done).is_none());
}
