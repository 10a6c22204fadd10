//! What a call's wire view is built from, under any compaction policy:
//! the tokens of a block, replacement blocks built once per run, and a
//! message as sent with some of its results or inputs cleared. Beneath
//! the policies' views (`apply`) and the peers' clearing kept up to date
//! (`peer_view`), which both build with these.

use std::collections::HashMap;
use std::sync::Arc;

use tracecost_engine::json::raw_json;
use tracecost_engine::message::{BlockKind, ContentBlock, Message};
use tracecost_engine::rewrite::{WireBlock, WireMessage};

/// Token counts of single blocks, supplied by the cost model (policies that
/// trigger on tokens need them; the policy layer does not count itself).
pub trait BlockTokens {
    /// Tokens of `block` as sent.
    fn block_tokens(&self, block: &ContentBlock) -> u64;

    /// Tokens of a whole history as sent. Implementations that know the
    /// trace can answer from prefix sums instead of visiting every block.
    fn history_tokens(&self, history: &[Message]) -> u64 {
        history
            .iter()
            .flat_map(Message::blocks)
            .map(|b| self.block_tokens(b))
            .sum()
    }
}

/// Replacement blocks by (tool_use id, is-input), built once per run: a
/// tool_use whose input is cleared. A cleared result holds no block of
/// its own ([`WireBlock::Cleared`]).
#[derive(Debug, Default)]
pub struct Replacements {
    blocks: HashMap<(Arc<str>, bool), Arc<ContentBlock>>,
}

/// `m` as sent when the results `results(id)` say are replaced by
/// `placeholder` and the inputs `inputs(id)` say by `{}`; the ids of the
/// results replaced are pushed on `compacted`, in block order.
pub(super) fn clear_message<'h>(
    m: &'h Message,
    placeholder: &'static str,
    results: &dyn Fn(&str) -> bool,
    inputs: &dyn Fn(&str) -> bool,
    replacements: &mut Replacements,
    compacted: &mut impl Extend<Arc<str>>,
) -> WireMessage<'h> {
    let mut blocks: Option<Vec<WireBlock<'h>>> = None;
    for (i, b) in m.blocks().iter().enumerate() {
        let target = match b.kind() {
            BlockKind::ToolResult { tool_use_id, .. } if results(tool_use_id) => {
                compacted.extend([tool_use_id.clone()]);
                Some((tool_use_id.clone(), false))
            }
            BlockKind::ToolUse { id, .. } if inputs(id) => Some((id.clone(), true)),
            _ => None,
        };
        let replacement = target.and_then(|key| {
            if !key.1 {
                // A result's stub is made when it is read, not held.
                return Some(WireBlock::Cleared {
                    original: b,
                    placeholder,
                });
            }
            if let Some(r) = replacements.blocks.get(&key) {
                return Some(WireBlock::Compacted {
                    original: b,
                    stub: r.clone(),
                });
            }
            let built = Arc::new(b.with_field("input", raw_json("{}".to_owned())).ok()?);
            replacements.blocks.insert(key, built.clone());
            Some(WireBlock::Compacted {
                original: b,
                stub: built,
            })
        });
        match replacement {
            Some(sent) => {
                let list = blocks.get_or_insert_with(|| {
                    // Exactly the message's room: most cleared messages are
                    // one tool_result, where growing by pushes would
                    // reserve four.
                    let mut list = Vec::with_capacity(m.blocks().len());
                    list.extend(m.blocks()[..i].iter().map(WireBlock::Original));
                    list
                });
                list.push(sent);
            }
            None => {
                if let Some(list) = blocks.as_mut() {
                    list.push(WireBlock::Original(b));
                }
            }
        }
    }
    WireMessage {
        source: m,
        blocks: blocks.map(Vec::into_boxed_slice),
    }
}

/// The tool_use ids a running view compacted or cleared, in order, and how
/// long a prefix of them is as it was when [`Self::take_unchanged`] was last
/// called. A caller that compares each call's list with the call before
/// (a replay's log of what each call compacted) then compares what changed
/// alone: a long trace compacts more results at every call, and comparing
/// the whole list each time made the replay grow with the square of the
/// calls. Every edit lowers the mark to where it edits; a list built
/// elsewhere and assigned (`From`) has no unchanged prefix.
#[derive(Debug, Default, Clone)]
pub struct CompactedList {
    ids: Vec<Arc<str>>,
    unchanged: usize,
}

impl CompactedList {
    /// Appends `id` (the prefix before it is unchanged).
    pub fn push(&mut self, id: Arc<str>) {
        self.ids.push(id);
    }

    /// Removes the last id.
    pub fn pop(&mut self) -> Option<Arc<str>> {
        let id = self.ids.pop();
        self.unchanged = self.unchanged.min(self.ids.len());
        id
    }

    /// Inserts `id` at `at`, moving those after it.
    pub fn insert(&mut self, at: usize, id: Arc<str>) {
        self.ids.insert(at, id);
        self.unchanged = self.unchanged.min(at);
    }

