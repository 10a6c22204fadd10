//! How well the status quo, replayed, reproduces what was paid: per
//! session, the simulated bill of the calls that recorded usage against the
//! recorded bill of those calls; over a fleet, the total's error and how
//! the per-session errors spread. A reader knows from it how far to trust a
//! counterfactual.

use serde::Serialize;

use super::error::AppError;
use super::results::ReplayReport;
use tracecost_cost::pricing::Usage;
use tracecost_replay::explain::CacheCause;
use tracecost_replay::{CompactedIds, ReplayResult, Totals};
use tracecost_trace::Trace;

/// Sessions need this many calls to count in the spread (a one-call
/// session's error says more about its prefix than about the simulation).
pub const MIN_CALLS: usize = 5;

/// "Within" a session's recorded bill: this many percent.
pub const WITHIN_PCT: f64 = 5.0;

/// One trace's simulated bill against its recorded one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceFidelity {
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

impl TraceFidelity {
    /// The figures of one replay; `None` without recorded usage.
    pub fn of_result(r: &tracecost_replay::ReplayResult) -> Option<Self> {
        Self::of(&r.trace, &r.config.to_string(), &r.totals)
    }

    /// The figures of one replay's totals; `None` without recorded usage.
    pub fn of(trace: &str, config: &str, t: &Totals) -> Option<Self> {
        let (recorded_usd, simulated_usd) = (t.recorded_cost_usd?, t.cost_usd_recorded_calls?);
        Some(TraceFidelity {
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
pub struct FidelityFigures {
    /// Traces with recorded usage (a session's continuations and subagents
    /// apart: the fidelity of a replay is a trace's).
    pub traces: usize,
    /// Their recorded bill, USD.
    pub recorded_usd: f64,
    /// Their simulated bill on the same calls, USD.
    pub simulated_usd: f64,
    /// The total's error, percent.
    pub error_pct: f64,
    /// Traces with at least [`MIN_CALLS`] calls and a recorded bill.
    pub traces_counted: usize,
    /// Of those, within [`WITHIN_PCT`] of their recorded bill.
    pub within: usize,
    /// Median of their absolute errors, percent.
    pub median_abs_error_pct: f64,
    /// 90th percentile (nearest rank) of their absolute errors, percent.
    pub p90_abs_error_pct: f64,
    /// Largest absolute error, percent.
    pub max_abs_error_pct: f64,
}

impl FidelityFigures {
    /// The summary of `traces`.
    pub fn of(traces: &[TraceFidelity]) -> Self {
        let recorded_usd: f64 = traces.iter().map(|s| s.recorded_usd).sum();
        let simulated_usd: f64 = traces.iter().map(|s| s.simulated_usd).sum();
        let mut errors: Vec<f64> = traces
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
        FidelityFigures {
            traces: traces.len(),
            recorded_usd,
            simulated_usd,
            error_pct: error_pct(simulated_usd, recorded_usd),
            traces_counted: errors.len(),
            within: errors.iter().filter(|e| **e <= WITHIN_PCT).count(),
            median_abs_error_pct: rank(50.0),
            p90_abs_error_pct: rank(90.0),
            max_abs_error_pct: errors.last().copied().unwrap_or(0.0),
        }
    }

    /// The summary in one sentence, or `None` without recorded usage.
    pub fn line(&self) -> Option<String> {
        if self.traces == 0 {
            return None;
        }
        let spread = if self.traces_counted == 0 {
            String::new()
        } else {
            format!(
                "; per trace (a session's continuations and subagents apart; {} with {MIN_CALLS}+ calls), {} within {WITHIN_PCT}% of what they paid, median error {:.1}%, 90th percentile {:.1}%",
                self.traces_counted, self.within, self.median_abs_error_pct, self.p90_abs_error_pct
            )
        };
        // A distance that rounds to nothing has no sign ("-0.0%" reads as
        // a figure below the bill).
        let distance = match format!("{:+.1}%", self.error_pct) {
            d if d == "+0.0%" || d == "-0.0%" => "0.0%".to_owned(),
            d => d,
        };
        Some(format!(
            "How far to trust the simulation: the status quo replayed is {distance} from the recorded bill over {} trace(s){spread}.",
            self.traces
        ))
    }
}

/// Every session's fidelity and the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FidelityReport {
    /// The summary.
    pub summary: FidelityFigures,
    /// Per trace with recorded usage, in input order.
    pub traces: Vec<TraceFidelity>,
}

impl FidelityReport {
    /// The report of replays of each trace's status quo.
    pub fn of(outputs: &[ReplayReport]) -> Self {
        let traces: Vec<TraceFidelity> = outputs
            .iter()
            .filter_map(|o| TraceFidelity::of_result(&o.result))
            .collect();
        FidelityReport {
            summary: FidelityFigures::of(&traces),
            traces,
        }
    }
}

/// One call of an explained trace: what the record shows beside what the
/// simulation did, and why the simulation wrote or missed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainedCall {
    /// 1-based call index.
    pub index: usize,
    /// Its start (ms since the epoch), when the trace has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ms: Option<u64>,
    /// Milliseconds since the call before started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap_ms: Option<u64>,
    /// The recorded usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Usage>,
    /// The recorded usage, priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_cost_usd: Option<f64>,
    /// The simulated usage.
    pub simulated: Usage,
    /// The simulated usage, priced.
    pub cost_usd: f64,
    /// The simulated usage priced as the record counts tokens, where that
    /// differs: the record has no cache-write count, so the simulation's
    /// writes are compared as input (`CallResult::cost_usd_as_recorded`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd_as_recorded: Option<f64>,
    /// Why the simulated call read less than the call before had cached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<CacheCause>,
    /// The same, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause_text: Option<String>,
    /// Tool results the policy compacted or cleared at this call.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub newly_compacted: Vec<String>,
    /// Tool results it restored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
    /// Whether the simulation's cache read or prompt size is off the
    /// record's by more than [`WITHIN_PCT`] of the recorded prompt.
    pub diverges: bool,
}

impl ExplainedCall {
    /// Whether `sim` is off `rec` by more than [`WITHIN_PCT`] of the
    /// recorded prompt, in what it read or in the prompt's size.
    pub fn diverges(sim: &Usage, rec: &Usage) -> bool {
        let limit = rec.total_input() as f64 * WITHIN_PCT / 100.0;
        let off = |a: u64, b: u64| a.abs_diff(b) as f64 > limit;
        off(sim.cache_read_input_tokens, rec.cache_read_input_tokens)
            || off(sim.total_input(), rec.total_input())
    }
}

/// One trace explained call by call under one config.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// The trace.
    pub trace: String,
    /// The config replayed.
    pub config: String,
    /// The first call whose simulation diverges from its record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_divergence: Option<usize>,
    /// Calls whose simulation diverges.
    pub diverging_calls: usize,
    /// Per call.
    pub calls: Vec<ExplainedCall>,
}

impl Explanation {
    /// The explanation of `result`, a replay of `trace`.
    pub fn of(trace: &Trace, result: &ReplayResult) -> Self {
        // The ids compacted at the call before.
        let mut was = CompactedIds::default();
        let calls: Vec<ExplainedCall> = result
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let start_ms = trace.calls.get(i).and_then(|t| t.start_ms);
                let before = i.checked_sub(1);
                let gap_ms = before
                    .and_then(|p| trace.calls.get(p))
                    .and_then(|p| p.start_ms)
                    .zip(start_ms)
                    .map(|(a, b)| b.saturating_sub(a));
                let (new, restored) = c.compacted.changes_since(&was);
                let (new, restored): (Vec<String>, Vec<String>) = (
                    new.into_iter().map(str::to_owned).collect(),
                    restored.into_iter().map(str::to_owned).collect(),
                );
                was = c.compacted.clone();
                ExplainedCall {
                    index: c.index,
                    start_ms,
                    gap_ms,
                    recorded: c.recorded(),
                    recorded_cost_usd: c.recorded_cost_usd(),
                    simulated: c.usage,
                    cost_usd: c.cost_usd,
                    cost_usd_as_recorded: c.cost_usd_as_recorded,
                    cause: c.cache_cause,
                    cause_text: c.cache_cause.map(|k| k.text()),
                    newly_compacted: new,
                    restored,
                    diverges: c
                        .recorded()
                        .is_some_and(|r| ExplainedCall::diverges(&c.usage, &r)),
                }
            })
            .collect();
        Explanation {
            trace: result.trace.clone(),
            config: result.config.to_string(),
            first_divergence: calls.iter().find(|c| c.diverges).map(|c| c.index),
            diverging_calls: calls.iter().filter(|c| c.diverges).count(),
            calls,
        }
    }
}

