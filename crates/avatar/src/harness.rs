//! A deterministic driver for the responder (HTTP/1, HTTP/2 and an HTTP/3 request stream),
//! shared by the fuzz targets and the tests.
//!
//! It feeds bytes the way a worker does (appending to what is left over, answering, keeping the
//! rest), with a fixed seed and a fixed date, so the output depends on the bytes alone.

use std::sync::Arc;
use std::time::Instant;

use crate::config::Config;
use crate::h2;
use crate::h3;
use crate::h3::request::{End, Rx};
use crate::metrics::Metrics;
use crate::responder::{ConnState, Next, Responder};
use crate::rng::Rng;
use crate::site::Site;

/// The fixed date of every harness response: Tue, 14 Nov 2023 22:13:20 GMT.
pub const FIXED_UNIX_SECS: u64 = 1_700_000_000;

/// What a connection looked like after the input was fed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    /// Everything the server sent.
    pub output: Vec<u8>,
    /// Whether the server closed (or half-closed) the connection.
    pub closed: bool,
    /// Bytes still held as a partial head.
    pub pending: usize,
}

/// A responder over the default site, reset for every run.
#[derive(Debug)]
pub struct Harness {
    site: Arc<Site>,
    out_limit: usize,
}

impl Default for Harness {
    fn default() -> Self {
        Harness::new()
    }
}

impl Harness {
    /// A harness over the default settings.
    pub fn new() -> Self {
        Harness::with_config(&Config::default())
    }

    /// A harness over `config`'s site.
    pub fn with_config(config: &Config) -> Self {
        Harness {
            site: Arc::new(Site::from_config(config).expect("valid harness config")),
            out_limit: 64 * 1024,
        }
    }

    /// A fresh responder over the site, with a fixed seed and date, and its counters.
    fn responder(&self) -> (Arc<Metrics>, Responder) {
        let metrics = Arc::new(Metrics::new(1));
        let responder = Responder::new(
            Arc::clone(&self.site),
            Arc::clone(&metrics),
            0,
            Rng::from_seed(42),
            FIXED_UNIX_SECS,
        );
        (metrics, responder)
    }

    /// Makes the responder stop every `out_limit` bytes of output, as a worker does.
    pub fn set_out_limit(&mut self, out_limit: usize) {
        self.out_limit = out_limit.max(1);
    }

    /// Feeds `chunks` in order, as separate reads, and returns what was sent.
    pub fn run<'a>(&self, chunks: impl IntoIterator<Item = &'a [u8]>) -> Transcript {
        let (_, mut responder) = self.responder();
        let mut state = ConnState::default();
        let mut batch = Vec::new();
        let out_limit = self.out_limit;
        feed(chunks, |pending, output| {
            let outcome = responder.respond(&mut state, pending, &mut batch, out_limit, None);
            output.append(&mut batch);
            (outcome.consumed, outcome.next)
        })
    }

    /// Feeds `data` whole and split at `cut`, and checks the invariants; returns the whole run.
    ///
    /// Panics if the two runs differ, a response does not start with a status line, or a
    /// held partial head exceeds the head limit.
    pub fn check(&self, data: &[u8], cut: usize) -> Transcript {
        let whole = self.run([data]);
        let cut = cut.min(data.len());
        let split = self.run([&data[..cut], &data[cut..]]);
        assert_eq!(whole, split, "splitting at {cut} changed the result");
        assert!(
            whole.pending <= self.site.limits().max_head_bytes,
            "held {} bytes",
            whole.pending
        );
        if !whole.output.is_empty() {
            assert!(
                whole.output.starts_with(b"HTTP/1.1 "),
                "output does not start with a status line"
            );
        }
        whole
    }
}

impl Harness {
    /// Feeds `chunks` to an HTTP/2 connection (the preface included), as separate reads,
    /// and returns what was sent.
    pub fn run_h2<'a>(&self, chunks: impl IntoIterator<Item = &'a [u8]>) -> Transcript {
        let (metrics, mut responder) = self.responder();
        let mut scratch = h2::Scratch::new();
        let mut conn = h2::Conn::new();
        feed(chunks, |pending, output| {
            let mut cx = h2::Ctx {
                responder: &mut responder,
                scratch: &mut scratch,
                metrics: metrics.worker(0),
                limits: self.site.limits(),
                peer: None,
                now_s: 0,
            };
            let out_limit = output.len() + self.out_limit;
            let outcome = conn.process(pending, output, out_limit, &mut cx);
            (outcome.consumed, outcome.next)
        })
    }

    /// As [`Harness::check`] for HTTP/2: `data` follows the preface. Panics if splitting
    /// changes the result, or more than one frame is held.
    pub fn check_h2(&self, data: &[u8], cut: usize) -> Transcript {
        let mut input = h2::PREFACE.to_vec();
        input.extend_from_slice(data);
        let whole = self.run_h2([&input[..]]);
        let cut = cut.min(input.len());
        let split = self.run_h2([&input[..cut], &input[cut..]]);
        assert_eq!(whole, split, "splitting at {cut} changed the result");
        assert!(
            whole.pending <= h2::frame::HEADER_LEN + h2::frame::DEFAULT_MAX_FRAME,
            "held {} bytes",
            whole.pending
        );
        whole
    }
}

