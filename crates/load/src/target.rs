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
    /// A random part asked for over HTTP/3, which sends each request shape as encoded once.
    #[error("random parts such as {{hex:6}} are not sent over HTTP/3 yet: use literal paths and headers, or HTTP/2")]
    RandomOverHttp3,
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
mod tests;
