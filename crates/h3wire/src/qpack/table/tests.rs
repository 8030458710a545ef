use super::*;

#[test]
fn static_table_is_rfc_9204_appendix_a() {
    assert_eq!(STATIC.len(), 99);
    assert_eq!(STATIC[0], (":authority", ""));
    assert_eq!(STATIC[17], (":method", "GET"));
    assert_eq!(STATIC[25], (":status", "200"));
    assert_eq!(STATIC[63], (":status", "100"));
    assert_eq!(STATIC[98], ("x-frame-options", "sameorigin"));
    // Every pair once.
    for (i, (n, v)) in STATIC.iter().enumerate() {
        assert_eq!(
            find(n.as_bytes(), v.as_bytes()),
            Some((i, true)),
            "{n}: {v}"
        );
    }
}

#[test]
fn find_falls_back_to_the_first_entry_with_the_name() {
    assert_eq!(find(b":status", b"418"), Some((24, false)));
    assert_eq!(find(b"content-type", b"x"), Some((44, false)));
    assert_eq!(find(b"x-unknown", b""), None);
}