/// What an HTTP/3 request stream's bytes made of it, as [`Harness::run_h3`] reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct H3Transcript {
    /// The answer to the request's head (the responder's HTTP/1.1 response, empty for a
    /// malformed head), or `None` while no head was whole. `None` too once the connection
    /// was closed with an error: whether an answer went out before the close depends on
    /// where the reads fell (a head and a bad frame in one read: none did).
    pub answer: Option<Vec<u8>>,
    /// The HTTP/3 error code the connection was closed with.
    pub error: Option<u64>,
    /// What the stream's end made of it, when no error came first.
    pub end: Option<End>,
    /// The body's bytes, as its DATA frames' headers declared them.
    pub body_bytes: u64,
    /// Whether the body broke its `content-length` at the stream's end.
    pub length_broken: bool,
    /// Bytes held of a frame split across reads; 0 once the connection was closed with an
    /// error, when the stream is read no more (what was held then depends on the reads).
    pub held: usize,
}

impl Harness {
    /// Feeds `chunks` to one HTTP/3 request stream, as separate reads, then its end: the
    /// frames walked, the head decoded with QPACK, checked and answered, as a connection
    /// does.
    ///
    /// Panics if a stream's head is answered twice.
    pub fn run_h3<'a>(&self, chunks: impl IntoIterator<Item = &'a [u8]>) -> H3Transcript {
        let (metrics, mut responder) = self.responder();
        let mut scratch = h3::Scratch::new();
        let limits = self.site.limits();
        let mut rx = Rx::new(h3::conn::section_limit(limits));
        let mut answer = None;
        let mut error = None;
        for chunk in chunks {
            let mut cx = h3::conn::Ctx {
                responder: &mut responder,
                scratch: &mut scratch,
                metrics: metrics.worker(0),
                limits,
                now: Instant::now(),
            };
            match h3::conn::feed(&mut rx, chunk, None, &mut cx) {
                Ok(Some(malformed)) => {
                    assert!(answer.is_none(), "a request stream answered twice");
                    answer = Some(if malformed {
                        Vec::new()
                    } else {
                        scratch.answer().to_vec()
                    });
                }
                Ok(None) => {}
                Err(c) => {
                    error = Some(c);
                    break;
                }
            }
        }
        H3Transcript {
            answer: answer.filter(|_| error.is_none()),
            error,
            end: error.is_none().then(|| rx.at_fin()),
            body_bytes: rx.body_bytes,
            length_broken: rx.length_broken(true),
            held: if error.is_some() { 0 } else { rx.walker.held() },
        }
    }

    /// As [`Harness::check`] for an HTTP/3 request stream. Panics if splitting changes the
    /// result, more than a HEADERS frame is held, or an answer does not start with a status
    /// line.
    pub fn check_h3(&self, data: &[u8], cut: usize) -> H3Transcript {
        let whole = self.run_h3([data]);
        let cut = cut.min(data.len());
        let split = self.run_h3([&data[..cut], &data[cut..]]);
        assert_eq!(whole, split, "splitting at {cut} changed the result");
        let most = h3::conn::section_limit(self.site.limits()) as usize + 16;
        assert!(split.held <= most, "held {} bytes", split.held);
        if let Some(a) = whole.answer.as_ref().filter(|a| !a.is_empty()) {
            assert!(
                a.starts_with(b"HTTP/1.1 "),
                "an answer that does not start with a status line"
            );
        }
        whole
    }
}

/// Feeds `chunks` in order, as separate reads, to `step` (which answers what it can of
/// the bytes held into the output, and says how many it consumed and what it needs next),
/// and returns what was sent: one loop for both protocols.
fn feed<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    mut step: impl FnMut(&[u8], &mut Vec<u8>) -> (usize, Next),
) -> Transcript {
    let mut pending: Vec<u8> = Vec::new();
    let mut output = Vec::new();
    for chunk in chunks {
        pending.extend_from_slice(chunk);
        loop {
            let (consumed, next) = step(&pending, &mut output);
            assert!(consumed <= pending.len(), "consumed past the input");
            pending.drain(..consumed);
            match next {
                Next::OutputFull => continue,
                Next::NeedInput => break,
                Next::Close | Next::Linger => {
                    return Transcript {
                        output,
                        closed: true,
                        pending: 0,
                    };
                }
            }
        }
    }
    Transcript {
        output,
        closed: false,
        pending: pending.len(),
    }
}
