//! The readers of `/proc/<pid>/stat` (its state letter) and of a thread's `children` list,
//! on any text: they must never panic, the state is a whole field of the text after its
//! last `)`, and every pid read is a positive whole token of the list.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(state) = probe::stat_state(&text) {
        let after = &text[text.rfind(')').expect("a state follows a ')'") + 1..];
        assert!(after.split_whitespace().any(|f| f == state));
    }
    for pid in probe::children_list(&text) {
        assert!(pid > 0);
        assert!(text.split_whitespace().any(|t| t.parse::<i32>() == Ok(pid)));
    }
});
