//! HPACK's primitives (RFC 7541): integers, string literals, the Huffman code (decoded four
//! bits at a time through a table built once from the code) and the static table. The
//! decoders built on them (the client's, which keeps only `:status`; the server's, which
//! keeps whole fields) live with their users.

use std::sync::OnceLock;

use crate::huffman_table::CODES;

/// Why a header block could not be decoded: a connection error (COMPRESSION_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HpackError {
    /// The block ended inside a field.
    Truncated,
    /// An integer above 2^32.
    IntegerOverflow,
    /// Index 0, or past the end of the tables.
    BadIndex,
    /// A Huffman string with EOS, or padding that is not a prefix of EOS or longer than 7 bits.
    BadHuffman,
    /// A table size update above the size we advertised (a table-size bomb), or one that
    /// does not open the block.
    BadTableSize,
    /// The decoded fields passed the decoder's bound on a header list (a block of
    /// one-byte references to one large entry decodes to hundreds of times its size).
    ListTooLarge,
}

/// The RFC 7541 static table (Appendix A): (name, value) for indexes 1..=61.
pub const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// An HPACK integer with an `n`-bit prefix: its value and the bytes it took. Values above
/// 2^32 are refused.
pub fn int(b: &[u8], n: u8) -> Result<(u64, usize), HpackError> {
    int_up_to(b, n, u64::from(u32::MAX))
}

/// The most a caller of [`int_up_to`] may allow: QPACK's integers go up to 62 bits (RFC 9204
/// 4.1.1).
pub const INT_MAX_62: u64 = (1 << 62) - 1;

/// An integer with an `n`-bit prefix, as [`int`], with values above `max` (at most
/// [`INT_MAX_62`]) refused, and so continuation bytes past the last that `max` needs.
pub fn int_up_to(b: &[u8], n: u8, max: u64) -> Result<(u64, usize), HpackError> {
    debug_assert!(max <= INT_MAX_62);
    // The last shift a value up to `max` can use: 28 for 2^32, 56 for 2^62.
    let last_shift = (63 - max.leading_zeros()) / 7 * 7;
    let mask = (1u16 << n) as u8 - 1;
    let first = *b.first().ok_or(HpackError::Truncated)? & mask;
    if first < mask {
        return Ok((u64::from(first), 1));
    }
    let mut v = u64::from(mask);
    for (k, &byte) in b.iter().enumerate().skip(1) {
        let shift = 7 * (k as u32 - 1);
        if shift > last_shift {
            return Err(HpackError::IntegerOverflow);
        }
        v += u64::from(byte & 0x7f) << shift;
        if v > max {
            return Err(HpackError::IntegerOverflow);
        }
        if byte & 0x80 == 0 {
            return Ok((v, k + 1));
        }
    }
    Err(HpackError::Truncated)
}

/// One step of the nibble decoder: from a state, on four bits.
#[derive(Clone, Copy, Default)]
struct Step {
    next: u8,
    /// The symbol completed on the way, or `NONE`.
    sym: u16,
    /// EOS was decoded: an error.
    fail: bool,
}

const NONE: u16 = u16::MAX;

struct Nibbles {
    steps: Vec<[Step; 16]>,
    /// A string may end in this state: the bits since the last symbol are at most seven
    /// ones (a prefix of EOS).
    accept: Vec<bool>,
}

/// The nibble table, built once from the code: states are the code tree's inner nodes.
fn nibbles() -> &'static Nibbles {
    static TABLE: OnceLock<Nibbles> = OnceLock::new();
    TABLE.get_or_init(|| {
        // The tree: node 0 is the root; children[n][bit] is a node, or a leaf as !sym.
        let mut children: Vec<[i32; 2]> = vec![[0, 0]];
        for (sym, &(bits, code)) in CODES.iter().enumerate() {
            let mut n = 0usize;
            for k in (0..bits).rev() {
                let bit = ((code >> k) & 1) as usize;
                if k == 0 {
                    children[n][bit] = !(sym as i32);
                } else {
                    if children[n][bit] == 0 {
                        children.push([0, 0]);
                        children[n][bit] = (children.len() - 1) as i32;
                    }
                    n = children[n][bit] as usize;
                }
            }
        }
        // Accepting states: reached from the root by ones only, at depth 0..=7.
        let mut accept = vec![false; children.len()];
        let mut n = 0usize;
        accept[0] = true;
        for _ in 0..7 {
            n = children[n][1] as usize;
            accept[n] = true;
        }
        let steps = (0..children.len())
            .map(|state| {
                let mut row = [Step::default(); 16];
                for (nib, step) in row.iter_mut().enumerate() {
                    let mut n = state;
                    let mut sym = NONE;
                    let mut fail = false;
                    for k in (0..4).rev() {
                        let c = children[n][(nib >> k) & 1];
                        if c < 0 {
                            let s = !c;
                            if s == 256 {
                                fail = true;
                            }
                            sym = s as u16;
                            n = 0;
                        } else {
                            n = c as usize;
                        }
                    }
                    *step = Step {
                        next: n as u8,
                        sym,
                        fail,
                    };
                }
                row
            })
            .collect();
        Nibbles { steps, accept }
    })
}

/// Decodes the Huffman-coded string `raw`, handing each byte to `push`: no buffer of its
/// own, so a caller that keeps only a length and a prefix allocates nothing.
#[inline]
pub fn huffman(raw: &[u8], mut push: impl FnMut(u8)) -> Result<(), HpackError> {
    let t = nibbles();
    let mut state = 0u8;
    for &byte in raw {
        for nib in [byte >> 4, byte & 0x0f] {
            let step = t.steps[usize::from(state)][usize::from(nib)];
            if step.fail {
                return Err(HpackError::BadHuffman);
            }
            if step.sym != NONE {
                push(step.sym as u8);
            }
            state = step.next;
        }
    }
    if !t.accept[usize::from(state)] {
        return Err(HpackError::BadHuffman);
    }
    Ok(())
}

/// Appends `s` Huffman-coded (no length prefix).
pub fn huffman_encode(s: &[u8], out: &mut Vec<u8>) {
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &c in s {
        let (n, code) = CODES[usize::from(c)];
        acc = (acc << n) | u64::from(code);
        bits += u32::from(n);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        out.push(((acc << (8 - bits)) as u8) | (0xff >> bits));
    }
}

/// Appends an HPACK integer with an `n`-bit prefix to `out`, `flags` in the prefix's
/// first byte above the prefix.
pub fn put_int(out: &mut Vec<u8>, flags: u8, n: u8, v: usize) {
    let mask = (1usize << n) - 1;
    if v < mask {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut v = v - mask;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// Appends a string literal, not Huffman-coded.
pub fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_int(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

#[cfg(test)]
mod tests;
