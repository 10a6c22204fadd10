//! The snapshot rewriter: lossless history in, wire view out.
//!
//! The agent keeps the whole conversation (the lossless history); before each
//! model call the rewriter produces the view that goes on the wire, with
//! stale, large tool results replaced by their stubs. It never mutates the
//! history and never copies an unchanged block: the view borrows them.
//!
//! A result is compacted when its payload is longer than `size_threshold`
//! characters AND it is older than the last `keep_last_n` tool results AND
//! the model has answered after it (an assistant message follows it in the
//! history). The last condition means a result is never stubbed before the
//! model has read it whole, whatever `keep_last_n` says: a turn's parallel
//! results all arrive in one user message, and `keep_last_n = 1` must not
//! stub two of three results the model has yet to see. All three
//! conditions only become more true as the conversation grows, so a result
//! compacted at one call stays compacted at every later call, as the same
//! bytes — which is what keeps cached prefixes valid.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::handle::Handle;
use super::ledger::{LedgerError, ToolResultLedger, record_result};
use super::message::{BlockKind, ContentBlock, Message, Role};
use super::stub::render_stub;

/// When to compact a tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompactionPolicy {
    /// Compact only payloads longer than this many Unicode scalar values.
    pub size_threshold: u64,
    /// Never compact the most recent `keep_last_n` tool results.
    pub keep_last_n: usize,
}

/// How many tool results a history holds, and how many of them (the
/// oldest) the model has answered: those before its last assistant
/// message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResultCounts {
    /// Every tool result of the history.
    pub total: usize,
    /// The results an assistant message follows.
    pub answered: usize,
}

impl ResultCounts {
    /// The counts of `history`.
    pub fn of(history: &[Message]) -> Self {
        let mut counts = Self::default();
        for m in history {
            if m.role() == Role::Assistant {
                counts.answered = counts.total;
            }
            counts.total += m
                .blocks()
                .iter()
                .filter(|b| matches!(b.kind(), BlockKind::ToolResult { .. }))
                .count();
        }
        counts
    }
}

impl CompactionPolicy {
    /// Whether the tool result at `index` (0-based, counting tool results
    /// in history order) with `payload_chars` characters is compacted in a
    /// history whose results are counted by `counts`. The one rule every
    /// rewrite follows, exposed so that a caller keeping its own view up
    /// to date call after call decides exactly as [`Compactor::rewrite`].
    pub fn compacts(&self, index: usize, counts: ResultCounts, payload_chars: u64) -> bool {
        index < self.eligible(counts) && self.large(payload_chars)
    }

    /// How many of a history's tool results (the oldest) may be
    /// compacted: those older than the last `keep_last_n` that the model
    /// has answered.
    pub fn eligible(&self, counts: ResultCounts) -> usize {
        counts
            .total
            .saturating_sub(self.keep_last_n)
            .min(counts.answered)
    }

    /// Whether a payload of `payload_chars` characters is large enough to
    /// compact.
    pub fn large(&self, payload_chars: u64) -> bool {
        payload_chars > self.size_threshold
    }
}

/// One block of the wire view.
#[derive(Debug, Clone)]
pub enum WireBlock<'h> {
    /// The history's own block, shared.
    Original(&'h ContentBlock),
    /// A tool_result whose content was replaced by its stub.
    Compacted {
        /// The block in the history.
        original: &'h ContentBlock,
        /// The block sent instead.
        stub: Arc<ContentBlock>,
    },
    /// A tool_result sent with its content replaced by a fixed text (a
    /// cleared result): the block sent is made when it is read
    /// ([`ContentBlock::with_tool_result_text`]), not held, because a
    /// long run clears hundreds of thousands of results and a copy of
    /// each one's members was most of what its view held.
    Cleared {
        /// The block in the history, a tool_result.
        original: &'h ContentBlock,
        /// The text sent as its content.
        placeholder: &'static str,
    },
}

