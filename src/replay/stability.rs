//! Stability: are stubs and prefixes byte-stable from one call to the next?
//!
//! A prompt cache only pays off if what was sent before is sent again as the
//! same bytes. For every call this checks that (a) every stub, once it
//! appears, is byte-identical at every later call; (c) each call's messages
//! extend the previous call's messages, except where a compaction new at
//! this call explains the change. Check (b), the same stubs in fresh
//! processes, compares [`StabilityReport::digest`] across processes (the
//! CLI spawns them).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::engine::ledger::LedgerError;
use crate::engine::message::{BlockKind, Message};
use crate::engine::rewrite::WireBlock;
use crate::engine::wire::message_json;
use crate::policy::{BlockTokens, CompactionRun, PolicyView};
use crate::trace::Trace;

/// Something that produces the wire view of each call (the policy under
/// test; tests substitute faulty ones).
pub trait ViewSource {
    /// The view of one call's history.
    fn view<'h>(&mut self, history: &'h [Message]) -> Result<PolicyView<'h>, LedgerError>;
}

/// A compaction run as a view source.
pub struct RunSource<'a> {
    /// The run.
    pub run: CompactionRun,
    /// Token counts for token-triggered peers.
    pub tokens: &'a dyn BlockTokens,
    /// Tokens of the tools and system prompt.
    pub fixed_tokens: u64,
}

impl ViewSource for RunSource<'_> {
    fn view<'h>(&mut self, history: &'h [Message]) -> Result<PolicyView<'h>, LedgerError> {
        self.run.view(history, self.fixed_tokens, self.tokens)
    }
}

/// One broken promise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// 1-based call index.
    pub call: usize,
    /// Which check: `stub-changed`, `stub-dropped` or `prefix-changed`.
    pub kind: &'static str,
    /// The tool_use id concerned, when one is.
    pub tool_use_id: Option<String>,
    /// Message index concerned.
    pub message: usize,
    /// First differing byte offset.
    pub offset: usize,
    /// The earlier bytes (around the difference, bounded).
    pub before: String,
    /// The later bytes (around the difference, bounded).
    pub after: String,
}

/// Per-call figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallStability {
    /// 1-based call index.
    pub index: usize,
    /// Messages of the previous call sent again byte-identical, in order
    /// from the start (the part a cache can still serve).
    pub messages_kept: usize,
    /// Tokens of those messages: the previous prefix that survived.
    pub tokens_kept: u64,
    /// Tokens of the previous call's messages.
    pub previous_tokens: u64,
    /// Results compacted for the first time at this call.
    pub new_compactions: Vec<String>,
}

/// The outcome of a stability run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StabilityReport {
    /// Per call.
    pub calls: Vec<CallStability>,
    /// Everything that broke, in call order.
    pub violations: Vec<Violation>,
    /// SHA-256 over every stub's bytes (by tool_use id, in id order) and the
    /// last call's messages: equal digests mean equal bytes.
    pub digest: String,
    /// How many distinct stubs were seen.
    pub stubs: usize,
}

const CONTEXT: usize = 60;

