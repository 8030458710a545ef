//! The worker asks no question of the protocol outside its implementations: a third
//! protocol is a new implementation of [`super::Http`], not an arm at each place.

/// The worker's files other than the implementations, by name.
const WORKER: [(&str, &str); 7] = [
    ("mod.rs", include_str!("../mod.rs")),
    ("http.rs", include_str!("../http.rs")),
    ("conn.rs", include_str!("../conn.rs")),
    ("stream.rs", include_str!("../stream.rs")),
    ("recorder.rs", include_str!("../recorder.rs")),
    ("timer.rs", include_str!("../timer.rs")),
    ("coalesce.rs", include_str!("../coalesce.rs")),
];

/// What naming a protocol looks like in code: its variant of the plan's `Protocol`, its
/// implementation, or its state.
const PROTOCOL_NAMES: [&str; 7] = [
    "Protocol::",
    "Http1",
    "Http2",
    "http1::",
    "http2::",
    "h2::Conn",
    ".h2.",
];

#[test]
fn the_worker_names_no_protocol_outside_its_implementations() {
    for (file, text) in WORKER {
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            // The seam's own module picks the implementation, once: that is its job.
            let picks = file == "http.rs"
                && (code.contains("Protocol::Http")
                    || code.contains("use super::http1::Http1")
                    || code.contains("use super::http2::Http2"));
            for name in PROTOCOL_NAMES {
                assert!(
                    picks || !code.contains(name),
                    "worker/{file}:{}: {name} outside the protocol implementations: {line}",
                    n + 1
                );
            }
        }
    }
}
