use super::*;

#[test]
fn formats_known_dates() {
    let cases: &[(u64, &str)] = &[
        (0, "Thu, 01 Jan 1970 00:00:00 GMT"),
        (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
        (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        (1_700_000_000, "Tue, 14 Nov 2023 22:13:20 GMT"),
        (4_102_444_799, "Thu, 31 Dec 2099 23:59:59 GMT"),
    ];
    for &(secs, want) in cases {
        assert_eq!(
            std::str::from_utf8(&format_http_date(secs)).unwrap(),
            want,
            "{secs}"
        );
    }
}