/// Runs the checks over every call of `trace`.
pub fn check(
    trace: &Trace,
    source: &mut dyn ViewSource,
    tokens: &dyn BlockTokens,
) -> Result<StabilityReport, LedgerError> {
    let mut stubs: BTreeMap<String, String> = BTreeMap::new();
    let mut prev: Vec<String> = Vec::new();
    let mut prev_tokens: Vec<u64> = Vec::new();
    let mut prev_compacted: BTreeSet<String> = BTreeSet::new();
    let mut calls = Vec::new();
    let mut violations = Vec::new();
    for (ci, call) in trace.calls.iter().enumerate() {
        let index = ci + 1;
        let history = trace.history_of(call);
        let pv = source.view(history)?;
        let compacted: BTreeSet<String> = pv.compacted.iter().map(|s| s.to_string()).collect();
        let new: Vec<String> = compacted.difference(&prev_compacted).cloned().collect();
        for gone in prev_compacted.difference(&compacted) {
            violations.push(Violation {
                call: index,
                kind: "stub-dropped",
                tool_use_id: Some(gone.clone()),
                message: 0,
                offset: 0,
                before: stubs.get(gone).cloned().unwrap_or_default(),
                after: "(sent in full again)".into(),
            });
        }
        // (a) stubs are byte-stable once they appear.
        let mut new_in_message: BTreeSet<usize> = BTreeSet::new();
        for (mi, wm) in pv.view.messages.iter().enumerate() {
            for wb in wm.blocks.iter().flatten() {
                let WireBlock::Compacted { original, stub } = wb else {
                    continue;
                };
                let id = match original.kind() {
                    BlockKind::ToolResult { tool_use_id, .. }
                    | BlockKind::ToolUse {
                        id: tool_use_id, ..
                    } => tool_use_id.to_string(),
                    _ => continue,
                };
                let key = if matches!(original.kind(), BlockKind::ToolUse { .. }) {
                    format!("{id}#input")
                } else {
                    id.clone()
                };
                let bytes = stub.to_json();
                match stubs.get(&key) {
                    Some(before) if *before != bytes => {
                        violations.push(diff(
                            index,
                            "stub-changed",
                            Some(id.clone()),
                            mi,
                            before,
                            &bytes,
                        ));
                    }
                    Some(_) => {}
                    None => {
                        stubs.insert(key, bytes);
                    }
                }
                if new.contains(&id) {
                    new_in_message.insert(mi);
                }
            }
        }
        // (c) the view extends the previous one, except where explained.
        let cur: Vec<String> = pv.view.messages.iter().map(message_json).collect();
        let cur_tokens: Vec<u64> = pv
            .view
            .messages
            .iter()
            .map(|m| message_tokens(m, tokens))
            .collect();
        let mut kept = 0;
        let mut still_prefix = true;
        for (mi, before) in prev.iter().enumerate() {
            let after = cur.get(mi).map(String::as_str).unwrap_or("");
            if before == after {
                if still_prefix {
                    kept += 1;
                }
                continue;
            }
            still_prefix = false;
            if !new_in_message.contains(&mi) {
                violations.push(diff(index, "prefix-changed", None, mi, before, after));
            }
        }
        calls.push(CallStability {
            index,
            messages_kept: kept,
            tokens_kept: prev_tokens[..kept].iter().sum(),
            previous_tokens: prev_tokens.iter().sum(),
            new_compactions: new,
        });
        prev = cur;
        prev_tokens = cur_tokens;
        prev_compacted = compacted;
    }
    let mut h = sha2::Sha256::default();
    use sha2::Digest;
    for (id, bytes) in &stubs {
        h.update(id.as_bytes());
        h.update([0]);
        h.update(bytes.as_bytes());
        h.update([0]);
    }
    for m in &prev {
        h.update(m.as_bytes());
        h.update([0]);
    }
    let digest = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(StabilityReport {
        calls,
        violations,
        digest,
        stubs: stubs.len(),
    })
}

fn message_tokens(m: &crate::engine::rewrite::WireMessage<'_>, tokens: &dyn BlockTokens) -> u64 {
    match (&m.blocks, m.source.content()) {
        (None, crate::engine::message::Content::Text(t)) => {
            tokens.block_tokens(&crate::engine::message::ContentBlock::text(t))
        }
        _ => m.sent_blocks().map(|b| tokens.block_tokens(b)).sum(),
    }
}

