//! The pipelines' typed results that the views print.

use serde::Serialize;

use tracecost_replay::stability::StabilityResult;
use tracecost_replay::sweep::TraceSweep;
use tracecost_replay::{ReplayResult, Totals};

/// One replayed trace with what it is compared against.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// The replay.
    #[serde(flatten)]
    pub result: ReplayResult,
    /// Savings against the recorded cost and against no compaction.
    pub savings: Savings,
}

/// Savings of a replay against its references (positive = cheaper).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Savings {
    /// Against the recorded cost of the calls that recorded usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_recorded_usd: Option<f64>,
    /// Same, in percent of the recorded cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_recorded_pct: Option<f64>,
    /// Against the same cache policy without compaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_no_compaction_usd: Option<f64>,
    /// Same, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_no_compaction_pct: Option<f64>,
}

impl Savings {
    /// Computes savings of `totals` against the recorded cost and against
    /// `no_compaction` (when given).
    pub fn of(totals: &Totals, no_compaction: Option<&Totals>) -> Savings {
        let mut s = Savings::default();
        if let (Some(rec), Some(sim)) = (totals.recorded_cost_usd, totals.cost_usd_recorded_calls) {
            s.vs_recorded_usd = Some(rec - sim);
            s.vs_recorded_pct = (rec > 0.0).then(|| (rec - sim) / rec * 100.0);
        }
        if let Some(base) = no_compaction {
            s.vs_no_compaction_usd = Some(base.cost_usd - totals.cost_usd);
            s.vs_no_compaction_pct = (base.cost_usd > 0.0)
                .then(|| (base.cost_usd - totals.cost_usd) / base.cost_usd * 100.0);
        }
        s
    }
}

/// One trace's sweep with its stability check.
#[derive(Debug, Clone)]
pub struct TraceReport {
    /// The sweep.
    pub sweep: TraceSweep,
    /// Stability of the recommended config.
    pub stability: StabilityResult,
}
