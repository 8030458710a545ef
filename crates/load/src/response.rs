//! Response framing: where one HTTP/1.x response ends and the next begins.
//!
//! The head is parsed by httparse. The body is never stored: the decoder only counts
//! its way through Content-Length bodies and chunked encoding, so memory per connection
//! stays constant. The chunked decoder is hand-written because it runs on every byte of
//! every chunked body (the hot path) and must resume at any byte boundary.

mod chunked;
pub use chunked::Chunked;

/// Why a response could not be framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// httparse rejected the head (bad status line, bad header, ...).
    Head,
    /// The head is larger than [`MAX_HEAD`] without ending.
    HeadTooLarge,
    /// Content-Length is not a number, or appears twice with different values.
    ContentLength,
    /// A chunk-size line is not hexadecimal, or overflows.
    Chunk,
    /// The server switched protocols (101), which a load test cannot follow.
    Upgrade,
}

/// The largest response head accepted before the response is called malformed.
pub const MAX_HEAD: usize = 64 * 1024;

/// How many headers a response may have.
const MAX_HEADERS: usize = 96;

/// How the body of a response is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (HEAD, 1xx, 204, 304, or Content-Length: 0).
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// Transfer-Encoding: chunked, with optional trailers.
    Chunked,
    /// Everything until the server closes the connection (HTTP/1.0 style).
    UntilClose,
}

/// What the head of a response says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Status code.
    pub status: u16,
    /// Bytes the head occupies, including the blank line.
    pub len: usize,
    /// How the body is framed.
    pub framing: Framing,
    /// The server will close after this response.
    pub close: bool,
    /// An interim 1xx response: a final response for the same request follows.
    pub interim: bool,
}

/// Parses a response head at the start of `buf`. `Ok(None)` means more bytes are needed.
pub fn parse_head(buf: &[u8], head_request: bool) -> Result<Option<Head>, ParseError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > MAX_HEAD {
                Err(ParseError::HeadTooLarge)
            } else {
                Ok(None)
            };
        }
        Err(_) => return Err(ParseError::Head),
    };
    let status = resp.code.ok_or(ParseError::Head)?;
    let http10 = resp.version == Some(0);
    let mut content_length: Option<u64> = None;
    // Transfer-Encoding is present, and whether its final coding is chunked.
    let mut transfer_encoding = false;
    let mut chunked = false;
    let mut close = http10;
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_decimal(h.value).ok_or(ParseError::ContentLength)?;
            if content_length.is_some_and(|old| old != n) {
                return Err(ParseError::ContentLength);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Only the final coding of the whole list, over repeated fields, decides
            // whether the body is chunked (RFC 9112 6.3); empty elements do not count
            // (RFC 9110 5.6.1).
            transfer_encoding = true;
            if let Some(last) = last_token(h.value) {
                chunked = last.eq_ignore_ascii_case(b"chunked");
            }
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = trim(token);
                if token.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    close = false;
                }
            }
        }
    }
    if status == 101 {
        return Err(ParseError::Upgrade);
    }
    let interim = (100..200).contains(&status);
    let framing = if head_request || interim || status == 204 || status == 304 {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if transfer_encoding {
        // A coding other than chunked last: only the close ends the body, whatever
        // Content-Length says (RFC 9112 6.3, rule 4).
        Framing::UntilClose
    } else if let Some(n) = content_length {
        if n == 0 {
            Framing::Empty
        } else {
            Framing::Length(n)
        }
    } else {
        Framing::UntilClose
    };
    // Transfer-Encoding with Content-Length may be smuggling, and in HTTP/1.0 it is faulty
    // framing: the body is read by Transfer-Encoding, then the connection is not reused
    // (RFC 9112 6.1 and 6.3, rule 3).
    let suspect = transfer_encoding && (content_length.is_some() || http10);
    Ok(Some(Head {
        status,
        len,
        framing,
        close: close || suspect || framing == Framing::UntilClose,
        interim,
    }))
}

