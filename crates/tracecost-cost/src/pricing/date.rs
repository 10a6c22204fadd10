//! The calendar day a price row took effect: a UTC date, as providers
//! announce price changes ("from July 30, 2026").

use std::fmt;

use serde::{Serialize, Serializer};
use tracecost_engine::calendar::{MS_PER_DAY, civil_from_days, days_from_civil};

/// A UTC calendar day, as days since 1970-01-01.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PriceDate(i64);

impl PriceDate {
    /// The day of a proleptic Gregorian `year-month-day`; `None` for a
    /// month or day out of range.
    pub const fn from_ymd(year: i64, month: u32, day: u32) -> Option<Self> {
        if month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) {
            return None;
        }
        Some(Self(days_from_civil(year, month, day)))
    }

    /// [`PriceDate::from_ymd`] for the built-in table's literal dates.
    pub(super) const fn ymd(year: i64, month: u32, day: u32) -> Self {
        match Self::from_ymd(year, month, day) {
            Some(d) => d,
            None => panic!("not a calendar date"),
        }
    }

    /// The UTC day of a Unix-millisecond timestamp.
    pub fn of_ms(ms: u64) -> Self {
        Self((ms / MS_PER_DAY) as i64)
    }

    /// Parses `YYYY-MM-DD` (exactly that shape).
    pub fn parse(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let part = &s[r];
            part.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| part.parse().ok())
                .flatten()
        };
        Self::from_ymd(num(0..4)?, num(5..7)? as u32, num(8..10)? as u32)
    }

    /// `(year, month, day)`.
    pub fn ymd_parts(self) -> (i64, u32, u32) {
        civil_from_days(self.0)
    }
}

const fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl fmt::Display for PriceDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd_parts();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

impl Serialize for PriceDate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_bad_ones_are_refused() {
        assert_eq!(PriceDate::parse("1970-01-01"), Some(PriceDate(0)));
        let d = PriceDate::parse("2026-07-30").unwrap();
        assert_eq!(d.to_string(), "2026-07-30");
        assert_eq!(PriceDate::ymd(2026, 7, 30), d);
        // 2026-07-30T00:00:00Z and the last millisecond of that day.
        assert_eq!(PriceDate::of_ms(1_785_369_600_000), d);
        assert_eq!(PriceDate::of_ms(1_785_369_600_000 + MS_PER_DAY - 1), d);
        assert_eq!(
            PriceDate::parse("2024-02-29").unwrap().to_string(),
            "2024-02-29"
        );
        for bad in [
            "2026-02-29",
            "2026-13-01",
            "2026-7-30",
            "2026-07-30T00",
            "",
            "x026-07-30",
        ] {
            assert_eq!(PriceDate::parse(bad), None, "{bad}");
        }
    }
}
