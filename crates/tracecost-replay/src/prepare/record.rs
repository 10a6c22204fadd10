//! What a trace's record sets in its preparation beyond token counts: the
//! growth of the recorded prompt shared among the blocks appended, the
//! results Claude Code cleared with no boundary line, and the size of the
//! system prompt and tools fitted on the first recorded call.

use std::sync::Arc;

use tracecost_cost::pricing::{Framing, ModelPrice};
use tracecost_cost::tokens::TokenMemo;
use tracecost_engine::message::{BlockKind, ContentBlock};

use super::{BlockCount, PreparedTrace, Scale, TraceCalibration, count_block};

/// What reasoning does to the recorded prompt between two calls
/// ([`PreparedTrace::reasoning_between`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ReasoningChange {
    /// Tokens of the reasoning sized from the record that the second call
    /// appended and sends.
    pub(super) kept_appended: u64,
    /// Tokens of the reasoning the first call's prompt held that the
    /// second's drops.
    pub(super) dropped: u64,
}

impl PreparedTrace<'_> {
    /// Sizes each response's reasoning from the record: a call that
    /// recorded its reasoning tokens returned reasoning items of that size,
    /// and later requests send them back in those tokens (what the record
    /// keeps of them, an encrypted or redacted text, counts for nothing
    /// like it). The thinking blocks the response added (those between its
    /// request and the next call's) share the call's reasoning tokens
    /// equally and become [`Scale::Exact`].
    pub(super) fn size_reasoning(&mut self) {
        let calls = &self.trace.calls;
        for (i, c) in calls.iter().enumerate() {
            let Some(r) = c.recorded_usage().and_then(|u| u.reasoning_tokens) else {
                continue;
            };
            let end = calls
                .get(i + 1)
                .map_or(self.messages.len(), |n| n.messages)
                .min(self.messages.len());
            let start = c.messages.min(end);
            let at: Vec<(usize, usize)> = (start..end)
                .flat_map(|mi| {
                    self.trace.messages[mi]
                        .blocks()
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| super::is_reasoning(b))
                        .map(move |(bi, _)| (mi, bi))
                })
                .collect();
            let Some(shares) = apportion(r, &vec![1; at.len()]) else {
                continue;
            };
            for ((mi, bi), share) in at.into_iter().zip(shares) {
                if let Some(count) = self.messages[mi].get_mut(bi) {
                    count.raw_tokens = share;
                    count.scale = Scale::Exact;
                }
            }
        }
    }

    /// Between call `ia` and the next: the reasoning sized from the
    /// record that the next appended and sends, and the reasoning call
    /// `ia` sent that the next drops ([`PreparedTrace::reasoning_cut`]).
    pub(super) fn reasoning_between(&self, ia: usize) -> ReasoningChange {
        let calls = &self.trace.calls;
        let (Some(a), Some(b)) = (calls.get(ia), calls.get(ia + 1)) else {
            return ReasoningChange::default();
        };
        let ib = ia + 1;
        let cut_a = self.reasoning_cut.get(ia).copied().unwrap_or(0);
        let cut_b = self.reasoning_cut.get(ib).copied().unwrap_or(0);
        let (na, nb) = (
            a.messages.min(self.messages.len()),
            b.messages.min(self.messages.len()),
        );
        let cal = self.calibration;
        let reasoning = |range: std::ops::Range<usize>, exact_only: bool| -> u64 {
            range
                .flat_map(|mi| {
                    self.trace.messages[mi]
                        .blocks()
                        .iter()
                        .zip(&self.messages[mi])
                        .filter(|(blk, _)| super::is_reasoning(blk))
                        .map(|(_, c)| *c)
                })
                .filter(|c| !exact_only || c.scale == Scale::Exact)
                .map(|c| c.tokens(&cal, 0))
                .sum()
        };
        ReasoningChange {
            kept_appended: reasoning(na.max(cut_b)..nb.max(na), true),
            dropped: reasoning(cut_a.min(na)..cut_b.min(na).max(cut_a.min(na)), false),
        }
    }

    /// Sets the content of the messages each call appended to exactly what
    /// the provider counted: between two consecutive calls with recorded
    /// input (same prompt version, a growing history), the recorded prompt
    /// grew by the appended messages' tokens plus their framing, whatever
    /// the transcript left out (reminders, attachments). That growth is
    /// shared among the appended blocks in proportion to their calibrated
    /// counts (largest remainder, so the shares sum exactly), and those
    /// blocks become [`Scale::Exact`]. A replay of the status quo then
    /// sends exactly the recorded prompt at every such call; a config that
    /// replaces a block drops that block's share. Growth that is negative
    /// (the context was rebuilt) or has no counted block to land on is left
    /// to the fitted factor.
    pub(super) fn apportion_growth(&mut self, framing: &Framing) {
        let calls = &self.trace.calls;
        for (ia, w) in calls.windows(2).enumerate() {
            let [a, b] = w else { continue };
            let (Some(ra), Some(rb)) = (
                a.recorded_usage().and_then(|u| u.total_input()),
                b.recorded_usage().and_then(|u| u.total_input()),
            ) else {
                continue;
            };
            // Across a compaction read through, the recorded prompt
            // restarted from the summary: its change is no growth.
            if a.prompt != b.prompt
                || b.messages <= a.messages
                || b.messages > self.messages.len()
                || b.compacted.is_some()
            {
                continue;
            }
            let range = a.messages..b.messages;
            let frame: u64 = self
                .messages
                .range(range.clone())
                .map(|m| framing.per_message + framing.per_block * m.len() as u64)
                .sum();
            // Reasoning dropped comes back into the growth, reasoning sized
            // from the record is taken out of it: the rest is the other
            // blocks' share.
            let r = self.reasoning_between(ia);
            let Some(growth) = (rb + r.dropped)
                .checked_sub(ra)
                .and_then(|g| g.checked_sub(frame))
                .and_then(|g| g.checked_sub(r.kept_appended))
            else {
                continue;
            };
            let cut = self.reasoning_cut.get(ia + 1).copied().unwrap_or(0);
            let cal = self.calibration;
            // The blocks that take a share: not reasoning already sized,
            // not reasoning the call drops.
            let shared = |mi: usize, bi: usize, c: &BlockCount| {
                let reasoning = self.trace.messages[mi]
                    .blocks()
                    .get(bi)
                    .is_some_and(super::is_reasoning);
                !(reasoning && (c.scale == Scale::Exact || mi < cut))
            };
            let weights: Vec<u64> = range
                .clone()
                .flat_map(|mi| {
                    self.messages[mi]
                        .iter()
                        .enumerate()
                        .filter(move |(bi, c)| shared(mi, *bi, c))
                        .map(|(_, c)| c.tokens(&cal, 0))
                })
                .collect();
            let Some(shares) = apportion(growth, &weights) else {
                continue;
            };
            let keep: Vec<Vec<bool>> = range
                .clone()
                .map(|mi| {
                    self.messages[mi]
                        .iter()
                        .enumerate()
                        .map(|(bi, c)| shared(mi, bi, c))
                        .collect()
                })
                .collect();
            let mut shares = shares.into_iter();
            for (m, keep) in self.messages.range_mut(range).into_iter().zip(keep) {
                for (c, k) in m.iter_mut().zip(keep) {
                    if !k {
                        continue;
                    }
                    if let Some(s) = shares.next() {
                        c.raw_tokens = s;
                        c.scale = Scale::Exact;
                    }
                }
            }
        }
    }

    /// Per call, for a request the client's cache policy put no markers on
    /// (whatever the config), the tokens it carried beyond the history the
    /// call sends; `None` for every other call. Such a request is on
    /// another model than the trace's, has no markers recorded, and its
    /// record shows nothing read and nothing written: an advisor's
    /// sub-inference (`usage.iterations`), which the server builds from the
    /// transcript and caches only where the advisor tool's own `caching`
    /// asks (a client's request after a change of model writes what it
    /// sends). What it carried beyond the history (the advisor's own
    /// instructions, and its view of the transcript) is its recorded prompt
    /// less that of the executor's request of the same response (the
    /// nearest call before it sending the same history on the trace's
    /// model); 0 where there is none.
    pub(super) fn read_unmarked(&self) -> Vec<Option<u64>> {
        let trace = self.trace;
        let own_model =
            |c: &tracecost_trace::Call| c.model.as_deref().is_none_or(|m| m == trace.model);
        let calls = &trace.calls;
        calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let u = c.recorded_usage()?;
                let cached = u.cache_read_input_tokens.unwrap_or(0)
                    + u.cache_creation_input_tokens.unwrap_or(0);
                if own_model(c) || c.markers.is_some() || cached > 0 {
                    return None;
                }
                let total = u.total_input()?;
                let executor = calls[..i]
                    .iter()
                    .rev()
                    .take_while(|b| b.messages == c.messages)
                    .find(|b| own_model(b))
                    .and_then(|b| b.recorded_usage()?.total_input());
                Some(executor.map_or(0, |e| total.saturating_sub(e)))
            })
            .collect()
    }

    /// The tool results a client cleared without writing which. A
    /// conversation's prompt only grows: when a call's recorded prompt is
    /// smaller than the call before's although its history grew, the
    /// client removed content (Claude Code clears old tool results, in
    /// place, when its cache has gone cold, and writes a
    /// `microcompact_boundary` line only sometimes). What it removed is the
    /// call before's prompt plus what this call appended, less this call's
    /// prompt; the oldest tool results not yet cleared (those the
    /// transcript says were cleared count as cleared) are taken as the
    /// cleared ones, as many as bring the prompt closest to the record,
    /// each left as Claude Code's placeholder. A shrink that no number of
    /// results matches better than none clears nothing.
    pub(super) fn infer_clears(
        &self,
        memo: &TokenMemo,
        framing: &Framing,
    ) -> Vec<(usize, Arc<str>)> {
        let trace = self.trace;
        let calls = &trace.calls;
        let cal = self.calibration;
        let mut cleared: std::collections::HashSet<&str> = Default::default();
        let mut out: Vec<(usize, Arc<str>)> = Vec::new();
        // A cleared result's content is the placeholder: its tokens, counted
        // once (a tool_result counts its content's text, as a text block).
        let placeholder = count_block(
            memo,
            &ContentBlock::text(tracecost_policy::CLAUDE_CODE_CLEARED_PLACEHOLDER),
        )
        .tokens(&cal, framing.per_block);
        let tokens = |m: &[BlockCount]| {
            m.iter()
                .map(|c| c.tokens(&cal, framing.per_block))
                .sum::<u64>()
                + framing.per_message
        };
        for w in calls.windows(2) {
            let [a, b] = w else { continue };
            cleared.extend(a.cleared.iter().map(String::as_str));
            cleared.extend(b.cleared.iter().map(String::as_str));
            let (Some(ra), Some(rb)) = (
                a.recorded_usage().and_then(|u| u.total_input()),
                b.recorded_usage().and_then(|u| u.total_input()),
            ) else {
                continue;
            };
            // A call the transcript says what was cleared at is explained,
            // and so is one after a compaction (the prompt restarted).
            if a.prompt != b.prompt
                || b.messages <= a.messages
                || b.messages > self.messages.len()
                || rb >= ra
                || !b.cleared.is_empty()
                || b.compacted.is_some()
            {
                continue;
            }
            let appended: u64 = self
                .messages
                .range(a.messages..b.messages)
                .map(&tokens)
                .sum();
            let removed = (ra + appended).saturating_sub(rb);
            // Oldest first, each result's saving as the placeholder.
            let mut taken: Vec<&Arc<str>> = Vec::new();
            let mut small: Vec<&Arc<str>> = Vec::new();
            let mut saved = 0u64;
            'scan: for (m, counts) in trace.messages[..a.messages]
                .iter()
                .zip(self.messages.iter())
            {
                for (block, count) in m.blocks().iter().zip(counts) {
                    let BlockKind::ToolResult { tool_use_id, .. } = block.kind() else {
                        continue;
                    };
                    if cleared.contains(&**tool_use_id) {
                        continue;
                    }
                    // A result no longer than the placeholder saves
                    // nothing: cleared only if a later one is.
                    let saving = count
                        .tokens(&cal, framing.per_block)
                        .saturating_sub(placeholder);
                    if saving == 0 {
                        small.push(tool_use_id);
                        continue;
                    }
                    let next = saved + saving;
                    if next.abs_diff(removed) >= saved.abs_diff(removed) {
                        break 'scan;
                    }
                    saved = next;
                    taken.append(&mut small);
                    taken.push(tool_use_id);
                }
            }
            for id in taken {
                cleared.insert(id);
                out.push((b.messages, id.clone()));
            }
        }
        out
    }

    /// Fits the prefix factor on the first call that recorded its input:
    /// what remains of its total once its messages (content-calibrated),
    /// the framing, the tool-use prompt and any hidden prefix are taken out
    /// is the true size of the system prompt and tools.
    pub(super) fn fit_prefix(&self, price: &ModelPrice) -> Option<f64> {
        let (call, recorded) = self
            .trace
            .calls
            .iter()
            .find_map(|c| Some((c, c.recorded_usage()?.total_input()?)))?;
        let tools = self.tools.get(call.prompt)?;
        let system = self.system.get(call.prompt)?;
        let raw_prefix: u64 = tools
            .iter()
            .chain(system)
            .filter(|c| c.scale == Scale::Prefix)
            .map(|c| c.raw_tokens)
            .sum();
        if raw_prefix == 0 {
            return None;
        }
        let content_only = TraceCalibration {
            content: self.calibration.content,
            prefix_factor: None,
            idle: None,
        };
        let messages: u64 = self
            .messages
            .range(0..call.messages.min(self.messages.len()))
            .map(|m| {
                m.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        c.tokens(
                            &content_only,
                            price.framing.per_block
                                + if i == 0 { price.framing.per_message } else { 0 },
                        )
                    })
                    .sum::<u64>()
            })
            .sum();
        let fixed = price.framing.per_tool * tools.len() as u64
            + price.framing.per_block * system.len() as u64
            + if tools.is_empty() {
                0
            } else {
                price
                    .tool_prompt
                    .tokens(tracecost_cost::pricing::ToolChoice::Auto)
            }
            + system
                .iter()
                .filter(|c| c.scale == Scale::Exact)
                .map(|c| c.raw_tokens)
                .sum::<u64>();
        let remaining = recorded as f64 - messages as f64 - fixed as f64;
        let f = remaining / raw_prefix as f64;
        // Outside this range the record says more about the trace (a
        // different prompt, a missing part) than about the tokenizer.
        (0.2..=5.0).contains(&f).then_some(f)
    }
}

