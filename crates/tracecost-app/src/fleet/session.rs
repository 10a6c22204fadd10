//! A fleet's sessions: what one trace leaves for the fleet answer
//! ([`SessionSummary`]), the traces of one session summed once, and each
//! session's own figures and pick ([`SessionFigures`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::message::{BlockKind, Content, Role};
use crate::policy::Config;
use crate::replay::stability::StabilityReport;
use crate::replay::sweep::{SweepRow, TraceSweep};
use crate::trace::Trace;
use crate::usage::date_of;

use super::answer::answer;
use super::days::UNDATED;
use super::summaries::Summaries;
use super::{FleetConfig, NOISE_USD, StabilityBrief, pct_of};
use crate::AppError;

/// One day of a session: its calls that started that day (UTC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionDay {
    /// `YYYY-MM-DD`, or [`UNDATED`].
    pub day: String,
    /// Calls.
    pub calls: usize,
    /// What the provider billed for those of them that recorded usage.
    pub recorded_cost_usd: Option<f64>,
    /// Simulated cost under each config, in the order of the sweep's rows.
    pub cost_usd: Vec<f64>,
}

/// What a fleet keeps of one session once its own pages are written: the
/// sweep without per-call rows, and what names and dates the session. A
/// fleet of a thousand sessions is summed from these, never from the
/// per-call data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// The sweep; every row's per-call lists are empty.
    pub sweep: TraceSweep,
    /// The session the trace is part of (its own name when it is whole).
    pub session: String,
    /// The project the session belongs to, when the source tells.
    pub project: Option<String>,
    /// The first thing the user asked, on one line.
    pub first_prompt: Option<String>,
    /// When the first call started, in milliseconds since the Unix epoch.
    pub started_ms: Option<u64>,
    /// When the last call started.
    pub ended_ms: Option<u64>,
    /// Per day, in day order.
    pub days: Vec<SessionDay>,
    /// The stability of the recommended config, if checked.
    pub stability: Option<StabilityBrief>,
    /// Per row of the sweep, its bill by model and class and its cache
    /// writes by cause (taken from the rows, which do not keep them).
    pub breakdowns: Vec<crate::replay::breakdown::Breakdown>,
}

/// Characters of a first prompt kept for naming a session.
pub(super) const FIRST_PROMPT_CHARS: usize = 80;

impl SessionSummary {
    /// The summary of `trace`'s sweep (per-call rows are read for the days,
    /// then dropped).
    pub fn new(trace: &Trace, mut sweep: TraceSweep, stability: Option<&StabilityReport>) -> Self {
        let mut days: BTreeMap<String, SessionDay> = BTreeMap::new();
        let starts: Vec<Option<u64>> = trace.calls.iter().map(|c| c.start_ms).collect();
        for (r, row) in sweep.rows.iter().enumerate() {
            // A row's calls are in call order, its rows or its costs alone.
            let per_call = row.result.per_call();
            for (i, cost_usd) in per_call.costs().enumerate() {
                let day = starts
                    .get(i)
                    .copied()
                    .flatten()
                    .map_or_else(|| UNDATED.to_owned(), date_of);
                let d = days.entry(day.clone()).or_insert_with(|| SessionDay {
                    day,
                    calls: 0,
                    recorded_cost_usd: None,
                    cost_usd: vec![0.0; sweep.rows.len()],
                });
                d.cost_usd[r] += cost_usd;
                if r == sweep.baseline {
                    d.calls += 1;
                    // The status quo's rows are always kept (a row the
                    // report writes).
                    if let crate::replay::PerCall::Rows(calls) = per_call
                        && let Some(rec) = calls[i].recorded_cost_usd
                    {
                        *d.recorded_cost_usd.get_or_insert(0.0) += rec;
                    }
                }
            }
        }
        let mut breakdowns = Vec::with_capacity(sweep.rows.len());
        for row in &mut sweep.rows {
            row.result.calls = crate::replay::CallResults::default();
            row.result.costs = Default::default();
            breakdowns.push(std::mem::take(&mut row.result.breakdown));
        }
        SessionSummary {
            sweep,
            session: crate::identity::session_of(trace).to_owned(),
            project: trace.project.clone(),
            first_prompt: first_prompt(trace),
            started_ms: starts.iter().flatten().min().copied(),
            ended_ms: starts.iter().flatten().max().copied(),
            days: days.into_values().collect(),
            stability: stability.map(StabilityBrief::of),
            breakdowns,
        }
    }

