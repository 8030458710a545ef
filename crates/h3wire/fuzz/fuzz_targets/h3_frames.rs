//! Fuzzes the frame-header parser over a stream of frames, as a reader walks a request or
//! control stream: each header parses, needs more, or fails cleanly; a buffered frame is
//! never past the limit; GOAWAY's and SETTINGS's payloads read or fail cleanly; and any
//! stream-type prefix parses. Run: `cargo +nightly fuzz run h3_frames` in crates/h3wire.
#![no_main]

use h3wire::frame::{self, Kind, Settings, UniStream};
use libfuzzer_sys::fuzz_target;

const LIMIT: u64 = 1024;

fuzz_target!(|data: &[u8]| {
    let _ = UniStream::parse(data);
    let mut b = data;
    loop {
        let h = match frame::parse_header(b, LIMIT) {
            Ok(Some(h)) => h,
            Ok(None) | Err(_) => break,
        };
        assert!(h.header_len >= 2 && h.header_len <= 16 && h.header_len <= b.len());
        if h.kind.buffered() {
            assert!(h.len <= LIMIT);
        }
        let rest = &b[h.header_len..];
        let Some(payload) = usize::try_from(h.len).ok().and_then(|n| rest.get(..n)) else {
            break;
        };
        match h.kind {
            Kind::Settings => {
                let _ = Settings::parse(payload);
            }
            Kind::Goaway | Kind::MaxPushId | Kind::CancelPush => {
                let _ = frame::parse_id(payload);
            }
            Kind::Headers => {
                let _ = h3wire::qpack::head(payload, LIMIT);
            }
            _ => {}
        }
        b = &rest[payload.len()..];
    }
});
