use super::*;

#[test]
fn durations() {
    assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
    assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
    assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
    assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
    assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
    for bad in ["", "s", "0", "-1s", "10x", "1e999", "ms10"] {
        assert!(parse_duration(bad).is_err(), "{bad}");
    }
}
