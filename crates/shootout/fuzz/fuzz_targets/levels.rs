//! Fuzzes a suite's `[plan].levels`, capacity levels included: any text in the list parses
//! or fails with one line naming the file, line and key, never panics; a capacity level
//! that parses has an objective and a search that fits its budget.
//! Run: `cargo +nightly fuzz run levels` in crates/shootout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shootout::suite::Suite;

const HEAD: &str = "name = \"t\"\nimages = 5\n\n[plan]\nlevels = [";
const TAIL: &str = r#"]
duration = "1s"

[[scenario]]
name = "redirect"
[scenario.expect]
status = 302

[[target]]
name = "c"
language = "C"
dir = "targets/c-epoll"
start = "{out}/server {port} {images}"
"#;

fuzz_target!(|data: &[u8]| {
    let Ok(levels) = std::str::from_utf8(data) else { return };
    let text = format!("{HEAD}{levels}{TAIL}");
    match Suite::parse(&text, "s.toml") {
        Ok(suite) => {
            for l in &suite.plan.levels {
                assert!(l.connections >= 1);
                if let Some(c) = &l.capacity {
                    assert!(!c.slo.clauses.is_empty(), "{l:?}");
                    assert!(l.requests.is_none() && l.repeats.is_none(), "{l:?}");
                    c.config(l.max_duration, measure::search::After::Nothing).expect("a capacity level that parses can search");
                }
            }
        }
        Err(e) => {
            let m = e.to_string();
            assert!(m.starts_with("s.toml:") && !m.contains('\n'), "{m}");
        }
    }
});
