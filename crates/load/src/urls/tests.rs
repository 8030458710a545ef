use super::*;

#[test]
fn parses_every_line_form() {
    let text = "\u{feff}# list\n\nhttp://h/a\n  GET /b  \nPOST http://h/c @body.json\r\n/d @x\n";
    let got = parse_urls(text, "u.txt").unwrap();
    let want = [
        (3, None, "http://h/a", None),
        (4, Some("GET"), "/b", None),
        (5, Some("POST"), "http://h/c", Some("body.json")),
        (6, None, "/d", Some("x")),
    ];
    assert_eq!(got.len(), want.len());
    for (g, (line, method, url, body)) in got.iter().zip(want) {
        assert_eq!(g.line, line);
        assert_eq!(g.method.as_deref(), method);
        assert_eq!(g.url, url);
        assert_eq!(g.body_file.as_deref(), body);
    }
}

#[test]
fn bad_lines_name_the_line() {
    for (text, line, what) in [
        ("GET\n", 1, "has no URL"),
        ("/a\nGET nourl\n", 2, "is not a URL"),
        ("GET /a body.json\n", 1, "@FILE"),
        ("GET /a @\n", 1, "@FILE"),
        ("GET /a @b extra\n", 1, "2 words"),
    ] {
        let e = parse_urls(text, "u.txt").unwrap_err();
        let UrlsError::Line { line: l, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(*l, line, "{text:?}");
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("u.txt:{line}: ")), "{msg}");
        assert!(msg.contains(what), "{msg}");
        assert!(!msg.contains('\n'));
    }
    assert!(matches!(
        parse_urls("# only comments\n\n", "u.txt"),
        Err(UrlsError::Empty { .. })
    ));
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn loads_resolves_and_reads_bodies() {
    let dir = std::env::temp_dir().join(format!("foxbench-urls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    write(&dir, "b.json", "{\"a\":1}");
    let list = write(
        &dir,
        "u.txt",
        "http://127.0.0.1:9/x\nPOST /y @b.json\nHEAD http://127.0.0.1:9/{hex:4}\n",
    );
    let defaults = RequestSpec::default();
    let (t, reqs) = load_urls(&list, None, &defaults).unwrap();
    assert_eq!(t.host_header, "127.0.0.1:9");
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("GET", "/x")
    );
    assert_eq!(reqs[1].body, b"{\"a\":1}");
    assert_eq!(
        (reqs[2].method.as_str(), reqs[2].path.as_str()),
        ("HEAD", "/{hex:4}")
    );

    for (text, want) in [
        ("/x\n", "u2.txt:1: /x is a path"),
        (
            "http://127.0.0.1:9/\nhttp://127.0.0.1:10/\n",
            "u2.txt:2: 127.0.0.1:10 is not 127.0.0.1:9",
        ),
        (
            "GET http://127.0.0.1:9/{hex:0}\n",
            "u2.txt:1: invalid URL template",
        ),
        ("G@T http://127.0.0.1:9/\n", "u2.txt:1: invalid method"),
        (
            "POST http://127.0.0.1:9/ @missing.json\n",
            "u2.txt:1: cannot read the body file",
        ),
        ("ftp://127.0.0.1/\n", "u2.txt:1: invalid URL"),
    ] {
        let list = write(&dir, "u2.txt", text);
        let e = load_urls(&list, None, &defaults).unwrap_err().to_string();
        assert!(e.contains(want), "{text:?}: {e}");
        assert!(!e.contains('\n'));
    }
    let base = Target::parse("http://127.0.0.1:9/").unwrap();
    let list = write(&dir, "u3.txt", "/a\n/b\n");
    let (_, reqs) = load_urls(&list, Some(&base), &defaults).unwrap();
    assert_eq!(reqs[1].path, "/b");
    let e = load_urls(&dir.join("none.txt"), None, &defaults).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("cannot read the request table setting"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
