use super::names;

#[test]
fn only_splits_at_commas_outside_a_rows_brackets() {
    let cases: &[(&str, &[&str])] = &[
        ("avatar", &["avatar"]),
        ("avatar,c-epoll", &["avatar", "c-epoll"]),
        ("j[heap=8m,gc=G1],avatar", &["j[heap=8m,gc=G1]", "avatar"]),
        (
            "java-httpserver[jvm=-Xmx16m -XX:+UseZGC], node-http,",
            &["java-httpserver[jvm=-Xmx16m -XX:+UseZGC]", "node-http"],
        ),
        ("", &[]),
    ];
    for (text, want) in cases {
        assert_eq!(names(text), *want, "{text}");
    }
}
