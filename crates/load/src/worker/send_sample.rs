//! Which requests have their send stamped ([`Sampler`]), and how a connection follows its
//! sampled request from its issue to the kernel's stamp ([`Sample`]).
//!
//! A stamp names its write by a key: the offset of the write's last byte among the bytes
//! the socket was given since stamping was enabled ([`crate::stamps`]). The connection
//! counts those bytes (the transport's `sent_bytes`: ciphertext under TLS), and once the
//! sampled request's last byte has gone to the socket it knows the key of the write that
//! took it: the stamp with that key tells when the request left. Stamps of other writes
//! made while stamping was on (the rest of a request written in parts, a TLS handshake's
//! flights) come back with other keys and are counted, not matched.

use crate::stamps::SEND_SAMPLE_EVERY;

/// Counts a worker's requests and says which to sample: the first, then one in
/// [`SEND_SAMPLE_EVERY`]; never when send stamps are off.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sampler {
    on: bool,
    issued: u64,
}

impl Sampler {
    pub(crate) fn new(on: bool) -> Self {
        Self { on, issued: 0 }
    }

    /// Counts a request issued: true when it is to be sampled.
    #[inline]
    pub(crate) fn due(&mut self) -> bool {
        let due = self.on && self.issued.is_multiple_of(SEND_SAMPLE_EVERY);
        self.issued += 1;
        due
    }
}

/// A connection's sampled request, from its issue until its stamp comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sample {
    /// Where the request ends in the connection's output buffer: its last byte is at
    /// `end - 1`. Meaningless once `key` is known.
    end: usize,
    /// The key of the write that took the request's last byte, once it has gone.
    key: Option<u32>,
    /// When its latency clock started (its due instant in the open model).
    pub(crate) start_ns: u64,
    /// When the engine handed it to its connection.
    pub(crate) sent_ns: u64,
    /// Open model: it was handed over when a connection was free at its due instant, so
    /// its lateness is the engine's `lateness`, not `late`.
    pub(crate) on_time: bool,
}

impl Sample {
    /// A request that ends at `end` in the output buffer.
    pub(crate) fn new(end: usize, start_ns: u64, sent_ns: u64, on_time: bool) -> Self {
        Self {
            end,
            key: None,
            start_ns,
            sent_ns,
            on_time,
        }
    }

    /// True while its last byte has not gone to the socket: writes are stamped meanwhile.
    #[inline]
    pub(crate) fn unsent(&self) -> bool {
        self.key.is_none()
    }

    /// The output buffer dropped its first `n` bytes (written ones).
    #[inline]
    pub(crate) fn compacted(&mut self, n: usize) {
        self.end = self.end.saturating_sub(n);
    }

    /// After a write: `written` bytes of the output buffer have gone to the transport,
    /// which has given the socket `socket_bytes` bytes since stamping was enabled and
    /// still holds some back when `held` (TLS records not yet taken by the socket). Once
    /// the request's last byte is in the socket, the last byte given is that of the write
    /// that took it: its key is the key to wait for.
    #[inline]
    pub(crate) fn written(&mut self, written: usize, socket_bytes: u64, held: bool) {
        if self.key.is_none() && written >= self.end && !held && socket_bytes > 0 {
            // The kernel's key is a u32 that wraps, as this does.
            self.key = Some((socket_bytes - 1) as u32);
        }
    }

    /// This stamp is for the write that took the request's last byte.
    #[inline]
    pub(crate) fn matches(&self, key: u32) -> bool {
        self.key == Some(key)
    }
}

#[cfg(test)]
mod tests;
