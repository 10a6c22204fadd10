//! The fleet day by day, and per month where the days allow it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::answer::{GroupAnswer, Headline};
use super::summary::SessionSummary;
pub use super::summary::UNDATED;
use tracecost_policy::Config;

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

/// The fleet per day, summed one trace at a time (in the plan's order)
/// before the recommendation is known: per day, the status quo and every
/// candidate config ([`DaySum::finish`] keeps the recommendation's).
pub(super) struct DaySum<'c> {
    candidates: &'c [Config],
    days: BTreeMap<String, DaySums>,
}

/// One day's sums.
struct DaySums {
    /// Sessions seen that day.
    seen: BTreeSet<String>,
    calls: usize,
    recorded_cost_usd: Option<f64>,
    status_quo_usd: f64,
    /// Per candidate config (a trace not replayed under one adds its
    /// status quo).
    config_usd: Vec<f64>,
}

impl<'c> DaySum<'c> {
    /// No day yet.
    pub(super) fn new(candidates: &'c [Config]) -> Self {
        DaySum {
            candidates,
            days: BTreeMap::new(),
        }
    }

    /// Adds one trace's days; `rows` are its candidate rows
    /// ([`super::answer::candidate_rows`]).
    pub(super) fn add(&mut self, s: &SessionSummary, rows: &[Option<usize>]) {
        let base = s.sweep.baseline;
        let rows: Vec<usize> = rows.iter().map(|r| r.unwrap_or(base)).collect();
        for d in &s.days {
            let f = self.days.entry(d.day.clone()).or_insert_with(|| DaySums {
                seen: BTreeSet::new(),
                calls: 0,
                recorded_cost_usd: None,
                status_quo_usd: 0.0,
                config_usd: vec![0.0; rows.len()],
            });
            // A session counts once a day, however many of its traces ran.
            if !f.seen.contains(&s.session) {
                f.seen.insert(s.session.clone());
            }
            f.calls += d.calls;
            if let Some(r) = d.recorded_cost_usd {
                *f.recorded_cost_usd.get_or_insert(0.0) += r;
            }
            f.status_quo_usd += d.cost_usd[base];
            for (sum, &row) in f.config_usd.iter_mut().zip(&rows) {
                *sum += d.cost_usd[row];
            }
        }
    }

    /// Per day, in day order, under the status quo and the answer `a`'s
    /// recommendation.
    pub(super) fn finish(self, a: &GroupAnswer) -> Vec<DayFigures> {
        let rec = a.recommended_candidate(self.candidates);
        self.days
            .into_iter()
            .map(|(day, f)| DayFigures {
                day,
                sessions: f.seen.len(),
                calls: f.calls,
                recorded_cost_usd: f.recorded_cost_usd,
                status_quo_usd: f.status_quo_usd,
                recommended_usd: rec.map_or(f.status_quo_usd, |k| f.config_usd[k]),
            })
            .collect()
    }
}

/// Days since the Unix epoch of a `YYYY-MM-DD` day.
pub(super) fn epoch_day(day: &str) -> Option<i64> {
    let mut it = day.split('-');
    let y = it.next()?.parse::<i64>().ok()?;
    let (m, d) = (
        it.next()?.parse::<u32>().ok()?,
        it.next()?.parse::<u32>().ok()?,
    );
    Some(tracecost_engine::calendar::days_from_civil(y, m, d))
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
