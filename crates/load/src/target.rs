//! The target of a run: its URL, the address it resolves to, and the requests sent to it.

use std::net::{SocketAddr, ToSocketAddrs};

use crate::template::{Template, TemplateError};

/// Stands in for a `{...}` random part while the URL parser runs: unreserved characters
/// only, so it passes through path and query untouched.
const MARK: &str = "~fxb";

/// A URL that cannot be load-tested, with a message saying how to fix it.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TargetError {
    /// The URL did not parse.
    #[error("invalid URL {url:?}: {reason}; expected e.g. http://127.0.0.1:8080/")]
    Url {
        /// The URL as given.
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// The host name did not resolve.
    #[error("cannot resolve host {host:?}: {reason}")]
    Resolve {
        /// The host name.
        host: String,
        /// Why.
        reason: String,
    },
    /// A header given with -H is not `Name: value`.
    #[error("invalid header {0:?}: expected \"Name: value\"")]
    Header(String),
    /// The method is not an HTTP token.
    #[error("invalid method {0:?}: expected a token such as GET, POST or HEAD")]
    Method(String),
    /// A random part of the URL is malformed.
    #[error("invalid URL template: {0}")]
    Template(#[from] TemplateError),
    /// A random part stands outside the path and query.
    #[error(
        "invalid URL {url:?}: random parts such as {{hex:6}} may only stand in the path and query"
    )]
    TemplatePlace {
        /// The URL as given.
        url: String,
    },
}

/// How a target is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// HTTP/1.1 over TCP.
    Http,
    /// HTTP/1.1 over TLS.
    Https,
}

impl Scheme {
    /// The port a URL of this scheme means when it names none.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// Where requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    /// http or https.
    pub scheme: Scheme,
    /// The host as the URL names it, without brackets: the TLS server name.
    pub host: String,
    /// The address the host resolved to (resolved once, at start).
    pub addr: SocketAddr,
    /// The value of the Host header: host, plus the port when it is not 80.
    pub host_header: String,
    /// Path and query, at least "/", with any random parts (`{hex:6}`) as written.
    pub path: String,
}

/// Replaces each `{...}` of `url` with a marker; returns the marked URL and the parts.
fn protect(url: &str) -> Result<(String, Vec<String>), TargetError> {
    if url.contains(MARK) {
        return Err(TargetError::Url {
            url: url.to_string(),
            reason: format!("it contains {MARK:?}, which foxbench reserves"),
        });
    }
    // Validates the template syntax, with the column of any mistake.
    Template::parse(url)?;
    let mut marked = String::with_capacity(url.len());
    let mut parts = Vec::new();
    let mut rest = url;
    while let Some(open) = rest.find('{') {
        if rest[open..].starts_with("{{") {
            marked.push_str(&rest[..open + 2]);
            rest = &rest[open + 2..];
            continue;
        }
        let close = open + rest[open..].find('}').expect("validated above");
        marked.push_str(&rest[..open]);
        marked.push_str(&format!("{MARK}{}~", parts.len()));
        parts.push(rest[open..=close].to_string());
        rest = &rest[close + 1..];
    }
    marked.push_str(rest);
    Ok((marked, parts))
}

impl Target {
    /// Parses an http:// URL and resolves its host once. Random parts such as `{hex:6}`
    /// may stand in the path and query; they stay in [`Target::path`] as written.
    pub fn parse(url: &str) -> Result<Target, TargetError> {
        let (marked, parts) = protect(url)?;
        let mut target = Self::parse_plain(url, &marked)?;
        for (i, part) in parts.iter().enumerate().rev() {
            let mark = format!("{MARK}{i}~");
            if !target.path.contains(&mark) {
                return Err(TargetError::TemplatePlace {
                    url: url.to_string(),
                });
            }
            target.path = target.path.replacen(&mark, part, 1);
        }
        Ok(target)
    }

