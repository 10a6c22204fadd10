//! The fleet answer: per config, the sum over every session; what the
//! fleet pays now (each session's status quo), what one policy would save,
//! and how that saving spreads over sessions and projects.
//!
//! Per-session figures are additive, so a fleet's figure for a config is the
//! sum of its sessions' figures.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::policy::{Compaction, Config};
use crate::replay::sweep::{SweepRow, TraceSweep};
use crate::trace::Trace;

/// The `config` of a status quo that differs between sessions.
pub const MIXED_STATUS_QUO: &str = "mixed";

/// One config's figures summed over a set of sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetFigures {
    /// The config (canonical string), or [`MIXED_STATUS_QUO`] for a status
    /// quo that differs between sessions.
    pub config: String,
    /// Simulated cost, USD.
    pub cost_usd: f64,
    /// Cost plus the priced recalls the recommendation minimizes.
    pub risk_adjusted_cost_usd: f64,
    /// Saving against the status quo (positive = cheaper).
    pub savings_usd: f64,
    /// Same, in percent of the status quo.
    pub savings_pct: f64,
    /// Tool results compacted or cleared, over every session.
    pub compacted_results: usize,
    /// Assistant turns that would have needed a recall.
    pub recall_risk_turns: usize,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Cache writes.
    pub cache_creation_input_tokens: u64,
    /// Cache reads.
    pub cache_read_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// A compaction that compacted nothing anywhere: never recommended.
    pub no_effect: bool,
}

impl FleetFigures {
    fn empty(config: String) -> Self {
        FleetFigures {
            config,
            cost_usd: 0.0,
            risk_adjusted_cost_usd: 0.0,
            savings_usd: 0.0,
            savings_pct: 0.0,
            compacted_results: 0,
            recall_risk_turns: 0,
            input_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 0,
            no_effect: false,
        }
    }

    fn add(&mut self, r: &SweepRow) {
        let t = &r.result.totals;
        self.cost_usd += t.cost_usd;
        self.risk_adjusted_cost_usd += r.risk_adjusted_cost_usd;
        self.compacted_results += t.compacted_results;
        self.recall_risk_turns += r.risk.turns;
        self.input_tokens += t.usage.input_tokens;
        self.cache_creation_input_tokens += t.usage.cache_creation_input_tokens;
        self.cache_read_input_tokens += t.usage.cache_read_input_tokens;
        self.output_tokens += t.usage.output_tokens;
    }

    fn against(&mut self, status_quo_usd: f64) {
        self.savings_usd = status_quo_usd - self.cost_usd;
        self.savings_pct = if status_quo_usd > 0.0 {
            self.savings_usd / status_quo_usd * 100.0
        } else {
            0.0
        };
    }
}

/// How the recommended config's saving spreads over sessions (USD per
/// session, against each session's status quo).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SavingsSpread {
    /// 10th percentile.
    pub p10_usd: f64,
    /// Median.
    pub median_usd: f64,
    /// 90th percentile.
    pub p90_usd: f64,
    /// Sessions the recommendation makes more expensive.
    pub more_expensive: usize,
}

/// The answer for one group of sessions (the fleet, or one project).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupAnswer {
    /// Sessions.
    pub sessions: usize,
    /// Calls.
    pub calls: usize,
    /// What the sessions that recorded usage paid, USD (their calls with
    /// recorded usage only).
    pub recorded_cost_usd: Option<f64>,
    /// The status quo simulated on the same calls, USD, to compare with the
    /// recorded bill.
    pub status_quo_on_recorded_calls_usd: Option<f64>,
    /// What the sessions pay now, simulated.
    pub status_quo: FleetFigures,
    /// The config to use; equal to the status quo's figures when keeping
    /// what runs is the answer.
    pub recommended: FleetFigures,
    /// Whether the answer is to keep what runs.
    pub keep_status_quo: bool,
    /// How the recommendation's saving spreads over sessions.
    pub spread: SavingsSpread,
}