/// `total` split in proportion to `weights`, summing exactly (largest
/// remainder; ties to the earlier block). `None` when every weight is 0.
pub(super) fn apportion(total: u64, weights: &[u64]) -> Option<Vec<u64>> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return None;
    }
    let mut shares = Vec::with_capacity(weights.len());
    let mut rems = Vec::with_capacity(weights.len());
    let mut given = 0u64;
    for (i, &w) in weights.iter().enumerate() {
        let exact = u128::from(total) * u128::from(w);
        let share = (exact / sum) as u64;
        shares.push(share);
        rems.push((exact % sum, i));
        given += share;
    }
    rems.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    for &(_, i) in rems.iter().take((total - given) as usize) {
        shares[i] += 1;
    }
    Some(shares)
}

/// The stand-in for what a request sent without the client's markers
/// carried beyond the history ([`PreparedTrace::read_unmarked`]): a block of
/// that many tokens.
pub fn unrecorded_tail(tokens: u64) -> BlockCount {
    super::hidden::stand_in(
        &format!("[not recorded: what the request carried beyond the history, {tokens} tokens]"),
        tokens,
    )
    .1
}

#[cfg(test)]
mod apportion_tests {
    use super::apportion;
    use proptest::prelude::*;

    #[test]
    fn shares_follow_the_weights_and_sum_exactly() {
        assert_eq!(apportion(10, &[1, 1, 1]), Some(vec![4, 3, 3]));
        assert_eq!(apportion(7, &[0, 5, 0]), Some(vec![0, 7, 0]));
        assert_eq!(apportion(0, &[3, 4]), Some(vec![0, 0]));
        assert_eq!(apportion(5, &[0, 0]), None);
    }

    proptest! {
        #[test]
        fn shares_sum_to_the_total_and_stay_near_the_proportion(
            total in 0u64..10_000_000,
            weights in prop::collection::vec(0u64..100_000, 1..40),
        ) {
            let sum: u64 = weights.iter().sum();
            prop_assume!(sum > 0);
            let shares = apportion(total, &weights).unwrap();
            prop_assert_eq!(shares.iter().sum::<u64>(), total);
            for (s, w) in shares.iter().zip(&weights) {
                let exact = total as f64 * *w as f64 / sum as f64;
                prop_assert!((*s as f64 - exact).abs() < 1.0 + 1e-9);
            }
        }
    }
}
