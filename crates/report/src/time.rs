//! UTC calendar time from Unix seconds: the one civil-date conversion the reports and the CLI
//! share.

/// A moment in UTC on the proleptic Gregorian calendar, to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UtcTime {
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl UtcTime {
    /// The calendar time `unix_s` seconds after 1970-01-01 00:00:00 UTC.
    pub fn from_unix_s(unix_s: u64) -> UtcTime {
        let days = (unix_s / 86_400) as i64;
        let secs_of_day = (unix_s % 86_400) as u32;
        // Howard Hinnant's civil_from_days
        // (https://howardhinnant.github.io/date_algorithms.html#civil_from_days): eras of 400
        // years from 0000-03-01, so the leap day ends each year.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
        UtcTime {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: secs_of_day / 3600,
            minute: secs_of_day % 3600 / 60,
            second: secs_of_day % 60,
        }
    }
}

#[cfg(test)]
mod tests;