impl<'h> WireBlock<'h> {
    /// The block as sent (made anew for a [`WireBlock::Cleared`] one).
    pub fn block(&self) -> Cow<'_, ContentBlock> {
        match self {
            WireBlock::Original(b) => Cow::Borrowed(b),
            WireBlock::Compacted { stub, .. } => Cow::Borrowed(stub),
            WireBlock::Cleared {
                original,
                placeholder,
            } => match original.with_tool_result_text(placeholder) {
                Some(b) => Cow::Owned(b),
                // Only a tool_result is cleared; any other block is sent
                // as it is.
                None => Cow::Borrowed(original),
            },
        }
    }

    /// Whether `self` and `other` are the same objects: the same history
    /// block, the same stub `Arc`, or the same block cleared with the
    /// same text (both then send the same bytes).
    pub fn same_object(&self, other: &WireBlock<'_>) -> bool {
        match (self, other) {
            (WireBlock::Original(p), WireBlock::Original(q)) => std::ptr::eq(*p, *q),
            (WireBlock::Compacted { stub: p, .. }, WireBlock::Compacted { stub: q, .. }) => {
                Arc::ptr_eq(p, q)
            }
            (
                WireBlock::Cleared {
                    original: p,
                    placeholder: a,
                },
                WireBlock::Cleared {
                    original: q,
                    placeholder: b,
                },
            ) => std::ptr::eq(*p, *q) && a == b,
            _ => false,
        }
    }
}

/// One message of the wire view.
#[derive(Debug, Clone)]
pub struct WireMessage<'h> {
    /// The message in the history.
    pub source: &'h Message,
    /// `None` when every block is sent unchanged (the common case: no
    /// allocation), else the blocks as sent, in exactly their room.
    pub blocks: Option<Box<[WireBlock<'h>]>>,
}

impl<'h> WireMessage<'h> {
    /// The message as sent, unchanged.
    pub fn unchanged(source: &'h Message) -> Self {
        Self {
            source,
            blocks: None,
        }
    }

    /// Whether `other` is made of the same objects (the same history
    /// message, the same blocks, the same stub `Arc`s), so that both send
    /// the same bytes without serializing either.
    pub fn same_objects(&self, other: &WireMessage<'_>) -> bool {
        if !std::ptr::eq(self.source, other.source) {
            return false;
        }
        match (&self.blocks, &other.blocks) {
            (None, None) => true,
            (Some(x), Some(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.same_object(q))
            }
            _ => false,
        }
    }

    /// The blocks as sent (empty for string content).
    pub fn sent_blocks(&self) -> impl Iterator<Item = Cow<'_, ContentBlock>> + '_ {
        let (orig, rewritten) = match &self.blocks {
            None => (Some(self.source.blocks().iter().map(Cow::Borrowed)), None),
            Some(b) => (None, Some(b.iter().map(WireBlock::block))),
        };
        orig.into_iter()
            .flatten()
            .chain(rewritten.into_iter().flatten())
    }
}

/// The messages of one call as they go on the wire.
#[derive(Debug, Clone, Default)]
pub struct WireView<'h> {
    /// One entry per history message, in order.
    pub messages: Vec<WireMessage<'h>>,
}

impl<'h> WireView<'h> {
    /// The history sent as is.
    pub fn unchanged(history: &'h [Message]) -> Self {
        Self {
            messages: history.iter().map(WireMessage::unchanged).collect(),
        }
    }
}

/// A wire view and what the rewriter did to produce it.
#[derive(Debug, Clone, Default)]
pub struct Rewrite<'h> {
    /// The view to send.
    pub view: WireView<'h>,
    /// Handles of the compacted results, in history order (shared with
    /// the compactor's cache: no copy per call).
    pub compacted: Vec<Arc<Handle>>,
}

/// The handle and stub of every result compacted so far, by tool_use id.
///
/// Stubs are a pure function of the handle, so the cache only saves work.
/// Several compactors may share one (compactors of different policies over
/// one conversation, run side by side), provided they all record into the
/// same ledger: a result is recorded when its stub is first made.
#[derive(Debug, Default)]
pub struct StubCache(Mutex<HashMap<Arc<str>, MadeStub>>);

/// A result's handle and the stub block sent in its place.
type MadeStub = (Arc<Handle>, Arc<ContentBlock>);

impl StubCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    fn get(&self, id: &str) -> Option<(Arc<Handle>, Arc<ContentBlock>)> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(id).cloned()
    }

    /// Whether `stub` is the stub this cache holds for `id` (the same
    /// block, not an equal one): a block made elsewhere, by a run of its
    /// own, is not shared by the others.
    pub fn holds(&self, id: &str, stub: &Arc<ContentBlock>) -> bool {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(id).is_some_and(|(_, s)| Arc::ptr_eq(s, stub))
    }

    /// Keeps the first stub made for `id` (two compactors may make one at
    /// once) and returns it.
    fn insert(
        &self,
        id: &Arc<str>,
        made: (Arc<Handle>, Arc<ContentBlock>),
    ) -> (Arc<Handle>, Arc<ContentBlock>) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(id.clone()).or_insert(made).clone()
    }
}

