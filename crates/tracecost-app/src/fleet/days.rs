//! The fleet day by day, and per month where the days allow it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::answer::{GroupAnswer, Headline};
use super::session::SessionSummary;

/// The day of calls without a start time.
pub const UNDATED: &str = "undated";

/// Days in an average month (365.25 / 12), for "per month" figures.
pub const DAYS_PER_MONTH: f64 = 30.4375;

/// One day of the fleet: the calls that started that day (UTC).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayFigures {
    /// `YYYY-MM-DD`, or [`UNDATED`].
    pub day: String,
    /// Sessions with a call that day (each once, however many of its
    /// traces ran).
    pub sessions: usize,
    /// Calls.
    pub calls: usize,
    /// What the provider billed for the calls that recorded usage.
    pub recorded_cost_usd: Option<f64>,
    /// The status quo simulated.
    pub status_quo_usd: f64,
    /// The fleet's recommendation simulated.
    pub recommended_usd: f64,
}

/// The fleet's figures scaled to a month at the rate the traces recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerMonth {
    /// First day with a call.
    pub first_day: String,
    /// Last day with a call.
    pub last_day: String,
    /// Calendar days from the first to the last, both counted.
    pub days: u64,
    /// What the recorded bill comes to per month.
    pub recorded_usd: Option<f64>,
    /// What the status quo comes to per month.
    pub status_quo_usd: f64,
    /// What the recommendation comes to per month.
    pub recommended_usd: f64,
    /// The saving per month.
    pub savings_usd: f64,
    /// The headline per month, on its basis.
    pub headline: Headline,
}

/// The fleet per day, under its status quo and its recommendation.
pub(super) fn days(sessions: &[SessionSummary], a: &GroupAnswer) -> Vec<DayFigures> {
    let mut out: BTreeMap<&str, DayFigures> = BTreeMap::new();
    let mut seen: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for s in sessions {
        let base = s.sweep.baseline;
        let rec = if a.keep_status_quo {
            base
        } else {
            s.sweep
                .rows
                .iter()
                .position(|r| a.recommended.config.config() == Some(&r.result.config))
                .unwrap_or(base)
        };
        for d in &s.days {
            let f = out.entry(&d.day).or_insert_with(|| DayFigures {
                day: d.day.clone(),
                sessions: 0,
                calls: 0,
                recorded_cost_usd: None,
                status_quo_usd: 0.0,
                recommended_usd: 0.0,
            });
            // A session counts once a day, however many of its traces ran.
            if seen.entry(&d.day).or_default().insert(&s.session) {
                f.sessions += 1;
            }
            f.calls += d.calls;
            if let Some(r) = d.recorded_cost_usd {
                *f.recorded_cost_usd.get_or_insert(0.0) += r;
            }
            f.status_quo_usd += d.cost_usd[base];
            f.recommended_usd += d.cost_usd[rec];
        }
    }
    out.into_values().collect()
}

/// Days since the Unix epoch of a `YYYY-MM-DD` day.
pub(super) fn epoch_day(day: &str) -> Option<i64> {
    let mut it = day.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (it.next()??, it.next()??, it.next()??);
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The fleet's figures per month, when its calls are dated: the totals
/// scaled by an average month over the calendar days the calls span.
pub(super) fn per_month(days: &[DayFigures], a: &GroupAnswer) -> Option<PerMonth> {
    let dated: Vec<&DayFigures> = days.iter().filter(|d| d.day != UNDATED).collect();
    let (first, last) = (dated.first()?, dated.last()?);
    let span = (epoch_day(&last.day)? - epoch_day(&first.day)? + 1).max(1) as u64;
    let scale = DAYS_PER_MONTH / span as f64;
    Some(PerMonth {
        first_day: first.day.clone(),
        last_day: last.day.clone(),
        days: span,
        recorded_usd: a.recorded_cost_usd.map(|r| r * scale),
        status_quo_usd: a.status_quo.cost_usd * scale,
        recommended_usd: a.recommended.cost_usd * scale,
        savings_usd: a.recommended.savings_usd * scale,
        headline: a.headline.scaled(scale),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::date_of;

    #[test]
    fn epoch_days_round_trip_through_dates() {
        for d in [0i64, 1, 59, 365, 10_957, 20_000, 20_454] {
            let day = date_of(d as u64 * 86_400_000);
            assert_eq!(epoch_day(&day), Some(d), "{day}");
        }
        assert_eq!(epoch_day("undated"), None);
    }
}
