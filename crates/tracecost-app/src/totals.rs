//! Fleet totals of a replay or a sweep over several traces: what a folder
//! of traces costs in all, rather than one table per trace. A sweep's
//! totals are the report's fleet answer ([`super::fleet::fleet`]), so the
//! same traces and grid give the same fleet figures here and in a report;
//! a replay's are its runs summed per config.

use serde::Serialize;

use super::fleet::{FleetConfig, FleetFigures, SessionSummary, SkippedConfig};
use super::plan::TraceRun;
use super::results::{ReplayReport, Savings};
use tracecost_policy::Config;
use tracecost_replay::sweep::{SweepRow, TraceSweep};
use tracecost_replay::{ReplayResult, Totals};
use tracecost_trace::Trace;

/// The session a trace is part of: its conversation, with the
/// continuations and subagents that name it, else the trace alone.
fn session_of(trace: &Trace) -> &str {
    trace.session.as_deref().unwrap_or(&trace.name)
}

fn count_sessions<'a>(names: impl IntoIterator<Item = &'a str>) -> usize {
    names
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// A replay's traces summed, per config and in all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayTotals {
    /// Sessions (a conversation's parts and subagents count once).
    pub sessions: usize,
    /// Traces.
    pub traces: usize,
    /// Per config the traces were replayed under, in order of first use.
    pub configs: Vec<ReplayGroup>,
    /// Every trace; its config is [`FleetConfig::Mixed`] when
    /// the traces ran under more than one.
    pub total: ReplayGroup,
}

/// Traces replayed under one config (or all of them), summed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayGroup {
    /// The config, or [`FleetConfig::Mixed`] for the total of traces
    /// replayed under several.
    pub config: FleetConfig,
    /// Sessions.
    pub sessions: usize,
    /// Traces.
    pub traces: usize,
    /// The traces' totals summed.
    pub totals: Totals,
    /// Against the recorded bill of the calls that recorded usage, and
    /// against no compaction (the traces whose config compacts).
    pub savings: Savings,
}

impl ReplayGroup {
    fn of<'a>(config: FleetConfig, items: &[(&'a TraceRun, &'a ReplayReport)]) -> Self {
        let mut t = Totals::default();
        // Against no compaction: the saving and what it is a part of.
        let mut reference: Option<(f64, f64)> = None;
        for (_, o) in items {
            let r = &o.result.totals;
            t.add(r);
            if let Some(s) = o.savings.vs_no_compaction_usd {
                let (saved, base) = reference.get_or_insert((0.0, 0.0));
                *saved += s;
                *base += r.cost_usd + s;
            }
        }
        let mut savings = Savings::of(&t, None);
        if let Some((saved, base)) = reference {
            savings.vs_no_compaction_usd = Some(saved);
            savings.vs_no_compaction_pct = (base > 0.0).then(|| saved / base * 100.0);
        }
        ReplayGroup {
            config,
            sessions: count_sessions(items.iter().map(|(r, _)| session_of(&r.trace))),
            traces: items.len(),
            totals: t,
            savings,
        }
    }
}

/// The totals of `outputs`, the replays of `runs` (in the same order).
pub fn replay_totals(runs: &[TraceRun], outputs: &[ReplayReport]) -> ReplayTotals {
    let items: Vec<(&TraceRun, &ReplayReport)> = runs.iter().zip(outputs).collect();
    let mut by_config: Vec<(&Config, Vec<(&TraceRun, &ReplayReport)>)> = Vec::new();
    for &(run, out) in &items {
        match by_config.iter_mut().find(|(k, _)| **k == run.config) {
            Some((_, v)) => v.push((run, out)),
            None => by_config.push((&run.config, vec![(run, out)])),
        }
    }
    let total_config = match by_config.as_slice() {
        [(one, _)] => FleetConfig::One((*one).clone()),
        _ => FleetConfig::Mixed,
    };
    ReplayTotals {
        sessions: count_sessions(runs.iter().map(|r| session_of(&r.trace))),
        traces: items.len(),
        configs: by_config
            .into_iter()
            .map(|(c, v)| ReplayGroup::of(FleetConfig::One(c.clone()), &v))
            .collect(),
        total: ReplayGroup::of(total_config, &items),
    }
}

