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

/// A byte count with a binary unit and one decimal, up to TiB: `512.0 B`, `1.5 KiB`,
/// `2.0 GiB` (the text report's form).
pub(crate) fn bytes_one_decimal(b: f64) -> String {
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

/// A byte count with a binary unit, up to GiB: whole bytes, one decimal in KiB and MiB,
/// two in GiB: `512 B`, `1.5 KiB`, `2.25 GiB` (the shootout's and compare's tables' form).
pub(crate) fn bytes_compact(n: u64) -> String {
    let n = n as f64;
    if n >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", n / (1024.0 * 1024.0 * 1024.0))
    } else if n >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", n / (1024.0 * 1024.0))
    } else if n >= 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else {
        format!("{n:.0} B")
    }
}

/// A rate (or any count) with k and M suffixes: `950`, `12.3k`, `1.25M`.
pub(crate) fn rate_suffixed(r: f64) -> String {
    if r >= 1e6 {
        format!("{:.2}M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}
