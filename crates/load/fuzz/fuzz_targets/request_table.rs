//! Fuzzes the request table's parsers: URL templates, URLs with random parts, and `--urls`
//! lists, and header values with random parts. Any text must parse or fail with an error, never panic; a template that parses
//! fills to valid UTF-8 within its `max_len`, and a URL that parses encodes a request.
//! Run: `cargo +nightly fuzz run request_table` in crates/load.
#![no_main]

use libfuzzer_sys::fuzz_target;
use load::{parse_urls, RequestSpec, Rng, Target, Template};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(t) = Template::parse(text) {
        let mut out = Vec::new();
        let mut rng = Rng::new(u64::from(data.len() as u32), 0);
        for _ in 0..3 {
            out.clear();
            t.fill(&mut rng, &mut out);
            assert!(out.len() <= t.max_len(), "{} > {}", out.len(), t.max_len());
            assert!(std::str::from_utf8(&out).is_ok());
        }
    }
    // A literal host: no name resolution under the fuzzer.
    if let Ok(target) = Target::parse(&format!("http://127.0.0.1:9/{text}")) {
        let spec = RequestSpec::get(&target);
        if let Ok(t) = spec.encode(&target, false) {
            let mut out = Vec::new();
            t.fill(&mut Rng::new(1, 0), &mut out);
            assert!(out.starts_with(b"GET /") && out.ends_with(b"\r\n\r\n"));
        }
        // The same text as a header value with random parts (a suite's request headers).
        let spec = RequestSpec {
            random_headers: vec![("X-Request-Id".into(), text.to_string())],
            ..RequestSpec::get(&target)
        };
        if let Ok(t) = spec.encode(&target, false) {
            let mut out = Vec::new();
            t.fill(&mut Rng::new(2, 0), &mut out);
            assert!(out.ends_with(b"\r\n\r\n") && out.len() <= t.max_len());
        }
    }
    if let Ok(lines) = parse_urls(text, "fuzz.txt") {
        assert!(!lines.is_empty());
        for l in lines {
            assert!(l.line >= 1 && !l.url.is_empty());
        }
    }
});