/// Rewrites histories call after call, remembering the stub of every result
/// it compacted so each is derived (and recorded) once.
///
/// Stubs are a pure function of the handle, so the cache only saves work: a
/// fresh `Compactor` produces the same bytes.
pub struct Compactor<L> {
    ledger: L,
    policy: CompactionPolicy,
    stubs: Arc<StubCache>,
}

impl<L: ToolResultLedger> Compactor<L> {
    /// A compactor recording into `ledger`.
    pub fn new(ledger: L, policy: CompactionPolicy) -> Self {
        Self::with_stub_cache(ledger, policy, Arc::default())
    }

    /// A compactor recording into `ledger` and sharing `stubs` with other
    /// compactors that record into the same ledger (see [`StubCache`]).
    pub fn with_stub_cache(ledger: L, policy: CompactionPolicy, stubs: Arc<StubCache>) -> Self {
        Self {
            ledger,
            policy,
            stubs,
        }
    }

    /// The ledger the payloads were recorded into.
    pub fn ledger(&self) -> &L {
        &self.ledger
    }

    /// The policy in force.
    pub fn policy(&self) -> CompactionPolicy {
        self.policy
    }

    /// Produces the wire view of `history` (the lossless history of one
    /// call). Compacted payloads are recorded into the ledger first, so a
    /// stub never goes out for a payload the ledger does not hold.
    pub fn rewrite<'h>(&mut self, history: &'h [Message]) -> Result<Rewrite<'h>, LedgerError> {
        let counts = ResultCounts::of(history);
        let eligible = self.policy.eligible(counts);
        let mut out = Rewrite {
            view: WireView {
                messages: Vec::with_capacity(history.len()),
            },
            compacted: Vec::new(),
        };
        if eligible == 0 {
            out.view = WireView::unchanged(history);
            return Ok(out);
        }
        let mut seen_results = 0usize;
        for (mi, message) in history.iter().enumerate() {
            let mut rewritten: Option<Vec<WireBlock<'h>>> = None;
            for (i, block) in message.blocks().iter().enumerate() {
                if let BlockKind::ToolResult {
                    tool_use_id,
                    payload_chars,
                    ..
                } = block.kind()
                {
                    let index = seen_results;
                    seen_results += 1;
                    if self.policy.compacts(index, counts, *payload_chars) {
                        let (handle, stub) = self.stub_for(&history[..=mi], tool_use_id, block)?;
                        out.compacted.push(handle);
                        let blocks = rewritten.get_or_insert_with(|| {
                            message.blocks()[..i]
                                .iter()
                                .map(WireBlock::Original)
                                .collect()
                        });
                        blocks.push(WireBlock::Compacted {
                            original: block,
                            stub,
                        });
                        continue;
                    }
                }
                if let Some(blocks) = rewritten.as_mut() {
                    blocks.push(WireBlock::Original(block));
                }
            }
            out.view.messages.push(WireMessage {
                source: message,
                blocks: rewritten.map(Vec::into_boxed_slice),
            });
        }
        Ok(out)
    }

    /// The handle and stub of one tool result, derived (and recorded) the
    /// first time only: what [`Compactor::rewrite`] sends for it once it is
    /// compacted. `before` ends with the result's message; its tool_use is
    /// looked up there, newest first, only when the stub is first made.
    /// For callers that keep their own view up to date (see
    /// [`CompactionPolicy::compacts`]).
    pub fn stub_for(
        &mut self,
        before: &[Message],
        tool_use_id: &Arc<str>,
        block: &ContentBlock,
    ) -> Result<(Arc<Handle>, Arc<ContentBlock>), LedgerError> {
        if let Some(made) = self.stubs.get(tool_use_id) {
            return Ok(made);
        }
        let (tool_name, tool_args) = before
            .iter()
            .rev()
            .flat_map(|m| m.blocks().iter().rev())
            .find_map(|b| match b.kind() {
                BlockKind::ToolUse { id, name } if id == tool_use_id => {
                    Some((&**name, b.tool_input().map_or("{}", |r| r.get())))
                }
                _ => None,
            })
            .unwrap_or(("unknown", "{}"));
        let handle = record_result(&self.ledger, tool_use_id, tool_name, tool_args, block)?;
        let text = render_stub(&handle);
        let handle = Arc::new(handle);
        // `block` is a tool_result, so this always succeeds; fall back to the
        // original rather than lose the payload if it ever does not.
        let stub = Arc::new(
            block
                .with_tool_result_text(&text)
                .unwrap_or_else(|| block.clone()),
        );
        Ok(self.stubs.insert(tool_use_id, (handle, stub)))
    }
}

