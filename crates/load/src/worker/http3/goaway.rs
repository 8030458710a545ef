//! The server's GOAWAY and H3_REQUEST_REJECTED as a client takes them: the requests it
//! left unprocessed go again on the next connection (up to [`MAX_RETRIES`] times).

use std::collections::VecDeque;

use h3wire::error as h3err;
use quinn_proto::VarInt;
use stats::reason::{Cause, Kind, Reason};

use super::super::http::Requests;
use super::super::{Failure, Pending, Recorder};
use super::{Conn, MAX_RETRIES};

/// A request the server left unprocessed: queued to go again (counted as a retry when it
/// is issued again), or failed for `failure` once it has gone too often.
pub(super) fn requeue(
    p: Pending,
    requeue: &mut Vec<Pending>,
    rec: &mut Recorder,
    failure: Failure,
) {
    if p.retries >= MAX_RETRIES {
        rec.failed(failure, 1);
        return;
    }
    requeue.push(Pending {
        retries: p.retries + 1,
        ..p
    });
}

/// Removes the request carried by stream `tag` from `inflight`, keeping the others in order.
pub(super) fn take(inflight: &mut VecDeque<Pending>, tag: u32) -> Option<Pending> {
    let i = inflight.iter().position(|p| p.stream == tag)?;
    inflight.remove(i)
}

/// The server's GOAWAY: the requests on streams at or above its ID (never processed) and
/// those not yet on a stream go again on the next connection, their streams reset and
/// stopped (H3_REQUEST_CANCELLED); those below end as usual.
pub(super) fn apply_goaway(c: &mut Conn, reqs: &mut Requests, rec: &mut Recorder) {
    let Some(first) = c.goaway else {
        return;
    };
    let Requests {
        inflight,
        requeue: again,
        ..
    } = reqs;
    let unprocessed = |c: &Conn, tag: u32| match c.rx.iter().find(|r| r.tag == tag) {
        Some(r) => u64::from(r.id) >= first,
        None => true, // still queued: never sent
    };
    let mut i = 0;
    while i < inflight.len() {
        let tag = inflight[i].stream;
        if !unprocessed(c, tag) {
            i += 1;
            continue;
        }
        let Some(p) = inflight.remove(i) else { break };
        c.queue.retain(|(t, _)| *t != tag);
        if let Some(j) = c.rx.iter().position(|r| r.tag == tag) {
            let rx = c.rx.swap_remove(j);
            if let Some((_, conn)) = c.quic.as_mut() {
                let code = VarInt::from_u32(h3err::H3_REQUEST_CANCELLED as u32);
                let _ = conn.send_stream(rx.id).reset(code);
                let _ = conn.recv_stream(rx.id).stop(code);
            }
        }
        let gone = Reason::new(Kind::Protocol, Cause::H3Received(h3err::H3_NO_ERROR as u32));
        requeue(p, again, rec, gone);
    }
}