    /// Removes every id.
    pub fn clear(&mut self) {
        self.ids.clear();
        self.unchanged = 0;
    }

    /// How many leading ids are those of the list when this was last called
    /// (none the first time); from now on, all of them.
    pub fn take_unchanged(&mut self) -> usize {
        std::mem::replace(&mut self.unchanged, self.ids.len())
    }
}

impl std::ops::Deref for CompactedList {
    type Target = [Arc<str>];
    fn deref(&self) -> &[Arc<str>] {
        &self.ids
    }
}

impl From<Vec<Arc<str>>> for CompactedList {
    fn from(ids: Vec<Arc<str>>) -> Self {
        Self { ids, unchanged: 0 }
    }
}

impl Extend<Arc<str>> for CompactedList {
    fn extend<I: IntoIterator<Item = Arc<str>>>(&mut self, iter: I) {
        self.ids.extend(iter);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_engine::message::ToolResultContent;

    fn stub_text(wm: &WireMessage<'_>) -> Arc<str> {
        let blocks = wm.blocks.as_ref().expect("cleared");
        match blocks[0].block().kind() {
            BlockKind::ToolResult {
                content: ToolResultContent::Text(t),
                ..
            } => t.clone(),
            other => panic!("not a text result: {other:?}"),
        }
    }

    /// A cleared one-result message holds one entry, not a pushed list's
    /// spare room, and no block of its own (made when read); a result
    /// cleared again is the same object; a cleared tool input is one
    /// stub for the run.
    #[test]
    fn cleared_messages_hold_exact_room_and_no_stub() {
        let m = |id: &str| {
            Message::from_json(&format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"long output"}}]}}"#
            ))
            .unwrap()
        };
        let (a, b) = (m("t1"), m("t2"));
        let mut replacements = Replacements::default();
        let mut compacted = Vec::new();
        let mut clear = |msg| {
            clear_message(
                msg,
                "[cleared]",
                &|_| true,
                &|_| false,
                &mut replacements,
                &mut compacted,
            )
        };
        let (wa, wb, wa2) = (clear(&a), clear(&b), clear(&a));
        assert_eq!(wa.blocks.as_ref().unwrap().len(), 1);
        assert_eq!(&*stub_text(&wa), "[cleared]");
        assert_eq!(&*stub_text(&wb), "[cleared]");
        assert!(matches!(
            wa.blocks.as_deref(),
            Some([WireBlock::Cleared { original, placeholder: "[cleared]" }])
                if std::ptr::eq(*original, &a.blocks()[0])
        ));
        assert!(wa.same_objects(&wa2));
        assert!(!wa.same_objects(&wb));
        assert_eq!(
            wa.sent_blocks().map(|b| b.to_json()).collect::<Vec<_>>(),
            [r#"{"type":"tool_result","tool_use_id":"t1","content":"[cleared]"}"#]
        );
        let ids: Vec<&str> = compacted.iter().map(|s| &**s).collect();
        assert_eq!(ids, ["t1", "t2", "t1"]);
        // A tool input cleared twice is one stub.
        let u = Message::from_json(
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{"q":1}}]}"#,
        )
        .unwrap();
        let mut clear_input = || {
            clear_message(
                &u,
                "[cleared]",
                &|_| false,
                &|_| true,
                &mut replacements,
                &mut compacted,
            )
        };
        let (ua, ub) = (clear_input(), clear_input());
        assert!(ua.same_objects(&ub));
        assert_eq!(
            ua.sent_blocks().map(|b| b.to_json()).collect::<Vec<_>>(),
            [r#"{"type":"tool_use","id":"t1","name":"f","input":{}}"#]
        );
    }

    proptest::proptest! {
        /// Whatever edits are made between two calls, the prefix
        /// `take_unchanged` vouches for is the list as it was at the call
        /// before, and no longer than the list.
        #[test]
        fn the_unchanged_prefix_is_the_list_at_the_last_take(
            ops in proptest::collection::vec((0u8..6, 0u8..8), 0..60),
        ) {
            let mut list = CompactedList::default();
            let mut at_take: Vec<Arc<str>> = Vec::new();
            for (n, (op, x)) in ops.into_iter().enumerate() {
                let id: Arc<str> = Arc::from(format!("t{n}"));
                match op {
                    0 | 1 => list.push(id),
                    2 => { list.pop(); }
                    3 => list.insert(usize::from(x).min(list.len()), id),
                    4 => list.extend([id]),
                    _ if x == 0 => list.clear(),
                    _ if x == 1 => list = Vec::from(&list[..]).into(),
                    _ => {
                        let u = list.take_unchanged();
                        proptest::prop_assert!(u <= list.len() && u <= at_take.len());
                        proptest::prop_assert_eq!(&list[..u], &at_take[..u]);
                        at_take = list.to_vec();
                    }
                }
            }
        }
    }
}
