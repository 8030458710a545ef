//! A walk recorded, for the walker's tests and its fuzz target: what a [`Walker`] gave
//! over reads split anywhere, a streamed payload's parts joined, so that walks of the same
//! bytes split differently compare equal; the walker's promises checked on the way.

use super::{Frame, Take, WalkError, Walker, MAX_HEADER};
use crate::frame::{Header, Kind};

/// A step of a recorded walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A frame header, as the caller's `take` saw it.
    Head(Kind, u64),
    /// A payload handed over whole.
    Whole(Vec<u8>),
    /// A streamed payload, its parts joined.
    Data(Vec<u8>),
}

/// What a walk gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    /// Its steps, in order.
    pub seen: Vec<Seen>,
    /// The error that stopped it.
    pub error: Option<WalkError<u64>>,
    /// Whether the bytes ended between frames (false after an error).
    pub between_frames: bool,
}

/// Walks `chunks` in order, as separate reads, with a walker of `limit` that takes each
/// frame as `take` says: what they gave, and the most bytes the walker held between reads.
///
/// Panics if a step breaks a promise of the walker's: a frame handed over whole of
/// another length than its header's or past the limit, an empty part or one past its
/// payload, a header inside a streamed payload, a stop with input left, or more held
/// than the limit and a frame header.
pub fn record<'a>(
    limit: u64,
    chunks: impl IntoIterator<Item = &'a [u8]>,
    mut take: impl FnMut(&Header) -> Result<Take, u64>,
) -> (Walk, usize) {
    let mut w = Walker::new(limit);
    let mut seen = Vec::new();
    let mut most_held = 0;
    // A streamed payload's bytes still to come.
    let mut streaming = 0u64;
    for chunk in chunks {
        let mut b = chunk;
        loop {
            // Every header the step read, passed over or not.
            let mut asked = Vec::new();
            let step = w.next(&mut b, |h| {
                let how = take(h);
                asked.push((*h, how));
                how
            });
            for (h, how) in asked {
                assert_eq!(streaming, 0, "a header inside a streamed payload");
                seen.push(Seen::Head(h.kind, h.len));
                if how == Ok(Take::Stream) {
                    streaming = h.len;
                }
            }
            match step {
                Ok(Some(Frame::Whole(h, p))) => {
                    assert_eq!(p.len() as u64, h.len, "a whole frame's length");
                    assert!(h.len <= limit, "a whole frame past the limit");
                    seen.push(Seen::Whole(p.to_vec()));
                }
                Ok(Some(Frame::Part(p))) => {
                    assert!(!p.is_empty(), "an empty part");
                    assert!(p.len() as u64 <= streaming, "a part past its payload");
                    streaming -= p.len() as u64;
                    match seen.last_mut() {
                        Some(Seen::Data(d)) => d.extend_from_slice(p),
                        _ => seen.push(Seen::Data(p.to_vec())),
                    }
                }
                Ok(None) => {
                    assert!(b.is_empty(), "stopped with input left");
                    break;
                }
                Err(e) => {
                    let walk = Walk {
                        seen,
                        error: Some(e),
                        between_frames: false,
                    };
                    return (walk, most_held);
                }
            }
        }
        most_held = most_held.max(w.held());
        assert!(
            w.held() as u64 <= limit + MAX_HEADER as u64,
            "held {} bytes",
            w.held()
        );
    }
    let walk = Walk {
        seen,
        error: None,
        between_frames: w.between_frames(),
    };
    (walk, most_held)
}
