//! The fleet answer: per config, the sum over every session; what the
//! fleet pays now (each session's status quo), what one policy would save,
//! and how that saving spreads over sessions and projects.
//!
//! Per-session figures are additive, so a fleet's figure for a config is the
//! sum of its sessions' figures.
//!
//! In the order they build on one another, each importing only those
//! before it: `figures` (noise, percentages) and `config` (one config or
//! mixed); `summary` (what a trace leaves for the fleet, and a session's
//! traces summed once) and `summaries` (all of them, in memory or
//! spilled); `answer` (a group's answer per config, its spread and
//! break-even); `days` (day by day and per month), `bill` (per model, per
//! billing class and the cache writes by cause) and `session` (each
//! session's own figures and pick); `list`; here, the [`FleetAnswer`] that holds
//! them.

mod answer;
mod bill;
mod config;
mod days;
mod figures;
mod list;
mod session;
mod summaries;
mod summary;

pub use answer::{
    Basis, BreakEven, FleetFigures, GroupAnswer, Headline, SavingsSpread, SkippedConfig, Wins,
    quantile, skipped_configs,
};
pub use bill::{CauseFigures, ClassFigures, ModelFigures};
pub use config::{FleetConfig, MIXED_STATUS_QUO};
pub use days::{DAYS_PER_MONTH, DayFigures, PerMonth};
pub use figures::NOISE_USD;
pub use list::SessionList;
pub use session::{NO_PROJECT, OwnPick, SessionFigures, TracePart, session_projects};
pub use summary::{
    SessionDay, SessionSummary, StabilitySummary, UNDATED, by_session, savings_by_session,
    session_saving,
};

use std::collections::BTreeMap;

use rayon::prelude::*;

use serde::Serialize;

use tracecost_policy::Config;

use crate::AppError;

use answer::{AnswerSum, candidate_rows};
use days::{DaySum, per_month};
use session::session_figures;
pub use summaries::{MetaRef, Summaries, SummaryStore, TraceMeta, decode_summary, encode_summary};

/// The fleet's answer, its configs and its projects.
#[derive(Debug, PartialEq, Serialize)]
pub struct FleetAnswer {
    /// The answer over every session.
    #[serde(flatten)]
    pub answer: GroupAnswer,
    /// Every config of the grid, cheapest first.
    pub configs: Vec<FleetFigures>,
    /// Every session (its traces together), most expensive first: kept
    /// where the summaries are (spilled with spilled summaries).
    pub per_session: SessionList,
    /// The answer per project, when sessions name more than one.
    pub projects: Vec<ProjectAnswer>,
    /// Per day, in day order (calls without a start time last, as
    /// [`UNDATED`]).
    pub days: Vec<DayFigures>,
    /// The figures per month at the recorded rate, when calls are dated.
    pub per_month: Option<PerMonth>,
    /// The bill per model, by name.
    pub by_model: Vec<ModelFigures>,
    /// The bill per billing class.
    pub by_class: ClassFigures,
    /// The cache writes per cause, by name.
    pub cache_writes_by_cause: Vec<CauseFigures>,
    /// The stubs of the recommendation checked for byte stability on every
    /// session, when a policy other than the status quo is recommended.
    pub stability: Option<FleetStability>,
    /// How well the status quo reproduces the recorded bill, when sessions
    /// recorded usage.
    pub fidelity: Option<super::fidelity::FidelityFigures>,
    /// The config the plan measures savings against in place of each
    /// trace's status quo (`--baseline`), when it names one: the figures
    /// called the status quo are then this config's, and the simulation's
    /// distance from the recorded bill is not measured (it is measured on
    /// what ran).
    #[serde(skip)]
    pub baseline: Option<Config>,
    /// The price of a recall-risk turn the plan set (`--recall-cost`),
    /// USD; `None`: one more round trip of its trace. Said beside every
    /// figure priced with it.
    #[serde(skip)]
    pub recall_cost_usd: Option<f64>,
    /// What the config of [`FleetAnswer::shown_pick`] saves on each session
    /// ([`session_saving`]), in session-name order: found as the answer is
    /// summed, so that showing it reads no summary again.
    #[serde(skip)]
    pub shown_savings_usd: Vec<f64>,
}

impl FleetAnswer {
    /// The figures whose per-session savings a reader is shown
    /// ([`FleetAnswer::shown_savings_usd`]): the recommendation's, or when
    /// keeping the status quo is the answer, those of the cheapest config
    /// with an effect that costs less (what a reader weighing the recall
    /// risk would look at).
    pub fn shown_pick(&self) -> Option<&FleetFigures> {
        let a = &self.answer;
        answer::shown(
            a.keep_status_quo,
            &a.recommended,
            &a.status_quo,
            self.configs.iter(),
        )
    }
}

/// The byte-stability check of one config over every session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetStability {
    /// The config checked.
    pub config: Config,
    /// Sessions checked (each with all its traces).
    pub sessions: usize,
    /// Traces checked.
    pub traces: usize,
    /// Distinct stubs seen, over every trace.
    pub stubs: usize,
    /// Violations found, over every trace.
    pub violations: usize,
    /// Sessions with at least one violation in one of their traces.
    pub unstable_sessions: usize,
}

/// One project's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectAnswer {
    /// The project.
    pub project: String,
    /// Its answer.
    #[serde(flatten)]
    pub answer: GroupAnswer,
}

