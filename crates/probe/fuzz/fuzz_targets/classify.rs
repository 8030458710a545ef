//! The thread-wait classifier on any state letter, `wchan` and `syscall` text: it must
//! never panic, and a running thread is always running.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&state, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let (wchan, syscall) = text.split_once('\n').unwrap_or((&text, ""));
    let state = char::from(state);
    let w = probe::classify(state, wchan, Some(syscall));
    if state == 'R' {
        assert_eq!(w, probe::Wait::Running);
    }
    let _ = probe::classify(state, wchan, None);
});
