//! The worker's side of an HTTP/2 connection: turning the connection's [`Event`]s into
//! outcomes of the requests in flight, sending again what a GOAWAY or REFUSED_STREAM left
//! unprocessed, and timing out streams one by one.

use std::collections::VecDeque;

use super::{Failure, Flow, Pending, Phase, Recorder, Slot, Worker};
use crate::h2::frame::code;
use crate::h2::request::RequestShape;
use crate::h2::{self as http2, ConnError, Event, H2Counts};
use crate::schedule::Grant;
use stats::reason::{At, Cause, Kind, Reason};

/// Output room beyond the requests' own: the preface, SETTINGS, and the acknowledgements
/// and window updates one read can call for.
pub(super) const CONTROL_ROOM: usize = 4096;

/// Unwritten output past which a server that keeps asking for answers (PINGs, SETTINGS)
/// while not reading them is cut off as flooding.
const MAX_UNWRITTEN: usize = 1 << 20;

/// Times a request is sent again after GOAWAYs or REFUSED_STREAMs before it fails.
const MAX_RETRIES: u8 = 3;

/// Removes the request carried by `stream` from `inflight`, keeping the others in order.
#[inline]
fn take(inflight: &mut VecDeque<Pending>, stream: u32) -> Option<Pending> {
    let i = inflight.iter().position(|p| p.stream == stream)?;
    inflight.remove(i)
}

/// A request left unprocessed: queued to go again, or failed for `failure` once it has
/// gone too often.
fn requeue(p: Pending, requeue: &mut Vec<Pending>, rec: &mut Recorder, failure: Failure) {
    if p.retries >= MAX_RETRIES {
        rec.failed(failure, 1);
        return;
    }
    requeue.push(Pending {
        retries: p.retries + 1,
        ..p
    });
}

/// A connection with no room (draining after a GOAWAY or a refused stream, or out of
/// stream IDs) and nothing in flight has nothing left to wait for: it is to be replaced.
/// Counts the ID rollover when that is why. Called wherever streams end: on bytes read
/// (`feed`) and on timeouts (`Worker::h2_timeouts`), so that a draining connection whose
/// last stream times out is closed too.
fn spent(conn: &http2::Conn, inflight: &VecDeque<Pending>, counts: &mut H2Counts) -> bool {
    // A server that allows no streams may raise its limit: `h2_timeouts` replaces the
    // connection once it has waited a timeout (it was replaced at once, in a loop).
    if conn.capacity() > 0 || !inflight.is_empty() || conn.allows_none() {
        return false;
    }
    if conn.ids_exhausted() {
        counts.id_rollovers += 1;
    }
    true
}

/// Opens a stream on `conn` for a request of row `shape`, encoded into `out`. Without
/// keep-alive the connection then drains: it closes once this one request is answered.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn open_stream(
    conn: &mut http2::Conn,
    cfg: &super::Config,
    shape: u32,
    picker: &mut crate::table::Picker,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
    counts: &mut H2Counts,
) -> u32 {
    let rng = picker.rng();
    let stream = conn.open(
        shape,
        &cfg.table.h2[shape as usize],
        &cfg.table.h2_fields,
        rng,
        scratch,
        out,
        counts,
    );
    if !cfg.keepalive {
        conn.drain();
    }
    stream
}

/// Feeds bytes read on an HTTP/2 connection and records the streams that ended.
pub(super) fn feed(
    slot: &mut Slot,
    rec: &mut Recorder,
    counts: &mut H2Counts,
    shapes: &[RequestShape],
    data: &[u8],
    now: u64,
) -> Result<Flow, Failure> {
    let Slot {
        h2,
        inflight,
        requeue: queue,
        out,
        wait_since_ns,
        ..
    } = slot;
    let Some(conn) = h2.as_mut() else {
        return Ok(Flow::Continue);
    };
    let mut refused = false;
    let fed = conn.feed(data, shapes, out, counts, &mut |ev| match ev {
        Event::Response { stream, status } => {
            if let Some(req) = take(inflight, stream) {
                rec.response(status, req, now);
                *wait_since_ns = now;
            }
        }
        Event::Reset { stream, code } => {
            if take(inflight, stream).is_some() {
                rec.failed(Reason::new(Kind::Reset, Cause::H2Received(code)), 1);
            }
        }
        Event::Broken { stream, code } => {
            if take(inflight, stream).is_some() {
                rec.failed(Reason::new(Kind::Protocol, Cause::H2Sent(code)), 1);
            }
        }
        Event::Malformed { stream, what } => {
            if take(inflight, stream).is_some() {
                rec.failed(Reason::new(Kind::Protocol, Cause::Malformed(what)), 1);
            }
        }
        Event::Refused { stream } => {
            if let Some(req) = take(inflight, stream) {
                let f = Reason::new(Kind::Reset, Cause::H2Received(code::REFUSED_STREAM));
                requeue(req, queue, rec, f);
                refused = true;
            }
        }
        Event::GoAway { last_stream } => {
            while let Some(i) = inflight.iter().position(|p| p.stream > last_stream) {
                if let Some(req) = inflight.remove(i) {
                    let f = Reason::new(Kind::Protocol, Cause::H2Received(code::NO_ERROR));
                    requeue(req, queue, rec, f);
                }
            }
        }
    });
    if let Err(e) = fed {
        // Our GOAWAY, written as the connection closes (`Worker::goodbye`).
        let cause = match e {
            ConnError::Local(_) => {
                conn.goaway(out, e.code());
                Cause::H2Sent(e.code())
            }
            ConnError::Remote(c) => Cause::H2Received(c),
        };
        return Err(Reason::new(Kind::Protocol, cause));
    }
    if refused {
        // Sent again on a new connection: this one drains first.
        conn.drain();
    }
    if out.len() > MAX_UNWRITTEN {
        conn.goaway(out, code::ENHANCE_YOUR_CALM);
        return Err(Reason::new(
            Kind::Protocol,
            Cause::H2Sent(code::ENHANCE_YOUR_CALM),
        ));
    }
    if spent(conn, inflight, counts) {
        return Ok(Flow::Close);
    }
    Ok(Flow::Continue)
}

