//! What one trace leaves for the fleet answer ([`SessionSummary`]), and a
//! session's traces grouped and their saving summed once. Beneath every
//! other part of the fleet: the answer, the days, the bill and the
//! summaries' store all read these.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::date::date_of;
use tracecost_engine::message::{BlockKind, Content, Role};
use tracecost_policy::Config;
use tracecost_replay::stability::StabilityResult;
use tracecost_replay::sweep::{SweepRow, TraceSweep};
use tracecost_trace::Trace;

use super::figures::NOISE_USD;

/// The day of calls without a start time.
pub const UNDATED: &str = "undated";

/// The stability check of a session's recommended config, in short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct StabilitySummary {
    /// Distinct stubs seen.
    pub stubs: usize,
    /// Violations found.
    pub violations: usize,
}

impl StabilitySummary {
    /// The summary of a full check.
    pub fn of(r: &StabilityResult) -> Self {
        StabilitySummary {
            stubs: r.stubs,
            violations: r.violations.len(),
        }
    }
}

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
    pub stability: Option<StabilitySummary>,
    /// Per row of the sweep, its bill by model and class and its cache
    /// writes by cause (taken from the rows, which do not keep them).
    pub breakdowns: Vec<tracecost_replay::breakdown::Breakdown>,
}

/// Characters of a first prompt kept for naming a session.
pub(super) const FIRST_PROMPT_CHARS: usize = 80;

impl SessionSummary {
    /// The summary of `trace`'s sweep (per-call rows are read for the days,
    /// then dropped). Fails only when costs spilled to disk cannot be read
    /// back.
    pub fn new(
        trace: &Trace,
        mut sweep: TraceSweep,
        stability: Option<&StabilityResult>,
    ) -> Result<Self, crate::AppError> {
        let mut days: BTreeMap<String, SessionDay> = BTreeMap::new();
        let starts: Vec<Option<u64>> = trace.calls.iter().map(|c| c.start_ms).collect();
        for (r, row) in sweep.rows.iter().enumerate() {
            // A row's calls are in call order, its rows or its costs alone
            // (read back one row at a time when spilled).
            let per_call = row.result.per_call()?;
            // The status quo's recorded costs, read with its rows (always
            // kept: a row the report writes).
            let mut recorded = match &per_call {
                tracecost_replay::PerCall::Rows(calls) if r == sweep.baseline => {
                    Some(calls.iter().map(|c| c.recorded_cost_usd()))
                }
                _ => None,
            };
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
                    if let Some(rec) = recorded.as_mut().and_then(|r| r.next()).flatten() {
                        *d.recorded_cost_usd.get_or_insert(0.0) += rec;
                    }
                }
            }
        }
        let mut breakdowns = Vec::with_capacity(sweep.rows.len());
        for row in &mut sweep.rows {
            row.result.calls = tracecost_replay::CallResults::default();
            row.result.costs = Default::default();
            breakdowns.push(std::mem::take(&mut row.result.breakdown));
        }
        Ok(SessionSummary {
            sweep,
            session: crate::identity::session_of(trace).to_owned(),
            project: trace.project.clone(),
            first_prompt: first_prompt(trace),
            started_ms: starts.iter().flatten().min().copied(),
            ended_ms: starts.iter().flatten().max().copied(),
            days: days.into_values().collect(),
            stability: stability.map(StabilitySummary::of),
            breakdowns,
        })
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
    first.map(|t| tracecost_engine::handle::one_line(&t, FIRST_PROMPT_CHARS))
}