fn diff(
    call: usize,
    kind: &'static str,
    tool_use_id: Option<String>,
    message: usize,
    before: &str,
    after: &str,
) -> Violation {
    let offset = before
        .bytes()
        .zip(after.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(before.len().min(after.len()));
    Violation {
        call,
        kind,
        tool_use_id,
        message,
        offset,
        before: window(before, offset),
        after: window(after, offset),
    }
}

/// Up to `CONTEXT` bytes either side of `offset`, cut on char boundaries.
fn window(s: &str, offset: usize) -> String {
    let mut start = offset.saturating_sub(CONTEXT).min(s.len());
    while !s.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (offset + CONTEXT).min(s.len());
    while !s.is_char_boundary(end) {
        end += 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(s.get(start..end).unwrap_or(""));
    if end < s.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::handle::Handle;
    use crate::engine::ledger::{InMemoryLedger, Recorded, ToolResultLedger};
    use crate::engine::rewrite::{CompactionPolicy, Compactor};
    use crate::trace::load_str;
    use std::sync::atomic::{AtomicU64, Ordering};

    struct Chars;
    impl BlockTokens for Chars {
        fn block_tokens(&self, b: &crate::engine::message::ContentBlock) -> u64 {
            b.to_json().len() as u64
        }
    }

    fn trace() -> Trace {
        let mut messages = vec![r#"{"role":"user","content":"go"}"#.to_string()];
        let mut calls = vec![r#"{"messages":1}"#.to_string()];
        for i in 0..4 {
            messages.push(format!(r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"f","input":{{}}}}]}}"#));
            messages.push(format!(r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{}"}}]}}"#, "z".repeat(500)));
            calls.push(format!(r#"{{"messages":{}}}"#, messages.len()));
        }
        let json = format!(
            r#"{{"format":"tracecost.trace/v1","name":"s","model":"claude-sonnet-4-5","messages":[{}],"calls":[{}]}}"#,
            messages.join(","),
            calls.join(",")
        );
        load_str(&json, "s.json").unwrap().traces.remove(0)
    }

    struct Engine(Compactor<InMemoryLedger>);
    impl ViewSource for Engine {
        fn view<'h>(&mut self, history: &'h [Message]) -> Result<PolicyView<'h>, LedgerError> {
            let r = self.0.rewrite(history)?;
            Ok(PolicyView {
                view: r.view,
                compacted: r
                    .compacted
                    .iter()
                    .map(|h| h.tool_call_id.as_str().into())
                    .collect(),
            })
        }
    }

    #[test]
    fn the_engine_is_stable() {
        let t = trace();
        let mut src = Engine(Compactor::new(
            InMemoryLedger::new(),
            CompactionPolicy {
                size_threshold: 100,
                keep_last_n: 1,
            },
        ));
        let r = check(&t, &mut src, &Chars).unwrap();
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        assert_eq!(r.stubs, 3);
        // Call 3 compacts t0 for the first time: message 2 changes, so only
        // messages 0 and 1 are kept from call 2's view.
        assert_eq!(r.calls[2].new_compactions, ["t0"]);
        assert_eq!(r.calls[2].messages_kept, 2);
        assert_eq!(r.calls[1].messages_kept, 1);
        assert_eq!(
            r.calls[1].tokens_kept,
            r#"{"type":"text","text":"go"}"#.len() as u64
        );
        assert!(r.calls[2].tokens_kept < r.calls[2].previous_tokens);
        let again = check(
            &t,
            &mut Engine(Compactor::new(
                InMemoryLedger::new(),
                CompactionPolicy {
                    size_threshold: 100,
                    keep_last_n: 1,
                },
            )),
            &Chars,
        )
        .unwrap();
        assert_eq!(again.digest, r.digest);
    }

    /// A ledger that is not idempotent: every record gets a fresh summary.
    #[derive(Default)]
    struct Forgetful(InMemoryLedger, AtomicU64);
    impl ToolResultLedger for Forgetful {
        fn record(
            &self,
            id: &str,
            name: &str,
            args: &str,
            content: &str,
        ) -> Result<Handle, LedgerError> {
            let mut h = self.0.record(id, name, args, content)?;
            h.summary_oneliner = format!("call {}", self.1.fetch_add(1, Ordering::Relaxed));
            Ok(h)
        }
        fn get(&self, mem_id: &str) -> Result<Option<Recorded>, LedgerError> {
            self.0.get(mem_id)
        }
        fn get_by_call_id(&self, id: &str) -> Result<Option<Recorded>, LedgerError> {
            self.0.get_by_call_id(id)
        }
    }

    /// Rebuilds its compactor every call, so stubs come from the ledger anew.
    struct Unstable(Forgetful);
    impl ViewSource for Unstable {
        fn view<'h>(&mut self, history: &'h [Message]) -> Result<PolicyView<'h>, LedgerError> {
            let r = Compactor::new(
                &self.0,
                CompactionPolicy {
                    size_threshold: 100,
                    keep_last_n: 1,
                },
            )
            .rewrite(history)?;
            Ok(PolicyView {
                view: r.view,
                compacted: r
                    .compacted
                    .iter()
                    .map(|h| h.tool_call_id.as_str().into())
                    .collect(),
            })
        }
    }

    #[test]
    fn a_non_deterministic_stub_is_caught_with_its_place() {
        let t = trace();
        let r = check(&t, &mut Unstable(Forgetful::default()), &Chars).unwrap();
        let first = &r.violations[0];
        assert_eq!(
            (first.call, first.kind, first.tool_use_id.as_deref()),
            (4, "stub-changed", Some("t0"))
        );
        assert!(
            first.before.contains("call 0") && first.after.contains("call 1"),
            "{first:?}"
        );
        assert!(
            r.violations
                .iter()
                .any(|v| v.kind == "prefix-changed" && v.message == 2)
        );
    }
}
