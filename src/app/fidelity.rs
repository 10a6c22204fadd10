//! How well the status quo, replayed, reproduces what was paid: per
//! session, the simulated bill of the calls that recorded usage against the
//! recorded bill of those calls; over a fleet, the total's error and how
//! the per-session errors spread. A reader knows from it how far to trust a
//! counterfactual.

use serde::Serialize;

use super::results::ReplayOutput;
use crate::replay::Totals;

/// Sessions need this many calls to count in the spread (a one-call
/// session's error says more about its prefix than about the simulation).
pub const MIN_CALLS: usize = 5;

/// "Within" a session's recorded bill: this many percent.
pub const WITHIN_PCT: f64 = 5.0;

/// One session's simulated bill against its recorded one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionFidelity {
    /// The trace.
    pub trace: String,
    /// The config replayed (its status quo).
    pub config: String,
    /// Calls.
    pub calls: usize,
    /// Calls that recorded their input.
    pub recorded_calls: usize,
    /// What those calls were billed, USD.
    pub recorded_usd: f64,
    /// What the replay bills for the same calls, USD.
    pub simulated_usd: f64,
    /// (simulated − recorded) / recorded, in percent.
    pub error_pct: f64,
}

impl SessionFidelity {
    /// The figures of one replay; `None` without recorded usage.
    pub fn of_result(r: &crate::replay::ReplayResult) -> Option<Self> {
        Self::of(&r.trace, &r.config.to_string(), &r.totals)
    }

    /// The figures of one replay's totals; `None` without recorded usage.
    pub fn of(trace: &str, config: &str, t: &Totals) -> Option<Self> {
        let (recorded_usd, simulated_usd) = (t.recorded_cost_usd?, t.cost_usd_recorded_calls?);
        Some(SessionFidelity {
            trace: trace.to_owned(),
            config: config.to_owned(),
            calls: t.calls,
            recorded_calls: t.recorded_calls,
            recorded_usd,
            simulated_usd,
            error_pct: error_pct(simulated_usd, recorded_usd),
        })
    }
}

/// (simulated − recorded) / recorded in percent; 0 when nothing was
/// recorded. The one rule every "against the recorded bill" figure uses.
pub fn error_pct(simulated: f64, recorded: f64) -> f64 {
    if recorded > 0.0 {
        (simulated - recorded) / recorded * 100.0
    } else {
        0.0
    }
}

/// The fleet's fidelity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FidelitySummary {
    /// Sessions with recorded usage.
    pub sessions: usize,
    /// Their recorded bill, USD.
    pub recorded_usd: f64,
    /// Their simulated bill on the same calls, USD.
    pub simulated_usd: f64,
    /// The total's error, percent.
    pub error_pct: f64,
    /// Sessions with at least [`MIN_CALLS`] calls and a recorded bill.
    pub sessions_counted: usize,
    /// Of those, within [`WITHIN_PCT`] of their recorded bill.
    pub within: usize,
    /// Median of their absolute errors, percent.
    pub median_abs_error_pct: f64,
    /// 90th percentile (nearest rank) of their absolute errors, percent.
    pub p90_abs_error_pct: f64,
    /// Largest absolute error, percent.
    pub max_abs_error_pct: f64,
}

impl FidelitySummary {
    /// The summary of `sessions`.
    pub fn of(sessions: &[SessionFidelity]) -> Self {
        let recorded_usd: f64 = sessions.iter().map(|s| s.recorded_usd).sum();
        let simulated_usd: f64 = sessions.iter().map(|s| s.simulated_usd).sum();
        let mut errors: Vec<f64> = sessions
            .iter()
            .filter(|s| s.calls >= MIN_CALLS && s.recorded_usd > 0.0)
            .map(|s| s.error_pct.abs())
            .collect();
        errors.sort_by(f64::total_cmp);
        let rank = |p: f64| -> f64 {
            if errors.is_empty() {
                return 0.0;
            }
            let r = ((p / 100.0) * errors.len() as f64).ceil() as usize;
            errors[r.clamp(1, errors.len()) - 1]
        };
        FidelitySummary {
            sessions: sessions.len(),
            recorded_usd,
            simulated_usd,
            error_pct: error_pct(simulated_usd, recorded_usd),
            sessions_counted: errors.len(),
            within: errors.iter().filter(|e| **e <= WITHIN_PCT).count(),
            median_abs_error_pct: rank(50.0),
            p90_abs_error_pct: rank(90.0),
            max_abs_error_pct: errors.last().copied().unwrap_or(0.0),
        }
    }

    /// The summary in one sentence, or `None` without recorded usage.
    pub fn line(&self) -> Option<String> {
        if self.sessions == 0 {
            return None;
        }
        let spread = if self.sessions_counted == 0 {
            String::new()
        } else {
            format!(
                "; per trace (a session's continuations and subagents apart; {} with {MIN_CALLS}+ calls), {} within {WITHIN_PCT}% of what they paid, median error {:.1}%, 90th percentile {:.1}%",
                self.sessions_counted,
                self.within,
                self.median_abs_error_pct,
                self.p90_abs_error_pct
            )
        };
        Some(format!(
            "How far to trust the simulation: the status quo replayed comes within {:+.1}% of the recorded bill over {} trace(s){spread}.",
            self.error_pct, self.sessions
        ))
    }
}

/// Every session's fidelity and the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FidelityReport {
    /// The summary.
    pub summary: FidelitySummary,
    /// Per session with recorded usage, in input order.
    pub sessions: Vec<SessionFidelity>,
}

impl FidelityReport {
    /// The report of replays of each trace's status quo.
    pub fn of(outputs: &[ReplayOutput]) -> Self {
        let sessions: Vec<SessionFidelity> = outputs
            .iter()
            .filter_map(|o| SessionFidelity::of_result(&o.result))
            .collect();
        FidelityReport {
            summary: FidelitySummary::of(&sessions),
            sessions,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(calls: usize, recorded: f64, simulated: f64) -> SessionFidelity {
        SessionFidelity {
            trace: "t".into(),
            config: "off+none".into(),
            calls,
            recorded_calls: calls,
            recorded_usd: recorded,
            simulated_usd: simulated,
            error_pct: error_pct(simulated, recorded),
        }
    }

    #[test]
    fn the_summary_counts_sessions_with_enough_calls() {
        let sum = FidelitySummary::of(&[
            s(10, 1.0, 1.02),
            s(10, 1.0, 0.90),
            s(2, 1.0, 3.0),
            s(6, 2.0, 2.0),
        ]);
        assert_eq!(sum.sessions, 4);
        assert_eq!(sum.sessions_counted, 3);
        assert_eq!(sum.within, 2);
        assert!((sum.error_pct - (6.92 - 5.0) / 5.0 * 100.0).abs() < 1e-9);
        assert!((sum.max_abs_error_pct - 10.0).abs() < 1e-9);
        assert!((sum.median_abs_error_pct - 2.0).abs() < 1e-9);
        assert!(
            sum.line()
                .unwrap()
                .contains("2 within 5% of what they paid")
        );
        assert!(FidelitySummary::of(&[]).line().is_none());
    }
}
