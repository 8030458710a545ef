//! Fuzzes the QPACK decoder and the encoder- and decoder-stream checks: any field section
//! decodes or fails cleanly, the client's path agrees with the whole decoder, and the
//! limit holds. Run: `cargo +nightly fuzz run qpack` in crates/h3wire.
#![no_main]

use h3wire::qpack::{self, stream, Decoder};
use libfuzzer_sys::fuzz_target;

const LIMIT: u64 = 4096;

fuzz_target!(|data: &[u8]| {
    let mut sizes = 0u64;
    let whole = Decoder::default().decode(data, LIMIT, |n, v| {
        sizes += qpack::field_size(n.len(), v.len());
    });
    let head = qpack::head(data, LIMIT);
    match (whole, head) {
        (Ok(size), Ok(h)) => {
            assert_eq!(size, sizes);
            assert_eq!(size, h.size);
            assert!(size <= LIMIT);
            if let Some(s) = h.status {
                assert!(s <= 999);
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("the decoders disagree: {a:?} and {b:?}"),
    }
    let _ = stream::check_encoder_stream(data);
    if let Ok(n) = stream::check_decoder_stream(data) {
        assert!(n <= data.len());
    }
});
