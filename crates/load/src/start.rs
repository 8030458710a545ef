//! A synchronised start (`--start-at`): when agents on several hosts begin, and waiting
//! for it.
//!
//! An instant is RFC 3339 (`2026-11-24T23:30:00Z`, `...+01:00`, fractions of a second
//! allowed) or `+DURATION`, relative to a base instant: the RFC 3339 instant in the
//! environment variable [`BASE_ENV`] when the orchestrator passes one, else now. Agents
//! prepare first, then [`wait_until`] the instant; one that is ready only after it fails
//! rather than start late and skew the run, unless told that late is fine.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The environment variable holding the base of a relative `--start-at +30s`.
pub const BASE_ENV: &str = "FOXBENCH_START_BASE";

/// A `--start-at` that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StartError {
    /// Neither RFC 3339 nor `+DURATION`.
    #[error("invalid start instant {text:?}: {why}; expected RFC 3339 (2026-11-24T23:30:00Z) or +DURATION (+30s)")]
    Syntax {
        /// The text given.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// The base instant in the environment does not parse.
    #[error("invalid {BASE_ENV}={text:?}: {why}; it must be RFC 3339, e.g. 2026-11-24T23:30:00Z")]
    Base {
        /// The variable's value.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// Stopped (Ctrl-C, SIGTERM) while waiting for the instant: nothing was measured.
    #[error("interrupted while waiting for the start instant {at}: nothing was measured")]
    Cancelled {
        /// The instant, RFC 3339.
        at: String,
    },
    /// The agent was ready only after the instant.
    #[error("ready {late_ms:.0} ms after the start instant {at}: start the agent earlier, give a later start instant, or allow a late start to run late")]
    Late {
        /// How late, ms.
        late_ms: f64,
        /// The instant, RFC 3339.
        at: String,
    },
}

/// Parses a `--start-at` value against `base` (used by `+DURATION` only).
pub fn parse(text: &str, base: SystemTime) -> Result<SystemTime, StartError> {
    let t = text.trim();
    let syntax = |why: &str| StartError::Syntax {
        text: text.to_string(),
        why: why.to_string(),
    };
    if let Some(rel) = t.strip_prefix('+') {
        let d = crate::parse_duration(rel).map_err(|e| syntax(&e))?;
        return base
            .checked_add(d)
            .ok_or_else(|| syntax("too far in the future"));
    }
    parse_rfc3339(t).map_err(|why| syntax(&why))
}

/// Resolves a `--start-at` value: `+DURATION` from [`BASE_ENV`]'s value (`base_env`) when
/// given, else from `now`.
pub fn resolve(
    text: &str,
    base_env: Option<&str>,
    now: SystemTime,
) -> Result<SystemTime, StartError> {
    let base = match base_env {
        Some(b) => parse_rfc3339(b.trim()).map_err(|why| StartError::Base {
            text: b.to_string(),
            why,
        })?,
        None => now,
    };
    parse(text, base)
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` (`t` or a space may separate date and
/// time, as RFC 3339 allows).
pub fn parse_rfc3339(t: &str) -> Result<SystemTime, String> {
    let b = t.as_bytes();
    if b.len() < 20 {
        return Err("too short".into());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, String> {
        let s = &b[r];
        if s.iter().all(u8::is_ascii_digit) {
            Ok(s.iter().fold(0i64, |a, d| a * 10 + i64::from(d - b'0')))
        } else {
            Err("expected digits".into())
        }
    };
    let sep = |i: usize, c: &[u8]| -> Result<(), String> {
        if c.contains(&b[i]) {
            Ok(())
        } else {
            Err(format!("expected {:?} at column {}", c[0] as char, i + 1))
        }
    };
    let year = num(0..4)?;
    sep(4, b"-")?;
    let month = num(5..7)?;
    sep(7, b"-")?;
    let day = num(8..10)?;
    sep(10, b"Tt ")?;
    let hour = num(11..13)?;
    sep(13, b":")?;
    let minute = num(14..16)?;
    sep(16, b":")?;
    let second = num(17..19)?;
    let mut i = 19;
    let mut nanos = 0i64;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 9 {
                nanos = nanos * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return Err("expected digits after '.'".into());
        }
        for _ in (i - start)..9 {
            nanos *= 10;
        }
    }
    let offset_s = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&s @ (b'+' | b'-')) if i + 6 == b.len() => {
            sep(i + 3, b":")?;
            let (h, m) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if h > 23 || m > 59 {
                return Err("offset out of range".into());
            }
            let o = h * 3600 + m * 60;
            if s == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return Err("expected Z or an offset like +01:00 at the end".into()),
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month) || day < 1 || day > days_in[(month - 1) as usize] {
        return Err("no such date".into());
    }
    // 60 is a leap second: it reads as the next second's start.
    if hour > 23 || minute > 59 || second > 60 {
        return Err("no such time of day".into());
    }
    let unix_s =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    if unix_s < 0 {
        return Err("before 1970".into());
    }
    Ok(UNIX_EPOCH + Duration::new(unix_s as u64, nanos as u32))
}

/// Days from 1970-01-01 to a civil date (Howard Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An instant as RFC 3339 in UTC, to the microsecond.
pub fn format_rfc3339(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let days = (d.as_secs() / 86_400) as i64;
    let sod = d.as_secs() % 86_400;
    // civil_from_days
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        d.subsec_micros()
    )
}

/// Nanoseconds since the Unix epoch.
pub fn unix_ns(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Sleeps until `at` and returns the wall-clock instant it woke. Ready after `at`: an
/// error, unless `late_ok` (then it returns at once). `cancelled` is asked between naps
/// (at most 50 ms apart): true ends the wait with [`StartError::Cancelled`].
///
/// It naps to 2 ms before, then in 100 µs naps: the kernel's timer slack and a loaded
/// machine can add a millisecond to one long sleep, and the start skew between agents is
/// what this is for.
pub fn wait_until(
    at: SystemTime,
    late_ok: bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<SystemTime, StartError> {
    let now = SystemTime::now();
    if let Ok(late) = now.duration_since(at) {
        if !late.is_zero() && !late_ok {
            return Err(StartError::Late {
                late_ms: late.as_secs_f64() * 1e3,
                at: format_rfc3339(at),
            });
        }
        return Ok(now);
    }
    loop {
        if cancelled() {
            return Err(StartError::Cancelled {
                at: format_rfc3339(at),
            });
        }
        let now = SystemTime::now();
        let Ok(left) = at.duration_since(now) else {
            return Ok(now);
        };
        if left.is_zero() {
            return Ok(now);
        }
        let nap = if left > Duration::from_millis(2) {
            (left - Duration::from_millis(2)).min(Duration::from_millis(50))
        } else {
            left.min(Duration::from_micros(100))
        };
        std::thread::sleep(nap);
    }
}

#[cfg(test)]
mod tests;