    fn parse_plain(url: &str, marked: &str) -> Result<Target, TargetError> {
        let parsed = url::Url::parse(marked).map_err(|e| TargetError::Url {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        let scheme = match parsed.scheme() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => {
                return Err(TargetError::Url {
                    url: url.to_string(),
                    reason: format!("scheme {other:?} is not http or https"),
                })
            }
        };
        let host = parsed.host().ok_or_else(|| TargetError::Url {
            url: url.to_string(),
            reason: "no host".into(),
        })?;
        if matches!(host, url::Host::Domain(name) if name.contains(MARK)) {
            return Err(TargetError::TemplatePlace {
                url: url.to_string(),
            });
        }
        let port = parsed.port().unwrap_or(scheme.default_port());
        let addr = match host {
            url::Host::Ipv4(ip) => SocketAddr::from((ip, port)),
            url::Host::Ipv6(ip) => SocketAddr::from((ip, port)),
            url::Host::Domain(name) => (name, port)
                .to_socket_addrs()
                .map_err(|e| TargetError::Resolve {
                    host: name.to_string(),
                    reason: e.to_string(),
                })?
                // Prefer IPv4, as curl's happy eyeballs usually ends up doing on loopback.
                .min_by_key(|a| a.is_ipv6())
                .ok_or_else(|| TargetError::Resolve {
                    host: name.to_string(),
                    reason: "no addresses".into(),
                })?,
        };
        let name = match &host {
            url::Host::Ipv6(ip) => ip.to_string(),
            other => other.to_string(),
        };
        let host_str = match host {
            url::Host::Ipv6(ip) => format!("[{ip}]"),
            other => other.to_string(),
        };
        let host_header = if port == scheme.default_port() {
            host_str
        } else {
            format!("{host_str}:{port}")
        };
        let mut path = parsed.path().to_string();
        if path.is_empty() {
            path.push('/');
        }
        if let Some(q) = parsed.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok(Target {
            url: url.to_string(),
            scheme,
            host: name,
            addr,
            host_header,
            path,
        })
    }
}

/// One request to send, before it is encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestSpec {
    /// The method, e.g. GET.
    pub method: String,
    /// Path and query, possibly with random parts such as `{hex:6}` (see [`Template`]).
    pub path: String,
    /// Extra headers as (name, value).
    pub headers: Vec<(String, String)>,
    /// Extra headers whose values may hold random parts (`{hex:16}`), filled per request
    /// like the path's; sent after `headers`.
    pub random_headers: Vec<(String, String)>,
    /// The body, possibly empty.
    pub body: Vec<u8>,
    /// Content-Type for the body (ab's -T).
    pub content_type: Option<String>,
}

impl Default for RequestSpec {
    fn default() -> Self {
        Self {
            method: "GET".into(),
            path: "/".into(),
            headers: Vec::new(),
            random_headers: Vec::new(),
            body: Vec::new(),
            content_type: None,
        }
    }
}

