use super::*;
use proptest::prelude::*;

/// A row that keeps its members: the exact reference of what a merged row holds.
#[derive(Debug, Clone, PartialEq)]
struct Exact {
    span: u64,
    members: Vec<u64>,
}

impl Block for Exact {
    type Error = ();
    fn set_span(&mut self, span: u64) {
        self.span = span;
    }
    fn absorb(&mut self, later: &Self) -> Result<(), ()> {
        self.members.extend(&later.members);
        Ok(())
    }
    fn heap_bytes(&self) -> usize {
        self.members.capacity() * std::mem::size_of::<u64>()
    }
}

/// The coarse rows' bytes as the series counts them, and as they are.
fn coarse_bytes(s: &Series<Exact>) -> (usize, usize) {
    let real = s.coarse.iter().map(|(_, _, r)| r.heap_bytes()).sum();
    (s.coarse_bytes(), real)
}

/// True when no two coarse rows share a span: nothing left to merge.
fn no_pair(s: &Series<Exact>) -> bool {
    s.coarse
        .iter()
        .zip(s.coarse.iter().skip(1))
        .all(|(a, b)| a.1 != b.1)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn rows_are_bounded_whole_dyadic_blocks_and_exact(full in 1usize..40, coarse in 64usize..80, byte_bound in 0usize..40_000, n in 0u64..20_000) {
        let mut s = Series::new(full, coarse, byte_bound);
        for i in 0..n {
            s.push(i, Exact { span: 1, members: vec![i] }).unwrap();
            prop_assert!(s.len() <= full + coarse);
            let (counted, real) = coarse_bytes(&s);
            prop_assert_eq!(counted, real);
            prop_assert!(counted <= byte_bound || no_pair(&s), "{} bytes over {}", counted, byte_bound);
        }
        let rows = s.into_rows();
        // Every interval is in exactly one row, in order.
        let all: Vec<u64> = rows.iter().flat_map(|r| r.members.clone()).collect();
        prop_assert_eq!(all, (0..n).collect::<Vec<_>>());
        // The newest rows are untouched.
        let fine = (n as usize).min(full);
        for (k, r) in rows[rows.len() - fine..].iter().enumerate() {
            prop_assert_eq!(r, &Exact { span: 1, members: vec![n - fine as u64 + k as u64] });
        }
        // Every row is a whole dyadic block, and spans never grow from old to new.
        for r in &rows {
            prop_assert!(r.span.is_power_of_two());
            prop_assert_eq!(r.members[0] % r.span, 0);
            prop_assert_eq!(r.members.len() as u64, r.span);
        }
        prop_assert!(rows.windows(2).all(|w| w[0].span >= w[1].span));
    }
}

#[test]
fn a_day_of_intervals_stays_under_the_bound() {
    let mut s = Series::new(20, 64, usize::MAX);
    for i in 0..86_400 {
        s.push(
            i,
            Exact {
                span: 1,
                members: vec![i],
            },
        )
        .unwrap();
    }
    assert_eq!(s.len(), s.max_rows());
    assert_eq!(s.max_rows(), 84);
}
