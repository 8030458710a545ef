//! Waiting, before each load of a cell, for the server to finish what the load before it
//! left: a load that ends (a warm-up slice, a window, the level before) gives up on the
//! requests still unanswered and closes their connections. A server that queues work (a
//! thread waiting on a pool, say) goes on answering them for nobody, holding each such
//! connection closed by its client (`CLOSE_WAIT`) until it is done. A load started then
//! would queue behind that work and charge it to its own requests: on a pool of 2 that
//! answers 30 requests a second, three abandoned slices of 60 connections are six seconds
//! of it. So each load waits until the server holds none, up to the plan's request timeout
//! (a request older than that would have failed anyway), and the cell records the waits.

use std::time::{Duration, Instant};

use probe::Peer;
use report::shootout::{Cell, Settle};

use crate::lifecycle::Running;
use crate::meter::Meter;

/// How often the server's connections are read while waiting.
const POLL: Duration = Duration::from_millis(10);

impl Meter<'_> {
    /// Waits until `target` holds no connection on its port that its client has closed,
    /// up to the plan's timeout (or Ctrl-C), and records the wait in `cell` if there was
    /// one. A server whose connections cannot be read is not waited for.
    pub(crate) fn settle(&self, target: &Running, cell: &mut Cell) {
        let held = |t: &Running| {
            probe::connections(t.pid(), Peer::Local(t.addr.port()))
                .map(|c| c.closed_by_peer)
                .unwrap_or(0)
        };
        let first = held(target);
        if first == 0 {
            return;
        }
        let started = Instant::now();
        let limit = self.plan.timeout;
        let settled = loop {
            if self.interrupted() || started.elapsed() >= limit {
                break false;
            }
            std::thread::sleep(POLL);
            if held(target) == 0 {
                break true;
            }
        };
        cell.settle
            .get_or_insert(Settle {
                limit_s: limit.as_secs_f64(),
                ..Settle::default()
            })
            .add(first, started.elapsed().as_secs_f64(), settled);
    }
}
