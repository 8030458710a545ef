//! The one place that asks which protocol runs: [`run`] makes the worker of the plan's
//! protocol, a `Worker<Http1>`, `Worker<Http2>` or `Worker<Http3>`, once per thread. Apart from the
//! seam's trait ([`super::http::Http`]), so that the trait and its implementations do not
//! import each other: an implementation depends on the seam, the selector on both.

use super::http1::Http1;
use super::http2::Http2;
use super::http3::Http3;
use super::{Config, WorkerResult};
use crate::interval::CurrentInterval;
use crate::{LoadError, Protocol};

/// Runs one worker with the plan's protocol.
pub(crate) fn run(
    protocol: Protocol,
    cfg: Config,
    interval: CurrentInterval,
) -> Result<WorkerResult, LoadError> {
    match protocol {
        Protocol::Http1 => super::Worker::run(Http1::new(&cfg), cfg, interval),
        Protocol::Http2(opts) => super::Worker::run(Http2::new(&cfg, opts), cfg, interval),
        Protocol::Http3(opts) => super::Worker::run(Http3::new(&cfg, opts), cfg, interval),
    }
}
