//! HTTP/2 for the engine (`--http2`): frames, HPACK and one connection's stream and
//! flow-control state, sans I/O. The worker's HTTP/2 implementation (`worker/http2.rs`)
//! drives it as the HTTP/1.1 one drives the [`Framer`]: it feeds what it read, writes what
//! the connection appended to its output buffer, and turns [`Event`]s into outcomes of its
//! requests.
//!
//! - [`frame`]: the frame header and the frames the client writes, hand-written as the
//!   HTTP/1 path is.
//! - [`hpack`]: the response decoder (hand-written, allocation-free; the module says why)
//!   and the request encoding.
//! - [`request`]: a request shape's header block, encoded once, with template values filled
//!   per request.
//! - [`conn`]: SETTINGS, PING, GOAWAY, RST_STREAM, windows, stream IDs.
//! - [`blocking`]: one blocking connection on the same `conn`, keeping each response whole
//!   (headers and body): the shootout verifies HTTP/2 targets through it.
//!
//! Accounting: a request is a stream. RST_STREAM fails it as `reset`; a connection error
//! (a GOAWAY with an error code, a malformed frame, an HPACK failure) fails every stream of
//! the connection as `protocol`. Streams a graceful GOAWAY left unprocessed, and streams
//! refused with REFUSED_STREAM, are sent again on a new connection, counted once (and in
//! [`H2Counts::retries`]).
//!
//! [`Framer`]: crate::Framer

pub mod blocking;
pub(crate) mod conn;
pub(crate) mod encoder;
pub mod frame;
pub(crate) mod hpack;

pub(crate) mod request;

pub(crate) use conn::{Conn, ConnError, Event};
pub use conn::{H2Options, DEFAULT_WINDOW};
pub use frame::CODE_NAMES;

/// What HTTP/2 counted over a run, beside the outcome counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct H2Counts {
    /// RST_STREAM frames received, by error code ([`CODE_NAMES`]).
    pub rst_received: [u64; 15],
    /// GOAWAY frames received, by error code.
    pub goaway_received: [u64; 15],
    /// Connections whose server SETTINGS arrived.
    pub connections: u64,
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS a server stated, in any SETTINGS of any
    /// connection; `None` when none did.
    pub server_max_streams: Option<u32>,
    /// The highest it stated: above the lowest when a server changed its limit mid-run.
    pub server_max_streams_highest: Option<u32>,
    /// The most streams open at once on one connection, taken as new requests are
    /// assigned (requests sent again after a GOAWAY or REFUSED_STREAM do not move it).
    pub streams_used_max: u64,
    /// Requests sent again after a graceful GOAWAY or REFUSED_STREAM.
    pub retries: u64,
    /// Connections replaced because their stream IDs ran out (2^31).
    pub id_rollovers: u64,
    /// PINGs answered.
    pub pings_answered: u64,
    /// HPACK-encoded header bytes sent, and what they decode to (names and values).
    pub header_bytes_sent: u64,
    /// Decoded size of the header blocks sent.
    pub header_bytes_sent_raw: u64,
    /// HPACK-encoded header bytes received.
    pub header_bytes_received: u64,
    /// Decoded size of the header blocks received.
    pub header_bytes_received_raw: u64,
}

impl H2Counts {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &H2Counts) {
        for (a, b) in self.rst_received.iter_mut().zip(other.rst_received) {
            *a += b;
        }
        for (a, b) in self.goaway_received.iter_mut().zip(other.goaway_received) {
            *a += b;
        }
        self.connections += other.connections;
        if let Some(low) = other.server_max_streams {
            self.server_max_streams_stated(low);
        }
        if let Some(high) = other.server_max_streams_highest {
            self.server_max_streams_stated(high);
        }
        self.streams_used_max = self.streams_used_max.max(other.streams_used_max);
        self.retries += other.retries;
        self.id_rollovers += other.id_rollovers;
        self.pings_answered += other.pings_answered;
        self.header_bytes_sent += other.header_bytes_sent;
        self.header_bytes_sent_raw += other.header_bytes_sent_raw;
        self.header_bytes_received += other.header_bytes_received;
        self.header_bytes_received_raw += other.header_bytes_received_raw;
    }

    /// A server stated SETTINGS_MAX_CONCURRENT_STREAMS `v`: the lowest and the highest
    /// move to take it in.
    pub fn server_max_streams_stated(&mut self, v: u32) {
        self.server_max_streams = Some(self.server_max_streams.map_or(v, |m| m.min(v)));
        self.server_max_streams_highest =
            Some(self.server_max_streams_highest.map_or(v, |m| m.max(v)));
    }

    /// HPACK's saving on the headers sent: 1 - encoded / decoded; `None` before any header
    /// was sent.
    pub fn hpack_saving_sent(&self) -> Option<f64> {
        saving(self.header_bytes_sent, self.header_bytes_sent_raw)
    }

    /// HPACK's saving on the headers received: 1 - encoded / decoded, what h2load reports
    /// as "space savings" (received headers only); `None` before any header was received.
    pub fn hpack_saving_received(&self) -> Option<f64> {
        saving(self.header_bytes_received, self.header_bytes_received_raw)
    }
}

/// 1 - encoded / decoded; `None` when nothing was decoded.
fn saving(encoded: u64, decoded: u64) -> Option<f64> {
    (decoded > 0).then(|| 1.0 - encoded as f64 / decoded as f64)
}

/// Runs the response side of a connection on arbitrary bytes, as a server would send
/// them: the fuzz target's entry. Never panics; returns the events and the error, if any.
#[doc(hidden)]
pub fn fuzz_feed(data: &[u8], split: usize) -> usize {
    let mut c = Conn::new(H2Options {
        streams: 8,
        ..H2Options::default()
    });
    let mut fields = encoder::Fields::default();
    let shape = request::RequestShape::new(
        &crate::RequestSpec::default(),
        &crate::Target::parse("http://127.0.0.1:1/").expect("a literal URL"),
        &mut fields,
        true,
    )
    .expect("a literal request");
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let mut rng = crate::Rng::new(0, 0);
    let mut counts = H2Counts::default();
    for i in 0..8 {
        c.open(
            0,
            &shape,
            &fields,
            &mut rng,
            &mut scratch,
            &mut out,
            &mut counts,
        );
        let _ = i;
    }
    let shapes = [shape];
    let mut events = 0;
    let split = split.min(data.len());
    for part in [&data[..split], &data[split..]] {
        if c.feed(part, &shapes, &mut out, &mut counts, &mut |_| events += 1)
            .is_err()
        {
            break;
        }
    }
    events
}

/// Decodes one header block with a fresh decoder: the HPACK fuzz target's entry.
#[doc(hidden)]
pub fn fuzz_hpack(block: &[u8]) -> Option<u16> {
    // The engine's decoder and verification's capturing one walk the same block alike:
    // the same verdict, the same status and decoded size (the capturing one may stop at
    // its bound on what it holds).
    let engine = hpack::Decoder::new().decode(block);
    let capturing = hpack::Decoder::capturing().decode(block);
    match (&engine, &capturing) {
        (_, Err(hpack::HpackError::ListTooLarge)) => {}
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the two decoders disagree"),
        (a, b) => assert_eq!(
            a.is_ok(),
            b.is_ok(),
            "the two decoders disagree: {a:?} {b:?}"
        ),
    }
    engine.ok().and_then(|b| b.status)
}

#[cfg(test)]
mod tests;
