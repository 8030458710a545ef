use super::*;
use proptest::prelude::*;

#[test]
fn parses_i_of_n() {
    for (text, want) in [
        ("0/1", Some((0, 1))),
        ("0/3", Some((0, 3))),
        ("2/3", Some((2, 3))),
        (" 1/2 ", Some((1, 2))),
        ("0/0", None),
        ("3/3", None),
        ("1/0", None),
        ("garbage", None),
        ("", None),
        ("/", None),
        ("1/", None),
        ("/3", None),
        ("-1/3", None),
        ("1/3/4", None),
        ("+1/3", None),
        ("0/100001", None),
        ("0/99999999999999999999999", None),
    ] {
        let got = Shard::parse(text).ok().map(|s| (s.index, s.count));
        assert_eq!(got, want, "{text:?}");
    }
}

#[test]
fn each_bad_value_says_what_is_wrong() {
    assert!(matches!(Shard::parse("0/0"), Err(ShardError::Count(_))));
    assert!(matches!(Shard::parse("3/3"), Err(ShardError::Index(_))));
    assert!(matches!(Shard::parse("x"), Err(ShardError::Syntax(_))));
}

proptest! {
    #[test]
    fn shares_sum_exactly(total in 0u64..u64::MAX / 2, parts in 1u64..2000) {
        let mut sum = 0u64;
        let mut prev = u64::MAX;
        for i in 0..parts {
            let s = share(total, parts, i);
            // Never more than one apart, and non-increasing.
            prop_assert!(s <= prev);
            prop_assert!(s + 1 >= total / parts && s <= total / parts + 1);
            prev = s;
            sum += s;
        }
        prop_assert_eq!(sum, total);
    }

    #[test]
    fn striped_arrivals_partition_the_schedule(n in 0u64..5000, parts in 1u64..40) {
        // Shard i sends arrivals j < n with j % parts == i: share(n, parts, i) of them.
        for i in 0..parts {
            let striped = (0..n).filter(|j| j % parts == i).count() as u64;
            prop_assert_eq!(striped, share(n, parts, i));
        }
    }
}
