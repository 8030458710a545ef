//! How the report writes numbers: as few decimals as needed, tick labels in their units, and
//! percentiles.

/// A number with as few decimals as it needs (two at most).
pub(crate) fn short(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let s = if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if (v * 10.0 - (v * 10.0).round()).abs() < 1e-6 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A rate tick: `1.5k`, `2M`.
pub(crate) fn tick_rate(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{}M", short(v / 1e6))
    } else if v.abs() >= 1e3 {
        format!("{}k", short(v / 1e3))
    } else {
        short(v)
    }
}

/// A latency tick from microseconds: `250 µs`, `1.5 ms`, `2 s`.
pub(crate) fn tick_us(v: f64) -> String {
    if v >= 1e6 {
        format!("{} s", short(v / 1e6))
    } else if v >= 1e3 {
        format!("{} ms", short(v / 1e3))
    } else {
        format!("{} µs", short(v))
    }
}

/// A size tick in MiB.
pub(crate) fn tick_mib(v: f64) -> String {
    format!("{} MiB", short(v))
}

/// A size tick in KiB.
pub(crate) fn tick_kib(v: f64) -> String {
    format!("{} KiB", short(v))
}

/// A plain number tick.
pub(crate) fn tick_int(v: f64) -> String {
    short(v)
}

/// A tick in seconds.
pub(crate) fn tick_s(v: f64) -> String {
    format!("{} s", short(v))
}

/// A CPU-time tick in microseconds.
pub(crate) fn tick_cpu(v: f64) -> String {
    format!("{} µs", short(v))
}

/// A percentile without trailing zeros: 99.9, 50, 99.99.
pub(crate) fn pct(p: f64) -> String {
    let s = format!("{p:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
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
}
