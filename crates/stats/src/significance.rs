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
mod tests;
