//! Building a call's request: the first stage of replaying it, shared by
//! every config of a group. From the call's history and prompt it makes
//! the wire view, the flattened blocks with their token counts and the
//! prefix index, rebuilt incrementally from the first message that changed.
//! Placing one config's markers and simulating its cache is the second
//! stage ([`super::group`]): the driver calls this core once per call, as a
//! searcher's driver calls its per-line core.

use std::collections::HashMap;
use std::ops::Range;

use crate::cost::cache_sim::{Breakpoint, PrefixBlock, PrefixIndex, PrefixKind};
use crate::cost::pricing::{ModelPrice, ToolChoice};
use crate::cost::tokens::{FastBuild, TokenMemo};
use crate::engine::cache::plain_text_blocks;
use crate::engine::message::{ContentBlock, ToolDefinition};
use crate::engine::rewrite::{WireBlock, WireMessage, WireView};
use crate::engine::wire::{BlockRef, Marker, message_json};
use crate::policy::{CompactionRun, ViewState};

use super::explain;
use super::prepare::{
    BlockCount, PreparedTrace, Scale, SharedState, TraceCalibration, count_block, is_reasoning,
};
use super::{ReplayError, RunTokens};

/// The flattened request of the latest call and what it was built from.
#[derive(Default)]
pub(super) struct Request<'t> {
    /// The wire view and the ids compacted.
    pub(super) state: ViewState<'t>,
    /// Tools → tool prompt → system → message blocks.
    pub(super) blocks: Vec<PrefixBlock>,
    /// The previous call's blocks from the first one rebuilt on.
    pub(super) old_tail: Vec<PrefixBlock>,
    /// Blocks before the messages (tools, tool prompt, system).
    pub(super) header_len: usize,
    /// Index of the first system block.
    pub(super) system_start: usize,
    /// Per message: its first block.
    pub(super) message_start: Vec<usize>,
    /// Per message `i`, the history boundary of a view of `i + 1`
    /// messages (the last block of the latest plain-text message before
    /// the last one): kept as messages are rebuilt, so the native cache
    /// policy's marker costs no scan back through a long run of tool calls.
    pub(super) boundary_at: Vec<Option<BlockRef>>,
    /// Per message: the characters of the messages before it and its own,
    /// as sent (running sums: cut back and extended with the messages).
    pub(super) chars_through: Vec<u64>,
    /// The prefix index of `blocks`.
    pub(super) index: PrefixIndex,
    /// The model (by address) the blocks were framed and indexed for.
    pub(super) model: usize,
    /// Characters of a rewritten message by (message, replaced blocks):
    /// replacements are fixed per block for a run.
    pub(super) rewritten_chars: HashMap<(usize, u128), u64, FastBuild>,
    /// The header built for the current call, compared with the last.
    pub(super) header: Vec<PrefixBlock>,
    /// The messages whose reasoning the API dropped from the latest call
    /// ([`PreparedTrace::reasoning_cut`]).
    pub(super) reasoning_cut: usize,
}

/// What [`Request::build`] made of one call, beside the request itself:
/// the tools and system blocks sent, and the facts every config's
/// simulation of the call reads.
pub(super) struct Sent<'a> {
    /// The tool definitions sent (the recall tool last, where the
    /// compaction offers it).
    pub(super) tools: Vec<&'a ToolDefinition>,
    /// The system blocks sent.
    pub(super) system: &'a [ContentBlock],
    /// The hidden prefix's shared blocks and what the record says of them.
    pub(super) shared: Option<(Range<usize>, SharedState)>,
    /// Whether the trace has a hidden prefix the record tells about.
    pub(super) hidden: bool,
    /// Characters of the request's messages as sent.
    pub(super) chars: u64,
    /// Leading blocks sent as in the previous call.
    pub(super) same_blocks: usize,
    /// Their tokens.
    pub(super) stable_prefix_tokens: u64,
    /// Where the request's parts begin, for telling why a call missed.
    pub(super) layout: explain::Layout,
    /// The blocks kept from the previous call's request: the rest were
    /// rebuilt.
    pub(super) from_block: usize,
}