/// The fleet's answer, its configs and its projects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// The answer over every session.
    #[serde(flatten)]
    pub answer: GroupAnswer,
    /// Every config of the grid, cheapest first.
    pub configs: Vec<FleetFigures>,
    /// The answer per project, when sessions name more than one.
    pub projects: Vec<ProjectAnswer>,
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

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    // Nearest rank: deterministic and always a value that occurred.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The answer for `sweeps` (a group of sessions). `candidates` are the
/// configs every session was replayed under.
fn answer(sweeps: &[&TraceSweep], candidates: &[Config]) -> (GroupAnswer, Vec<FleetFigures>) {
    let baselines: Vec<&SweepRow> = sweeps.iter().map(|s| &s.rows[s.baseline]).collect();
    let same_status_quo = baselines
        .windows(2)
        .all(|w| w[0].result.config == w[1].result.config);
    let status_quo_config = match (same_status_quo, baselines.first()) {
        (true, Some(b)) => Some(b.result.config.clone()),
        _ => None,
    };
    let mut status_quo = FleetFigures::empty(
        status_quo_config
            .as_ref()
            .map_or_else(|| MIXED_STATUS_QUO.to_owned(), ToString::to_string),
    );
    for b in &baselines {
        status_quo.add(b);
    }
    status_quo.against(status_quo.cost_usd);
    let mut configs: Vec<(Config, FleetFigures)> = candidates
        .iter()
        .map(|c| {
            let mut f = FleetFigures::empty(c.to_string());
            for s in sweeps {
                if let Some(r) = s.rows.iter().find(|r| r.result.config == *c) {
                    f.add(r);
                }
            }
            f.against(status_quo.cost_usd);
            f.no_effect = c.compaction != Compaction::Off && f.compacted_results == 0;
            (c.clone(), f)
        })
        .collect();
    configs.sort_by(|a, b| {
        a.1.cost_usd
            .total_cmp(&b.1.cost_usd)
            .then_with(|| a.1.config.cmp(&b.1.config))
    });
    // The lowest risk-adjusted cost among policies with an effect; a tie
    // goes to the status quo, then to the simpler policy, then by name.
    let best = configs
        .iter()
        .filter(|(_, f)| !f.no_effect)
        .min_by(|(ca, a), (cb, b)| {
            a.risk_adjusted_cost_usd
                .total_cmp(&b.risk_adjusted_cost_usd)
                .then_with(|| {
                    let key = |c: &Config| (Some(c) != status_quo_config.as_ref(), c.complexity());
                    key(ca).cmp(&key(cb))
                })
                .then_with(|| a.config.cmp(&b.config))
        });
    let (keep_status_quo, recommended, rec_config) = match best {
        Some((c, f))
            if f.risk_adjusted_cost_usd < status_quo.risk_adjusted_cost_usd
                && Some(c) != status_quo_config.as_ref() =>
        {
            (false, f.clone(), Some(c.clone()))
        }
        _ => (true, status_quo.clone(), None),
    };
    let mut per_session: Vec<f64> = sweeps
        .iter()
        .map(|s| {
            let base = s.rows[s.baseline].result.totals.cost_usd;
            let rec = match &rec_config {
                Some(c) => s
                    .rows
                    .iter()
                    .find(|r| r.result.config == *c)
                    .map_or(base, |r| r.result.totals.cost_usd),
                None => base,
            };
            base - rec
        })
        .collect();
    per_session.sort_by(f64::total_cmp);
    let spread = SavingsSpread {
        p10_usd: percentile(&per_session, 10.0),
        median_usd: percentile(&per_session, 50.0),
        p90_usd: percentile(&per_session, 90.0),
        // A cent's difference is noise, not a session made dearer.
        more_expensive: per_session.iter().filter(|s| **s < -0.005).count(),
    };
    let recorded: Vec<(f64, f64)> = baselines
        .iter()
        .filter_map(|b| {
            let t = &b.result.totals;
            Some((t.recorded_cost_usd?, t.cost_usd_recorded_calls?))
        })
        .collect();
    let answer = GroupAnswer {
        sessions: sweeps.len(),
        calls: baselines.iter().map(|b| b.result.totals.calls).sum(),
        recorded_cost_usd: (!recorded.is_empty()).then(|| recorded.iter().map(|r| r.0).sum()),
        status_quo_on_recorded_calls_usd: (!recorded.is_empty())
            .then(|| recorded.iter().map(|r| r.1).sum()),
        status_quo,
        recommended,
        keep_status_quo,
        spread,
    };
    (answer, configs.into_iter().map(|(_, f)| f).collect())
}

/// The fleet's answer over `sweeps` (one per trace of `traces`, in order).
pub fn fleet(traces: &[Trace], sweeps: &[TraceSweep], configs: &[Config]) -> Fleet {
    let all: Vec<&TraceSweep> = sweeps.iter().collect();
    let (answer_all, figures) = answer(&all, configs);
    let mut by_project: BTreeMap<&str, Vec<&TraceSweep>> = BTreeMap::new();
    for (t, s) in traces.iter().zip(sweeps) {
        by_project
            .entry(t.project.as_deref().unwrap_or("(no project)"))
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
    Fleet {
        answer: answer_all,
        configs: figures,
        projects,
    }
}