impl Worker {
    /// Sends again, on this slot's connection, what the last one left unprocessed, as many
    /// as its streams allow; connects first when the slot is closed.
    pub(super) fn reissue(&mut self, idx: usize, now: u64) -> Grant {
        let room = self.room(idx);
        if room == 0 {
            return Grant::Never;
        }
        let Worker {
            cfg,
            slots,
            picker,
            h2,
            scratch,
            ..
        } = self;
        let slot = &mut slots[idx];
        let Some(conn) = slot.h2.as_mut() else {
            return Grant::Never;
        };
        if slot.inflight.is_empty() {
            slot.wait_since_ns = now;
        }
        if slot.out_pos > 0 {
            slot.out.drain(..slot.out_pos);
            slot.out_pos = 0;
        }
        let n = room.min(slot.requeue.len());
        for req in slot.requeue.drain(..n) {
            let stream = open_stream(conn, cfg, req.shape, picker, scratch, &mut slot.out, h2);
            slot.inflight.push_back(Pending {
                stream,
                sent_ns: now,
                ..req
            });
        }
        h2.retries += n as u64;
        if slot.phase == Phase::Closed {
            self.connect(idx, now);
        } else {
            self.flush(idx, now);
        }
        Grant::Now { n: 0, first: 0 }
    }

    /// Fails each stream that has waited longer than the timeout, alone: it is reset
    /// (CANCEL) and the connection goes on.
    pub(super) fn h2_timeouts(&mut self, idx: usize, now: u64) {
        let timeout = self.cfg.timeout.as_nanos() as u64;
        let slot = &mut self.slots[idx];
        let Some(conn) = slot.h2.as_mut() else {
            return;
        };
        if conn.allows_none()
            && slot.inflight.is_empty()
            && now.saturating_sub(slot.wait_since_ns) >= timeout
        {
            // Nothing is in flight: the reason counts no request.
            let f = Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse));
            self.close_and_replace(idx, f, now);
            return;
        }
        let mut expired = false;
        while let Some(p) = slot.inflight.front() {
            if now.saturating_sub(p.sent_ns) < timeout {
                break;
            }
            let stream = p.stream;
            slot.inflight.pop_front();
            let at = match conn.has_head(stream) {
                true => At::MidBody,
                false => At::BeforeResponse,
            };
            conn.cancel(stream, &mut slot.out);
            self.rec
                .failed(Reason::new(Kind::Timeout, Cause::Timeout(at)), 1);
            expired = true;
        }
        if expired {
            self.flush(idx, now);
            let slot = &self.slots[idx];
            if slot.phase == Phase::Open
                && slot
                    .h2
                    .as_ref()
                    .is_some_and(|conn| spent(conn, &slot.inflight, &mut self.h2))
            {
                // Nothing is in flight: the reason counts no request.
                let f = Reason::new(Kind::Read, Cause::Closed(At::BeforeResponse));
                self.close_and_replace(idx, f, now);
                return;
            }
            // The streams freed are room for the requests still to come.
            if self.cfg.keepalive && self.slots[idx].phase == Phase::Open && self.room(idx) > 0 {
                let _ = self.offer(idx, now);
            }
        }
    }

    /// Writes what is queued (our GOAWAY) once, before a failed connection is closed; a
    /// socket that does not take it loses nothing of ours.
    pub(super) fn goodbye(&mut self, idx: usize) {
        let slot = &mut self.slots[idx];
        if slot.h2.is_none() {
            return;
        }
        if let Some(conn) = slot.conn.as_mut() {
            let _ = conn.write(&slot.out[slot.out_pos..]);
        }
    }
}
