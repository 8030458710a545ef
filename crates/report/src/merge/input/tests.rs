use super::*;

#[test]
fn a_stream_keeps_load_results_and_counts_the_rest() {
    let result = serde_json::to_string_pretty(&crate::tests::sample()).unwrap();
    let text = format!("noise\n{result}\n{{\"schema\": \"foxbench.compare/1\"}}\n");
    let r = read_stream(&text, "stdin", false).unwrap();
    assert_eq!(r.sources.len(), 1);
    assert_eq!(r.sources[0].name, "stdin line 2");
    assert_eq!((r.other_documents, r.skipped_lines), (1, 1));
    // A result cut short: an error, unless partial_ok leaves it out.
    let cut = format!("{result}\n{}", &result[..result.len() / 2]);
    assert!(matches!(
        read_stream(&cut, "stdin", false),
        Err(MergeError::Truncated { .. })
    ));
    let r = read_stream(&cut, "stdin", true).unwrap();
    assert_eq!((r.sources.len(), r.unfinished.len()), (1, 1));
    // A document that claims to be a result and is not one.
    let bad = format!("{{\"schema\": \"{}\"}}\n", crate::LOAD_SCHEMA);
    let e = read_stream(&bad, "stdin", false).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("stdin line 1: not a foxbench load --json result: "),
        "{e}"
    );
    assert!(matches!(
        read_result("a.json", "{"),
        Err(MergeError::NotAResult { .. })
    ));
}

#[test]
fn documents_between_noise() {
    let text = "starting\n{\n  \"a\": \"}{\\\"\",\n  \"b\": [1, {\"c\": 2}]\n}\nfoxbench load GET http://x/\n  Requests: 3\n{\"d\": 1}\n";
    let s = split_stream(text, "stdin");
    assert_eq!(s.documents.len(), 2);
    assert_eq!(s.documents[0].source, "stdin line 2");
    assert!(s.documents[0].text.contains("\"b\": [1, {\"c\": 2}]"));
    let v: serde_json::Value = serde_json::from_str(&s.documents[0].text).unwrap();
    assert_eq!(v["a"], "}{\"");
    assert_eq!(s.documents[1].text, "{\"d\": 1}\n");
    assert_eq!(s.skipped_lines, 3);
    assert!(s.unfinished.is_empty());
}

#[test]
fn prefixed_pods_interleave() {
    let text = "[pod/a-0/x] {\n[pod/a-1/x] {\n[pod/a-1/x]   \"i\": 1\n[pod/a-0/x]   \"i\": 0\n[pod/a-0/x] }\n[pod/a-1/x] }\n[pod/a-1/x] Requests per second: 5\n";
    let s = split_stream(text, "stdin");
    assert_eq!(s.documents.len(), 2);
    assert_eq!(s.documents[0].source, "stdin line 1 (pod/a-0/x)");
    assert!(s.documents[0].text.contains("\"i\": 0"));
    assert!(s.documents[1].text.contains("\"i\": 1"));
    assert_eq!(s.skipped_lines, 1);
}

#[test]
fn a_truncated_document_is_reported() {
    let s = split_stream("{\n  \"a\": 1,\n", "stdin");
    assert!(s.documents.is_empty());
    assert_eq!(s.unfinished, vec!["stdin line 1".to_string()]);
}

#[test]
fn a_bracketed_line_without_a_slash_is_not_a_prefix() {
    assert_eq!(prefix("[warn] x"), (None, "[warn] x"));
    assert_eq!(prefix("[pod/a/b] x"), (Some("pod/a/b"), "x"));
}
