//! Calendar days as days since 1970-01-01, in the proleptic Gregorian
//! calendar (Howard Hinnant's `days_from_civil` and `civil_from_days`).
//!
//! Not the engine's own concern: it lives here because every crate that
//! names a day (prices' effective dates, the importers' timestamps, the
//! generators' dates, the fleet's days) sits above the engine, so one copy
//! serves them all without a dependency between them.

/// Milliseconds in a day (Unix time has no leap seconds).
pub const MS_PER_DAY: u64 = 86_400_000;

/// Days since 1970-01-01 of `year-month-day` (negative before it). Not
/// checked: a day past its month's end runs on into the next month
/// (February 30 is March 2 or 1); callers refuse what they must.
pub const fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `(year, month, day)` of a day count since 1970-01-01.
pub const fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    (y, m, d)
}

/// `YYYY-MM-DD` of a Unix-millisecond timestamp (UTC).
pub fn date_of_ms(ms: u64) -> String {
    let (y, m, d) = civil_from_days((ms / MS_PER_DAY) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days_convert_both_ways() {
        for (days, ymd) in [
            (0, (1970, 1, 1)),
            (-1, (1969, 12, 31)),
            (59, (1970, 3, 1)),
            (10_957, (2000, 1, 1)),
            (11_016, (2000, 2, 29)),
            (19_782, (2024, 2, 29)),
            (20_664, (2026, 7, 30)),
            (-719_468, (0, 3, 1)),
        ] {
            assert_eq!(civil_from_days(days), ymd, "{days}");
            assert_eq!(days_from_civil(ymd.0, ymd.1, ymd.2), days, "{ymd:?}");
        }
        // Past a month's end runs on into the next month.
        assert_eq!(days_from_civil(2026, 2, 30), days_from_civil(2026, 3, 2));
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        let start = days_from_civil(1900, 1, 1);
        let mut prev = civil_from_days(start - 1);
        for days in start..days_from_civil(2300, 1, 1) {
            let ymd = civil_from_days(days);
            assert_eq!(days_from_civil(ymd.0, ymd.1, ymd.2), days);
            // The next day: the day after, the first of the next month, or
            // the first of the next year.
            let next = (prev.0, prev.1, prev.2 + 1);
            let next_month = if prev.1 == 12 {
                (prev.0 + 1, 1, 1)
            } else {
                (prev.0, prev.1 + 1, 1)
            };
            assert!(ymd == next || ymd == next_month, "{prev:?} then {ymd:?}");
            prev = ymd;
        }
    }

    #[test]
    fn dates_of_timestamps() {
        assert_eq!(date_of_ms(0), "1970-01-01");
        assert_eq!(date_of_ms(951_782_400_000), "2000-02-29");
        // 2026-07-30T00:00:00Z and the last millisecond of that day.
        assert_eq!(date_of_ms(1_785_369_600_000), "2026-07-30");
        assert_eq!(date_of_ms(1_785_369_600_000 + MS_PER_DAY - 1), "2026-07-30");
    }
}
