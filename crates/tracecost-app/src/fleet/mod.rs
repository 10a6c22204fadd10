//! The fleet answer: per config, the sum over every session; what the
//! fleet pays now (each session's status quo), what one policy would save,
//! and how that saving spreads over sessions and projects.
//!
//! Per-session figures are additive, so a fleet's figure for a config is the
//! sum of its sessions' figures.
//!
//! In the order they build on one another: `session` (what a trace leaves
//! for the fleet, and a session's traces summed once), `answer` (a
//! group's answer per config, its spread and break-even), `days` (day by
//! day and per month); here, the [`Fleet`] that holds them.

mod answer;
mod days;
mod session;

pub use answer::{
    Basis, BreakEven, FleetFigures, GroupAnswer, Headline, SavingsSpread, SkippedConfig, Wins,
    quantile, skipped_configs,
};
pub use days::{DAYS_PER_MONTH, DayFigures, PerMonth, UNDATED};
pub use session::{
    NO_PROJECT, OwnPick, SessionDay, SessionFigures, SessionSummary, by_session,
    savings_by_session, session_projects, session_saving,
};

use std::collections::BTreeMap;

use serde::Serialize;

use crate::policy::Config;
use crate::replay::stability::StabilityReport;

use answer::answer;
use days::{days, per_month};
use session::per_session;

/// The `config` of a status quo that differs between sessions, as printed.
pub const MIXED_STATUS_QUO: &str = "mixed";

/// The config a fleet figure is for: one config (of the grid, or the status
/// quo every session shares), or the status quo of sessions that ran
/// different ones. Kept as a config through the answer and printed at the
/// edge: in `results.json` and on a page it is the config's canonical
/// string, or [`MIXED_STATUS_QUO`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FleetConfig {
    /// One config.
    One(Config),
    /// Status quos that differ between sessions.
    Mixed,
}

impl FleetConfig {
    /// The config, unless the status quos differ.
    pub fn config(&self) -> Option<&Config> {
        match self {
            FleetConfig::One(c) => Some(c),
            FleetConfig::Mixed => None,
        }
    }

    /// Whether the status quos this stands for differ between sessions.
    pub fn is_mixed(&self) -> bool {
        matches!(self, FleetConfig::Mixed)
    }
}

impl std::fmt::Display for FleetConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FleetConfig::One(c) => c.fmt(f),
            FleetConfig::Mixed => f.write_str(MIXED_STATUS_QUO),
        }
    }
}

impl Serialize for FleetConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A session's saving smaller than this (half a cent) is noise, not a
/// session made cheaper or dearer.
pub const NOISE_USD: f64 = 0.005;

/// The stability check of a session's recommended config, in short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StabilityBrief {
    /// Distinct stubs seen.
    pub stubs: usize,
    /// Violations found.
    pub violations: usize,
}

impl StabilityBrief {
    /// The brief of a full check.
    pub fn of(r: &StabilityReport) -> Self {
        StabilityBrief {
            stubs: r.stubs,
            violations: r.violations.len(),
        }
    }
}

/// The fleet's answer, its configs and its projects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// The answer over every session.
    #[serde(flatten)]
    pub answer: GroupAnswer,
    /// Every config of the grid, cheapest first.
    pub configs: Vec<FleetFigures>,
    /// Every session (its traces together), most expensive first.
    pub per_session: Vec<SessionFigures>,
    /// The answer per project, when sessions name more than one.
    pub projects: Vec<ProjectAnswer>,
    /// Per day, in day order (calls without a start time last, as
    /// [`UNDATED`]).
    pub days: Vec<DayFigures>,
    /// The figures per month at the recorded rate, when calls are dated.
    pub per_month: Option<PerMonth>,
    /// The stubs of the recommendation checked for byte stability on every
    /// session, when a policy other than the status quo is recommended.
    pub stability: Option<FleetStability>,
    /// How well the status quo reproduces the recorded bill, when sessions
    /// recorded usage.
    pub fidelity: Option<super::fidelity::FidelitySummary>,
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

/// `part` in percent of `whole`; 0 when `whole` is not positive.
fn pct_of(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
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

/// The fleet's answer over `sessions`. `configs` are the configs every
/// session was replayed under.
pub fn fleet(sessions: &[SessionSummary], configs: &[Config]) -> Fleet {
    let all: Vec<&SessionSummary> = sessions.iter().collect();
    let (answer_all, figures) = answer(&all, configs);
    // A session counts in one project, its first trace's: a subagent run
    // from another folder is still part of the session that ran it.
    let project_of = session_projects(sessions);
    let mut by_project: BTreeMap<&str, Vec<&SessionSummary>> = BTreeMap::new();
    for s in sessions {
        by_project
            .entry(project_of[s.session.as_str()])
            .or_default()
            .push(s);
    }
    let projects = if by_project.len() > 1 {
        by_project
            .into_iter()
            .map(|(p, ss)| ProjectAnswer {
                project: p.to_owned(),
                answer: answer(&ss, configs).0,
            })
            .collect()
    } else {
        Vec::new()
    };
    let days = days(sessions, &answer_all);
    let per_month = per_month(&days, &answer_all);
    Fleet {
        per_session: per_session(sessions, configs, &answer_all),
        answer: answer_all,
        configs: figures,
        projects,
        days,
        per_month,
        stability: None,
        fidelity: fidelity(sessions),
    }
}

/// The fidelity of each trace's status quo, when any recorded usage.
fn fidelity(sessions: &[SessionSummary]) -> Option<super::fidelity::FidelitySummary> {
    let per_trace: Vec<super::fidelity::TraceFidelity> = sessions
        .iter()
        .filter_map(|s| super::fidelity::TraceFidelity::of_result(&s.status_quo().result))
        .collect();
    (!per_trace.is_empty()).then(|| super::fidelity::FidelitySummary::of(&per_trace))
}
