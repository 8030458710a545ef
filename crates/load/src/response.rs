//! Response framing: where one HTTP/1.x response ends and the next begins.
//!
//! The head is parsed by httparse. The body is never stored: the decoder only counts
//! its way through Content-Length bodies and chunked encoding, so memory per connection
//! stays constant. The chunked decoder is hand-written because it runs on every byte of
//! every chunked body (the hot path) and must resume at any byte boundary.

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

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! head {
        ($bytes:expr, head=$h:expr, Err($e:expr)) => {
            assert_eq!(
                parse_head($bytes, $h),
                Err($e),
                "{:?}",
                String::from_utf8_lossy($bytes)
            )
        };
        ($bytes:expr, head=$h:expr, None) => {
            assert_eq!(
                parse_head($bytes, $h),
                Ok(None),
                "{:?}",
                String::from_utf8_lossy($bytes)
            )
        };
        ($bytes:expr, head=$h:expr, $status:expr, $framing:expr, close=$close:expr) => {{
            let got = parse_head($bytes, $h)
                .unwrap_or_else(|e| panic!("{:?}: {e:?}", String::from_utf8_lossy($bytes)))
                .unwrap_or_else(|| panic!("{:?}: partial", String::from_utf8_lossy($bytes)));
            assert_eq!(
                (got.status, got.framing, got.close),
                ($status, $framing, $close),
                "{:?}",
                String::from_utf8_lossy($bytes)
            );
        }};
    }

    #[test]
    fn heads() {
        use Framing::*;
        head!(
            b"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
            head = false,
            302,
            Empty,
            close = false
        );
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            head = false,
            200,
            Length(5),
            close = false
        );
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
            head = true,
            200,
            Empty,
            close = false
        );
        head!(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            head = false,
            200,
            Chunked,
            close = false
        );
        head!(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 9\r\n\r\n",
            head = false,
            200,
            Chunked,
            close = true
        );
        head!(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            head = false,
            200,
            UntilClose,
            close = true
        );
        head!(
            b"HTTP/1.0 200 OK\r\n\r\n",
            head = false,
            200,
            UntilClose,
            close = true
        );
        head!(
            b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n",
            head = false,
            200,
            Length(2),
            close = true
        );
        head!(
            b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\n",
            head = false,
            200,
            Length(2),
            close = false
        );
        head!(
            b"HTTP/1.1 200 OK\r\nConnection: foo, close\r\nContent-Length: 2\r\n\r\n",
            head = false,
            200,
            Length(2),
            close = true
        );
        head!(
            b"HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n",
            head = false,
            204,
            Empty,
            close = false
        );
        head!(
            b"HTTP/1.1 304 Not Modified\r\n\r\n",
            head = false,
            304,
            Empty,
            close = false
        );
        head!(
            b"HTTP/1.1 100 Continue\r\n\r\n",
            head = false,
            100,
            Empty,
            close = false
        );
        head!(
            b"HTTP/1.1 500 Oops\r\ncontent-length:  3 \r\n\r\n",
            head = false,
            500,
            Length(3),
            close = false
        );
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
            head = false,
            200,
            Length(3),
            close = false
        );
        head!(
            b"HTTP/1.1 302 Found\r\nLocation: /x\r\n",
            head = false,
            None
        );
        head!(b"HTTP/1.1 302", head = false, None);
        head!(b"", head = false, None);
        head!(b"garbage\r\n\r\n", head = false, Err(ParseError::Head));
        head!(
            b"HTTP/1.1 2OO OK\r\n\r\n",
            head = false,
            Err(ParseError::Head)
        );
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            head = false,
            Err(ParseError::ContentLength)
        );
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            head = false,
            Err(ParseError::ContentLength)
        );
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
            head = false,
            Err(ParseError::ContentLength)
        );
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            head = false,
            Err(ParseError::ContentLength)
        );
        head!(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
            head = false,
            Err(ParseError::Upgrade)
        );
    }

    /// A coding after chunked makes the body run to the close, and Content-Length must not
    /// cut it short: the Framer used to count 3 bytes and read the rest as the next head.
    #[test]
    fn te_chunked_not_last_reads_to_close() {
        use Framing::*;
        head!(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\nContent-Length: 3\r\n\r\n",
            head = false,
            200,
            UntilClose,
            close = true
        );
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: gzip\r\n\r\n",
            head = false,
            200,
            UntilClose,
            close = true
        );
        // Repeated fields form one list: chunked then gzip is not chunked.
        head!(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n",
            head = false,
            200,
            UntilClose,
            close = true
        );
        let mut f = Framer::new();
        let stream =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabcdef";
        assert_eq!(f.next(stream, false), Ok(Step::Body));
        assert_eq!(f.eof(), Some(200));
    }

    /// Content-Length beside Transfer-Encoding: chunked may be a smuggling attempt: the body
    /// is read as chunked, but the connection used to be reused after it.
    #[test]
    fn te_with_content_length_is_not_reused() {
        use Framing::*;
        head!(
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n",
            head = false,
            200,
            Chunked,
            close = true
        );
    }

    /// An HTTP/1.0 response with Transfer-Encoding has faulty framing (RFC 9112 6.1): read it
    /// by Transfer-Encoding, then close, even with Connection: keep-alive.
    #[test]
    fn te_in_http10_is_not_reused() {
        use Framing::*;
        head!(
            b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
            head = false,
            200,
            Chunked,
            close = true
        );
    }

    /// Empty list elements do not count (RFC 9110 5.6.1): "chunked," used to read as a
    /// final empty coding, so a chunked body was read to the close.
    #[test]
    fn te_empty_list_elements_are_ignored() {
        use Framing::*;
        for te in [&b"chunked,"[..], b"chunked , ", b" , chunked"] {
            let mut h = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: ".to_vec();
            h.extend_from_slice(te);
            h.extend_from_slice(b"\r\n\r\n");
            head!(&h, head = false, 200, Chunked, close = false);
        }
    }

    #[test]
    fn head_too_large() {
        let mut big = b"HTTP/1.1 200 OK\r\n".to_vec();
        while big.len() <= MAX_HEAD {
            big.extend_from_slice(b"X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        assert!(matches!(
            parse_head(&big, false),
            Err(ParseError::HeadTooLarge) | Err(ParseError::Head)
        ));
    }

    /// Feeds `body` to a fresh decoder split at every pair of boundaries; expects the
    /// body to end exactly at `end`.
    #[track_caller]
    fn chunked_ends_at(body: &[u8], end: usize) {
        for split in 0..=body.len() {
            let mut d = Chunked::new();
            let (a, done) = d.feed(&body[..split]).unwrap();
            if done {
                assert_eq!(a, end, "split {split}");
                continue;
            }
            assert_eq!(a, split);
            let (b, done) = d.feed(&body[split..]).unwrap();
            assert!(done, "split {split}: not done");
            assert_eq!(split + b, end, "split {split}");
        }
        // One byte at a time.
        let mut d = Chunked::new();
        for (i, b) in body.iter().enumerate() {
            let (n, done) = d.feed(std::slice::from_ref(b)).unwrap();
            assert_eq!(n, 1);
            if done {
                assert_eq!(i + 1, end);
                return;
            }
        }
        panic!("never done");
    }

    #[test]
    fn chunked_bodies() {
        chunked_ends_at(b"5\r\nhello\r\n0\r\n\r\n", 15);
        chunked_ends_at(b"5\r\nhello\r\n0\r\n\r\nHTTP/1.1", 15);
        chunked_ends_at(b"A;name=value\r\n0123456789\r\n0\r\n\r\n", 31);
        chunked_ends_at(
            b"3\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\nOther: y\r\n\r\n",
            42,
        );
        chunked_ends_at(b"3\nabc\n0\n\n", 9);
        chunked_ends_at(b"0\r\n\r\n", 5);
        chunked_ends_at(
            b"ff\r\n"
                .iter()
                .chain([b'x'; 255].iter())
                .chain(b"\r\n0\r\n\r\n")
                .copied()
                .collect::<Vec<_>>()
                .as_slice(),
            4 + 255 + 7,
        );
    }

    /// Drives a framer over `stream` delivered in pieces cut at `cuts`, the way the worker
    /// does: a partial head is kept and presented again with the next piece.
    fn frame_all(
        stream: &[u8],
        cuts: &[usize],
        head_request: bool,
    ) -> Result<Vec<u16>, ParseError> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        let mut pending: Vec<u8> = Vec::new();
        let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(stream.len())).collect();
        bounds.push(stream.len());
        bounds.sort_unstable();
        let mut prev = 0;
        for b in bounds {
            pending.extend_from_slice(&stream[prev..b]);
            prev = b;
            let mut i = 0;
            while i < pending.len() {
                match f.next(&pending[i..], head_request)? {
                    Step::Complete { status, used, .. } => {
                        assert!(used > 0 && i + used <= pending.len());
                        out.push(status);
                        i += used;
                    }
                    Step::Body => i = pending.len(),
                    Step::PartialHead { used } => {
                        i += used;
                        break;
                    }
                }
            }
            pending.drain(..i);
        }
        if let Some(status) = f.eof() {
            out.push(status);
        }
        Ok(out)
    }

    fn response_strategy() -> impl proptest::strategy::Strategy<Value = (Vec<u8>, u16)> {
        use proptest::prelude::*;
        prop_oneof![
            // 204 and 304 never have a body; they get their own arm.
            (
                (200u16..600).prop_filter("no body", |s| *s != 204 && *s != 304),
                proptest::collection::vec(any::<u8>(), 0..300)
            )
                .prop_map(|(st, body)| {
                    let mut r =
                        format!("HTTP/1.1 {st} X\r\nContent-Length: {}\r\n\r\n", body.len())
                            .into_bytes();
                    r.extend_from_slice(&body);
                    (r, st)
                }),
            (proptest::collection::vec(1usize..70, 0..5), any::<bool>()).prop_map(
                |(chunks, trailer)| {
                    let mut r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                    for n in chunks {
                        r.extend_from_slice(format!("{n:x};e=1\r\n").as_bytes());
                        r.extend(std::iter::repeat_n(b'z', n));
                        r.extend_from_slice(b"\r\n");
                    }
                    r.extend_from_slice(b"0\r\n");
                    if trailer {
                        r.extend_from_slice(b"T: v\r\n");
                    }
                    r.extend_from_slice(b"\r\n");
                    (r, 200)
                }
            ),
            Just((
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n".to_vec(),
                204
            )),
            Just((
                b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n".to_vec(),
                304
            )),
        ]
    }

    proptest::proptest! {
        #[test]
        fn framer_finds_every_response_wherever_reads_split(
            responses in proptest::collection::vec(response_strategy(), 1..8),
            cuts in proptest::collection::vec(0usize..4000, 0..12),
            close_delimited_last in proptest::bool::ANY,
        ) {
            let mut stream = Vec::new();
            let mut want = Vec::new();
            for (bytes, status) in &responses {
                stream.extend_from_slice(bytes);
                want.push(*status);
            }
            if close_delimited_last {
                stream.extend_from_slice(b"HTTP/1.0 203 Fine\r\n\r\nto the end");
                want.push(203);
            }
            proptest::prop_assert_eq!(frame_all(&stream, &cuts, false).unwrap(), want);
        }

        #[test]
        fn framer_never_panics_on_garbage(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600),
            cuts in proptest::collection::vec(0usize..600, 0..6),
            head in proptest::bool::ANY,
        ) {
            let _ = frame_all(&bytes, &cuts, head);
            let mut with_head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            with_head.extend_from_slice(&bytes);
            let _ = frame_all(&with_head, &cuts, head);
        }
    }

    #[test]
    fn chunked_errors() {
        for bad in [
            &b"x\r\n"[..],
            b"\r\n",
            b"5\r\nhelloX",
            b"11111111111111111\r\n",
            b"5\r\nhello\rX",
            b"0\r\n\rX",
        ] {
            assert_eq!(
                Chunked::new().feed(bad).map(|_| ()),
                Err(ParseError::Chunk),
                "{bad:?}"
            );
        }
    }
}
