//! A summarising policy replayed (Claude Code's autocompact, Anthropic's
//! and OpenAI's server-side compaction, LangChain's summarisation): the
//! trace cut into its parts at each summarising call
//! ([`tracecost_policy::autocompact`]), each part sent as it is, the parts replayed in start-time order against one cache (so the
//! system prompt and tools stay a cached prefix across the summary and
//! what follows it is written anew), and their results joined back into
//! the trace's, the summary calls counted apart.

use std::collections::BTreeMap;

use crate::breakdown::{Breakdown, CauseWrites, ModelBill};
use crate::{
    CallResult, PreparedTrace, ReplayContext, ReplayError, ReplayResult, count_block, fidelity,
};
use tracecost_engine::message::{ContentBlock, Message};
use tracecost_policy::autocompact::{Part, split};
use tracecost_policy::{BlockTokens, Config};

/// The parts `prepared`'s trace is cut into under `config` (one part, the
/// trace itself, under any other compaction or below the trigger).
pub fn parts(
    prepared: &PreparedTrace<'_>,
    config: &Config,
    ctx: ReplayContext<'_>,
) -> Result<Vec<Part>, ReplayError> {
    let trace = prepared.trace;
    let Some(rule) = config.compaction.summarising() else {
        return Ok(vec![Part {
            trace: trace.clone(),
            summary_call: None,
            messages_from: (0..trace.messages.len()).map(Some).collect(),
            calls_from: (0..trace.calls.len()).map(Some).collect(),
        }]);
    };
    let model = match trace.calls.first() {
        Some(c) => config.model_for_call(trace, c),
        None => config.model.as_deref().unwrap_or(&trace.model),
    };
    let price = ctx.pricing.lookup(model)?;
    let tokens = Counted {
        prepared,
        memo: ctx.memo,
        per_block: price.framing.per_block,
        per_message: price.framing.per_message,
    };
    let cal = &prepared.calibration;
    let fixed = |call: &tracecost_trace::Call| -> u64 {
        let of = |v: &Vec<Vec<crate::BlockCount>>| {
            v.get(call.prompt).map_or(0, |cs| {
                cs.iter().map(|c| c.tokens(cal, tokens.per_block)).sum()
            })
        };
        of(&prepared.tools) + of(&prepared.system)
    };
    // A compaction the record shows is as large as the context it left:
    // what the first call after it sent beyond the prompt before the
    // history (the summary, the messages it kept, the files Claude Code
    // read again), as that call recorded it; else as Claude Code counted
    // it (`postTokens`), else as its summary's text. One it does not
    // show, the config's size.
    let make = |k: usize, after: Option<&tracecost_trace::Call>| {
        let tokens = after
            .and_then(|c| {
                let left = c
                    .recorded_usage()
                    .and_then(|u| u.total_input())
                    .and_then(|t| t.checked_sub(fixed(c)))
                    .filter(|&t| t > 0);
                let r = c.compacted.as_deref()?;
                left.or(r.post_tokens)
                    .or_else(|| r.summary.as_deref().map(|s| ctx.memo.count(s)))
            })
            .unwrap_or(rule.summary_tokens);
        (summary_message(k, tokens, ctx.memo), tokens)
    };
    Ok(split(trace, &rule, &fixed, &tokens, &make))
}

/// The `k`-th summary (from 0): a user message of about `tokens` tokens,
/// each summary its own text (two summaries are never one cached prefix).
pub fn summary_message(k: usize, tokens: u64, memo: &tracecost_cost::tokens::TokenMemo) -> Message {
    const UNIT: &str = "What was done, what was found, what is left. ";
    const PER: usize = 64;
    let per = memo.count(&UNIT.repeat(PER)).max(1);
    let units = (tokens.saturating_mul(PER as u64)).div_ceil(per) as usize;
    let text = format!(
        "This session is being continued from a previous conversation (summary {}). {}",
        k + 1,
        UNIT.repeat(units)
    );
    let json = serde_json::json!({"role": "user", "content": [{"type": "text", "text": text}]});
    Message::from_json(&json.to_string()).expect("a summary is a valid message")
}