impl<'t> Request<'t> {
    /// Builds the request of call `ci` of `prepared`'s trace priced at
    /// `price`: from scratch, or (`incremental`) from the previous call's,
    /// rebuilding only from the first message whose bytes changed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn build<'a>(
        &mut self,
        prepared: &'a PreparedTrace<'t>,
        memo: &TokenMemo,
        price: &ModelPrice,
        ci: usize,
        with_recall: bool,
        incremental: bool,
        run: &mut CompactionRun,
        tokens: &mut RunTokens<'_>,
        thinking_cut: usize,
    ) -> Result<Sent<'a>, ReplayError> {
        let trace = prepared.trace;
        let call = &trace.calls[ci];
        let history = trace.history_of(call);
        let prompt = trace.prompt_of(call);
        let mut tools: Vec<&ToolDefinition> = prompt.tools.iter().collect();
        let mut tool_counts: Vec<BlockCount> =
            prepared.tools.get(call.prompt).cloned().unwrap_or_default();
        if with_recall {
            tools.push(&prepared.recall_tool.0);
            tool_counts.push(prepared.recall_tool.1);
        }
        let system = prepared
            .system_blocks
            .get(call.prompt)
            .map_or(&[][..], Vec::as_slice);
        let system_counts = prepared
            .system
            .get(call.prompt)
            .map_or(&[][..], Vec::as_slice);

        // Fixed part (tools, tool prompt, system) for token-triggered peers.
        let tool_prompt = if tools.is_empty() {
            0
        } else {
            price.tool_prompt.tokens(ToolChoice::Auto)
        };
        let fixed: u64 = tool_counts
            .iter()
            .map(|c| c.tokens(&prepared.calibration, price.framing.per_tool))
            .sum::<u64>()
            + tool_prompt
            + system_counts
                .iter()
                .map(|c| c.tokens(&prepared.calibration, price.framing.per_block))
                .sum::<u64>();

        // The header: tools → tool prompt → system.
        let req = self;
        req.header.clear();
        for c in &tool_counts {
            req.header.push(prefix(
                c,
                &prepared.calibration,
                price.framing.per_tool,
                PrefixKind::ToolDef,
                None,
            ));
        }
        if !tools.is_empty() {
            req.header.push(PrefixBlock::tool_prompt(tool_prompt));
        }
        let system_start = req.header.len();
        for c in system_counts {
            req.header.push(prefix(
                c,
                &prepared.calibration,
                price.framing.per_block,
                PrefixKind::System,
                None,
            ));
        }
        // The record's view of the hidden prefix: its own rest is new
        // content from each change on, and its shared part's block is the
        // one another session kept warm.
        let hidden = prepared
            .hidden_cache
            .as_ref()
            .filter(|h| system_counts.len() > h.boundaries.len());
        let shared = hidden.map(|h| {
            let own = req.header.len() - 1;
            let v = h.version.get(ci).copied().unwrap_or(0) as usize;
            if let Some(key) = h.own_keys.get(v) {
                req.header[own].key = *key;
            }
            let first = own - h.boundaries.len();
            let state = h.calls.get(ci).copied().unwrap_or(SharedState::Unknown);
            (first..own, state)
        });

        // The wire view, and from which message on it must be rebuilt.
        let first_changed = if incremental {
            run.advance(history, fixed, &*tokens, &mut req.state)?
        } else {
            let pv = run.view(history, fixed, &*tokens)?;
            req.state.view = pv.view;
            req.state.compacted = pv.compacted;
            0
        };
        // Reasoning the API drops from this call on changes messages sent
        // before: the request is rebuilt from the first of them.
        // What the API drops by itself, or what a thinking edit clears
        // (`thinking_cut`), whichever reaches further.
        let cut = prepared
            .reasoning_cut
            .get(ci)
            .copied()
            .unwrap_or(0)
            .max(thinking_cut);
        let first_changed = (req.reasoning_cut..cut)
            .find(|&mi| {
                history
                    .get(mi)
                    .is_some_and(|m| m.blocks().iter().any(is_reasoning))
            })
            .map_or(first_changed, |mi| first_changed.min(mi));
        let model = price as *const ModelPrice as usize;
        let from_message = if incremental
            && req.header == req.blocks[..req.header_len.min(req.blocks.len())]
            && req.header_len == req.header.len()
            && req.model == model
        {
            first_changed
        } else {
            0
        };
        let from_block = if from_message == 0 {
            0
        } else {
            req.message_start
                .get(from_message)
                .copied()
                .unwrap_or(req.blocks.len())
        };
        req.old_tail.clear();
        req.old_tail.extend(req.blocks.drain(from_block..));
        req.index.truncate(from_block);
        if from_block == 0 {
            req.blocks.extend_from_slice(&req.header);
            req.header_len = req.header.len();
            req.system_start = system_start;
            req.model = model;
            req.message_start.clear();
            req.chars_through.clear();
            req.boundary_at.clear();
        } else {
            req.message_start.truncate(from_message);
            req.chars_through.truncate(from_message);
            req.boundary_at.truncate(from_message);
        }
        for mi in req.boundary_at.len()..req.state.view.messages.len() {
            // Message `mi - 1` is complete once `mi` follows it.
            let boundary = mi.checked_sub(1).and_then(|prev| {
                plain_text_blocks(&req.state.view.messages[prev])
                    .map(|n| BlockRef::Message {
                        message: prev,
                        block: n.saturating_sub(1),
                    })
                    .or(req.boundary_at[prev])
            });
            req.boundary_at.push(boundary);
        }
        for (mi, wm) in req
            .state
            .view
            .messages
            .iter()
            .enumerate()
            .skip(from_message)
        {
            req.message_start.push(req.blocks.len());
            let c = flatten_message(
                prepared,
                memo,
                price,
                tokens,
                &mut req.rewritten_chars,
                mi,
                wm,
                mi < cut,
                &mut req.blocks,
            );
            let before = req.chars_through.last().copied().unwrap_or(0);
            req.chars_through.push(before + c);
        }
        // What a request sent without the client's markers carried beyond
        // the history (an advisor's view of it), after it: the next call
        // is built afresh, without it.
        if let Some(extra) = prepared
            .unmarked
            .get(ci)
            .copied()
            .flatten()
            .filter(|&t| t > 0)
        {
            req.blocks.push(prefix(
                &super::prepare::unrecorded_tail(extra),
                &prepared.calibration,
                0,
                PrefixKind::Text,
                None,
            ));
            req.model = 0;
        }
        req.index.extend(price, &req.blocks);
        let chars: u64 = 2
            + req.state.view.messages.len().saturating_sub(1) as u64
            + req.chars_through.last().copied().unwrap_or(0);
        // Tokens of the leading blocks sent as in the previous call: every
        // block before `from_block`, then those rebuilt the same.
        let same_tail = req.blocks[from_block..]
            .iter()
            .zip(&req.old_tail)
            .take_while(|(a, b)| a.key == b.key)
            .count();
        let stable_prefix_tokens: u64 = from_block
            .checked_sub(1)
            .and_then(|b| req.index.tokens_through(b))
            .unwrap_or(0)
            + req.blocks[from_block..from_block + same_tail]
                .iter()
                .map(|a| a.tokens)
                .sum::<u64>();
        let same_blocks = from_block + same_tail;
        req.reasoning_cut = cut;
        let layout = explain::Layout {
            system_start: req.system_start,
            header_len: req.header_len,
            hidden: shared
                .as_ref()
                .map_or(0..0, |(parts, _)| parts.start..parts.end + 1),
        };
        Ok(Sent {
            tools,
            system,
            shared,
            hidden: hidden.is_some(),
            chars,
            same_blocks,
            stable_prefix_tokens,
            layout,
            from_block,
        })
    }
}