/// How many summaries (or sessions' summaries) the answer reads back side
/// by side: enough to keep every core decoding, few enough to hold.
const DECODED_AT_ONCE: usize = 64;

/// The fleet's answer over `sessions`. `configs` are the configs every
/// session was replayed under.
///
/// Two passes over the summaries, each reading a batch of them (or of
/// sessions' summaries) back side by side: in the plan's order, the sums of
/// the fleet, of each project and of each day, summed one at a time (sums
/// of floats depend on their order, and this is the order of the answer
/// held in memory); then session by session, side by side, what each
/// recommendation saves on it and its own figures, gathered in
/// session-name order.
pub fn fleet(
    sessions: &Summaries,
    configs: &[Config],
    baseline: Option<&Config>,
) -> Result<FleetAnswer, AppError> {
    // A session counts in one project, its first trace's: a subagent run
    // from another folder is still part of the session that ran it.
    let by_session = sessions.by_session()?;
    let project_of = session_projects(sessions, &by_session)?;
    let mut all = AnswerSum::new(configs);
    let mut by_project: BTreeMap<&str, AnswerSum<'_>> = BTreeMap::new();
    let mut days = DaySum::new(configs);
    let mut bill = bill::BillSum::new(configs);
    let mut fidelities = Vec::new();
    // Every sweep of a plan prices a turn alike.
    let mut recall_cost_usd = None;
    // Summaries are read back (decoded, their rows matched to the
    // candidates) a batch at a time side by side, and summed one at a time
    // in the plan's order.
    for batch in (0..sessions.len())
        .collect::<Vec<_>>()
        .chunks(DECODED_AT_ONCE)
    {
        let read = batch
            .par_iter()
            .map(|&i| {
                let s = sessions.get(i)?;
                let rows = candidate_rows(&s, configs);
                Ok((s, rows))
            })
            .collect::<Result<Vec<_>, AppError>>()?;
        for (&i, (s, rows)) in batch.iter().zip(read) {
            recall_cost_usd = recall_cost_usd.or(s.sweep.recall_cost_usd);
            all.add(&s, &rows);
            by_project
                .entry(project_of[sessions.meta(i)?.session])
                .or_insert_with(|| AnswerSum::new(configs))
                .add(&s, &rows);
            days.add(&s, &rows);
            bill.add(&s, &rows);
            fidelities.extend(super::fidelity::TraceFidelity::of_result(
                &s.status_quo().result,
            ));
        }
    }
    let rec = all.pick();
    let shown = all.shown_config();
    let per_project = by_project.len() > 1;
    let project_recs: BTreeMap<&str, Option<Config>> = if per_project {
        by_project.iter_mut().map(|(p, a)| (*p, a.pick())).collect()
    } else {
        BTreeMap::new()
    };
    let mut savings = Vec::with_capacity(by_session.len());
    let mut shown_savings = Vec::with_capacity(by_session.len());
    let mut project_savings: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut per_session = if sessions.is_spilled() {
        SessionList::spilled(by_session.len())?
    } else {
        SessionList::in_memory(by_session.len())
    };
    let by_session: Vec<(&str, Vec<usize>)> = by_session.into_iter().collect();
    // Each session's figures are found side by side (a session's own
    // answer weighs every config), and gathered in session-name order.
    for batch in by_session.chunks(DECODED_AT_ONCE) {
        let figured = batch
            .par_iter()
            .map(|(name, places)| {
                let group = sessions.group(places)?;
                let mut refs: Vec<&SessionSummary> = group.iter().map(|s| &**s).collect();
                let saving = session_saving(&refs, rec.as_ref());
                let shown_saving = session_saving(&refs, shown.as_ref());
                let project_saving = per_project.then(|| {
                    let p = project_of[name];
                    (p, session_saving(&refs, project_recs[p].as_ref()))
                });
                let figures = session_figures(name, &mut refs, configs, rec.as_ref());
                Ok((saving, shown_saving, project_saving, figures))
            })
            .collect::<Result<Vec<_>, AppError>>()?;
        for (saving, shown_saving, project_saving, figures) in figured {
            savings.push(saving);
            shown_savings.push(shown_saving);
            if let Some((p, saving)) = project_saving {
                project_savings.entry(p).or_default().push(saving);
            }
            per_session.push(figures)?;
        }
    }
    per_session.finish()?;
    let (answer_all, figures) = all.finish(savings);
    let projects = if per_project {
        by_project
            .into_iter()
            .map(|(p, a)| ProjectAnswer {
                project: p.to_owned(),
                answer: a.finish(project_savings.remove(p).unwrap_or_default()).0,
            })
            .collect()
    } else {
        Vec::new()
    };
    let days = days.finish(&answer_all);
    let per_month = per_month(&days, &answer_all);
    let (by_model, by_class, cache_writes_by_cause) = bill.finish(&answer_all);
    Ok(FleetAnswer {
        per_session,
        answer: answer_all,
        configs: figures,
        projects,
        days,
        per_month,
        by_model,
        by_class,
        cache_writes_by_cause,
        stability: None,
        // Each session's status quo row is the baseline's when one is
        // asked for: set against the recorded bill, it would measure the
        // baseline's distance from what ran, not the simulation's.
        fidelity: (!fidelities.is_empty() && baseline.is_none())
            .then(|| super::fidelity::FidelityFigures::of(&fidelities)),
        baseline: baseline.cloned(),
        recall_cost_usd,
        shown_savings_usd: shown_savings,
    })
}
