use super::*;
use crate::suite::{Suite, DEFAULT_SUITE};

fn svg_scenario() -> Scenario {
    let s = Suite::parse(DEFAULT_SUITE, "built-in").unwrap();
    s.scenarios.into_iter().find(|s| s.name == "svg").unwrap()
}

/// avatar's fox in `color`, as avatar fills it.
fn fox(color: &str) -> String {
    include_str!("../../../avatar/assets/fox.svg").replace("{{color}}", &format!("#{color}"))
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
    let distinct: std::collections::BTreeSet<&str> = a.iter().map(|r| r.path.as_str()).collect();
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
