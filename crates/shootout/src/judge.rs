//! Judging one response against a scenario (status, headers, and the body: a pattern,
//! well-formed XML with a given root, text that echoes the request's random parts), and
//! the concrete requests a scenario's path template stands for.

use std::borrow::Cow;

use load::{Piece, Rng, Template};

use crate::suite::Scenario;
use crate::verify::Response;

/// The seed of the random parts of verification requests.
pub const VERIFY_SEED: u64 = 0xf0c5_a7a8_db7d;

/// One request of a scenario: its path and headers, and the random parts filled into them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The path as sent.
    pub path: String,
    /// The scenario's request headers as sent.
    pub headers: Vec<(String, String)>,
    /// Each random part's text, in order: the path's, then each header's.
    pub parts: Vec<String>,
}

/// Concrete requests of a scenario, from a seeded generator.
pub struct Requests<'a> {
    template: &'a Template,
    headers: Vec<(&'a str, &'a Template)>,
    rng: Rng,
}

impl<'a> Requests<'a> {
    /// The requests of `template`, from `seed`.
    pub fn new(template: &'a Template, seed: u64) -> Self {
        Requests {
            template,
            headers: Vec::new(),
            rng: Rng::new(seed, 0),
        }
    }

    /// The requests of a scenario, its path and its request headers, from `seed`.
    pub fn of(s: &'a Scenario, seed: u64) -> Self {
        Requests {
            headers: s
                .request_headers
                .iter()
                .map(|h| (h.name.as_str(), &h.template))
                .collect(),
            ..Requests::new(&s.template, seed)
        }
    }

    /// The next request: each random part filled, and remembered.
    pub fn next_request(&mut self) -> Request {
        let mut parts = Vec::new();
        let path = fill(self.template, &mut self.rng, &mut parts);
        let headers = self
            .headers
            .iter()
            .map(|(name, t)| (name.to_string(), fill(t, &mut self.rng, &mut parts)))
            .collect();
        Request {
            path,
            headers,
            parts,
        }
    }
}

/// A template filled, each random part also pushed onto `parts`.
fn fill(template: &Template, rng: &mut Rng, parts: &mut Vec<String>) -> String {
    let mut out = Vec::new();
    for piece in &template.pieces {
        match piece {
            Piece::Literal(bytes) => out.extend_from_slice(bytes),
            Piece::Hole(hole) => {
                let mut part = Vec::new();
                Template {
                    pieces: vec![Piece::Hole(*hole)],
                }
                .fill(rng, &mut part);
                out.extend_from_slice(&part);
                parts.push(String::from_utf8_lossy(&part).into_owned());
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The body's content: a chunked body without its framing (which the framer checked).
fn payload(r: &Response) -> Cow<'_, [u8]> {
    let chunked = r
        .header("transfer-encoding")
        .and_then(|v| v.rsplit(',').next())
        .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
    if !chunked {
        return Cow::Borrowed(&r.body);
    }
    let mut out = Vec::new();
    let mut rest = r.body.as_slice();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let line = String::from_utf8_lossy(&rest[..eol]);
        let size =
            usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16).unwrap_or(0);
        rest = &rest[eol + 2..];
        if size == 0 || size > rest.len() {
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or_default();
    }
    Cow::Owned(out)
}

/// The first characters of a body, for messages.
fn shown(body: &[u8]) -> String {
    String::from_utf8_lossy(body).chars().take(60).collect()
}

/// Checks the body is well-formed XML whose root element is named `root`.
fn xml_root(body: &[u8], root: &str) -> Result<(), String> {
    let text = std::str::from_utf8(body)
        .map_err(|e| format!("body is not UTF-8 text, so not XML: {e}"))?;
    // A DOCTYPE (`<!DOCTYPE svg PUBLIC ...>`, common in SVG files) is well-formed XML;
    // roxmltree refuses it unless asked, and still guards against entity expansion.
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options).map_err(|e| {
        format!(
            "body is not well-formed XML: {e} (it starts {:?})",
            shown(body)
        )
    })?;
    let name = doc.root_element().tag_name().name();
    if name != root {
        return Err(format!(
            "body's root element is <{name}>, expected <{root}>"
        ));
    }
    Ok(())
}

/// Checks one response to `req` against the scenario; returns the image number when
/// Location carries one.
pub fn judge(s: &Scenario, req: &Request, r: &Response) -> Result<Option<u64>, String> {
    judge_response(s, req, r).map_err(|e| {
        if req.parts.is_empty() {
            e
        } else {
            let headers: String = req
                .headers
                .iter()
                .map(|(k, v)| format!(" ({k}: {v})"))
                .collect();
            format!("{} {}{headers}: {e}", s.method, req.path)
        }
    })
}

fn judge_response(s: &Scenario, req: &Request, r: &Response) -> Result<Option<u64>, String> {
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
    for (name, echo) in &s.header_echoes {
        let pattern = echo.fill_escaped(&req.parts);
        let re = regex::Regex::new(&pattern).map_err(|e| format!("{name}: {e}"))?;
        let Some(v) = r.header(name) else {
            return Err(format!(
                "no {name} header (expected one matching {pattern:?}, the request's random part echoed)"
            ));
        };
        if !re.is_match(v) {
            return Err(format!("{name}: {v:?} does not match {pattern:?}"));
        }
    }
    let body = payload(r);
    if let Some(re) = &s.body {
        let text = String::from_utf8_lossy(&body);
        if !re.is_match(&text) {
            return Err(format!(
                "body {:?} does not match {:?}",
                shown(&body),
                re.as_str()
            ));
        }
    }
    if let Some(root) = &s.xml_root {
        xml_root(&body, root)?;
    }
    if let Some(echo) = &s.body_contains {
        let want = echo.fill(&req.parts);
        let found = body
            .windows(want.len().max(1))
            .any(|w| w == want.as_bytes());
        if !found {
            return Err(format!(
                "body does not contain {want:?} (it starts {:?})",
                shown(&body)
            ));
        }
    }
    Ok(image)
}

#[cfg(test)]
mod tests;
