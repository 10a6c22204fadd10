//! `replay`: each run of a plan replayed under its config.

use crate::AppError;
use crate::plan::ReplayPlan;
use crate::progress::{Progress, Unit};
use crate::results::{ReplayReport, Savings};
use tracecost_policy::{Compaction, Config};
use tracecost_replay::{PreparedTrace, ReplayContext, ReplayResult};

use super::shared::prepare;

/// Replays each run of the plan; a config with compaction is also replayed
/// without it, for the saving.
pub fn replay(plan: &ReplayPlan, progress: &dyn Progress) -> Result<Vec<ReplayReport>, AppError> {
    let memo = plan.cost.memo();
    let ctx = plan.cost.replay_context(&memo, Some(progress));
    // One step per call replayed, the reference run without compaction
    // included.
    let runs = |c: &Config| {
        if c.compaction == Compaction::Off {
            1
        } else {
            2
        }
    };
    let steps: usize = plan
        .runs
        .iter()
        .map(|r| r.trace.calls.len() * runs(&r.config))
        .sum();
    progress.start("replay", steps as u64, Unit::Items);
    let mut outputs: Vec<Option<ReplayReport>> = plan.runs.iter().map(|_| None).collect();
    for group in plan
        .cost
        .cache_scope
        .groups(plan.runs.iter().map(|r| &r.trace))
    {
        // Runs of one account under one config meet one cache.
        let mut by_config: Vec<(&Config, Vec<usize>)> = Vec::new();
        for i in group {
            let c = &plan.runs[i].config;
            match by_config.iter_mut().find(|(k, _)| *k == c) {
                Some((_, v)) => v.push(i),
                None => by_config.push((c, vec![i])),
            }
        }
        for (config, runs) in by_config {
            let prepared = runs
                .iter()
                .map(|&i| {
                    prepare(
                        &plan.runs[i].trace,
                        &plan.cost,
                        &memo,
                        config.model.as_deref(),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
            let results = if config.compaction.summarising().is_some() {
                replay_autocompacted(&refs, config, ctx)?
            } else {
                replay_shared(&refs, config, ctx)?
            };
            // The same runs without compaction, for the saving.
            let references = match config.compaction {
                Compaction::Off => None,
                _ => {
                    let off = Config {
                        compaction: Compaction::Off,
                        ..config.clone()
                    };
                    Some(replay_shared(&refs, &off, ctx)?)
                }
            };
            for (k, (i, result)) in runs.iter().zip(results).enumerate() {
                let reference = references.as_ref().map(|r| &r[k].totals);
                let savings = Savings::of(&result.totals, reference);
                outputs[*i] = Some(ReplayReport { result, savings });
            }
        }
    }
    Ok(outputs.into_iter().flatten().collect())
}

/// Replays a summarising compaction over traces that share one cache:
/// each trace cut into its parts, every part of every trace replayed
/// against the one cache in start-time order, each trace's parts joined
/// back into its result (`replay::autocompact`).
pub(super) fn replay_autocompacted(
    prepared: &[&PreparedTrace<'_>],
    config: &Config,
    ctx: ReplayContext<'_>,
) -> Result<Vec<ReplayResult>, AppError> {
    let per_trace = tracecost_replay::autocompact::replay_shared(prepared, config, ctx)?;
    Ok(per_trace.into_iter().flatten().collect())
}

/// Replays `config` over traces that share one cache (one trace alone
/// replays as it always does).
fn replay_shared(
    prepared: &[&PreparedTrace<'_>],
    config: &Config,
    ctx: ReplayContext<'_>,
) -> Result<Vec<ReplayResult>, AppError> {
    if let [one] = prepared {
        return Ok(vec![tracecost_replay::replay(one, config, ctx)?]);
    }
    let per_trace =
        tracecost_replay::replay_group_shared(prepared, std::slice::from_ref(config), ctx)?;
    Ok(per_trace.into_iter().flatten().collect())
}
