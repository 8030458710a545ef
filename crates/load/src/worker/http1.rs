//! HTTP/1.1 responses on a connection: its bytes framed by the [`Framer`], each complete
//! response recorded.

use super::{Flow, Pending, Recorder, Slot};
use crate::response::{ParseError, Step};
use crate::table::Shape;

/// Frames the responses in `data` for one connection, recording each complete one.
pub(super) fn feed(
    slot: &mut Slot,
    rec: &mut Recorder,
    shapes: &[Shape],
    data: &[u8],
    now: u64,
    keepalive: bool,
) -> Result<Flow, ParseError> {
    if slot.leftover.is_empty() {
        return feed_slice(slot, rec, shapes, data, now, keepalive);
    }
    // Rare path: a head was split across reads; parse it from the joined bytes.
    let mut joined = std::mem::take(&mut slot.leftover);
    joined.extend_from_slice(data);
    let flow = feed_slice(slot, rec, shapes, &joined, now, keepalive);
    if slot.leftover.is_empty() {
        joined.clear();
        slot.leftover = joined; // keep the capacity for next time
    }
    flow
}

fn feed_slice(
    slot: &mut Slot,
    rec: &mut Recorder,
    shapes: &[Shape],
    data: &[u8],
    now: u64,
    keepalive: bool,
) -> Result<Flow, ParseError> {
    let mut i = 0;
    while i < data.len() {
        if slot.inflight.is_empty() && slot.framer.between_responses() {
            // Bytes nobody asked for (a body longer than its Content-Length, or a
            // response sent early). Like wrk, they are read as the start of the next
            // response, which then fails to parse: the error is charged to a request,
            // and the conservation law holds.
            if slot.leftover.len() + data.len() - i > crate::MAX_HEAD {
                return Err(ParseError::HeadTooLarge);
            }
            slot.leftover.extend_from_slice(&data[i..]);
            return Ok(Flow::Continue);
        }
        // The response framing follows the request it answers (HEAD has no body).
        let head = slot
            .inflight
            .front()
            .is_some_and(|r| shapes[r.shape as usize].head);
        match slot.framer.next(&data[i..], head)? {
            Step::Complete {
                status,
                close,
                used,
            } => {
                i += used;
                let req = slot.inflight.pop_front().unwrap_or(Pending {
                    start_ns: now,
                    sent_ns: now,
                    shape: 0,
                    stream: 0,
                    retries: 0,
                });
                rec.response(status, req, now);
                slot.wait_since_ns = now;
                if close || !keepalive {
                    return Ok(Flow::Close);
                }
            }
            Step::Body => return Ok(Flow::Continue),
            Step::PartialHead { used } => {
                slot.leftover.extend_from_slice(&data[i + used..]);
                return Ok(Flow::Continue);
            }
        }
    }
    Ok(Flow::Continue)
}