/// One-shot form of [`Compactor::rewrite`] for callers that keep no state
/// between calls. Gives the same bytes as a long-lived compactor.
pub fn rewrite<'h, L: ToolResultLedger>(
    history: &'h [Message],
    policy: CompactionPolicy,
    ledger: &L,
) -> Result<Rewrite<'h>, LedgerError> {
    Compactor::new(ledger, policy).rewrite(history)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::InMemoryLedger;

    /// A view holds one of these a message of the history (a long run's
    /// views hold millions): a reference and a list's pointer and length,
    /// no spare room.
    #[test]
    fn a_view_message_is_three_words() {
        assert_eq!(size_of::<WireMessage<'_>>(), 3 * size_of::<usize>());
    }

    fn tool_turn(id: &str, payload: &str) -> Vec<Message> {
        vec![
            Message::from_json(&format!(
                r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"fetch","input":{{"url":"u","n":1}}}}]}}"#
            ))
            .unwrap(),
            Message::new(
                Role::User,
                vec![ContentBlock::from_json(&format!(
                    r#"{{"type":"tool_result","tool_use_id":"{id}","content":{}}}"#,
                    serde_json::to_string(payload).unwrap()
                ))
                .unwrap()],
            ),
        ]
    }

    fn history(payload_sizes: &[usize]) -> Vec<Message> {
        let mut h = vec![Message::new_text(Role::User, "go")];
        for (i, n) in payload_sizes.iter().enumerate() {
            h.extend(tool_turn(&format!("toolu_{i}"), &"x".repeat(*n)));
        }
        h
    }

    fn compacted_ids(r: &Rewrite) -> Vec<String> {
        r.compacted.iter().map(|h| h.tool_call_id.clone()).collect()
    }

    #[test]
    fn compacts_only_large_results_older_than_keep_last() {
        let h = history(&[500, 50, 500, 500, 500]);
        let ledger = InMemoryLedger::new();
        let r = rewrite(
            &h,
            CompactionPolicy {
                size_threshold: 100,
                keep_last_n: 2,
            },
            &ledger,
        )
        .unwrap();
        // Results 0..3 are older than the last 2; result 1 is too small.
        assert_eq!(compacted_ids(&r), ["toolu_0", "toolu_2"]);
        assert_eq!(ledger.len(), 2);
        // Threshold is strict: a payload of exactly the threshold stays.
        let r = rewrite(
            &h,
            CompactionPolicy {
                size_threshold: 500,
                keep_last_n: 0,
            },
            &ledger,
        )
        .unwrap();
        assert!(r.compacted.is_empty());
        // keep_last_n larger than the number of results: nothing compacted.
        let r = rewrite(
            &h,
            CompactionPolicy {
                size_threshold: 0,
                keep_last_n: 99,
            },
            &ledger,
        )
        .unwrap();
        assert!(r.compacted.is_empty());
        assert!(r.view.messages.iter().all(|m| m.blocks.is_none()));
    }

    #[test]
    fn stub_block_keeps_tool_use_id_bytes_and_other_members() {
        let mut h = vec![Message::new_text(Role::User, "go")];
        h.push(
            Message::from_json(r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_\u0041","name":"f","input":{}}]}"#)
                .unwrap(),
        );
        h.push(
            Message::from_json(&format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_\u0041","is_error":false,"content":"{}"}},{{"type":"text","text":"next"}}]}}"#,
                "y".repeat(300)
            ))
            .unwrap(),
        );
        // The model answered after the result: it may be compacted.
        h.push(Message::new_text(Role::Assistant, "read it"));
        let ledger = InMemoryLedger::new();
        let r = rewrite(
            &h,
            CompactionPolicy {
                size_threshold: 10,
                keep_last_n: 0,
            },
            &ledger,
        )
        .unwrap();
        let blocks = r.view.messages[2].blocks.as_ref().unwrap();
        let json = blocks[0].block().to_json();
        assert!(json.starts_with(r#"{"type":"tool_result","tool_use_id":"toolu_\u0041","is_error":false,"content":"[compacted"#), "{json}");
        assert!(matches!(blocks[1], WireBlock::Original(b) if std::ptr::eq(b, &h[2].blocks()[1])));
        // The handle was recorded under the decoded id, with the tool name.
        let rec = ledger.get_by_call_id("toolu_A").unwrap().unwrap();
        assert_eq!(rec.handle.tool_name, "f");
        assert_eq!(&*rec.payload, "y".repeat(300));
    }

    #[test]
    fn unchanged_messages_are_borrowed_not_copied() {
        let h = history(&[500, 500]);
        let ledger = InMemoryLedger::new();
        let r = rewrite(
            &h,
            CompactionPolicy {
                size_threshold: 100,
                keep_last_n: 1,
            },
            &ledger,
        )
        .unwrap();
        for (m, src) in r.view.messages.iter().zip(&h) {
            assert!(std::ptr::eq(m.source, src));
        }
        assert!(r.view.messages[0].blocks.is_none());
        assert!(r.view.messages[2].blocks.is_some());
        assert!(r.view.messages[4].blocks.is_none());
    }

    /// One assistant turn calling three tools at once, and the user
    /// message carrying their three results.
    fn parallel_turn(ids: [&str; 3], chars: usize) -> Vec<Message> {
        let uses: Vec<String> = ids
            .iter()
            .map(|id| format!(r#"{{"type":"tool_use","id":"{id}","name":"fetch","input":{{}}}}"#))
            .collect();
        let results: Vec<String> = ids
            .iter()
            .map(|id| {
                format!(
                    r#"{{"type":"tool_result","tool_use_id":"{id}","content":"{}"}}"#,
                    "p".repeat(chars)
                )
            })
            .collect();
        vec![
            Message::from_json(&format!(
                r#"{{"role":"assistant","content":[{}]}}"#,
                uses.join(",")
            ))
            .unwrap(),
            Message::from_json(&format!(
                r#"{{"role":"user","content":[{}]}}"#,
                results.join(",")
            ))
            .unwrap(),
        ]
    }

    #[test]
    fn results_the_model_has_not_answered_are_sent_whole() {
        let policy = CompactionPolicy {
            size_threshold: 100,
            keep_last_n: 1,
        };
        let mut h = vec![Message::new_text(Role::User, "go")];
        h.extend(parallel_turn(["toolu_a", "toolu_b", "toolu_c"], 500));
        // The call that reads the three results: none was read yet.
        let ledger = InMemoryLedger::new();
        let r = rewrite(&h, policy, &ledger).unwrap();
        assert!(r.compacted.is_empty());
        assert!(r.view.messages.iter().all(|m| m.blocks.is_none()));
        assert_eq!(ledger.len(), 0);
        assert_eq!(
            ResultCounts::of(&h),
            ResultCounts {
                total: 3,
                answered: 0
            }
        );
        // keep_last_n = 0 does not stub them either.
        let r = rewrite(
            &h,
            CompactionPolicy {
                keep_last_n: 0,
                ..policy
            },
            &ledger,
        )
        .unwrap();
        assert!(r.compacted.is_empty());
        // Once the model has answered, all but the last kept may go.
        h.push(Message::new_text(Role::Assistant, "read them"));
        h.push(Message::new_text(Role::User, "go on"));
        let r = rewrite(&h, policy, &ledger).unwrap();
        assert_eq!(compacted_ids(&r), ["toolu_a", "toolu_b"]);
    }

    #[test]
    fn list_content_results_are_compacted_with_their_json_as_payload() {
        let mut h = vec![Message::new_text(Role::User, "go")];
        h.push(tool_turn("toolu_a", "").swap_remove(0));
        let content = format!(
            r#"[{{"type":"text","text":"{}"}},{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"AAAA"}}}}]"#,
            "z".repeat(200)
        );
        h.push(Message::from_json(&format!(r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_a","content":{content}}}]}}"#)).unwrap());
        h.push(Message::new_text(Role::Assistant, "read it"));
        let ledger = InMemoryLedger::new();
        let r = rewrite(
            &h,
            CompactionPolicy {
                size_threshold: 100,
                keep_last_n: 0,
            },
            &ledger,
        )
        .unwrap();
        assert_eq!(r.compacted.len(), 1);
        let rec = ledger.get_by_call_id("toolu_a").unwrap().unwrap();
        assert_eq!(&*rec.payload, content);
        assert_eq!(rec.handle.summary_oneliner, "JSON array of 2 objects");
    }
}
