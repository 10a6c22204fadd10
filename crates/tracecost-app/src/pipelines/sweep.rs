//! `sweep`: every config of a plan over every trace.

use rayon::prelude::*;

use crate::AppError;
use crate::plan::SweepPlan;
use crate::progress::{Progress, Unit};
use tracecost_cost::tokens::TokenMemo;
use tracecost_replay::PreparedTrace;
use tracecost_replay::sweep::TraceSweep;

use super::shared::{account_groups, groups_at_once, prepare};

/// Sweeps every config of the plan over every trace.
pub fn sweep(plan: &SweepPlan, progress: &dyn Progress) -> Result<Vec<TraceSweep>, AppError> {
    let memo = plan.cost.memo();
    progress.start(
        "sweep",
        (plan.configs().len() * plan.traces().len()) as u64,
        Unit::Items,
    );
    let mut out: Vec<Option<TraceSweep>> = plan.traces().iter().map(|_| None).collect();
    let groups = account_groups(plan)?;
    for batch in groups.chunks(groups_at_once()) {
        let swept = batch
            .par_iter()
            .map(|group| sweep_group(group, plan, &memo, progress))
            .collect::<Vec<_>>();
        for (group, sweeps) in batch.iter().zip(swept) {
            for (&i, s) in group.iter().zip(sweeps?) {
                out[i] = Some(s);
            }
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// Sweeps every config of the plan over the traces `group` names (indices
/// into the plan's traces), which share one simulated cache.
fn sweep_group(
    group: &[usize],
    plan: &SweepPlan,
    memo: &TokenMemo,
    progress: &dyn Progress,
) -> Result<Vec<TraceSweep>, AppError> {
    let traces = group
        .iter()
        .map(|&i| plan.trace(i))
        .collect::<Result<Vec<_>, _>>()?;
    // An account's traces are counted side by side (each counts its own
    // texts in parallel too, but a short session has few).
    let prepared = traces
        .par_iter()
        .map(|t| prepare(t, &plan.cost, memo, plan.priced_as()))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
    // A grid applies per trace: a config that cannot apply to a trace (the
    // plan made sure it applies to some other) is skipped for it, as the
    // plan's checks found.
    Ok(tracecost_replay::sweep::sweep_checked(
        &refs,
        &plan.applicability.subset(group),
        plan.cost.replay_context(memo, None),
        plan.recall_cost_usd,
        &|| progress.advance(1),
    )?)
}
