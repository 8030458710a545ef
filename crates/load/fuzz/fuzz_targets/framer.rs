//! Fuzzes response framing: any bytes, delivered in two pieces split where the first byte
//! says, must frame or fail cleanly, never panic, and never consume more than given.
//! Run: `cargo +nightly fuzz run framer` in crates/load.
#![no_main]

use libfuzzer_sys::fuzz_target;
use load::{Framer, Step};

fuzz_target!(|data: &[u8]| {
    let Some((&split, data)) = data.split_first() else { return };
    let head_request = split & 1 == 1;
    let split = usize::from(split).min(data.len());
    let mut f = Framer::new();
    let mut pending = data[..split].to_vec();
    for piece in [&data[split..], &[][..]] {
        let mut i = 0;
        while i < pending.len() {
            match f.next(&pending[i..], head_request) {
                Ok(Step::Complete { used, .. }) => {
                    assert!(used > 0 && i + used <= pending.len());
                    i += used;
                }
                Ok(Step::Body) => i = pending.len(),
                Ok(Step::PartialHead { used }) => {
                    assert!(i + used <= pending.len());
                    i += used;
                    break;
                }
                Err(_) => return,
            }
        }
        pending.drain(..i);
        pending.extend_from_slice(piece);
    }
    let _ = f.eof();
});
