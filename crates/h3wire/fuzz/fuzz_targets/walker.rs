//! Fuzzes the frame walker, differentially: any bytes, walked in one read, in three reads
//! split where the input's first bytes say, and (when short) byte by byte, give the same
//! frames, the same error and the same end (a streamed payload's parts joined); on the way
//! `record` checks that a frame handed over whole has its header's length and is within
//! the limit, that the walker never holds more than its limit and a frame header, and
//! that it never stops with input left. What the caller takes of each frame type (whole,
//! streamed, skipped, refused) is chosen by the input too.
//! Run: `cargo +nightly fuzz run walker` in crates/h3wire.
#![no_main]

use h3wire::frame::{FrameError, Header, Kind};
use h3wire::walk::record::record;
use h3wire::walk::{Take, WalkError};
use libfuzzer_sys::fuzz_target;

/// What the caller takes of a frame: by its kind, turned by `mode`.
fn policy(h: &Header, mode: u8) -> Result<Take, u64> {
    let k = match h.kind {
        Kind::Data => 0,
        Kind::Headers => 1,
        Kind::CancelPush => 2,
        Kind::Settings => 3,
        Kind::PushPromise => 4,
        Kind::Goaway => 5,
        Kind::MaxPushId => 6,
        Kind::Unknown(t) => 7 + (t % 3) as u8,
    };
    match mode.wrapping_add(k.wrapping_mul(3)) % 4 {
        0 => Ok(Take::Whole),
        1 => Ok(Take::Stream),
        2 => Ok(Take::Skip),
        _ => Err(k.into()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&[l, mode, c1, c2], bytes)) = data.split_first_chunk::<4>() else {
        return;
    };
    let limit = u64::from(l) * 4;
    let take = |h: &Header| policy(h, mode);
    let cut = |c: u8| usize::from(c) * (bytes.len() + 1) / 256;
    let (c1, c2) = (cut(c1).min(cut(c2)), cut(c1).max(cut(c2)));
    let (whole, _) = record(limit, [bytes], take);
    if let Some(WalkError::Frame(FrameError::TooLarge { len, limit: l, .. })) = whole.error {
        assert!(len > l && l == limit, "too large at {len} of {l}");
    }
    let (split, _) = record(limit, [&bytes[..c1], &bytes[c1..c2], &bytes[c2..]], take);
    assert_eq!(whole, split, "split at {c1} and {c2}");
    if bytes.len() <= 512 {
        assert_eq!(whole, record(limit, bytes.chunks(1), take).0, "byte by byte");
    }
});
