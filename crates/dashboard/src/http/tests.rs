use super::*;

#[test]
fn only_the_token_leads_anywhere() {
    let t = "0123abcd";
    for (path, want) in [
        ("/0123abcd/", Route::Page),
        ("/0123abcd/?x=1", Route::Page),
        ("/0123abcd/events", Route::Events),
        ("/0123abcd/result.json", Route::Json),
        ("/0123abcd", Route::NotFound),
        ("/0123abce/", Route::NotFound),
        ("/0123abcd0/", Route::NotFound),
        ("/", Route::NotFound),
        ("", Route::NotFound),
        ("/0123abcd/../etc/passwd", Route::NotFound),
        ("//0123abcd/", Route::NotFound),
    ] {
        assert_eq!(route(path, t), want, "{path:?}");
    }
}

#[test]
fn heads() {
    for (head, want) in [
        (&b"GET /a/ HTTP/1.1\r\nHost: x\r\n\r\n"[..], Some("/a/")),
        (b"POST /a/ HTTP/1.1\r\n\r\n", None),
        (b"GET /a/ HTTP/1.1\r\n", None),
        (b"\x00\xff garbage\r\n\r\n", None),
        (b"", None),
    ] {
        assert_eq!(parse_path(head).as_deref(), want, "{head:?}");
    }
}