    /// The status quo's row.
    pub fn status_quo(&self) -> &SweepRow {
        &self.sweep.rows[self.sweep.baseline]
    }

    /// The session's own recommended row.
    pub fn recommended(&self) -> &SweepRow {
        &self.sweep.rows[self.sweep.recommended]
    }

    /// The row of `config`, if the session was replayed under it.
    pub fn row(&self, config: &Config) -> Option<&SweepRow> {
        self.sweep.rows.iter().find(|r| r.result.config == *config)
    }
}

/// How Claude Code opens the note it adds before a local command's output.
pub(super) const LOCAL_COMMAND_CAVEAT: &str =
    "Caveat: The messages below were generated by the user";

/// The traces of each session (a conversation with its continuations and
/// subagents: the traces that share its name), in session-name order. The
/// one grouping every per-session figure is summed over.
pub fn by_session<'a>(
    traces: impl IntoIterator<Item = &'a SessionSummary>,
) -> BTreeMap<&'a str, Vec<&'a SessionSummary>> {
    let mut out: BTreeMap<&str, Vec<&SessionSummary>> = BTreeMap::new();
    for t in traces {
        out.entry(t.session.as_str()).or_default().push(t);
    }
    out
}

/// What `config` saves on one session's traces against their status quo; a
/// trace not replayed under `config`, or `None` (the status quo itself),
/// saves nothing. Within [`NOISE_USD`] a session breaks even: 0.
pub fn session_saving(traces: &[&SessionSummary], config: Option<&Config>) -> f64 {
    let saving: f64 = traces
        .iter()
        .map(|t| {
            let base = t.status_quo().result.totals.cost_usd;
            let cost = config
                .and_then(|c| t.row(c))
                .map_or(base, |r| r.result.totals.cost_usd);
            base - cost
        })
        .sum();
    if saving.abs() < NOISE_USD {
        0.0
    } else {
        saving
    }
}

/// What `config` saves per session ([`session_saving`] of each of
/// [`by_session`]), in session-name order.
pub fn savings_by_session<'a>(
    traces: impl IntoIterator<Item = &'a SessionSummary>,
    config: Option<&Config>,
) -> Vec<f64> {
    by_session(traces)
        .values()
        .map(|g| session_saving(g, config))
        .collect()
}

/// The first user text that is not something a client added (Claude Code
/// wraps commands and reminders in tags, and notes local commands), on one
/// line.
pub(super) fn first_prompt(trace: &Trace) -> Option<String> {
    let texts = trace
        .messages
        .iter()
        .filter(|m| m.role() == Role::User)
        .flat_map(|m| -> Vec<Arc<str>> {
            match m.content() {
                Content::Text(t) => vec![t.clone()],
                Content::Blocks(blocks) => blocks
                    .iter()
                    .filter_map(|b| match b.kind() {
                        BlockKind::Text { text } => Some(text.clone()),
                        _ => None,
                    })
                    .collect(),
            }
        })
        .filter(|t| !t.trim().is_empty());
    let mut first = None;
    for t in texts {
        let start = t.trim_start();
        if !start.starts_with('<') && !start.starts_with(LOCAL_COMMAND_CAVEAT) {
            first = Some(t);
            break;
        }
        first.get_or_insert(t);
    }
    first.map(|t| crate::engine::handle::one_line(&t, FIRST_PROMPT_CHARS))
}

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
