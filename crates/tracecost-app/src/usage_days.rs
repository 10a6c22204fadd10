//! The periods usage is grouped by (a UTC day or month, ccusage's keys for
//! them) and the days kept (`--since`/`--until`), shared by Claude Code's
//! and Codex's period views.

/// How responses are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsagePeriod {
    /// By UTC day (`2026-01-16`).
    Day,
    /// By UTC month (`2026-01`).
    Month,
}

impl UsagePeriod {
    /// The key of the list and of each entry's period, as ccusage names
    /// them.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            UsagePeriod::Day => ("daily", "date"),
            UsagePeriod::Month => ("monthly", "month"),
        }
    }

    /// The key of the list (`daily`, `monthly`).
    pub(crate) fn list_key(self) -> &'static str {
        self.keys().0
    }

    /// The key of an entry's period (`date`, `month`).
    pub(crate) fn entry_key(self) -> &'static str {
        self.keys().1
    }

    /// The period a UTC day (`YYYY-MM-DD`) falls in.
    pub(crate) fn of_day(self, day: &str) -> String {
        match self {
            UsagePeriod::Day => day.to_owned(),
            UsagePeriod::Month => day[..7].to_owned(),
        }
    }
}

/// Days to keep, both ends counted (`YYYY-MM-DD`); `None`: no bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DayRange {
    /// The first day kept.
    pub since: Option<String>,
    /// The last day kept.
    pub until: Option<String>,
}

impl DayRange {
    /// Reads `--since`/`--until` values: `YYYYMMDD` (ccusage's form) or
    /// `YYYY-MM-DD`.
    pub fn parse_day(text: &str) -> Result<String, String> {
        let digits: String = text.chars().filter(|c| *c != '-').collect();
        let ok = digits.len() == 8
            && digits.bytes().all(|b| b.is_ascii_digit())
            && (text.len() == 8 || (text.len() == 10 && &text[4..5] == "-" && &text[7..8] == "-"));
        let (m, d) = (
            digits.get(4..6).and_then(|m| m.parse::<u32>().ok()),
            digits.get(6..8).and_then(|d| d.parse::<u32>().ok()),
        );
        match (ok, m, d) {
            (true, Some(1..=12), Some(1..=31)) => Ok(format!(
                "{}-{}-{}",
                &digits[..4],
                &digits[4..6],
                &digits[6..]
            )),
            _ => Err(format!(
                "`{text}` is not a day: expected YYYYMMDD or YYYY-MM-DD"
            )),
        }
    }

    /// Whether `day` is within.
    pub fn holds(&self, day: &str) -> bool {
        self.since.as_deref().is_none_or(|s| day >= s)
            && self.until.as_deref().is_none_or(|u| day <= u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_read_in_both_forms_and_nonsense_is_refused() {
        assert_eq!(DayRange::parse_day("20260116").unwrap(), "2026-01-16");
        assert_eq!(DayRange::parse_day("2026-01-16").unwrap(), "2026-01-16");
        for bad in [
            "2026-1-16",
            "20261316",
            "yesterday",
            "2026011",
            "2026-01-16x",
        ] {
            let e = DayRange::parse_day(bad).unwrap_err();
            assert!(e.contains("expected YYYYMMDD or YYYY-MM-DD"), "{bad}: {e}");
        }
        let r = DayRange {
            since: Some("2026-01-10".into()),
            until: Some("2026-01-20".into()),
        };
        assert!(r.holds("2026-01-10") && r.holds("2026-01-20"));
        assert!(!r.holds("2026-01-09") && !r.holds("2026-01-21"));
        assert!(DayRange::default().holds("1999-12-31"));
    }
}
