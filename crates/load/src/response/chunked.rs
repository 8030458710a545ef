//! The chunked-body decoder: finds where a chunked body ends without storing it.

use super::ParseError;

/// Where the chunked decoder is inside a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    /// Reading hex digits of a chunk size.
    Size { size: u64, digits: u8 },
    /// After the size: skipping an extension or whitespace up to LF.
    SizeLine { size: u64 },
    /// Inside chunk data.
    Data { left: u64 },
    /// Expecting the CR of the CRLF after chunk data.
    DataCr,
    /// Expecting the LF after chunk data.
    DataLf,
    /// At the start of a trailer line (after the last chunk).
    TrailerStart,
    /// Inside a trailer field line, up to LF.
    TrailerLine,
    /// Saw CR on an empty trailer line: LF ends the body.
    TrailerEndLf,
}

/// A streaming decoder that finds the end of a chunked body without storing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunked {
    state: ChunkState,
}

impl Default for Chunked {
    fn default() -> Self {
        Self::new()
    }
}

impl Chunked {
    /// A decoder at the start of a body.
    pub fn new() -> Self {
        Self {
            state: ChunkState::Size { size: 0, digits: 0 },
        }
    }

    /// Consumes bytes of the body. Returns how many bytes were used and whether the
    /// body ended there; bytes after the end belong to the next response.
    pub fn feed(&mut self, buf: &[u8]) -> Result<(usize, bool), ParseError> {
        let mut i = 0;
        while i < buf.len() {
            match self.state {
                ChunkState::Data { left } => {
                    let take = (buf.len() - i).min(usize::try_from(left).unwrap_or(usize::MAX));
                    i += take;
                    let left = left - take as u64;
                    self.state = if left == 0 {
                        ChunkState::DataCr
                    } else {
                        ChunkState::Data { left }
                    };
                    continue;
                }
                ChunkState::Size { size, digits } => {
                    let b = buf[i];
                    if let Some(d) = hex(b) {
                        if digits >= 16 {
                            return Err(ParseError::Chunk);
                        }
                        self.state = ChunkState::Size {
                            size: (size << 4) | u64::from(d),
                            digits: digits + 1,
                        };
                    } else if digits == 0 {
                        return Err(ParseError::Chunk);
                    } else if b == b'\n' {
                        self.state = Self::after_size(size);
                    } else if b == b'\r' || b == b';' || b == b' ' || b == b'\t' {
                        self.state = ChunkState::SizeLine { size };
                    } else {
                        return Err(ParseError::Chunk);
                    }
                }
                ChunkState::SizeLine { size } => {
                    if buf[i] == b'\n' {
                        self.state = Self::after_size(size);
                    }
                }
                ChunkState::DataCr => {
                    self.state = match buf[i] {
                        b'\r' => ChunkState::DataLf,
                        b'\n' => ChunkState::Size { size: 0, digits: 0 },
                        _ => return Err(ParseError::Chunk),
                    };
                }
                ChunkState::DataLf => {
                    if buf[i] != b'\n' {
                        return Err(ParseError::Chunk);
                    }
                    self.state = ChunkState::Size { size: 0, digits: 0 };
                }
                ChunkState::TrailerStart => {
                    self.state = match buf[i] {
                        b'\r' => ChunkState::TrailerEndLf,
                        b'\n' => {
                            *self = Self::new();
                            return Ok((i + 1, true));
                        }
                        _ => ChunkState::TrailerLine,
                    };
                }
                ChunkState::TrailerLine => {
                    if buf[i] == b'\n' {
                        self.state = ChunkState::TrailerStart;
                    }
                }
                ChunkState::TrailerEndLf => {
                    if buf[i] != b'\n' {
                        return Err(ParseError::Chunk);
                    }
                    *self = Self::new();
                    return Ok((i + 1, true));
                }
            }
            i += 1;
        }
        Ok((i, false))
    }

    fn after_size(size: u64) -> ChunkState {
        if size == 0 {
            ChunkState::TrailerStart
        } else {
            ChunkState::Data { left: size }
        }
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}
