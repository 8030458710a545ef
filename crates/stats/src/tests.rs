use super::*;
use proptest::prelude::*;

/// The exact value at percentile `p` of sorted samples, by HdrHistogram's rank rule.
fn exact_percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

#[test]
fn empty_summary_is_zero() {
    let h = Latency::new();
    assert!(h.is_empty());
    assert_eq!(h.summary(), Summary::default());
    assert_eq!(h.percentile_ns(99.0), 0);
    assert!(h.buckets(10).is_empty());
}

#[test]
fn saturates_instead_of_failing() {
    let mut h = Latency::new();
    h.record_ns(u64::MAX);
    h.record_ns(0);
    assert_eq!(h.len(), 2);
    assert!(h.summary().max_us >= (HIGHEST_NS as f64 / 1000.0) * 0.999);
}

#[test]
fn base64_round_trip() {
    let mut h = Latency::new();
    for v in [1_000, 20_000, 20_001, 3_000_000, 7] {
        h.record_ns(v);
    }
    let back = Latency::from_base64(&h.to_base64()).unwrap();
    assert_eq!(back, h);
    assert!(Latency::from_base64("not base64!").is_err());
    assert!(Latency::from_base64("AAAA").is_err());
}

#[test]
fn issue_12_writes_compressed_v2_and_reads_both() {
    let mut h = Latency::new();
    for v in [1_000, 20_000, 3_000_000] {
        h.record_ns(v);
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(h.to_base64())
        .unwrap();
    assert_eq!(
        bytes[..4],
        0x1c84_9314u32.to_be_bytes(),
        "compressed V2 cookie"
    );
    // The uncompressed V2 form that earlier foxbench versions wrote still loads.
    let mut old = Vec::new();
    hdrhistogram::serialization::V2Serializer::new()
        .serialize(&h.hist, &mut old)
        .unwrap();
    assert_eq!(old[..4], 0x1c84_9313u32.to_be_bytes());
    let old = base64::engine::general_purpose::STANDARD.encode(old);
    assert_eq!(Latency::from_base64(&old).unwrap(), h);
}

#[test]
fn buckets_cover_every_sample() {
    let mut h = Latency::new();
    for v in 1..=1000u64 {
        h.record_ns(v * 1000);
    }
    let b = h.buckets(10);
    assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 1000);
    assert!(b.len() <= 10);
    assert!(
        b.windows(2).all(|w| w[0].0 < w[1].0),
        "ascending bounds: {b:?}"
    );
    // Log spacing: a long tail does not swallow the body of the distribution.
    let mut tail = Latency::new();
    for _ in 0..10_000 {
        tail.record_ns(50_000);
    }
    tail.record_ns(50_000_000);
    let b = tail.buckets(20);
    assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 10_001);
    assert!(b.first().unwrap().0 < 100.0, "{b:?}");
}

proptest! {
    /// Against a sorted Vec: every value strictly inside the bounds' equivalence
    /// ranges is counted, none outside them.
    #[test]
    fn count_between_matches_the_exact_count(
        values in proptest::collection::vec(1u64..100_000_000_000, 0..300),
        low in 1u64..100_000_000_000,
        span in 0u64..50_000_000_000,
    ) {
        let mut h = Latency::new();
        for &v in &values {
            h.record_ns(v);
        }
        let high = low + span;
        let (lo, hi) = (h.lowest_equivalent(low), h.highest_equivalent(high));
        let inner = values.iter().filter(|&&v| v > h.highest_equivalent(low) && v < h.lowest_equivalent(high)).count() as u64;
        let outer = values.iter().filter(|&&v| v >= lo && v <= hi).count() as u64;
        let got = h.count_between(low, high);
        prop_assert!(inner <= got && got <= outer, "{} <= {} <= {}", inner, got, outer);
        prop_assert_eq!(h.count_between(high + 1, low.saturating_sub(1).max(1).min(high)), 0);
    }

    #[test]
    fn merged_equals_one_histogram_fed_everything(
        parts in proptest::collection::vec(proptest::collection::vec(1u64..50_000_000_000, 0..200), 1..6)
    ) {
        let mut all = Latency::new();
        let mut merged = Latency::new();
        for part in &parts {
            let mut h = Latency::new();
            for &v in part {
                h.record_ns(v);
                all.record_ns(v);
            }
            merged.merge(&h).unwrap();
        }
        prop_assert_eq!(merged.len(), all.len());
        prop_assert_eq!(merged.summary(), all.summary());
        prop_assert!(merged == all);
    }

    #[test]
    fn percentiles_match_exact_reference_within_precision(
        mut values in proptest::collection::vec(1u64..100_000_000_000, 1..500)
    ) {
        let mut h = Latency::new();
        for &v in &values {
            h.record_ns(v);
        }
        values.sort_unstable();
        for p in PERCENTILES.iter().copied().chain([100.0]) {
            let exact = exact_percentile(&values, p);
            let got = h.percentile_ns(p);
            // HdrHistogram reports the highest value equivalent to the exact sample.
            prop_assert_eq!(got, h.highest_equivalent(exact), "p{} exact {}", p, exact);
        }
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / values.len() as f64;
        prop_assert!((h.summary().mean_us * 1000.0 - mean).abs() <= mean * 0.002 + 1.0);
    }
}
