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