/// Token counts from the prepared trace, through the memo for blocks it
/// does not hold (the summary, the instruction).
struct Counted<'a> {
    prepared: &'a PreparedTrace<'a>,
    memo: &'a tracecost_cost::tokens::TokenMemo,
    per_block: u64,
    per_message: u64,
}

impl BlockTokens for Counted<'_> {
    fn block_tokens(&self, block: &ContentBlock) -> u64 {
        self.prepared
            .count_of(block)
            .unwrap_or_else(|| count_block(self.memo, block))
            .tokens(&self.prepared.calibration, self.per_block)
    }

    fn history_tokens(&self, history: &[Message]) -> u64 {
        history
            .iter()
            .map(|m| {
                self.per_message + m.blocks().iter().map(|b| self.block_tokens(b)).sum::<u64>()
            })
            .sum()
    }
}

/// The price a trace's (and its parts') token counts are calibrated
/// with: its own model's, else, for a model the table does not know, the
/// one it is priced as.
pub fn calibration_price<'p>(
    pricing: &'p tracecost_cost::pricing::Pricing,
    trace: &tracecost_trace::Trace,
    priced_as: Option<&str>,
) -> Result<&'p tracecost_cost::pricing::ModelPrice, tracecost_cost::pricing::PricingError> {
    match (pricing.lookup(&trace.model), priced_as) {
        (Ok(price), _) => Ok(price),
        (Err(_), Some(model)) => pricing.lookup(model),
        (Err(e), None) => Err(e),
    }
}

