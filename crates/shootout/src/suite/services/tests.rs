use super::*;

#[test]
fn placeholders_are_found_and_filled() {
    let cmd = "{out}/server {port} {service.hello.url} {service.db-1.port} {param.x}";
    assert_eq!(refs(cmd), [("hello", "url"), ("db-1", "port")]);
    let vars = service_vars("hello", 4123);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(
        super::super::fill(
            "{service.hello.url} {service.hello.host}:{service.hello.port}",
            &vars
        ),
        "http://127.0.0.1:4123 127.0.0.1:4123"
    );
}

#[test]
fn counters_read_a_json_field_or_the_whole_body() {
    let json = Counter {
        path: "/stats".into(),
        field: Some("requests".into()),
    };
    let whole = Counter {
        path: "/n".into(),
        field: None,
    };
    let cases: [(&Counter, &str, Result<u64, &str>); 6] = [
        (&json, r#"{"requests": 42, "connections": 3}"#, Ok(42)),
        (
            &json,
            r#"{"connections": 3}"#,
            Err("no integer field \"requests\""),
        ),
        (&json, r#"{"requests": -1}"#, Err("no integer field")),
        (&json, "hello", Err("not JSON")),
        (&whole, " 17\n", Ok(17)),
        (&whole, "17 requests", Err("is not a count")),
    ];
    for (c, body, want) in cases {
        match (c.read(body.as_bytes()), want) {
            (Ok(n), Ok(w)) => assert_eq!(n, w, "{body}"),
            (Err(e), Err(w)) => assert!(e.contains(w), "{body}: {e}"),
            (got, want) => panic!("{body}: {got:?}, want {want:?}"),
        }
    }
}
