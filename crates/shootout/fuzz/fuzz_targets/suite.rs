//! Fuzzes the suite file parser (services, `use`, service and parameter placeholders,
//! request headers and their echoes included) and a service counter's reader. Any text
//! must parse or fail with one line naming the file, never panic.
//! Run: `cargo +nightly fuzz run suite` in crates/shootout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shootout::suite::{Counter, Suite};

/// A valid suite with a service, to splice the input into: most random text fails at the
/// TOML level, this reaches the checks behind it.
const BASE: &str = r#"name = "f"
[[scenario]]
name = "s"
headers = { X-Id = "{hex:4}" }
[scenario.expect]
status = 200
headers = { X-Id = '^{random.1}$' }
[[service]]
name = "h"
dir = "."
start = "h {port}"
[[target]]
name = "t"
language = "x"
dir = "."
"#;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for suite in [text.to_string(), format!("{BASE}{text}")] {
        if let Err(e) = Suite::parse(&suite, "fuzz.toml") {
            let m = e.to_string();
            assert!(m.starts_with("fuzz.toml:") && !m.contains('\n'), "{m}");
        }
    }
    for field in [None, Some("requests".to_string())] {
        let c = Counter {
            path: "/stats".into(),
            field,
        };
        if let Err(e) = c.read(data) {
            assert!(e.starts_with("GET /stats"), "{e}");
        }
    }
});