/// `configs` (one summarising compaction, model and thinking edit; one
/// per cache policy, as a sweep groups them) replayed over `prepared`,
/// traces of one account, against `sims`: each trace cut into its parts,
/// every part of every trace replayed in start-time order against the
/// caches, and each trace's parts joined back, per config. Gives one list
/// per trace, one result per config, as [`crate::run_segment`] does.
pub(crate) fn run_segment(
    prepared: &[&PreparedTrace<'_>],
    configs: &[Config],
    ctx: ReplayContext<'_>,
    sims: &mut crate::caches::SharedCaches,
) -> Result<Vec<Vec<ReplayResult>>, ReplayError> {
    let Some(first) = configs.first() else {
        return Ok(prepared.iter().map(|_| Vec::new()).collect());
    };
    let cut = prepared
        .iter()
        .map(|p| parts(p, first, ctx))
        .collect::<Result<Vec<_>, _>>()?;
    let mut all = Vec::new();
    for (whole, its) in prepared.iter().zip(&cut) {
        let price = calibration_price(ctx.pricing, whole.trace, first.model.as_deref())?;
        all.extend(
            its.iter()
                .map(|part| PreparedTrace::part_of(whole, part, ctx.memo, price)),
        );
    }
    let refs: Vec<&PreparedTrace<'_>> = all.iter().collect();
    let mut results = crate::run_segment(&refs, configs, ctx, sims)?.into_iter();
    let mut joined = Vec::with_capacity(prepared.len());
    for (p, its) in prepared.iter().zip(&cut) {
        // Per config, its result on each part.
        let mut per_config: Vec<Vec<ReplayResult>> = configs.iter().map(|_| Vec::new()).collect();
        for part in results.by_ref().take(its.len()) {
            for (c, r) in per_config.iter_mut().zip(part) {
                c.push(r);
            }
        }
        joined.push(
            per_config
                .into_iter()
                .filter_map(|rs| join(p.trace, its, rs))
                .collect(),
        );
    }
    Ok(joined)
}

/// `config`, a summarising compaction, replayed over `prepared`, traces
/// that share one cache, as [`run_segment`] replays a segment against
/// fresh caches: one result per trace.
pub fn replay_shared(
    prepared: &[&PreparedTrace<'_>],
    config: &Config,
    ctx: ReplayContext<'_>,
) -> Result<Vec<Vec<ReplayResult>>, ReplayError> {
    for p in prepared {
        crate::check_config(p.trace, config)?;
    }
    let sims = &mut crate::caches::SharedCaches::default();
    run_segment(prepared, std::slice::from_ref(config), ctx, sims)
}

/// The results of `parts` (one per part, in order) of `trace` joined into
/// the trace's: every call in order, the summary calls marked, the totals
/// summed, the summary calls and their cost counted apart. From a summary
/// on, the tool results it summarised away (those of the messages before
/// the first one a part keeps) count as compacted at every call of the
/// part, as a cleared result does: they are no longer in the context, and
/// recall risk reads them so.
pub fn join(
    trace: &tracecost_trace::Trace,
    parts: &[Part],
    results: Vec<ReplayResult>,
) -> Option<ReplayResult> {
    let mut results = results.into_iter();
    let mut joined = results.next()?;
    joined.trace = trace.name.clone();
    let mut calls: Vec<CallResult> = Vec::new();
    let mut summaries = Vec::new();
    let mut breakdowns = vec![std::mem::take(&mut joined.breakdown)];
    let mut ever_compacted: std::collections::HashSet<std::sync::Arc<str>> = Default::default();
    let first = std::mem::take(&mut joined.calls);
    let mut push_part =
        |part: &Part, part_calls: &crate::CallResults, calls: &mut Vec<CallResult>| {
            let gone = summarised_ids(trace, part);
            let shared: crate::CompactedIds = gone.iter().cloned().collect();
            for (k, c) in part_calls.iter().enumerate() {
                let mut c = c.clone();
                c.summary = part.summary_call == Some(k);
                if c.summary {
                    summaries.push(c.cost_usd);
                }
                if !gone.is_empty() {
                    c.compacted = if c.compacted.is_empty() {
                        shared.clone()
                    } else {
                        gone.iter().chain(c.compacted.iter()).cloned().collect()
                    };
                }
                ever_compacted.extend(c.compacted.iter().cloned());
                calls.push(c);
            }
        };
    if let Some(part) = parts.first() {
        push_part(part, &first, &mut calls);
    }
    for (part, r) in parts.iter().skip(1).zip(results) {
        joined.totals.add(&r.totals);
        joined.back_to_back |= r.back_to_back;
        breakdowns.push(r.breakdown);
        push_part(part, &r.calls, &mut calls);
    }
    // Numbered from 1, as every replay's calls are.
    for (i, c) in calls.iter_mut().enumerate() {
        c.index = i + 1;
    }
    joined.fidelity = fidelity(&calls);
    joined.calls = calls.into();
    joined.totals.summary_calls = summaries.len();
    joined.totals.summary_cost_usd = summaries.iter().sum();
    joined.totals.compacted_results = ever_compacted.len();
    joined.breakdown = sum_breakdowns(breakdowns);
    Some(joined)
}

/// The ids of the tool results of `trace` that `part` no longer holds: those
/// of the messages before the first one it keeps (none for a part that
/// keeps none, a summary call alone).
fn summarised_ids(trace: &tracecost_trace::Trace, part: &Part) -> Vec<std::sync::Arc<str>> {
    let Some(kept_from) = part.messages_from.iter().flatten().min().copied() else {
        return Vec::new();
    };
    trace.messages[..kept_from.min(trace.messages.len())]
        .iter()
        .flat_map(|m| m.blocks())
        .filter_map(|b| match b.kind() {
            tracecost_engine::message::BlockKind::ToolResult { tool_use_id, .. } => {
                Some(tool_use_id.clone())
            }
            _ => None,
        })
        .collect()
}

/// Breakdowns summed model by model and cause by cause.
fn sum_breakdowns(all: Vec<Breakdown>) -> Breakdown {
    let mut models: BTreeMap<String, ModelBill> = BTreeMap::new();
    let mut causes: BTreeMap<String, CauseWrites> = BTreeMap::new();
    for b in all {
        for m in b.by_model {
            let e = models.entry(m.model.clone()).or_insert_with(|| ModelBill {
                model: m.model.clone(),
                ..ModelBill::default()
            });
            e.simulated.add(&m.simulated);
            if let Some(r) = &m.recorded {
                e.recorded.get_or_insert_with(Default::default).add(r);
            }
        }
        for c in b.writes_by_cause {
            let e = causes
                .entry(c.cause.clone())
                .or_insert_with(|| CauseWrites {
                    cause: c.cause.clone(),
                    ..CauseWrites::default()
                });
            e.tokens += c.tokens;
            e.usd += c.usd;
        }
    }
    Breakdown {
        by_model: models.into_values().collect(),
        writes_by_cause: causes.into_values().collect(),
    }
}
