//! How durations, sizes and percentages read in text.

/// A duration in µs as milliseconds with three decimals, as ab's `[ms]` columns print it.
pub(crate) fn ms_from_us(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// A duration in µs, with a unit that keeps 3-4 significant digits.
pub fn human_us(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.1}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

pub(crate) fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

pub(crate) fn trim_pct(p: f64) -> String {
    let s = format!("{p}");
    s.trim_end_matches(".0").to_string()
}