/// A sweep's traces summed per config: the fleet answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepTotals {
    /// Sessions (a conversation's parts and subagents count once).
    pub sessions: usize,
    /// Traces.
    pub traces: usize,
    /// Calls.
    pub calls: usize,
    /// Calls that recorded usage.
    pub recorded_calls: usize,
    /// What those calls were billed, USD.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_cost_usd: Option<f64>,
    /// What runs now: each trace's status quo (or the baseline asked for),
    /// summed; its config is [`FleetConfig::Mixed`] when the
    /// traces' differ.
    pub status_quo: FleetFigures,
    /// Every config, summed over every trace (a trace it cannot apply to
    /// counts at its status quo), by cost, then the simpler policy, then
    /// config string.
    pub configs: Vec<FleetFigures>,
    /// Index in `configs` of the cheapest (on a tie, the simpler policy).
    pub cheapest: usize,
    /// Index in `configs` of the recommendation, the lowest risk-adjusted
    /// cost; `None` when the answer is to keep what runs.
    pub recommended: Option<usize>,
    /// Configs of the grid that could not apply to some traces.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedConfig>,
}

/// `s` without its per-call rows, which the totals do not read.
fn figures_only(s: &TraceSweep) -> TraceSweep {
    let row = |r: &SweepRow| SweepRow {
        result: ReplayResult {
            trace: r.result.trace.clone(),
            config: r.result.config.clone(),
            model: r.result.model.clone(),
            back_to_back: r.result.back_to_back,
            calibration: r.result.calibration,
            calls: Default::default(),
            costs: Default::default(),
            totals: r.result.totals,
            fidelity: r.result.fidelity,
            breakdown: r.result.breakdown.clone(),
        },
        risk: r.risk,
        risk_adjusted_cost_usd: r.risk_adjusted_cost_usd,
        recall_tokens_usd: r.recall_tokens_usd,
        recall_cost_usd: r.recall_cost_usd,
        savings_usd: r.savings_usd,
        savings_pct: r.savings_pct,
        pareto: r.pareto,
        no_effect: r.no_effect,
    };
    TraceSweep {
        trace: s.trace.clone(),
        description: s.description.clone(),
        source: s.source.clone(),
        rows: s.rows.iter().map(row).collect(),
        baseline: s.baseline,
        cheapest: s.cheapest,
        recommended: s.recommended,
        recall_cost_usd: s.recall_cost_usd,
        observed_recall: s.observed_recall.clone(),
    }
}

/// The totals of `sweeps`, the sweeps of `traces` (in the same order)
/// under `configs`.
pub fn sweep_totals(
    traces: &[Trace],
    sweeps: &[TraceSweep],
    configs: &[Config],
) -> Result<SweepTotals, crate::AppError> {
    let summaries: Vec<SessionSummary> = traces
        .iter()
        .zip(sweeps)
        .map(|(t, s)| SessionSummary::new(t, figures_only(s), None))
        .collect::<Result<_, _>>()?;
    let fleet = super::fleet::fleet(&super::fleet::Summaries::from_vec(summaries), configs, None)?;
    let complexity = |c: &FleetConfig| c.config().map_or(u8::MAX, Config::complexity);
    let mut ranked = fleet.configs;
    // As a trace's sweep ranks its rows: on an exact tie, the simpler
    // policy first, so that it is the one labelled cheapest.
    ranked.sort_by(|a, b| {
        a.cost_usd
            .total_cmp(&b.cost_usd)
            .then_with(|| complexity(&a.config).cmp(&complexity(&b.config)))
            .then_with(|| a.config.to_string().cmp(&b.config.to_string()))
    });
    let a = fleet.answer;
    let recommended = (!a.keep_status_quo)
        .then(|| ranked.iter().position(|f| f.config == a.recommended.config))
        .flatten();
    Ok(SweepTotals {
        sessions: a.sessions,
        traces: a.traces,
        calls: a.calls,
        recorded_calls: a.recorded_calls,
        recorded_cost_usd: a.recorded_cost_usd,
        status_quo: a.status_quo,
        configs: ranked,
        cheapest: 0,
        recommended,
        skipped: a.skipped,
    })
}
