use super::*;

#[test]
fn civil_dates() {
    for (unix_s, want) in [
        (0, (1970, 1, 1, 0, 0, 0)),
        (86_399, (1970, 1, 1, 23, 59, 59)),
        (951_782_400, (2000, 2, 29, 0, 0, 0)),
        (951_868_799, (2000, 2, 29, 23, 59, 59)),
        (1_709_164_800, (2024, 2, 29, 0, 0, 0)),
        (1_735_689_599, (2024, 12, 31, 23, 59, 59)),
        (1_795_378_759, (2026, 11, 22, 20, 19, 19)),
        // 2100 is not a leap year: February 28th is followed by March 1st.
        (4_107_456_000, (2100, 2, 28, 0, 0, 0)),
        (4_107_542_400, (2100, 3, 1, 0, 0, 0)),
        (253_402_300_799, (9999, 12, 31, 23, 59, 59)),
    ] {
        let t = UtcTime::from_unix_s(unix_s);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second),
            want,
            "{unix_s}"
        );
    }
}

#[test]
fn the_largest_input_does_not_overflow() {
    let t = UtcTime::from_unix_s(u64::MAX);
    assert!(t.year > 9999 && (1..=12).contains(&t.month) && (1..=31).contains(&t.day));
}
