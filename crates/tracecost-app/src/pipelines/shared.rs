//! What several pipelines share: a trace prepared for its replay, the
//! plan's traces grouped by the cache they share, a trace's stability check.

use crate::AppError;
use crate::plan::{CostPlan, SweepPlan, calibration_model};
use crate::progress::Progress;
use tracecost_cost::tokens::TokenMemo;
use tracecost_engine::message::ContentBlock;
use tracecost_policy::{BlockTokens, CompactionRun, Config};
use tracecost_replay::stability::{RunSource, StabilityResult};
use tracecost_replay::{PreparedTrace, count_block};
use tracecost_trace::Trace;

/// `trace` ready to replay: its blocks counted through `memo`, with the
/// framing of the model [`calibration_model`] picks (its own; `priced_as`
/// only where the price table does not know it).
pub(super) fn prepare<'t>(
    trace: &'t Trace,
    cost: &CostPlan,
    memo: &TokenMemo,
    priced_as: Option<&str>,
) -> Result<PreparedTrace<'t>, AppError> {
    let price = calibration_model(&cost.pricing, trace, priced_as)?;
    Ok(PreparedTrace::new(
        trace,
        memo,
        price,
        cost.calibration == crate::CalibrationChoice::Auto,
    ))
}

/// How many groups of traces sharing a cache are swept side by side: enough
/// to keep every core busy when each group is small (a trace alone, whose
/// configs may all send the same requests), few enough that only their
/// rows are in memory.
pub(super) fn groups_at_once() -> usize {
    rayon::current_num_threads() * 2
}

/// The plan's traces in groups that share a cache (an account's, as the
/// plan's scope has it), each in the plan's order.
pub(super) fn account_groups(sp: &SweepPlan) -> Result<Vec<Vec<usize>>, AppError> {
    let accounts = sp
        .traces()
        .iter()
        .map(|t| t.map(|t| t.shared.account.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(sp.cost.cache_scope.groups_by(
        accounts
            .iter()
            .enumerate()
            .map(|(i, a)| (a.as_deref(), sp.head(i).timestamps)),
    ))
}

/// Token counts through a memo.
struct MemoTokens<'a>(&'a TokenMemo);

impl BlockTokens for MemoTokens<'_> {
    fn block_tokens(&self, block: &ContentBlock) -> u64 {
        count_block(self.0, block).raw_tokens
    }
}

/// `trace`'s stubs and prefixes checked byte-stable under `config`. A
/// summarising compaction's parts are checked each as a trace of its own
/// (cut where the stability check's tokenizer, with no framing, puts the
/// trigger, as it counts for the token-triggered peers), and a thinking
/// edit's cuts are marked as the policy's own changes
/// ([`tracecost_replay::stability::join_parts`],
/// [`tracecost_replay::stability::mark_thinking_cuts`]).
pub(super) fn stability_of(
    trace: &Trace,
    config: &Config,
    memo: &TokenMemo,
    progress: Option<&dyn Progress>,
) -> Result<StabilityResult, AppError> {
    let counter = MemoTokens(memo);
    let check = |trace: &Trace| -> Result<StabilityResult, AppError> {
        let mut source = RunSource {
            run: CompactionRun::new(&config.compaction).with_record(&trace.calls),
            tokens: &counter,
            fixed_tokens: 0,
            progress,
            state: Default::default(),
        };
        let mut report = tracecost_replay::stability::check(trace, &mut source, &counter)?;
        if let Some(edit) = config.thinking {
            tracecost_replay::stability::mark_thinking_cuts(&mut report, &edit.cuts(trace));
        }
        Ok(report)
    };
    let Some(rule) = config.compaction.summarising() else {
        return check(trace);
    };
    let summary = |k: usize, after: Option<&tracecost_trace::Call>| {
        let tokens = after
            .and_then(|c| c.compacted.as_deref())
            .and_then(|r| r.post_tokens)
            .unwrap_or(rule.summary_tokens);
        (
            tracecost_replay::autocompact::summary_message(k, tokens, memo),
            tokens,
        )
    };
    let parts = tracecost_policy::autocompact::split(trace, &rule, &|_| 0, &counter, &summary);
    let reports = parts
        .iter()
        .map(|p| check(&p.trace))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(tracecost_replay::stability::join_parts(reports))
}
