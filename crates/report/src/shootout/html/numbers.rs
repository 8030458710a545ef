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
mod tests;
