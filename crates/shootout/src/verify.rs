//! Checks a target's answers before any load: status, headers, body, every image, and
//! keep-alive. A blocking client over std sockets: correctness, not speed, matters here.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use report::shootout::{Check, Verification};

use crate::suite::Scenario;

/// One parsed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// The server asked to close (or HTTP/1.0 without keep-alive).
    pub close: bool,
}

impl Response {
    /// The first header of that name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

const MAX_RESPONSE: usize = 1 << 20;

/// A connection that sends requests and reads whole responses.
pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
    deadline: Duration,
}

impl Client {
    /// Connects with a timeout that also bounds each response.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> std::io::Result<Client> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        Ok(Client {
            stream,
            buf: Vec::new(),
            deadline: timeout,
        })
    }

    /// Sends one request; `close` adds `Connection: close`.
    pub fn request(&mut self, method: &str, path: &str, close: bool) -> Result<Response, String> {
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: foxbench-verify\r\n{}\r\n",
            if close { "Connection: close\r\n" } else { "" }
        );
        self.stream
            .write_all(req.as_bytes())
            .map_err(|e| format!("cannot send the request: {e}"))?;
        self.read_response(method == "HEAD")
    }

    fn fill(&mut self, end: Instant) -> Result<usize, String> {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("no complete response within {:?}", self.deadline));
        }
        self.stream
            .set_read_timeout(Some(left))
            .map_err(|e| e.to_string())?;
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                if self.buf.len() > MAX_RESPONSE {
                    return Err("response larger than 1 MiB".into());
                }
                Ok(n)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                Err(format!("no complete response within {:?}", self.deadline))
            }
            Err(e) => Err(format!("read failed: {e}")),
        }
    }

    /// Reads one response (Content-Length, chunked or close-delimited framing).
    pub fn read_response(&mut self, head_request: bool) -> Result<Response, String> {
        let end = Instant::now() + self.deadline;
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut r = httparse::Response::new(&mut headers);
            match r.parse(&self.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let status = r.code.unwrap_or(0);
                    let version = r.version.unwrap_or(1);
                    let hs: Vec<(String, String)> = r
                        .headers
                        .iter()
                        .map(|h| {
                            (
                                h.name.to_string(),
                                String::from_utf8_lossy(h.value).trim().to_string(),
                            )
                        })
                        .collect();
                    let get = |n: &str| {
                        hs.iter()
                            .find(|(k, _)| k.eq_ignore_ascii_case(n))
                            .map(|(_, v)| v.to_ascii_lowercase())
                    };
                    let conn = get("connection").unwrap_or_default();
                    let close =
                        conn.contains("close") || (version == 0 && !conn.contains("keep-alive"));
                    self.buf.drain(..len);
                    if (100..200).contains(&status) {
                        continue;
                    }
                    let no_body = head_request || status == 204 || status == 304;
                    let body = if no_body {
                        Vec::new()
                    } else if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
                        let mut dec = load::Chunked::new();
                        let mut body = Vec::new();
                        loop {
                            let (used, done) = dec
                                .feed(&self.buf)
                                .map_err(|e| format!("bad chunked body: {e:?}"))?;
                            // The chunk framing stays in: body patterns see the raw body.
                            body.extend_from_slice(&self.buf[..used]);
                            self.buf.drain(..used);
                            if done {
                                break;
                            }
                            if self.fill(end)? == 0 {
                                return Err("connection closed inside a chunked body".into());
                            }
                        }
                        body
                    } else if let Some(n) = get("content-length") {
                        let n: usize =
                            n.parse().map_err(|_| format!("bad Content-Length {n:?}"))?;
                        if n > MAX_RESPONSE {
                            return Err(format!("Content-Length {n} is over 1 MiB"));
                        }
                        while self.buf.len() < n {
                            if self.fill(end)? == 0 {
                                return Err(format!(
                                    "connection closed after {} of {n} body bytes",
                                    self.buf.len()
                                ));
                            }
                        }
                        self.buf.drain(..n).collect()
                    } else {
                        while self.fill(end)? > 0 {}
                        std::mem::take(&mut self.buf)
                    };
                    return Ok(Response {
                        status,
                        headers: hs,
                        body,
                        close,
                    });
                }
                Ok(httparse::Status::Partial) => {
                    if self.fill(end)? == 0 {
                        return Err(if self.buf.is_empty() {
                            "connection closed without a response".into()
                        } else {
                            "connection closed inside the response head".into()
                        });
                    }
                }
                Err(e) => {
                    let shown: String =
                        String::from_utf8_lossy(&self.buf[..self.buf.len().min(40)])
                            .escape_debug()
                            .collect();
                    return Err(format!("malformed response ({e}): {shown:?}"));
                }
            }
        }
    }
}

