//! Entity tags: hashing content into a tag, and matching `If-None-Match`.

/// Hashes `bytes` with 64-bit FNV-1a; stable across runs and builds, so ETags survive restarts.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Formats `hash` as 16 lowercase hex digits.
pub fn hex16(hash: u64) -> [u8; 16] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 16];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = HEX[((hash >> (60 - 4 * i)) & 0xf) as usize];
    }
    out
}

/// Whether an `If-None-Match` field value matches `etag` (with its quotes), by weak comparison.
///
/// RFC 9110 §13.1.2: `*` matches any current representation, and `W/` prefixes are ignored.
pub fn if_none_match(field: &[u8], etag: &[u8]) -> bool {
    field.split(|&b| b == b',').any(|member| {
        let member = trim(member);
        let member = member.strip_prefix(b"W/").unwrap_or(member);
        member == b"*" || member == etag
    })
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests;
