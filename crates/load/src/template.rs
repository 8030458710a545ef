//! Request paths with random parts: `/{hex:6}.svg`, `/doc/{int:1-10000}`.
//!
//! A template is parsed once into literal bytes and holes. Each request fills its holes
//! from the worker's seeded generator straight into the connection's output buffer, so a
//! templated request costs no allocation (see `tests/alloc.rs`).

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The longest `{hex:N}` part.
pub const MAX_HEX: usize = 64;

/// A malformed template, with where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem} at column {column} of {text:?}: {hint}")]
pub struct TemplateError {
    /// The whole text that was parsed.
    pub text: String,
    /// 1-based column of the offending `{` or `}`.
    pub column: usize,
    /// What is wrong.
    pub problem: String,
    /// How to write it instead.
    pub hint: &'static str,
}

const HINT: &str = "random parts are {hex:N} (N = 1-64) or {int:A-B} (0 <= A <= B); write {{ and }} for literal braces";

/// One random part of a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    /// `{hex:N}`: N lowercase hex digits.
    Hex(u8),
    /// `{int:A-B}`: a decimal integer, uniform in A..=B.
    Int {
        /// Smallest value.
        lo: u64,
        /// Largest value.
        hi: u64,
    },
}

impl Hole {
    /// The most bytes this part can write.
    pub fn max_len(&self) -> usize {
        match *self {
            Hole::Hex(n) => usize::from(n),
            Hole::Int { hi, .. } => digits(hi),
        }
    }

    /// Writes one random value of this part.
    #[inline]
    fn fill(&self, rng: &mut Rng, out: &mut Vec<u8>) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        match *self {
            Hole::Hex(n) => {
                let mut left = usize::from(n);
                while left > 0 {
                    let mut bits = rng.next_u64();
                    for _ in 0..left.min(16) {
                        out.push(HEX[(bits & 0xf) as usize]);
                        bits >>= 4;
                    }
                    left = left.saturating_sub(16);
                }
            }
            Hole::Int { lo, hi } => {
                let v = lo + rng.below_inclusive(hi - lo);
                push_decimal(v, out);
            }
        }
    }
}

fn digits(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 10 {
        v /= 10;
        n += 1;
    }
    n
}

/// Appends `v` in decimal without allocating (`out` must have room, or it grows once).
#[inline]
fn push_decimal(mut v: u64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// A piece of an encoded request: literal bytes, or a random part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Bytes sent as they are.
    Literal(Vec<u8>),
    /// A random part, filled per request.
    Hole(Hole),
}

/// A parsed template: literal pieces and holes, in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Template {
    /// The pieces, adjacent literals merged.
    pub pieces: Vec<Piece>,
}

impl Template {
    /// Parses `text`, where `{hex:N}` and `{int:A-B}` are random parts and `{{`, `}}` are
    /// literal braces.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let mut t = Template::default();
        let bytes = text.as_bytes();
        let err = |at: usize, problem: String| TemplateError {
            text: text.to_string(),
            column: at + 1,
            problem,
            hint: HINT,
        };
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' if bytes.get(i + 1) == Some(&b'{') => {
                    t.push_literal(b"{");
                    i += 2;
                }
                b'}' if bytes.get(i + 1) == Some(&b'}') => {
                    t.push_literal(b"}");
                    i += 2;
                }
                b'}' => return Err(err(i, "a '}' with no '{'".into())),
                b'{' => {
                    let Some(len) = bytes[i..].iter().position(|&b| b == b'}') else {
                        return Err(err(i, "a '{' with no '}'".into()));
                    };
                    let inner = &text[i + 1..i + len];
                    let hole = parse_hole(inner).map_err(|p| err(i, p))?;
                    t.pieces.push(Piece::Hole(hole));
                    i += len + 1;
                }
                _ => {
                    let end = bytes[i..]
                        .iter()
                        .position(|&b| b == b'{' || b == b'}')
                        .map_or(bytes.len(), |p| i + p);
                    t.push_literal(&bytes[i..end]);
                    i = end;
                }
            }
        }
        Ok(t)
    }

    /// A template of literal bytes only.
    pub fn literal(bytes: &[u8]) -> Template {
        let mut t = Template::default();
        t.push_literal(bytes);
        t
    }

    /// Appends literal bytes, merged into a preceding literal.
    pub fn push_literal(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Literal(l)) => l.extend_from_slice(bytes),
            _ => self.pieces.push(Piece::Literal(bytes.to_vec())),
        }
    }

    /// Appends another template's pieces.
    pub fn append(&mut self, other: Template) {
        for p in other.pieces {
            match p {
                Piece::Literal(l) => self.push_literal(&l),
                hole => self.pieces.push(hole),
            }
        }
    }

    /// True when there is no random part.
    pub fn is_literal(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Literal(_)))
    }

    /// The most bytes one fill can write.
    pub fn max_len(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Literal(l) => l.len(),
                Piece::Hole(h) => h.max_len(),
            })
            .sum()
    }

    /// Writes one instance: literals as they are, holes from `rng`. Allocates only if
    /// `out` lacks room for [`Template::max_len`] more bytes.
    #[inline]
    pub fn fill(&self, rng: &mut Rng, out: &mut Vec<u8>) {
        for p in &self.pieces {
            match p {
                Piece::Literal(l) => out.extend_from_slice(l),
                Piece::Hole(h) => h.fill(rng, out),
            }
        }
    }
}

fn parse_hole(inner: &str) -> Result<Hole, String> {
    let (kind, arg) = inner
        .split_once(':')
        .ok_or_else(|| format!("{{{inner}}} has no ':'"))?;
    match kind.trim() {
        "hex" => match arg.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_HEX).contains(&n) => Ok(Hole::Hex(n as u8)),
            _ => Err(format!("{{{inner}}}: the length must be 1 to {MAX_HEX}")),
        },
        "int" => {
            let (a, b) = arg
                .split_once('-')
                .ok_or_else(|| format!("{{{inner}}}: expected a range A-B"))?;
            let parse = |v: &str| v.trim().parse::<u64>().ok();
            match (parse(a), parse(b)) {
                (Some(lo), Some(hi)) if lo <= hi => Ok(Hole::Int { lo, hi }),
                (Some(_), Some(_)) => Err(format!("{{{inner}}}: A is larger than B")),
                _ => Err(format!(
                    "{{{inner}}}: A and B must be whole numbers from 0 to {}",
                    u64::MAX
                )),
            }
        }
        other => Err(format!("unknown random part {other:?}")),
    }
}

/// The seeded generator behind random parts and random request selection.
///
/// xoshiro256++ from `rand_xoshiro`: its output is fixed by the algorithm, so `--seed`
/// reproduces a run's requests across versions and machines.
#[derive(Debug, Clone)]
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    /// The generator of worker `worker` for run seed `seed`.
    pub fn new(seed: u64, worker: usize) -> Self {
        // seed_from_u64 expands through SplitMix64, so neighbouring seeds are unrelated.
        Self(Xoshiro256PlusPlus::seed_from_u64(
            seed ^ (worker as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        ))
    }

    /// 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..=max`, without modulo bias (Lemire's multiply-and-reject).
    #[inline]
    pub fn below_inclusive(&mut self, max: u64) -> u64 {
        let Some(n) = max.checked_add(1) else {
            return self.next_u64();
        };
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }
}

#[cfg(test)]
mod tests;
