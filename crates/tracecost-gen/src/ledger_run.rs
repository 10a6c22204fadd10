//! Sessions whose agent ran the ledger: the trace of an agent that sent
//! its history through the engine's compactor (results over
//! [`LEDGER_THRESHOLD`] characters older than the last [`LEDGER_KEEP_LAST`]
//! stubbed) and offered the model `recall_tool_result`, which the model
//! called on some of the stubbed results.
//!
//! The history stays lossless, as a trace records it; the recalls are in
//! it: when a result is first stubbed at a call, the model recalls it with
//! a chance of [`RECALL_CHANCE`] (drawn from the seed and the result's
//! tool_use id), calling the tool beside the tool calls of that call's
//! reply (the first reply that calls tools, from that call on), and the
//! tool's answer, what the engine's executor returns for it, joins the
//! results that follow. The trace's status quo is the ledger that ran.

use std::collections::HashSet;

use crate::build::{J, obj, tool_result, tool_use};
use crate::rng::Rng;
use tracecost_engine::ledger::InMemoryLedger;
use tracecost_engine::message::{BlockKind, Message, Role};
use tracecost_engine::recall::{RECALL_TOOL_NAME, execute};
use tracecost_engine::rewrite::{CompactionPolicy, Compactor};
use tracecost_trace::Trace;

/// Size threshold of the ledger that ran, in characters.
pub const LEDGER_THRESHOLD: u64 = 2_000;
/// Results the ledger that ran never stubs, counted from the end.
pub const LEDGER_KEEP_LAST: usize = 1;
/// The chance that the model recalls a result once it is stubbed.
pub const RECALL_CHANCE: f64 = 0.25;

/// The config string of the ledger that ran, the traces' status quo.
pub fn ledger_status_quo() -> String {
    format!("ledger:t={LEDGER_THRESHOLD},k={LEDGER_KEEP_LAST}+none")
}

/// `parts` (one session's traces) as the agent would have recorded them
/// had it run the ledger, the recalls drawn from `seed`.
pub(crate) fn with_ledger(parts: Vec<Trace>, seed: u64) -> Vec<Trace> {
    let rng = Rng::new(seed).fork("ledger-recalls");
    parts.into_iter().map(|t| run_part(t, &rng)).collect()
}

fn run_part(mut trace: Trace, rng: &Rng) -> Trace {
    let policy = CompactionPolicy {
        size_threshold: LEDGER_THRESHOLD,
        keep_last_n: LEDGER_KEEP_LAST,
    };
    let mut compactor = Compactor::new(InMemoryLedger::new(), policy);
    let mut decided: HashSet<String> = HashSet::new();
    // mem_ids the model means to recall at the next reply that calls tools.
    let mut pending: Vec<String> = Vec::new();
    let mut recalls = 0usize;
    for ci in 0..trace.calls.len() {
        let sent = trace.calls[ci].messages.min(trace.messages.len());
        let Ok(rewrite) = compactor.rewrite(&trace.messages[..sent]) else {
            continue;
        };
        for h in &rewrite.compacted {
            if h.tool_name != RECALL_TOOL_NAME && decided.insert(h.tool_call_id.clone()) {
                let mut draw = rng.fork(&h.tool_call_id);
                if draw.chance(RECALL_CHANCE) {
                    pending.push(h.mem_id.clone());
                }
            }
        }
        drop(rewrite);
        if !pending.is_empty() && replies_with_tools(&trace.messages, sent) {
            for mem_id in pending.drain(..) {
                recalls += 1;
                let input = obj([("mem_id", J::from(mem_id.as_str()))]);
                let answer = execute(compactor.ledger(), &input.compact());
                let id = format!("toolu_recall_{recalls:04}");
                append(
                    &mut trace.messages,
                    sent,
                    tool_use(&id, RECALL_TOOL_NAME, &input),
                );
                append(
                    &mut trace.messages,
                    sent + 1,
                    tool_result(&id, &answer, false),
                );
            }
        }
    }
    trace.status_quo = Some(ledger_status_quo());
    trace.description = format!(
        "{} The agent ran the ledger ({}) and recalled {recalls} stubbed results.",
        trace.description,
        ledger_status_quo()
    );
    trace
}

/// Whether the reply at `at` calls tools and the message after it answers
/// them: where a recall can join the calls.
fn replies_with_tools(messages: &[Message], at: usize) -> bool {
    let calls_tools = |m: &Message| {
        m.role() == Role::Assistant
            && m.blocks()
                .iter()
                .any(|b| matches!(b.kind(), BlockKind::ToolUse { .. }))
    };
    let answers = |m: &Message| {
        m.role() == Role::User
            && m.blocks()
                .iter()
                .any(|b| matches!(b.kind(), BlockKind::ToolResult { .. }))
    };
    messages.get(at).is_some_and(calls_tools) && messages.get(at + 1).is_some_and(answers)
}

fn append(messages: &mut [Message], at: usize, block: tracecost_engine::message::ContentBlock) {
    let m = &mut messages[at];
    let mut blocks = m.blocks().to_vec();
    blocks.push(block);
    *m = Message::new(m.role(), blocks);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_engine::message::ToolResultContent;

    #[test]
    fn the_model_reads_back_stubbed_results_whole_and_the_seed_decides_which() {
        let parts = crate::ledger_session_parts(60, 4);
        assert_eq!(parts, crate::ledger_session_parts(60, 4));
        let t = &parts[0];
        assert_eq!(t.status_quo.as_deref(), Some("ledger:t=2000,k=1+none"));
        // Each recall's answer is the payload of a result over the
        // threshold, byte for byte.
        let payloads: Vec<&str> = t
            .messages
            .iter()
            .flat_map(|m| m.blocks())
            .filter_map(|b| match b.kind() {
                BlockKind::ToolResult {
                    content: ToolResultContent::Text(p),
                    ..
                } => Some(&**p),
                _ => None,
            })
            .collect();
        let recalls: Vec<&str> = t
            .messages
            .iter()
            .flat_map(|m| m.blocks())
            .filter_map(|b| match b.kind() {
                BlockKind::ToolResult {
                    tool_use_id,
                    content: ToolResultContent::Text(p),
                    ..
                } if tool_use_id.starts_with("toolu_recall_") => Some(&**p),
                _ => None,
            })
            .collect();
        assert!(recalls.len() >= 2, "{}", recalls.len());
        for r in &recalls {
            assert!(r.chars().count() as u64 > LEDGER_THRESHOLD);
            assert_eq!(payloads.iter().filter(|p| *p == r).count(), 2, "{r:.80}");
        }
        assert_ne!(
            crate::ledger_session_parts(60, 5)[0].messages,
            crate::session_parts(60, 5)[0].messages
        );
    }
}
