//! QPACK's encoder and decoder streams (RFC 9204 4.3, 4.4) as a static-table-only endpoint
//! reads them. With the dynamic table capacity we advertise at 0, a peer's encoder stream
//! may carry only Set Dynamic Table Capacity 0 (one byte, 0x20); and since we never send a
//! section that needs the table, a peer's decoder stream may carry only Stream
//! Cancellations. We send nothing on ours but their stream types.

use h2wire::hpack::HpackError;
use thiserror::Error;

use crate::error;
use crate::qpack::int;

/// Why a peer's encoder stream is refused (QPACK_ENCODER_STREAM_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EncoderStreamError {
    /// Set Dynamic Table Capacity above the 0 we advertised.
    #[error("the peer set a dynamic table capacity above the 0 we advertised")]
    Capacity,
    /// Insert with Name Reference or Insert with Literal Name: an insert into a table of
    /// capacity 0.
    #[error("the peer inserted into a dynamic table of capacity 0")]
    Insert,
    /// Duplicate: of an entry a table of capacity 0 cannot hold.
    #[error("the peer duplicated an entry of a dynamic table of capacity 0")]
    Duplicate,
}

impl EncoderStreamError {
    /// The error code to close the connection with.
    pub fn code(self) -> u64 {
        error::QPACK_ENCODER_STREAM_ERROR
    }
}

/// Checks the bytes a peer's encoder stream carries (past its stream type): every
/// instruction must be Set Dynamic Table Capacity 0. Each is one byte, so there is no
/// partial instruction to keep.
pub fn check_encoder_stream(b: &[u8]) -> Result<(), EncoderStreamError> {
    for &lead in b {
        match lead {
            0x20 => {}
            _ if lead & 0x80 != 0 || lead & 0x40 != 0 => return Err(EncoderStreamError::Insert),
            // 001xxxxx with any bit of the 5-bit prefix set: a capacity of 1 or more.
            _ if lead & 0x20 != 0 => return Err(EncoderStreamError::Capacity),
            _ => return Err(EncoderStreamError::Duplicate),
        }
    }
    Ok(())
}

/// Why a peer's decoder stream is refused (QPACK_DECODER_STREAM_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DecoderStreamError {
    /// A Section Acknowledgment, for a stream on which we sent no section that needs the
    /// dynamic table (RFC 9204 4.4.1).
    #[error("the peer acknowledged a field section on stream {0}, which needed no acknowledgment")]
    SectionAcknowledgment(u64),
    /// An Insert Count Increment: we inserted nothing (RFC 9204 4.4.3).
    #[error("the peer acknowledged {0} insertions, and we inserted none")]
    InsertCountIncrement(u64),
    /// An integer above 2^62 - 1.
    #[error("an integer on the decoder stream is above 2^62 - 1")]
    IntegerOverflow,
}

impl DecoderStreamError {
    /// The error code to close the connection with.
    pub fn code(self) -> u64 {
        error::QPACK_DECODER_STREAM_ERROR
    }
}

/// Checks the bytes a peer's decoder stream carries (past its stream type): Stream
/// Cancellations only. Returns how many bytes hold whole instructions; the rest, the start
/// of one, waits for more.
pub fn check_decoder_stream(b: &[u8]) -> Result<usize, DecoderStreamError> {
    let mut at = 0;
    while let Some(&lead) = b.get(at) {
        let prefix = if lead & 0x80 != 0 { 7 } else { 6 };
        let (v, used) = match int(&b[at..], prefix) {
            Ok(x) => x,
            Err(HpackError::IntegerOverflow) => return Err(DecoderStreamError::IntegerOverflow),
            Err(_) => return Ok(at),
        };
        if lead & 0x80 != 0 {
            return Err(DecoderStreamError::SectionAcknowledgment(v));
        }
        if lead & 0x40 == 0 {
            return Err(DecoderStreamError::InsertCountIncrement(v));
        }
        at += used;
    }
    Ok(at)
}

#[cfg(test)]
mod tests;
