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

/// Replacement blocks by (tool_use id, is-input), built once per run.
pub(super) type Replacements = HashMap<(Arc<str>, bool), Arc<ContentBlock>>;

/// `m` as sent when the results `results(id)` say are replaced by
/// `placeholder` and the inputs `inputs(id)` say by `{}`; the ids of the
/// results replaced are pushed on `compacted`, in block order.
pub(super) fn clear_message<'h>(
    m: &'h Message,
    placeholder: &'static str,
    results: &dyn Fn(&str) -> bool,
    inputs: &dyn Fn(&str) -> bool,
    replacements: &mut Replacements,
    compacted: &mut Vec<Arc<str>>,
) -> WireMessage<'h> {
    let mut blocks: Option<Vec<WireBlock<'h>>> = None;
    for (i, b) in m.blocks().iter().enumerate() {
        let target = match b.kind() {
            BlockKind::ToolResult { tool_use_id, .. } if results(tool_use_id) => {
                compacted.push(tool_use_id.clone());
                Some((tool_use_id.clone(), false))
            }
            BlockKind::ToolUse { id, .. } if inputs(id) => Some((id.clone(), true)),
            _ => None,
        };
        let replacement = target.and_then(|key| {
            if let Some(r) = replacements.get(&key) {
                return Some(r.clone());
            }
            let built = if key.1 {
                b.with_field("input", raw_json("{}".to_owned())).ok()
            } else {
                b.with_tool_result_text(placeholder)
            }?;
            let built = Arc::new(built);
            replacements.insert(key, built.clone());
            Some(built)
        });
        match replacement {
            Some(stub) => {
                let list = blocks.get_or_insert_with(|| {
                    m.blocks()[..i].iter().map(WireBlock::Original).collect()
                });
                list.push(WireBlock::Compacted { original: b, stub });
            }
            None => {
                if let Some(list) = blocks.as_mut() {
                    list.push(WireBlock::Original(b));
                }
            }
        }
    }
    WireMessage { source: m, blocks }
}
