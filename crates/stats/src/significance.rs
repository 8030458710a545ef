//! Whether two small sets of repeat measurements differ: the Mann-Whitney U test.
//!
//! Why this test: a benchmark cell has 3 to 10 repeats per run, their distribution is
//! unknown and often skewed (a stall makes one repeat slow), and a CI gate must not call
//! noise a change. A t-test assumes normal samples, which a handful of repeats can neither
//! show nor refute. Mann-Whitney U uses only the order of the samples, so it holds for any
//! distribution, one outlier moves it by one rank at most, and for small samples its
//! p-value is exact rather than approximate. It is the test Go's benchstat uses. A
//! permutation test on the difference of means would be as exact but would let one wild
//! repeat decide the verdict.
//!
//! The p-value is that of the exact permutation distribution of the rank sum, with tied
//! values given their mean rank (so ties, common when repeats land in the same histogram
//! bucket, are handled exactly, not approximated), for up to [`EXACT_MAX_SAMPLES`] samples
//! in all; beyond that, the normal approximation with tie and continuity corrections. Both
//! agree with SciPy (`permutation_test` on U, and `mannwhitneyu(method="asymptotic")`).

/// Up to this many samples in both sets together, the p-value is exact.
pub const EXACT_MAX_SAMPLES: usize = 60;

/// The outcome of [`mann_whitney`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first set: the number of (a, b) pairs with a > b, ties counting one half.
    pub u: f64,
    /// Two-sided p-value: the chance of a rank sum at least this far out in the same tail,
    /// doubled, if both sets came from one distribution.
    pub p: f64,
    /// True when `p` comes from the exact distribution, false for the normal approximation.
    pub exact: bool,
}

/// The Mann-Whitney U test of `a` against `b`, two-sided. `None` when either set is empty
/// or holds a NaN.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| v.is_nan()) {
        return None;
    }
    let (n_a, n_b) = (a.len(), b.len());
    let n = n_a + n_b;
    // Ranks are doubled so that mean ranks of ties stay integers.
    let ranks2 = doubled_ranks(a.iter().chain(b).copied().collect());
    let sum2: u64 = ranks2[..n_a].iter().sum();
    // U = R - n_a(n_a+1)/2, with R = sum2 / 2.
    let u = sum2 as f64 / 2.0 - (n_a * (n_a + 1)) as f64 / 2.0;
    if n <= EXACT_MAX_SAMPLES {
        let p = exact_p(&ranks2, n_a, sum2);
        return Some(MannWhitney { u, p, exact: true });
    }
    Some(MannWhitney {
        u,
        p: normal_p(&ranks2, n_a, n_b, u),
        exact: false,
    })
}

/// The smallest two-sided p-value [`mann_whitney`] can give for sets of `n_a` and `n_b`
/// samples (all values distinct, the sets fully apart): `2 / C(n_a + n_b, n_a)`. When it
/// exceeds the significance level, no difference can be shown with so few repeats.
pub fn smallest_p(n_a: usize, n_b: usize) -> f64 {
    if n_a == 0 || n_b == 0 {
        return 1.0;
    }
    let (k, n) = (n_a.min(n_b), n_a + n_b);
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Twice the rank of each value (1-based), ties getting twice their mean rank.
fn doubled_ranks(values: Vec<f64>) -> Vec<u64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
    let mut ranks2 = vec![0u64; values.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        // Positions start..end hold ranks start+1..=end; twice their mean is start+1+end.
        for &i in &order[start..end] {
            ranks2[i] = (start + 1 + end) as u64;
        }
        start = end;
    }
    ranks2
}

/// The exact two-sided p-value of the doubled rank sum `sum2` of `n_a` values drawn from
/// `ranks2`: counts every way to pick `n_a` of them, by the sum they give.
fn exact_p(ranks2: &[u64], n_a: usize, sum2: u64) -> f64 {
    let max: usize = ranks2.iter().sum::<u64>() as usize;
    // ways[k][s]: subsets of size k with doubled rank sum s. Counts reach C(60, 30) ≈ 1e17,
    // beyond u64's exact range for larger limits, so f64 it is (53 bits, plenty for p).
    let mut ways = vec![vec![0f64; max + 1]; n_a + 1];
    ways[0][0] = 1.0;
    for &r in ranks2 {
        let r = r as usize;
        for k in (1..=n_a).rev() {
            let (lower, upper) = ways.split_at_mut(k);
            let (from, to) = (&lower[k - 1], &mut upper[0]);
            for s in (r..=max).rev() {
                to[s] += from[s - r];
            }
        }
    }
    let dist = &ways[n_a];
    let total: f64 = dist.iter().sum();
    let s = sum2 as usize;
    let below: f64 = dist[..=s].iter().sum();
    let above: f64 = dist[s..].iter().sum();
    (2.0 * below.min(above) / total).min(1.0)
}

