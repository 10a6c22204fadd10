//! A fleet's sessions: each session's own figures and pick
//! ([`SessionFigures`]), and the projects they belong to; what one trace
//! leaves for them is in `summary`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use tracecost_policy::Config;

use super::answer::answer;
use super::config::FleetConfig;
use super::figures::pct_of;
use super::summaries::Summaries;
use super::summary::{SessionSummary, session_saving};
use crate::AppError;

/// One session as a reader counts it: a conversation with its
/// continuations and subagents, its traces summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionFigures {
    /// The session's name.
    pub session: String,
    /// Its project (the conversation's own), when the source tells.
    pub project: Option<String>,
    /// The first thing the user asked in the conversation, on one line.
    pub first_prompt: Option<String>,
    /// When its first call started, in milliseconds since the Unix epoch.
    pub started_ms: Option<u64>,
    /// When its last call started.
    pub ended_ms: Option<u64>,
    /// Its traces: the conversation, then its continuations and subagents
    /// as they ran, by their names in the report.
    pub traces: Vec<String>,
    /// Calls, over its traces.
    pub calls: usize,
    /// Of those, calls that recorded their usage.
    pub recorded_calls: usize,
    /// What those calls were billed, USD.
    pub recorded_cost_usd: Option<f64>,
    /// Its status quo, simulated, USD.
    pub status_quo_usd: f64,
    /// What it costs under the fleet's recommendation (its status quo when
    /// the answer is to keep what runs).
    pub recommended_usd: f64,
    /// The fleet recommendation's saving on it ([`session_saving`]).
    pub savings_usd: f64,
    /// That saving in percent of its status quo.
    pub savings_pct: f64,
    /// The config the fleet's rule picks for this session alone.
    pub own_pick: OwnPick,
    /// Each trace's part of these figures, in the order of `traces`, so a
    /// page of the session shows the whole of it and what each part adds.
    #[serde(default)]
    pub parts: Vec<TracePart>,
}

/// One trace's part of its session's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TracePart {
    /// The trace's name in the report.
    pub trace: String,
    /// Its calls.
    pub calls: usize,
    /// What its calls with recorded usage were billed, USD.
    pub recorded_cost_usd: Option<f64>,
    /// Its status quo, simulated, USD.
    pub status_quo_usd: f64,
    /// What it costs under the fleet's recommendation (its status quo when
    /// the answer is to keep what runs), USD.
    pub recommended_usd: f64,
}

/// The policy the fleet's rule picks for one session on its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnPick {
    /// The config; the status quo's when keeping it is the answer.
    pub config: FleetConfig,
    /// Whether the answer for this session is to keep what runs.
    pub keep_status_quo: bool,
    /// Its cost on the session, simulated, USD.
    pub cost_usd: f64,
    /// Its saving against the session's status quo, USD.
    pub savings_usd: f64,
    /// That saving in percent.
    pub savings_pct: f64,
}

/// One session's figures: `group` is its traces (in any order), `rec` the
/// fleet's recommendation (`None`: keep what runs).
pub(super) fn session_figures(
    name: &str,
    group: &mut [&SessionSummary],
    candidates: &[Config],
    rec: Option<&Config>,
) -> SessionFigures {
    group.sort_by(|x, y| run_order(x, y));
    let (own, _) = answer(group, candidates);
    let first = group[0];
    let status_quo_usd = own.status_quo.cost_usd;
    let savings_usd = session_saving(group, rec);
    SessionFigures {
        session: name.to_owned(),
        project: first.project.clone(),
        first_prompt: first.first_prompt.clone(),
        started_ms: group.iter().filter_map(|t| t.started_ms).min(),
        ended_ms: group.iter().filter_map(|t| t.ended_ms).max(),
        traces: group.iter().map(|t| t.sweep.trace.clone()).collect(),
        calls: own.calls,
        recorded_calls: own.recorded_calls,
        recorded_cost_usd: own.recorded_cost_usd,
        status_quo_usd,
        recommended_usd: status_quo_usd - savings_usd,
        savings_usd,
        savings_pct: pct_of(savings_usd, status_quo_usd),
        own_pick: OwnPick {
            config: own.recommended.config.clone(),
            keep_status_quo: own.keep_status_quo,
            cost_usd: own.recommended.cost_usd,
            savings_usd: own.recommended.savings_usd,
            savings_pct: own.recommended.savings_pct,
        },
        parts: group
            .iter()
            .map(|t| {
                let base = &t.status_quo().result.totals;
                TracePart {
                    trace: t.sweep.trace.clone(),
                    calls: base.calls,
                    recorded_cost_usd: base.recorded_cost_usd,
                    status_quo_usd: base.cost_usd,
                    recommended_usd: rec
                        .and_then(|c| t.row(c))
                        .map_or(base.cost_usd, |r| r.result.totals.cost_usd),
                }
            })
            .collect(),
    }
}

/// A session's traces in reading order: the conversation itself (the trace
/// that bears the session's name) first, whatever ran before it (a
/// subagent's warm-up), then the others by first call (undated last), then
/// by name.
pub(super) fn run_order(x: &SessionSummary, y: &SessionSummary) -> std::cmp::Ordering {
    run_key(&x.sweep.trace, &x.session, x.started_ms)
        .cmp(&run_key(&y.sweep.trace, &y.session, y.started_ms))
        .then_with(|| x.sweep.trace.cmp(&y.sweep.trace))
}

/// A trace's place in its session's reading order, before its name.
fn run_key(trace: &str, session: &str, started_ms: Option<u64>) -> (bool, bool, Option<u64>) {
    (trace != session, started_ms.is_none(), started_ms)
}

/// Each session's project: the conversation's own (its first trace in
/// reading order), or [`NO_PROJECT`]; `by_session` is
/// [`Summaries::by_session`] of `sessions`.
pub fn session_projects<'s>(
    sessions: &'s Summaries,
    by_session: &BTreeMap<&'s str, Vec<usize>>,
) -> Result<BTreeMap<&'s str, &'s str>, AppError> {
    by_session
        .iter()
        .map(|(&name, places)| {
            let metas = places
                .iter()
                .map(|&i| sessions.meta(i))
                .collect::<Result<Vec<_>, _>>()?;
            let first = metas
                .into_iter()
                .min_by(|x, y| {
                    run_key(x.trace, x.session, x.started_ms)
                        .cmp(&run_key(y.trace, y.session, y.started_ms))
                        .then_with(|| x.trace.cmp(y.trace))
                })
                .and_then(|t| t.project);
            Ok((name, first.unwrap_or(NO_PROJECT)))
        })
        .collect()
}

/// The project of sessions whose source names none.
pub const NO_PROJECT: &str = "(no project)";
