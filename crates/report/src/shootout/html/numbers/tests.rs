use super::*;

#[test]
fn short_numbers() {
    for (v, want) in [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (0.1, "0.1"),
        (1.5, "1.5"),
        (-0.4, "-0.4"),
        (1.25, "1.25"),
        (0.333_333, "0.33"),
        (99.99, "99.99"),
        (1e6, "1000000"),
        (f64::NAN, "–"),
        (f64::INFINITY, "–"),
    ] {
        assert_eq!(short(v), want, "short({v})");
    }
}

#[test]
fn tick_labels() {
    type Format = fn(f64) -> String;
    let cases: [(Format, f64, &str); 19] = [
        (tick_rate, 0.0, "0"),
        (tick_rate, 999.0, "999"),
        (tick_rate, 1000.0, "1k"),
        (tick_rate, 1500.0, "1.5k"),
        (tick_rate, 12_340.0, "12.34k"),
        (tick_rate, 2.5e6, "2.5M"),
        (tick_rate, -2000.0, "-2k"),
        (tick_us, 0.0, "0 µs"),
        (tick_us, 999.5, "999.5 µs"),
        (tick_us, 1000.0, "1 ms"),
        (tick_us, 1500.0, "1.5 ms"),
        (tick_us, 2e6, "2 s"),
        (tick_mib, 1.5, "1.5 MiB"),
        (tick_kib, 512.0, "512 KiB"),
        (tick_int, 3.0, "3"),
        (tick_int, 2.5, "2.5"),
        (tick_s, 0.5, "0.5 s"),
        (tick_cpu, 12.5, "12.5 µs"),
        (tick_cpu, 0.0, "0 µs"),
    ];
    for (f, v, want) in cases {
        assert_eq!(f(v), want, "{v}");
    }
}

#[test]
fn percent_labels() {
    for (p, want) in [
        (0.0, "0"),
        (50.0, "50"),
        (99.0, "99"),
        (99.9, "99.9"),
        (100.0 - 100.0 * 10f64.powf(-4.0), "99.99"),
        (99.999, "99.999"),
        (100.0, "100"),
    ] {
        assert_eq!(pct(p), want, "pct({p})");
    }
}