fn check(checks: &mut Vec<Check>, name: &str, result: Result<(), String>) -> bool {
    let passed = result.is_ok();
    checks.push(Check {
        name: name.into(),
        passed,
        detail: result.err(),
    });
    passed
}

/// Checks one response against the scenario; returns the image number when Location
/// carries one.
fn judge(s: &Scenario, r: &Response) -> Result<Option<u64>, String> {
    if r.status != s.status {
        return Err(format!("status {} (expected {})", r.status, s.status));
    }
    let mut image = None;
    for (name, re) in &s.headers {
        let Some(v) = r.header(name) else {
            return Err(format!("no {name} header"));
        };
        let Some(caps) = re.captures(v) else {
            return Err(format!("{name}: {v:?} does not match {:?}", re.as_str()));
        };
        if s.all_images && name.eq_ignore_ascii_case("location") {
            image = caps.get(1).and_then(|m| m.as_str().parse().ok());
        }
    }
    if let Some(re) = &s.body {
        let text = String::from_utf8_lossy(&r.body);
        if !re.is_match(&text) {
            let shown: String = text.chars().take(60).collect();
            return Err(format!("body {shown:?} does not match {:?}", re.as_str()));
        }
    }
    Ok(image)
}

/// Verifies a target at `addr` for one scenario. `images` is N.
pub fn verify(addr: SocketAddr, s: &Scenario, images: u32, timeout: Duration) -> Verification {
    let mut checks = Vec::new();
    let mut seen = BTreeSet::new();
    let mut keepalive = None;
    // 1. One request on its own connection, with Connection: close.
    let first = Client::connect(addr, timeout)
        .map_err(|e| format!("cannot connect: {e}"))
        .and_then(|mut c| c.request(&s.method, &s.path, true));
    let ok = match &first {
        Ok(r) => check(
            &mut checks,
            "response",
            judge(s, r).map(|i| {
                seen.extend(i);
            }),
        ),
        Err(e) => check(&mut checks, "response", Err(e.clone())),
    };
    if ok {
        // 2. Keep-alive: several requests on one connection, each answered, none closing it.
        let probe = 20;
        let ka = (|| -> Result<(), String> {
            let mut c =
                Client::connect(addr, timeout).map_err(|e| format!("cannot connect: {e}"))?;
            for i in 0..probe {
                let r = c.request(&s.method, &s.path, false).map_err(|e| {
                    if i == 0 {
                        e
                    } else {
                        format!("request {} on the same connection: {e}", i + 1)
                    }
                })?;
                let image = judge(s, &r)?;
                seen.extend(image);
                if r.close {
                    return Err(format!(
                        "the server closed the connection after request {} (Connection: close)",
                        i + 1
                    ));
                }
            }
            Ok(())
        })();
        keepalive = Some(ka.is_ok());
        let required = s.keepalive;
        let passed = check(&mut checks, "keep-alive", ka);
        if !passed && !required {
            // Not needed by this scenario: recorded, not failed.
            if let Some(c) = checks.last_mut() {
                c.passed = true;
                c.detail = c.detail.take().map(|d| format!("not required: {d}"));
            }
        }
        // 3. Every image, over fresh or kept connections, bounded in count and time.
        if s.all_images {
            let want = u64::from(images);
            let limit = (want * 60).max(200);
            let end = Instant::now() + timeout.max(Duration::from_secs(10));
            let mut sent = 0;
            let mut conn: Option<Client> = None;
            let mut failure = None;
            while (seen.len() as u64) < want && sent < limit && Instant::now() < end {
                if conn.is_none() {
                    conn = match Client::connect(addr, timeout) {
                        Ok(c) => Some(c),
                        Err(e) => {
                            failure = Some(format!("cannot connect: {e}"));
                            break;
                        }
                    };
                }
                let c = conn.as_mut().expect("just set");
                sent += 1;
                match c.request(&s.method, &s.path, false) {
                    Ok(r) => {
                        match judge(s, &r) {
                            Ok(i) => seen.extend(i),
                            Err(e) => {
                                failure = Some(format!("response {sent}: {e}"));
                                break;
                            }
                        }
                        if r.close {
                            conn = None;
                        }
                    }
                    Err(e) => {
                        failure = Some(format!("response {sent}: {e}"));
                        break;
                    }
                }
            }
            let out_of_range: Vec<u64> = seen
                .iter()
                .copied()
                .filter(|&i| i == 0 || i > want)
                .collect();
            let res = if let Some(f) = failure {
                Err(f)
            } else if !out_of_range.is_empty() {
                Err(format!(
                    "image numbers outside 1..={want}: {out_of_range:?}"
                ))
            } else if (seen.len() as u64) < want {
                let missing: Vec<u64> = (1..=want).filter(|i| !seen.contains(i)).take(10).collect();
                Err(format!(
                    "{} of {want} images in {sent} requests; never saw {missing:?}",
                    seen.len()
                ))
            } else {
                Ok(())
            };
            check(&mut checks, "all images", res);
        }
    }
    // Keep-alive is reported on its own (`keepalive`): a target that closes connections
    // answers correctly, and only the keep-alive levels are excluded.
    let passed = checks.iter().all(|c| c.passed || c.name == "keep-alive");
    Verification {
        scenario: s.name.clone(),
        passed,
        checks,
        images_seen: s.all_images.then_some(seen.len() as u64),
        images_expected: s.all_images.then_some(u64::from(images)),
        keepalive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn scenario() -> Scenario {
        crate::suite::Suite::parse(crate::suite::DEFAULT_SUITE, "built-in")
            .unwrap()
            .scenarios[0]
            .clone()
    }

    /// A server thread that answers each connection with the given closure.
    fn serve(f: impl Fn(&mut TcpStream, usize) + Send + 'static) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for (i, s) in l.incoming().enumerate() {
                let Ok(mut s) = s else { continue };
                f(&mut s, i);
            }
        });
        addr
    }

    fn read_head(s: &mut TcpStream) -> bool {
        let mut buf = Vec::new();
        let mut b = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            match s.read(&mut b) {
                Ok(1) => buf.push(b[0]),
                _ => return false,
            }
        }
        true
    }

    #[test]
    fn a_correct_keepalive_server_passes() {
        let n = std::sync::atomic::AtomicU64::new(0);
        let addr = serve(move |s, _| {
            while read_head(s) {
                let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 3 + 1;
                let r = format!("HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-{i}.png\r\nContent-Length: 0\r\n\r\n");
                if s.write_all(r.as_bytes()).is_err() {
                    return;
                }
            }
        });
        let v = verify(addr, &scenario(), 3, Duration::from_secs(5));
        assert!(v.passed, "{v:?}");
        assert_eq!(v.keepalive, Some(true));
        assert_eq!(v.images_seen, Some(3));
    }

    #[test]
    fn missing_images_wrong_location_and_closing_servers_fail() {
        // Always image 1: the other two are never seen.
        let addr = serve(|s, _| {
            while read_head(s) {
                let _ = s.write_all(b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-1.png\r\nContent-Length: 0\r\n\r\n");
            }
        });
        let v = verify(addr, &scenario(), 3, Duration::from_secs(5));
        assert!(!v.passed);
        let c = v.checks.iter().find(|c| c.name == "all images").unwrap();
        assert!(
            c.detail.as_ref().unwrap().contains("never saw [2, 3]"),
            "{c:?}"
        );

        let addr = serve(|s, _| {
            if read_head(s) {
                let _ = s.write_all(b"HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\nContent-Length: 0\r\n\r\n");
            }
        });
        let v = verify(addr, &scenario(), 3, Duration::from_secs(5));
        assert!(
            !v.passed
                && v.checks[0]
                    .detail
                    .as_ref()
                    .unwrap()
                    .contains("does not match"),
            "{v:?}"
        );

        // One response per connection, then close: keep-alive fails, images still checked.
        let n = std::sync::atomic::AtomicU64::new(0);
        let addr = serve(move |s, _| {
            if read_head(s) {
                let i = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 + 1;
                let r = format!("HTTP/1.1 302 Found\r\nLocation: https://avatar.example/Renard-{i}.png\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
                let _ = s.write_all(r.as_bytes());
            }
        });
        let v = verify(addr, &scenario(), 2, Duration::from_secs(5));
        assert_eq!(v.keepalive, Some(false));
        assert!(
            v.passed,
            "answers are right; keep-alive is reported apart: {v:?}"
        );
        assert!(
            v.checks.iter().any(|c| c.name == "keep-alive" && !c.passed),
            "{v:?}"
        );
        assert!(
            v.checks.iter().any(|c| c.name == "all images" && c.passed),
            "{v:?}"
        );
    }

    #[test]
    fn garbage_and_silence_fail_with_a_reason() {
        let addr = serve(|s, _| {
            let _ = s.write_all(b"SSH-2.0-OpenSSH\r\n\r\n");
        });
        let v = verify(addr, &scenario(), 3, Duration::from_secs(2));
        assert!(
            !v.passed && v.checks[0].detail.as_ref().unwrap().contains("malformed"),
            "{v:?}"
        );
        let addr = serve(|s, _| {
            std::thread::sleep(Duration::from_secs(3));
            let _ = s.flush();
        });
        let v = verify(addr, &scenario(), 3, Duration::from_millis(300));
        assert!(
            !v.passed
                && v.checks[0]
                    .detail
                    .as_ref()
                    .unwrap()
                    .contains("no complete response"),
            "{v:?}"
        );
    }
}