fn parse_decimal(v: &[u8]) -> Option<u64> {
    let v = trim(v);
    if v.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &b in v {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

fn trim(v: &[u8]) -> &[u8] {
    let start = v
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &v[start..end]
}

/// The last non-empty element of a comma-separated field value.
fn last_token(v: &[u8]) -> Option<&[u8]> {
    v.rsplit(|&b| b == b',').map(trim).find(|t| !t.is_empty())
}

/// Where a [`Framer`] is in the response stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for a response head.
    Head,
    /// Counting down a Content-Length body.
    Length { left: u64, status: u16, close: bool },
    /// Inside a chunked body.
    Chunked {
        dec: Chunked,
        status: u16,
        close: bool,
    },
    /// Reading until the server closes.
    UntilClose { status: u16 },
}

/// What [`Framer::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A response ended after `used` bytes of the input.
    Complete {
        /// Its status code.
        status: u16,
        /// The server will close the connection after it.
        close: bool,
        /// Bytes of the input consumed up to its end.
        used: usize,
    },
    /// The input ran out inside a body: all of it was consumed.
    Body,
    /// The input ran out inside a head. Only `used` bytes (skipped 1xx heads) were
    /// consumed: the caller must present the rest again, followed by more.
    PartialHead {
        /// Bytes consumed before the partial head.
        used: usize,
    },
}

/// Finds where responses end in a byte stream without storing their bodies.
///
/// One per connection. Heads are parsed by httparse; bodies are counted through
/// (Content-Length), decoded incrementally (chunked) or run to the close (HTTP/1.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framer {
    state: State,
}

impl Default for Framer {
    fn default() -> Self {
        Self::new()
    }
}

impl Framer {
    /// A framer at the start of a response.
    pub fn new() -> Self {
        Self { state: State::Head }
    }

    /// True between responses (nothing of the next one seen yet).
    pub fn between_responses(&self) -> bool {
        self.state == State::Head
    }

    /// Consumes `data` up to the end of the next response, or all of it.
    ///
    /// Interim (1xx) responses are skipped. `head_request` means the request was HEAD, so
    /// the response has no body whatever its headers say.
    pub fn next(&mut self, data: &[u8], head_request: bool) -> Result<Step, ParseError> {
        let mut i = 0;
        loop {
            match &mut self.state {
                State::Head => {
                    let Some(h) = parse_head(&data[i..], head_request)? else {
                        return Ok(Step::PartialHead { used: i });
                    };
                    i += h.len;
                    if h.interim {
                        continue;
                    }
                    self.state = match h.framing {
                        Framing::Empty => {
                            return Ok(Step::Complete {
                                status: h.status,
                                close: h.close,
                                used: i,
                            })
                        }
                        Framing::Length(left) => State::Length {
                            left,
                            status: h.status,
                            close: h.close,
                        },
                        Framing::Chunked => State::Chunked {
                            dec: Chunked::new(),
                            status: h.status,
                            close: h.close,
                        },
                        Framing::UntilClose => State::UntilClose { status: h.status },
                    };
                }
                State::Length {
                    left,
                    status,
                    close,
                } => {
                    let take = (data.len() - i).min(usize::try_from(*left).unwrap_or(usize::MAX));
                    i += take;
                    *left -= take as u64;
                    if *left > 0 {
                        return Ok(Step::Body);
                    }
                    let done = Step::Complete {
                        status: *status,
                        close: *close,
                        used: i,
                    };
                    self.state = State::Head;
                    return Ok(done);
                }
                State::Chunked { dec, status, close } => {
                    let (n, end) = dec.feed(&data[i..])?;
                    i += n;
                    if !end {
                        return Ok(Step::Body);
                    }
                    let done = Step::Complete {
                        status: *status,
                        close: *close,
                        used: i,
                    };
                    self.state = State::Head;
                    return Ok(done);
                }
                State::UntilClose { .. } => return Ok(Step::Body),
            }
        }
    }

    /// The connection reached EOF: returns the status of a close-delimited response that
    /// this completes, if one was in progress. The framer is reset either way.
    pub fn eof(&mut self) -> Option<u16> {
        let status = match self.state {
            State::UntilClose { status } => Some(status),
            _ => None,
        };
        self.state = State::Head;
        status
    }
}

#[cfg(test)]
mod tests;