/// The traces of `session` (its name, or the start of it: a session's id
/// also names its continuations and subagents), explained.
pub fn explain(
    traces: &[&Trace],
    outputs: &[ReplayReport],
    session: &str,
) -> Result<Vec<Explanation>, AppError> {
    let picked: Vec<Explanation> = traces
        .iter()
        .zip(outputs)
        .filter(|(t, _)| t.name.starts_with(session))
        .map(|(t, o)| Explanation::of(t, &o.result))
        .collect();
    if picked.is_empty() {
        let mut names: Vec<&str> = traces.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        let shown: Vec<&str> = names.iter().take(3).copied().collect();
        return Err(AppError::Usage(format!(
            "--explain {session}: no trace's name starts with it among the {} read (e.g. {}{})",
            traces.len(),
            shown.join(", "),
            if names.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        )));
    }
    Ok(picked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(calls: usize, recorded: f64, simulated: f64) -> TraceFidelity {
        TraceFidelity {
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
    fn the_summary_counts_traces_with_enough_calls() {
        let sum = FidelityFigures::of(&[
            s(10, 1.0, 1.02),
            s(10, 1.0, 0.90),
            s(2, 1.0, 3.0),
            s(6, 2.0, 2.0),
        ]);
        assert_eq!(sum.traces, 4);
        assert_eq!(sum.traces_counted, 3);
        assert_eq!(sum.within, 2);
        assert!((sum.error_pct - (6.92 - 5.0) / 5.0 * 100.0).abs() < 1e-9);
        assert!((sum.max_abs_error_pct - 10.0).abs() < 1e-9);
        assert!((sum.median_abs_error_pct - 2.0).abs() < 1e-9);
        assert!(
            sum.line()
                .unwrap()
                .contains("2 within 5% of what they paid")
        );
        assert!(FidelityFigures::of(&[]).line().is_none());
    }
}