/// Parses a `Name: value` header argument.
pub fn parse_header(arg: &str) -> Result<(String, String), TargetError> {
    let (name, value) = arg
        .split_once(':')
        .ok_or_else(|| TargetError::Header(arg.to_string()))?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(is_tchar) || value.contains(['\r', '\n']) {
        return Err(TargetError::Header(arg.to_string()));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl RequestSpec {
    /// True for HEAD, whose responses carry no body.
    pub fn is_head(&self) -> bool {
        self.method.eq_ignore_ascii_case("HEAD")
    }

    /// A GET of the target's own path.
    pub fn get(target: &Target) -> Self {
        Self {
            path: target.path.clone(),
            ..Self::default()
        }
    }

    /// The headers foxbench adds that the user did not give, in order: Host, User-Agent,
    /// Accept, Connection (with `close`), Content-Type and Content-Length. HTTP/1.1 and
    /// HTTP/2 ([`crate::h2`]) encode the same list.
    pub(crate) fn default_headers(
        &self,
        target: &Target,
        close: bool,
    ) -> Vec<(&'static str, String)> {
        let has = |n: &str| {
            self.headers
                .iter()
                .chain(&self.random_headers)
                .any(|(k, _)| k.eq_ignore_ascii_case(n))
        };
        let mut out = Vec::new();
        if !has("host") {
            out.push(("Host", target.host_header.clone()));
        }
        if !has("user-agent") {
            out.push((
                "User-Agent",
                concat!("foxbench/", env!("CARGO_PKG_VERSION")).to_string(),
            ));
        }
        if !has("accept") {
            out.push(("Accept", "*/*".to_string()));
        }
        if close && !has("connection") {
            out.push(("Connection", "close".to_string()));
        }
        if let Some(ct) = &self.content_type {
            if !has("content-type") {
                out.push(("Content-Type", ct.clone()));
            }
        }
        if (!self.body.is_empty() || !matches!(self.method.as_str(), "GET" | "HEAD"))
            && !has("content-length")
        {
            out.push(("Content-Length", self.body.len().to_string()));
        }
        out
    }

    /// Checks the method and path, and parses the path's template.
    pub(crate) fn checked_path(&self) -> Result<Template, TargetError> {
        if self.method.is_empty() || !self.method.bytes().all(is_tchar) {
            return Err(TargetError::Method(self.method.clone()));
        }
        if !self.path.starts_with('/')
            || self
                .path
                .bytes()
                .any(|b| b.is_ascii_whitespace() || b.is_ascii_control())
        {
            return Err(TargetError::Url {
                url: self.path.clone(),
                reason:
                    "a request path must start with '/' and hold no spaces or control characters"
                        .into(),
            });
        }
        Ok(Template::parse(&self.path)?)
    }

    /// Checks a random header's name and value.
    pub(crate) fn checked_random_header(k: &str, v: &str) -> Result<Template, TargetError> {
        if k.is_empty() || !k.bytes().all(is_tchar) || v.contains(['\r', '\n']) {
            return Err(TargetError::Header(format!("{k}: {v}")));
        }
        Ok(Template::parse(v)?)
    }

    /// Encodes the request once, as sent on the wire: literal bytes, and the random parts
    /// of its path as holes filled per request.
    ///
    /// With `close`, the request asks the server to close the connection afterwards.
    /// Headers given by the user replace the defaults of the same name.
    pub fn encode(&self, target: &Target, close: bool) -> Result<Template, TargetError> {
        let path = self.checked_path()?;
        let mut template = Template::literal(self.method.as_bytes());
        template.push_literal(b" ");
        template.append(path);
        let mut out = Vec::with_capacity(128 + self.body.len());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        let mut push = |k: &str, v: &str| {
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v.as_bytes());
            out.extend_from_slice(b"\r\n");
        };
        for (k, v) in self.default_headers(target, close) {
            push(k, &v);
        }
        for (k, v) in &self.headers {
            push(k, v);
        }
        template.push_literal(&out);
        out.clear();
        for (k, v) in &self.random_headers {
            let value = Self::checked_random_header(k, v)?;
            template.push_literal(k.as_bytes());
            template.push_literal(b": ");
            template.append(value);
            template.push_literal(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.body);
        template.push_literal(&out);
        Ok(template)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::Rng;

    fn wire(spec: &RequestSpec, t: &Target, close: bool) -> Vec<u8> {
        let mut out = Vec::new();
        spec.encode(t, close)
            .unwrap()
            .fill(&mut Rng::new(0, 0), &mut out);
        out
    }

    #[test]
    fn parses_urls() {
        let t = Target::parse("http://127.0.0.1:8080/a/b?x=1").unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(t.host_header, "127.0.0.1:8080");
        assert_eq!(t.path, "/a/b?x=1");
        let t = Target::parse("http://[::1]:9000").unwrap();
        assert_eq!(t.addr, "[::1]:9000".parse().unwrap());
        assert_eq!(t.host_header, "[::1]:9000");
        assert_eq!(t.path, "/");
        let t = Target::parse("http://localhost/").unwrap();
        assert_eq!(t.addr.port(), 80);
        assert!(t.addr.ip().is_loopback());
        assert_eq!(t.host_header, "localhost");
    }

    #[test]
    fn https_urls_default_to_443_and_keep_the_server_name() {
        let t = Target::parse("https://127.0.0.1/").unwrap();
        assert_eq!(t.scheme, Scheme::Https);
        assert_eq!(t.addr.port(), 443);
        assert_eq!(t.host_header, "127.0.0.1");
        assert_eq!(t.host, "127.0.0.1");
        let t = Target::parse("https://localhost:8443/x").unwrap();
        assert_eq!(t.host_header, "localhost:8443");
        assert_eq!(t.host, "localhost");
        let t = Target::parse("https://[::1]:8443/").unwrap();
        assert_eq!(
            (t.host.as_str(), t.host_header.as_str()),
            ("::1", "[::1]:8443")
        );
        let t = Target::parse("http://127.0.0.1:443/").unwrap();
        assert_eq!(t.scheme, Scheme::Http);
        assert_eq!(
            t.host_header, "127.0.0.1:443",
            "443 is only default for https"
        );
    }

    #[test]
    fn rejects_bad_urls() {
        for bad in [
            "",
            "127.0.0.1:80",
            "ftp://x/",
            "http://",
            "http://[::1",
            "http://a b/",
            "http://h:99999/",
        ] {
            let e = Target::parse(bad).unwrap_err();
            assert!(!e.to_string().contains('\n'), "{e}");
        }
        assert!(matches!(
            Target::parse("http://no-such-host.invalid/"),
            Err(TargetError::Resolve { .. })
        ));
    }

    #[test]
    fn encodes_once_with_defaults_and_overrides() {
        let t = Target::parse("http://127.0.0.1:81/p").unwrap();
        let spec = RequestSpec {
            method: "POST".into(),
            path: t.path.clone(),
            headers: vec![
                parse_header("X-A: 1").unwrap(),
                parse_header("user-agent: me").unwrap(),
            ],
            body: b"hi".to_vec(),
            content_type: Some("text/plain".into()),
            ..RequestSpec::default()
        };
        let raw = String::from_utf8(wire(&spec, &t, true)).unwrap();
        assert!(
            raw.starts_with("POST /p HTTP/1.1\r\nHost: 127.0.0.1:81\r\n"),
            "{raw}"
        );
        assert!(raw.contains("Connection: close\r\n"));
        assert!(raw.contains("Content-Type: text/plain\r\n"));
        assert!(raw.contains("Content-Length: 2\r\n"));
        assert!(raw.contains("user-agent: me\r\n"));
        assert!(!raw.contains("User-Agent: foxbench"));
        assert!(raw.ends_with("\r\n\r\nhi"));
        let get = wire(&RequestSpec::get(&t), &t, false);
        assert!(!String::from_utf8(get).unwrap().contains("Content-Length"));
    }

    /// A scenario's `X-Request-Id = "{hex:16}"`: a new id per request, after the literal
    /// headers; a bad name or an unparsable template is refused at encode time.
    #[test]
    fn random_headers_are_filled_per_request() {
        let t = Target::parse("http://127.0.0.1:81/").unwrap();
        let spec = RequestSpec {
            headers: vec![("X-A".into(), "1".into())],
            random_headers: vec![("X-Request-Id".into(), "id-{hex:16}".into())],
            ..RequestSpec::get(&t)
        };
        let template = spec.encode(&t, false).unwrap();
        let mut rng = Rng::new(7, 0);
        let mut ids = Vec::new();
        for _ in 0..2 {
            let mut out = Vec::new();
            template.fill(&mut rng, &mut out);
            let raw = String::from_utf8(out).unwrap();
            assert!(raw.contains("X-A: 1\r\nX-Request-Id: id-"), "{raw}");
            assert!(raw.ends_with("\r\n\r\n"), "{raw}");
            let id = raw.split("X-Request-Id: id-").nth(1).unwrap()[..16].to_string();
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
            ids.push(id);
        }
        assert_ne!(ids[0], ids[1], "a new id per request");
        for (k, v) in [("X Y", "1"), ("X", "{hex:99}"), ("X", "a\r\nB: 1")] {
            let bad = RequestSpec {
                random_headers: vec![(k.into(), v.into())],
                ..RequestSpec::get(&t)
            };
            assert!(bad.encode(&t, false).is_err(), "{k}: {v}");
        }
    }

    #[test]
    fn rejects_bad_headers_and_methods() {
        for bad in ["NoColon", ": v", "Bad Name: v", "X: a\r\nInjected: 1"] {
            assert!(parse_header(bad).is_err(), "{bad}");
        }
        let t = Target::parse("http://127.0.0.1/").unwrap();
        let spec = RequestSpec {
            method: "GE T".into(),
            ..RequestSpec::default()
        };
        assert!(spec.encode(&t, false).is_err());
    }

    #[test]
    fn urls_with_random_parts_keep_them_in_the_path() {
        let t = Target::parse("http://127.0.0.1:6666/{hex:6}.svg?n={int:1-21}&x={{y}}").unwrap();
        assert_eq!(t.path, "/{hex:6}.svg?n={int:1-21}&x={{y}}");
        assert_eq!(t.host_header, "127.0.0.1:6666");
        let raw = String::from_utf8(wire(&RequestSpec::get(&t), &t, false)).unwrap();
        let line = raw.lines().next().unwrap();
        let re = regex_lite(line);
        assert!(re, "{line}");
        for (bad, want) in [
            ("http://{hex:4}.example/", "path and query"),
            ("http://127.0.0.1/#{hex:4}", "path and query"),
            ("http://127.0.0.1/{hex:99}", "column 18"),
            ("http://127.0.0.1/{nope}", "column 18"),
            ("http://127.0.0.1/~fxb0~", "reserves"),
        ] {
            let e = Target::parse(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    /// `GET /<6 hex>.svg?n=<1..21>&x={y} HTTP/1.1`, checked by hand (no regex dependency).
    fn regex_lite(line: &str) -> bool {
        let Some(rest) = line.strip_prefix("GET /") else {
            return false;
        };
        let (hex, rest) = rest.split_at(6);
        let Some(rest) = rest.strip_prefix(".svg?n=") else {
            return false;
        };
        let Some((n, rest)) = rest.split_once('&') else {
            return false;
        };
        hex.bytes().all(|b| b.is_ascii_hexdigit())
            && n.parse::<u32>().is_ok_and(|n| (1..=21).contains(&n))
            && rest == "x={y} HTTP/1.1"
    }

    #[test]
    fn rejects_bad_request_paths() {
        let t = Target::parse("http://127.0.0.1/").unwrap();
        for path in ["", "noslash", "/a b", "/a\r\nX: y"] {
            let spec = RequestSpec {
                path: path.into(),
                ..RequestSpec::default()
            };
            assert!(spec.encode(&t, false).is_err(), "{path:?}");
        }
    }
}
