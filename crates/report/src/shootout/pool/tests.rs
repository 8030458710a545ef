use super::*;

fn c(min: u32, mean: f64, max: u32, busy: f64, samples: u32) -> ServiceConnections {
    ServiceConnections {
        service: "postgres".into(),
        port: 5432,
        samples,
        min,
        mean,
        max,
        busy_share: Some(busy),
        active_mean: None,
        active_max: None,
    }
}

#[test]
fn repeats_merge_into_the_extremes_and_weighted_means() {
    let a = [c(2, 2.0, 2, 1.0, 6)];
    let b = [c(1, 1.5, 2, 0.5, 2)];
    let m = ServiceConnections::merge(&[&a, &b, &[]]);
    assert_eq!(m.len(), 1);
    let m = &m[0];
    assert_eq!((m.min, m.max, m.samples), (1, 2, 8));
    assert!((m.mean - 1.875).abs() < 1e-9, "{}", m.mean);
    // Busy weighted by connection-readings: (1.0 * 12 + 0.5 * 3) / 15.
    assert!((m.busy_share.unwrap() - 0.9).abs() < 1e-9);
    assert_eq!(m.line(), "1-2, mean 1.9 connections to postgres, busy 90%");
    assert_eq!(a[0].line(), "2 connections to postgres, busy 100%");
}
