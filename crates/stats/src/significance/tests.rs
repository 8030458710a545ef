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
