use super::*;

#[test]
fn below_stays_in_range_and_covers_it() {
    let mut rng = Rng::from_seed(7);
    let mut seen = [0u32; 21];
    for _ in 0..100_000 {
        let v = rng.below(21) as usize;
        seen[v] += 1;
    }
    assert!(seen.iter().all(|&c| c > 4000), "{seen:?}");
}

#[test]
fn below_one_is_zero() {
    let mut rng = Rng::from_seed(1);
    assert!((0..1000).all(|_| rng.below(1) == 0));
}

#[test]
fn below_handles_a_range_where_bias_would_show() {
    // With n = 3 * 2^62, a plain `% n` would make the low third twice as likely.
    let n = 3u64 << 62;
    let mut rng = Rng::from_seed(99);
    let low = (0..30_000).filter(|_| rng.below(n) < (1u64 << 62)).count();
    assert!(
        (9_000..11_000).contains(&low),
        "low third drawn {low} times of 30000"
    );
}

#[test]
fn entropy_seeds_differ() {
    let a = Rng::from_entropy(0).next_u64();
    let b = Rng::from_entropy(0).next_u64();
    assert_ne!(a, b);
}
