//! The little HTTP the dashboard speaks: one GET per connection, its path routed behind the
//! token. Request heads are parsed by `httparse`; nothing else of a request is read.

use std::io::Read as _;
use std::net::TcpStream;
use std::time::Instant;

/// The longest request head read.
const MAX_HEAD_BYTES: usize = 8 * 1024;

/// Where a path leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `/TOKEN/`: the page.
    Page,
    /// `/TOKEN/events`: the event stream.
    Events,
    /// `/TOKEN/result.json`: the final JSON, once the run is over.
    Json,
    /// Anything else, a wrong token first.
    NotFound,
}

/// Routes `path` (query ignored) for `token`; a wrong token is [`Route::NotFound`].
pub fn route(path: &str, token: &str) -> Route {
    let path = path.split(['?', '#']).next().unwrap_or("");
    let Some(rest) = path.strip_prefix('/').and_then(|p| p.strip_prefix(token)) else {
        return Route::NotFound;
    };
    match rest {
        "/" | "/index.html" => Route::Page,
        "/events" => Route::Events,
        "/result.json" => Route::Json,
        _ => Route::NotFound,
    }
}

/// The path of a GET request head, or None for anything else or a head too long or cut.
pub fn parse_path(head: &[u8]) -> Option<String> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(head) {
        Ok(httparse::Status::Complete(_)) if req.method == Some("GET") => {
            req.path.map(str::to_owned)
        }
        _ => None,
    }
}

/// Reads one request head from `stream` by `deadline` and returns its path. The deadline
/// holds for the whole head, not per read: a client trickling a byte at a time is cut off.
pub fn read_path(stream: &mut TcpStream, deadline: Instant) -> Option<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while buf.len() < MAX_HEAD_BYTES {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        stream.set_read_timeout(Some(left)).ok()?;
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
            return parse_path(&buf);
        }
    }
    None
}

/// A 200 response with `body`.
pub fn ok(content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A plain-text response of `code`.
pub fn status(code: u16, body: &str) -> String {
    let reason = match code {
        400 => "Bad Request",
        404 => "Not Found",
        503 => "Service Unavailable",
        _ => "Error",
    };
    format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests;
