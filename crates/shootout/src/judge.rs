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
mod tests {
    use super::*;
    use crate::suite::{Suite, DEFAULT_SUITE};

    fn svg_scenario() -> Scenario {
        let s = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
        s.scenarios.into_iter().find(|s| s.name == "svg").unwrap()
    }

    /// avatar's fox in `color`, as avatar fills it.
    fn fox(color: &str) -> String {
        include_str!("../../avatar/assets/fox.svg").replace("{{color}}", &format!("#{color}"))
    }

    fn response(content_type: &str, body: &str) -> Response {
        Response {
            status: 200,
            headers: vec![
                ("Content-Type".into(), content_type.into()),
                ("Content-Length".into(), body.len().to_string()),
            ],
            body: body.as_bytes().to_vec(),
            close: false,
        }
    }

    /// The backend suite's check: a random X-Request-Id per request, which the response
    /// must echo in its header and body; a front end that never calls the backend fails.
    #[test]
    fn a_request_id_must_be_echoed() {
        let text = r#"
name = "b"
[[scenario]]
name = "backend"
headers = { X-Request-Id = "{hex:16}" }
[scenario.expect]
status = 200
headers = { X-Request-Id = '^{random.1}$' }
body_contains = 'hello {random.1}'
[[target]]
name = "t"
language = "x"
dir = "."
start = "x {port}"
"#;
        let s = Suite::parse(text, "b.toml").unwrap().scenarios.remove(0);
        let mut reqs = Requests::of(&s, 3);
        let (a, b) = (reqs.next_request(), reqs.next_request());
        assert_eq!(a.path, "/");
        assert_eq!(a.headers[0].0, "X-Request-Id");
        assert_eq!(a.parts, [a.headers[0].1.clone()]);
        assert_eq!(a.parts[0].len(), 16);
        assert_ne!(a.parts, b.parts);
        let answer = |id: Option<&str>, body: &str| Response {
            status: 200,
            headers: id
                .map(|id| vec![("x-request-id".to_string(), id.to_string())])
                .unwrap_or_default(),
            body: body.as_bytes().to_vec(),
            close: false,
        };
        let id = a.parts[0].as_str();
        assert_eq!(
            judge(&s, &a, &answer(Some(id), &format!("hello {id}\n"))),
            Ok(None)
        );
        let cases = [
            (answer(None, "hello\n"), "no X-Request-Id header"),
            (
                answer(Some("other"), &format!("hello {id}\n")),
                "does not match",
            ),
            (answer(Some(id), "hello\n"), "body does not contain"),
        ];
        for (r, want) in cases {
            let e = judge(&s, &a, &r).unwrap_err();
            assert!(
                e.contains(want) && e.contains(&format!("GET / (X-Request-Id: {id})")),
                "{e}"
            );
        }
    }

    #[test]
    fn requests_fill_the_path_from_a_seed_and_remember_the_parts() {
        let s = svg_scenario();
        let paths = |seed| {
            let mut r = Requests::new(&s.template, seed);
            (0..50).map(|_| r.next_request()).collect::<Vec<_>>()
        };
        let a = paths(VERIFY_SEED);
        assert_eq!(a, paths(VERIFY_SEED), "the same seed, the same requests");
        assert_ne!(a, paths(VERIFY_SEED + 1));
        for r in &a {
            assert_eq!(r.parts.len(), 1);
            assert_eq!(r.path, format!("/{}.svg", r.parts[0]));
            assert!(
                r.parts[0].len() == 6
                    && r.parts[0]
                        .bytes()
                        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                "{r:?}"
            );
        }
        let distinct: std::collections::BTreeSet<&str> =
            a.iter().map(|r| r.path.as_str()).collect();
        assert!(distinct.len() > 45, "a colour per request: {distinct:?}");
        // A literal path is sent as written, with no parts.
        let t = Template::parse("/").unwrap();
        let r = Requests::new(&t, 1).next_request();
        assert_eq!((r.path.as_str(), r.parts.len()), ("/", 0));
    }

    /// The svg scenario against right and wrong answers to `GET /a8db7d.svg`.
    #[test]
    fn svg_answers_are_judged_by_type_xml_and_colour() {
        let s = svg_scenario();
        let req = Request {
            path: "/a8db7d.svg".into(),
            headers: Vec::new(),
            parts: vec!["a8db7d".into()],
        };
        let good = fox("a8db7d");
        let chunked = {
            let (a, b) = good.split_at(500);
            format!(
                "{:x}\r\n{a}\r\n{:x};ext=1\r\n{b}\r\n0\r\n\r\n",
                a.len(),
                b.len()
            )
        };
        let cases: Vec<(Response, Result<(), &str>)> = vec![
            (response("image/svg+xml; charset=utf-8", &good), Ok(())),
            (response("image/svg+xml", &good), Ok(())),
            (
                Response {
                    headers: vec![
                        ("Content-Type".into(), "image/svg+xml".into()),
                        ("Transfer-Encoding".into(), "chunked".into()),
                    ],
                    ..response("", &chunked)
                },
                Ok(()),
            ),
            (
                response(
                    "image/svg+xml",
                    &format!("<?xml version=\"1.0\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n{good}"),
                ),
                Ok(()),
            ),
            (
                response("image/svg+xml", &fox("000000")),
                Err("GET /a8db7d.svg: body does not contain \"fill=\\\"#a8db7d\\\"\" (it starts \"<svg xmlns="),
            ),
            (
                response("image/svg+xml", &fox("A8DB7D")),
                Err("body does not contain \"fill=\\\"#a8db7d\\\"\""),
            ),
            (
                response("text/html; charset=utf-8", &good),
                Err("GET /a8db7d.svg: Content-Type: \"text/html; charset=utf-8\" does not match"),
            ),
            (
                response("image/svg+xmlx", &good),
                Err("Content-Type: \"image/svg+xmlx\" does not match"),
            ),
            (
                response("image/svg+xml", &good[..good.len() - 8]),
                Err("GET /a8db7d.svg: body is not well-formed XML: "),
            ),
            (
                response("image/svg+xml", "fill=\"#a8db7d\" <svg"),
                Err("body is not well-formed XML"),
            ),
            (
                response(
                    "image/svg+xml",
                    "<html><body fill=\"#a8db7d\"></body></html>",
                ),
                Err("GET /a8db7d.svg: body's root element is <html>, expected <svg>"),
            ),
            (
                Response {
                    status: 404,
                    ..response("image/svg+xml", &good)
                },
                Err("GET /a8db7d.svg: status 404 (expected 200)"),
            ),
            (
                Response {
                    headers: vec![],
                    ..response("", &good)
                },
                Err("no Content-Type header"),
            ),
        ];
        for (r, want) in cases {
            let got = judge(&s, &req, &r).map(|_| ());
            match (want, &got) {
                (Ok(()), Ok(())) => {}
                (Err(w), Err(e)) if e.contains(w) => {}
                _ => panic!(
                    "want {want:?}, got {got:?} for {:?}",
                    String::from_utf8_lossy(&r.body)
                ),
            }
        }
    }

    #[test]
    fn chunked_bodies_are_read_without_their_framing() {
        let r = Response {
            status: 200,
            headers: vec![("Transfer-Encoding".into(), "gzip, Chunked".into())],
            body: b"3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n".to_vec(),
            close: false,
        };
        assert_eq!(&*payload(&r), b"abcde");
        let plain = Response {
            headers: vec![],
            ..r.clone()
        };
        assert_eq!(&*payload(&plain), plain.body.as_slice());
    }
}