/// The stand-in of a reasoning block the API dropped: sent, not billed
/// (but for the message's framing when it opens the message), and no
/// longer the block an earlier prompt cached.
fn dropped_reasoning(mi: usize, framing: u64) -> PrefixBlock {
    PrefixBlock {
        key: crate::cost::tokens::ContentHash::of(b"reasoning dropped by the API"),
        tokens: framing,
        kind: PrefixKind::Thinking,
        message: Some(mi),
    }
}

/// Appends the blocks of message `mi` as sent to `blocks`; returns its
/// characters as sent (compact JSON). With `drop_reasoning`, its reasoning
/// blocks are the API's to drop ([`PreparedTrace::reasoning_cut`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn flatten_message(
    prepared: &PreparedTrace<'_>,
    memo: &TokenMemo,
    price: &ModelPrice,
    tokens: &mut RunTokens<'_>,
    rewritten_chars: &mut HashMap<(usize, u128), u64, FastBuild>,
    mi: usize,
    wm: &WireMessage<'_>,
    drop_reasoning: bool,
    blocks: &mut Vec<PrefixBlock>,
) -> u64 {
    let counts = prepared.messages.get(mi).map_or(&[][..], Vec::as_slice);
    let per_message = price.framing.per_message;
    match &wm.blocks {
        None => {
            if wm.source.blocks().is_empty() {
                let c = counts.first().copied().unwrap_or(BlockCount {
                    key: crate::cost::tokens::ContentHash::of(b""),
                    raw_tokens: 0,
                    scale: Scale::Content,
                });
                blocks.push(prefix(
                    &c,
                    &prepared.calibration,
                    price.framing.per_block + per_message,
                    PrefixKind::Text,
                    Some(mi),
                ));
            } else {
                for (bi, b) in wm.source.blocks().iter().enumerate() {
                    if drop_reasoning && is_reasoning(b) {
                        blocks.push(dropped_reasoning(mi, if bi == 0 { per_message } else { 0 }));
                        continue;
                    }
                    let frame = price.framing.per_block + if bi == 0 { per_message } else { 0 };
                    let c = counts
                        .get(bi)
                        .copied()
                        .unwrap_or_else(|| count_block(memo, b));
                    blocks.push(prefix(
                        &c,
                        &prepared.calibration,
                        frame,
                        PrefixKind::from(b.kind()),
                        Some(mi),
                    ));
                }
            }
            prepared.message_chars.get(mi).copied().unwrap_or(0)
        }
        Some(list) => {
            // Replacements are fixed per block for a run, so which blocks
            // were replaced names the message's wire bytes.
            let mut mask = 0u128;
            let mut maskable = true;
            for (bi, b) in list.iter().enumerate() {
                if matches!(b, WireBlock::Compacted { .. }) {
                    match 1u128.checked_shl(bi as u32) {
                        Some(bit) if bi < 128 => mask |= bit,
                        _ => maskable = false,
                    }
                }
            }
            let chars = if maskable {
                *rewritten_chars
                    .entry((mi, mask))
                    .or_insert_with(|| message_json(wm).chars().count() as u64)
            } else {
                message_json(wm).chars().count() as u64
            };
            for (bi, wb) in list.iter().enumerate() {
                if drop_reasoning && is_reasoning(wb.block()) {
                    blocks.push(dropped_reasoning(mi, if bi == 0 { per_message } else { 0 }));
                    continue;
                }
                let frame = price.framing.per_block + if bi == 0 { per_message } else { 0 };
                let c = match wb {
                    WireBlock::Original(_) => counts
                        .get(bi)
                        .copied()
                        .unwrap_or_else(|| count_block(memo, wb.block())),
                    WireBlock::Compacted { stub, .. } => tokens.count(stub),
                };
                blocks.push(prefix(
                    &c,
                    &prepared.calibration,
                    frame,
                    PrefixKind::from(wb.block().kind()),
                    Some(mi),
                ));
            }
            chars
        }
    }
}

pub(super) fn prefix(
    c: &BlockCount,
    cal: &TraceCalibration,
    framing: u64,
    kind: PrefixKind,
    message: Option<usize>,
) -> PrefixBlock {
    PrefixBlock {
        key: c.key,
        tokens: c.tokens(cal, framing),
        kind,
        message,
    }
}

/// The flattened block index a marker points at, if it exists.
pub(super) fn marker_index(
    m: &Marker,
    tools: usize,
    system_start: usize,
    message_start: &[usize],
    view: &WireView<'_>,
) -> Option<Breakpoint> {
    let block = match m.at {
        BlockRef::Tool(i) if i < tools => i,
        BlockRef::System(i) => system_start + i,
        BlockRef::Message { message, block } => {
            let n = view
                .messages
                .get(message)
                .map(|wm| wm.sent_blocks().count().max(1))?;
            if block >= n {
                return None;
            }
            message_start.get(message)? + block
        }
        BlockRef::Tool(_) => return None,
    };
    Some(Breakpoint { block, ttl: m.ttl })
}