/// The normal approximation of the two-sided p-value, with the tie correction of the
/// variance and a continuity correction of one half, as SciPy's `asymptotic` method.
fn normal_p(ranks2: &[u64], n_a: usize, n_b: usize, u: f64) -> f64 {
    let n = (n_a + n_b) as f64;
    let mut sorted = ranks2.to_vec();
    sorted.sort_unstable();
    let ties: f64 = sorted
        .chunk_by(|x, y| x == y)
        .map(|g| {
            let t = g.len() as f64;
            t * t * t - t
        })
        .sum();
    let (na, nb) = (n_a as f64, n_b as f64);
    let mean = na * nb / 2.0;
    let var = na * nb / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    libm::erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference values from SciPy 1.17.1: `mannwhitneyu(a, b, method="exact")` where there
    /// are no ties, and `permutation_test((a, b), U, n_resamples=inf)` (exact, mean ranks)
    /// where there are.
    #[test]
    fn exact_p_matches_scipy() {
        #[rustfmt::skip]
        let cases: &[(&[f64], &[f64], f64, f64)] = &[
            (&[1., 2., 3., 4., 5.], &[6., 7., 8., 9., 10.], 0.0, 0.0079365079),
            (&[1., 2., 3.], &[4., 5., 6.], 0.0, 0.1),
            (&[1.1, 2.3, 3.5, 4.2], &[2.0, 5.1, 6.3, 7.7, 8.8], 3.0, 0.1111111111),
            (&[19.1, 20.3, 18.7, 21.0, 19.9, 20.5], &[17.2, 18.0, 19.5, 16.9, 18.4, 17.7], 34.0, 0.0086580087),
            // Ties: SciPy's `exact` ignores them (0.0952 and 0.4127); the permutation
            // distribution with mean ranks is the exact one.
            (&[1., 2., 2., 3., 3.], &[2., 3., 4., 4., 5.], 4.0, 0.1111111111),
            (&[100., 100., 101., 102.], &[100., 101., 101., 103., 104.], 6.0, 0.3809523810),
        ];
        for &(a, b, u, p) in cases {
            let r = mann_whitney(a, b).unwrap();
            assert!(r.exact);
            assert_eq!(r.u, u, "{a:?} {b:?}");
            assert!((r.p - p).abs() < 1e-9, "{a:?} {b:?}: p {} want {p}", r.p);
            // Swapping the sets changes U to n_a·n_b − U and leaves p alone.
            let s = mann_whitney(b, a).unwrap();
            assert_eq!(s.u, (a.len() * b.len()) as f64 - u);
            assert!((s.p - p).abs() < 1e-9);
        }
    }

    /// Published critical values (two-sided, α = 0.05; e.g. Mann & Whitney 1947, the table
    /// in every statistics text): n = 5 and 5 → U ≤ 2; 4 and 4 → U ≤ 0; 6 and 6 → U ≤ 5;
    /// 3 and 3 → none. So U = critical is significant and U = critical + 1 is not.
    #[test]
    fn published_critical_values() {
        // `a` holds the values 1..=n_a+n_b that give U = `u`: shift `u` of a's values above b's.
        fn sets(n_a: usize, n_b: usize, u: usize) -> (Vec<f64>, Vec<f64>) {
            // Start fully apart (a below b, U = 0), then swap neighbours to add one each.
            let mut v: Vec<bool> = (0..n_a + n_b).map(|i| i < n_a).collect();
            for _ in 0..u {
                let i = v.windows(2).rposition(|w| w[0] && !w[1]).unwrap();
                v.swap(i, i + 1);
            }
            let a = (0..v.len()).filter(|&i| v[i]).map(|i| i as f64).collect();
            let b = (0..v.len()).filter(|&i| !v[i]).map(|i| i as f64).collect();
            (a, b)
        }
        for (n_a, n_b, critical) in [(5, 5, 2), (4, 4, 0), (6, 6, 5), (5, 7, 5), (8, 8, 13)] {
            let (a, b) = sets(n_a, n_b, critical);
            let r = mann_whitney(&a, &b).unwrap();
            assert_eq!(r.u, critical as f64);
            assert!(r.p <= 0.05, "{n_a}+{n_b} U={critical}: p {}", r.p);
            let (a, b) = sets(n_a, n_b, critical + 1);
            let r = mann_whitney(&a, &b).unwrap();
            assert!(r.p > 0.05, "{n_a}+{n_b} U={}: p {}", critical + 1, r.p);
        }
        assert!(smallest_p(3, 3) > 0.05);
    }

    #[test]
    fn smallest_p_is_two_over_the_number_of_splits() {
        assert!((smallest_p(3, 3) - 0.1).abs() < 1e-12);
        assert!((smallest_p(5, 5) - 2.0 / 252.0).abs() < 1e-12);
        assert!((smallest_p(3, 4) - 2.0 / 35.0).abs() < 1e-12);
        assert_eq!(smallest_p(1, 1), 1.0);
        assert_eq!(smallest_p(0, 5), 1.0);
    }

    #[test]
    fn identical_and_empty_sets() {
        let r = mann_whitney(&[5.0; 5], &[5.0; 5]).unwrap();
        assert_eq!((r.u, r.p), (12.5, 1.0));
        assert_eq!(mann_whitney(&[], &[1.0]), None);
        assert_eq!(mann_whitney(&[f64::NAN], &[1.0]), None);
    }

    /// SciPy 1.17.1 `mannwhitneyu(a, b, method="asymptotic")` on 40 and 45 rounded normal
    /// samples (numpy `default_rng(7)`, means 100 and 103, sd 5).
    #[test]
    fn normal_approximation_matches_scipy() {
        #[rustfmt::skip]
        let a = [100., 101., 99., 96., 98., 95., 100., 107., 98., 97., 102., 102., 101., 95., 100., 103., 93., 98., 90., 94., 91., 99., 94., 101., 101., 99., 87., 97., 100., 101., 92., 98., 95., 96., 105., 96., 100., 104., 97., 99.];
        #[rustfmt::skip]
        let b = [104., 103., 97., 103., 110., 95., 107., 104., 100., 113., 107., 97., 103., 106., 102., 106., 103., 106., 110., 100., 104., 101., 104., 97., 100., 102., 107., 109., 96., 99., 106., 93., 101., 103., 109., 106., 101., 101., 102., 111., 101., 101., 105., 102., 102.];
        let r = mann_whitney(&a, &b).unwrap();
        assert!(!r.exact);
        assert_eq!(r.u, 342.0);
        assert!((r.p / 8.593e-7 - 1.0).abs() < 1e-3, "p {}", r.p);
    }

    /// Every split of the pooled values, counted one by one: the definition of the exact p.
    fn brute_force_p(a: &[f64], b: &[f64]) -> f64 {
        let all: Vec<f64> = a.iter().chain(b).copied().collect();
        let u_of = |mask: u32| -> f64 {
            let (mut u, n) = (0.0, all.len());
            for i in (0..n).filter(|i| mask & (1 << i) != 0) {
                for j in (0..n).filter(|j| mask & (1 << j) == 0) {
                    u += match all[i].total_cmp(&all[j]) {
                        std::cmp::Ordering::Greater => 1.0,
                        std::cmp::Ordering::Equal => 0.5,
                        std::cmp::Ordering::Less => 0.0,
                    };
                }
            }
            u
        };
        let observed = u_of((1u32 << a.len()) - 1);
        let us: Vec<f64> = (0u32..1 << all.len())
            .filter(|m| m.count_ones() as usize == a.len())
            .map(u_of)
            .collect();
        let total = us.len() as f64;
        let below = us.iter().filter(|&&u| u <= observed + 1e-9).count() as f64;
        let above = us.iter().filter(|&&u| u >= observed - 1e-9).count() as f64;
        (2.0 * below.min(above) / total).min(1.0)
    }

    proptest! {
        #[test]
        fn exact_p_equals_counting_every_split(
            a in proptest::collection::vec(0u8..6, 1..7),
            b in proptest::collection::vec(0u8..6, 1..7),
        ) {
            let a: Vec<f64> = a.into_iter().map(f64::from).collect();
            let b: Vec<f64> = b.into_iter().map(f64::from).collect();
            let r = mann_whitney(&a, &b).unwrap();
            prop_assert!((r.p - brute_force_p(&a, &b)).abs() < 1e-9);
            prop_assert!(r.p >= smallest_p(a.len(), b.len()) - 1e-12);
        }
    }
}
