//! QUIC variable-length integers (RFC 9000 16): two bits of length, then 6, 14, 30 or 62
//! bits of value, big-endian.
//!
//! Hand-written rather than taken from a crate (`quinn-proto` has one, behind its `bytes`
//! buffers): every HTTP/3 frame header is two of these, read straight from the bytes a
//! stream has so far and written straight into an output buffer, and the code is a match
//! on two bits.

/// The largest value a variable-length integer holds: 2^62 - 1.
pub const MAX: u64 = (1 << 62) - 1;

/// Decodes the integer at the start of `b`: its value and length, or `None` when `b` ends
/// before it does (need more bytes).
#[inline]
pub fn decode(b: &[u8]) -> Option<(u64, usize)> {
    let first = *b.first()?;
    let len = 1usize << (first >> 6);
    let bytes = b.get(..len)?;
    let mut v = u64::from(first & 0x3f);
    for &byte in &bytes[1..] {
        v = (v << 8) | u64::from(byte);
    }
    Some((v, len))
}

/// How many bytes `v` takes encoded (the shortest form).
///
/// Panics if `v` is above [`MAX`]: a writer's caller passes its own ids and lengths.
#[inline]
pub fn size(v: u64) -> usize {
    match v {
        0..=0x3f => 1,
        0x40..=0x3fff => 2,
        0x4000..=0x3fff_ffff => 4,
        0x4000_0000..=MAX => 8,
        _ => panic!("{v} is above the largest QUIC variable-length integer (2^62 - 1)"),
    }
}

/// Writes `v` in its shortest form at the start of `buf`, returning the bytes written, or
/// `None` when `buf` is too short.
///
/// Panics if `v` is above [`MAX`].
#[inline]
pub fn write(buf: &mut [u8], v: u64) -> Option<usize> {
    let len = size(v);
    let out = buf.get_mut(..len)?;
    let tag = (len.trailing_zeros() as u64) << (8 * len - 2);
    out.copy_from_slice(&(v | tag).to_be_bytes()[8 - len..]);
    Some(len)
}

/// Appends `v` in its shortest form.
///
/// Panics if `v` is above [`MAX`].
#[inline]
pub fn put(out: &mut Vec<u8>, v: u64) {
    let mut b = [0u8; 8];
    let len = write(&mut b, v).expect("8 bytes hold any variable-length integer");
    out.extend_from_slice(&b[..len]);
}

#[cfg(test)]
mod tests;
