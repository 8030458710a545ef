//! Feeds arbitrary connection bytes through the hello backend's protocol the way its event
//! loop does (request after request, bodies skipped): no panic, every reply is HTTP/1.1, each
//! request consumes bytes, and a refused request ends the connection.
#![no_main]

use std::time::Duration;

use hello_backend::{parse_one, Parsed, Stats};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let stats = Stats::default();
    let mut rest = data;
    while let Parsed::Request { used, reply, delay, body_len } = parse_one(rest, &stats, Duration::ZERO) {
        assert!(used > 0 && used <= rest.len());
        assert!(reply.bytes.starts_with(b"HTTP/1.1 "));
        assert!(delay <= Duration::from_millis(hello_backend::MAX_DELAY_MS));
        if reply.close {
            break;
        }
        rest = &rest[used..];
        rest = &rest[(body_len.min(rest.len() as u64)) as usize..];
    }
});
