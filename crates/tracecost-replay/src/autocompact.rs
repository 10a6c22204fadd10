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
                    .usage
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

/// The results of `parts` (one per part, in order) joined into the
/// trace's: every call in order, the totals summed, the summary calls and
/// their cost counted apart.
pub fn join(trace_name: &str, parts: &[Part], results: Vec<ReplayResult>) -> Option<ReplayResult> {
    let mut results = results.into_iter();
    let mut joined = results.next()?;
    joined.trace = trace_name.to_owned();
    let mut summaries = Vec::new();
    if let Some(i) = parts.first().and_then(|p| p.summary_call) {
        summaries.push(joined.calls.get(i).map_or(0.0, |c| c.cost_usd));
    }
    let mut breakdowns = vec![std::mem::take(&mut joined.breakdown)];
    let mut calls: Vec<CallResult> = joined.calls.to_vec();
    for (part, r) in parts.iter().skip(1).zip(results) {
        if let Some(i) = part.summary_call {
            summaries.push(r.calls.get(i).map_or(0.0, |c| c.cost_usd));
        }
        joined.totals.add(&r.totals);
        joined.back_to_back |= r.back_to_back;
        breakdowns.push(r.breakdown);
        calls.extend(r.calls.iter().cloned());
    }
    // Numbered from 1, as every replay's calls are.
    for (i, c) in calls.iter_mut().enumerate() {
        c.index = i + 1;
    }
    joined.calls = calls.into();
    joined.totals.summary_calls = summaries.len();
    joined.totals.summary_cost_usd = summaries.iter().sum();
    joined.fidelity = fidelity(&joined.calls);
    joined.breakdown = sum_breakdowns(breakdowns);
    Some(joined)
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
