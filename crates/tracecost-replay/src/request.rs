//! Building a call's request: the first stage of replaying it, shared by
//! every config of a group. From the call's history and prompt it makes
//! the wire view, the flattened blocks with their token counts and the
//! prefix index, rebuilt incrementally from the first message that changed.
//! Placing one config's markers and simulating its cache is the second
//! stage ([`super::group`]): the driver calls this core once per call, as a
//! searcher's driver calls its per-line core.

use std::ops::Range;

use tracecost_cost::cache_sim::{Breakpoint, PrefixBlock, PrefixIndex, PrefixKind};
use tracecost_cost::pricing::{ModelPrice, ToolChoice};
use tracecost_cost::tokens::{ContentHash, TokenMemo};
use tracecost_engine::cache::plain_text_blocks;
use tracecost_engine::message::{ContentBlock, ToolDefinition};
use tracecost_engine::rewrite::{WireBlock, WireMessage, WireView};
use tracecost_engine::wire::{BlockRef, Marker, message_json};
use tracecost_policy::{CompactionRun, ViewState};

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
    /// Per block (tools → tool prompt → system → message blocks), its
    /// key: all that is read of a block once its call is built (its
    /// tokens and kind are in the index), so a long history is held at
    /// 16 bytes a block, not a whole [`PrefixBlock`].
    pub(super) keys: Vec<ContentHash>,
    /// The blocks rebuilt at the latest call, whole: the request's blocks
    /// from [`Sent::from_block`] on.
    pub(super) tail: Vec<PrefixBlock>,
    /// The previous call's keys from the first block rebuilt on.
    pub(super) old_tail: Vec<ContentHash>,
    /// The header the blocks were last built with (the first
    /// `header_len`).
    pub(super) built_header: Vec<PrefixBlock>,
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
    pub(super) boundary_at: Boundaries,
    /// Per message: the characters of the messages before it and its own,
    /// as sent (running sums: cut back and extended with the messages).
    pub(super) chars_through: Vec<u64>,
    /// The prefix index of `blocks`.
    pub(super) index: PrefixIndex,
    /// The model (its price's id) the blocks were framed and indexed for;
    /// `None` before the first call and after a call whose extra tail the
    /// next must not keep.
    pub(super) model: Option<String>,
    /// The header built for the current call, compared with the last.
    pub(super) header: Vec<PrefixBlock>,
    /// The messages whose reasoning the API dropped from the latest call
    /// ([`PreparedTrace::reasoning_cut`]).
    pub(super) reasoning_cut: usize,
}

/// Per message, the history boundary of [`Request::boundary_at`], in 8
/// bytes a message rather than an `Option<BlockRef>`'s 24: a long history
/// holds one a message. A boundary past what a `u32` indexes (a history
/// no memory holds) is not kept, and is then found by the engine's scan
/// ([`tracecost_engine::cache::history_boundary`]).
#[derive(Default)]
pub(super) struct Boundaries {
    /// Message and block of each boundary, or [`NO_BOUNDARY`].
    at: Vec<[u32; 2]>,
    /// Some boundary pushed since the last clear was not kept.
    unkept: bool,
}

/// A message with no boundary before it.
const NO_BOUNDARY: [u32; 2] = [u32::MAX; 2];

impl Boundaries {
    fn clear(&mut self) {
        self.at.clear();
        self.unkept = false;
    }

    fn truncate(&mut self, messages: usize) {
        self.at.truncate(messages);
    }

    fn len(&self) -> usize {
        self.at.len()
    }

    fn push(&mut self, boundary: Option<BlockRef>) {
        let packed = match boundary {
            None => Some(NO_BOUNDARY),
            Some(BlockRef::Message { message, block }) => u32::try_from(message)
                .ok()
                .zip(u32::try_from(block).ok())
                .map(|(m, b)| [m, b])
                .filter(|p| *p != NO_BOUNDARY),
            Some(BlockRef::Tool(_) | BlockRef::System(_)) => None,
        };
        self.unkept |= packed.is_none();
        self.at.push(packed.unwrap_or(NO_BOUNDARY));
    }

    /// The boundary of a view of `message + 1` messages; `None` when it
    /// was not kept (or there is no such message).
    pub(super) fn get(&self, message: usize) -> Option<Option<BlockRef>> {
        if self.unkept {
            return None;
        }
        let &[m, b] = self.at.get(message)?;
        Some(([m, b] != NO_BOUNDARY).then_some(BlockRef::Message {
            message: m as usize,
            block: b as usize,
        }))
    }
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

/// A call's header (tools → tool prompt → system) and what goes with it:
/// the first phase of [`Request::build`].
struct Header<'a> {
    /// The tool definitions sent (the recall tool last, where offered).
    tools: Vec<&'a ToolDefinition>,
    /// The system blocks sent.
    system: &'a [ContentBlock],
    /// Tokens of the header, for token-triggered peers.
    fixed: u64,
    /// Index of the first system block.
    system_start: usize,
    /// The hidden prefix's shared blocks and what the record says of them.
    shared: Option<(Range<usize>, SharedState)>,
    /// Whether the trace has a hidden prefix the record tells about.
    hidden: bool,
}

/// The inputs of one call's request that stay the same while it is built.
pub(super) struct CallInputs<'a, 't> {
    /// The trace, counted.
    pub(super) prepared: &'a PreparedTrace<'t>,
    /// The token memo for blocks the prepared counts do not hold.
    pub(super) memo: &'a TokenMemo,
    /// The call's model's price (its framing and tokenizer).
    pub(super) price: &'a ModelPrice,
    /// The call.
    pub(super) ci: usize,
    /// Whether the recall tool is offered.
    pub(super) with_recall: bool,
    /// The messages whose thinking a thinking edit clears from this call
    /// on (`clear-thinking`), before the API's own cut.
    pub(super) thinking_cut: usize,
}

impl<'t> Request<'t> {
    /// Builds the request of call `ci` of `prepared`'s trace priced at
    /// `price`: from scratch, or (`incremental`) from the previous call's,
    /// rebuilding only from the first message whose bytes changed. Four
    /// phases: the header, the wire view (which message changed first),
    /// the blocks rebuilt from there, and what the call sent as before.
    pub(super) fn build<'a>(
        &mut self,
        inputs: &CallInputs<'a, 't>,
        incremental: bool,
        run: &mut CompactionRun,
        tokens: &RunTokens<'_>,
    ) -> Result<Sent<'a>, ReplayError> {
        let header = self.build_header(inputs);
        let (first_changed, cut) =
            self.advance_view(inputs, header.fixed, incremental, run, tokens)?;
        let from_block = self.rebuild(inputs, &header, first_changed, cut, incremental, tokens);
        Ok(self.sent(header, from_block))
    }

    /// The header of call `ci` into `self.header`, and the parts of the
    /// prompt it was made from.
    fn build_header<'a>(&mut self, inputs: &CallInputs<'a, 't>) -> Header<'a> {
        let CallInputs {
            prepared,
            price,
            ci,
            with_recall,
            ..
        } = *inputs;
        let call = &prepared.trace.calls[ci];
        let prompt = prepared.trace.prompt_of(call);
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
        let cal = &prepared.calibration;
        let tool_prompt = if tools.is_empty() {
            0
        } else {
            price.tool_prompt.tokens(ToolChoice::Auto)
        };
        let fixed: u64 = tool_counts
            .iter()
            .map(|c| c.tokens(cal, price.framing.per_tool))
            .sum::<u64>()
            + tool_prompt
            + system_counts
                .iter()
                .map(|c| c.tokens(cal, price.framing.per_block))
                .sum::<u64>();

        self.header.clear();
        for c in &tool_counts {
            let b = prefix(c, cal, price.framing.per_tool, PrefixKind::ToolDef, None);
            self.header.push(b);
        }
        if !tools.is_empty() {
            self.header.push(PrefixBlock::tool_prompt(tool_prompt));
        }
        let system_start = self.header.len();
        for c in system_counts {
            let b = prefix(c, cal, price.framing.per_block, PrefixKind::System, None);
            self.header.push(b);
        }
        // The record's view of the hidden prefix: its own rest is new
        // content from each change on, and its shared part's block is the
        // one another session kept warm.
        let hidden = prepared
            .hidden_cache
            .as_ref()
            .filter(|h| system_counts.len() > h.boundaries.len());
        let shared = hidden.map(|h| {
            let own = self.header.len() - 1;
            let v = h.version.get(ci).copied().unwrap_or(0) as usize;
            if let Some(key) = h.own_keys.get(v) {
                self.header[own].key = *key;
            }
            let first = own - h.boundaries.len();
            let state = h.calls.get(ci).copied().unwrap_or(SharedState::Unknown);
            (first..own, state)
        });
        Header {
            tools,
            system,
            fixed,
            system_start,
            shared,
            hidden: hidden.is_some(),
        }
    }

    /// The call's wire view into `self.state`; returns the first message
    /// whose bytes changed since the previous call (0 when built afresh)
    /// and the call's reasoning cut.
    fn advance_view(
        &mut self,
        inputs: &CallInputs<'_, 't>,
        fixed: u64,
        incremental: bool,
        run: &mut CompactionRun,
        tokens: &RunTokens<'_>,
    ) -> Result<(usize, usize), ReplayError> {
        let CallInputs { prepared, ci, .. } = *inputs;
        let history = prepared.trace.history_of(&prepared.trace.calls[ci]);
        let first_changed = if incremental {
            run.advance(history, fixed, tokens, &mut self.state)?
        } else {
            let pv = run.view(history, fixed, tokens)?;
            self.state.view = pv.view;
            self.state.compacted = pv.compacted.into();
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
            .max(inputs.thinking_cut);
        let first_changed = (self.reasoning_cut..cut)
            .find(|&mi| {
                history
                    .get(mi)
                    .is_some_and(|m| m.blocks().iter().any(is_reasoning))
            })
            .map_or(first_changed, |mi| first_changed.min(mi));
        Ok((first_changed, cut))
    }

    /// Rebuilds the blocks from message `first_changed` on (from the
    /// start when the header, its length or the model changed, or not
    /// `incremental`), with their prefix index; returns the first block
    /// rebuilt. The previous call's blocks from there wait in
    /// `old_tail`.
    fn rebuild(
        &mut self,
        inputs: &CallInputs<'_, 't>,
        header: &Header<'_>,
        first_changed: usize,
        cut: usize,
        incremental: bool,
        tokens: &RunTokens<'_>,
    ) -> usize {
        let CallInputs {
            prepared,
            memo,
            price,
            ci,
            ..
        } = *inputs;
        let same_frame = self.header == self.built_header
            && self.header_len == self.header.len()
            && self.model.as_deref() == Some(price.id.as_str());
        let from_message = if incremental && same_frame {
            first_changed
        } else {
            0
        };
        let from_block = if from_message == 0 {
            0
        } else {
            self.message_start
                .get(from_message)
                .copied()
                .unwrap_or(self.keys.len())
        };
        self.old_tail.clear();
        self.old_tail.shrink_to(TAIL_KEPT);
        self.old_tail.extend(self.keys.drain(from_block..));
        self.index.truncate(from_block);
        self.tail.clear();
        // A rebuild from an early message (a result compacted) fills the
        // tail with most of the history; what it reserved then is given
        // back rather than held for the calls that append a few blocks.
        self.tail.shrink_to(TAIL_KEPT);
        if from_block == 0 {
            self.tail.extend_from_slice(&self.header);
            self.built_header.clone_from(&self.header);
            self.header_len = self.header.len();
            self.system_start = header.system_start;
            self.model = Some(price.id.clone());
            self.message_start.clear();
            self.chars_through.clear();
            self.boundary_at.clear();
        } else {
            self.message_start.truncate(from_message);
            self.chars_through.truncate(from_message);
            self.boundary_at.truncate(from_message);
        }
        self.extend_boundaries();
        for (mi, wm) in self
            .state
            .view
            .messages
            .iter()
            .enumerate()
            .skip(from_message)
        {
            self.message_start.push(from_block + self.tail.len());
            let c = flatten_message(
                prepared,
                memo,
                price,
                tokens,
                mi,
                wm,
                mi < cut,
                &mut self.tail,
            );
            let before = self.chars_through.last().copied().unwrap_or(0);
            self.chars_through.push(before + c);
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
            self.tail.push(prefix(
                &super::prepare::unrecorded_tail(extra),
                &prepared.calibration,
                0,
                PrefixKind::Text,
                None,
            ));
            self.model = None;
        }
        // The index was cut back to `from_block` with the keys.
        self.index.append(price, &self.tail);
        self.keys.extend(self.tail.iter().map(|b| b.key));
        self.reasoning_cut = cut;
        from_block
    }

    /// Extends [`Request::boundary_at`] to the view's messages.
    fn extend_boundaries(&mut self) {
        for mi in self.boundary_at.len()..self.state.view.messages.len() {
            // Message `mi - 1` is complete once `mi` follows it.
            let boundary = mi.checked_sub(1).and_then(|prev| {
                plain_text_blocks(&self.state.view.messages[prev])
                    .map(|n| BlockRef::Message {
                        message: prev,
                        block: n.saturating_sub(1),
                    })
                    .or_else(|| self.boundary_at.get(prev).flatten())
            });
            self.boundary_at.push(boundary);
        }
    }

    /// What the rebuilt request sent as the previous call's did, and the
    /// rest of [`Sent`].
    fn sent<'a>(&self, header: Header<'a>, from_block: usize) -> Sent<'a> {
        let chars: u64 = 2
            + self.state.view.messages.len().saturating_sub(1) as u64
            + self.chars_through.last().copied().unwrap_or(0);
        // Tokens of the leading blocks sent as in the previous call: every
        // block before `from_block`, then those rebuilt the same.
        let same_tail = self
            .tail
            .iter()
            .zip(&self.old_tail)
            .take_while(|(a, b)| a.key == **b)
            .count();
        let stable_prefix_tokens: u64 = from_block
            .checked_sub(1)
            .and_then(|b| self.index.tokens_through(b))
            .unwrap_or(0)
            + self.tail[..same_tail].iter().map(|a| a.tokens).sum::<u64>();
        let layout = explain::Layout {
            system_start: self.system_start,
            header_len: self.header_len,
            hidden: header
                .shared
                .as_ref()
                .map_or(0..0, |(parts, _)| parts.start..parts.end + 1),
        };
        Sent {
            tools: header.tools,
            system: header.system,
            shared: header.shared,
            hidden: header.hidden,
            chars,
            same_blocks: from_block + same_tail,
            stable_prefix_tokens,
            layout,
            from_block,
        }
    }
}

/// Blocks whose room [`Request::tail`] and [`Request::old_tail`] keep from
/// call to call: a call usually appends a handful.
const TAIL_KEPT: usize = 256;

/// The stand-in of a reasoning block the API dropped: sent, not billed
/// (but for the message's framing when it opens the message), and no
/// longer the block an earlier prompt cached.
fn dropped_reasoning(mi: usize, framing: u64) -> PrefixBlock {
    PrefixBlock {
        key: tracecost_cost::tokens::ContentHash::of(b"reasoning dropped by the API"),
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
    tokens: &RunTokens<'_>,
    mi: usize,
    wm: &WireMessage<'_>,
    drop_reasoning: bool,
    blocks: &mut Vec<PrefixBlock>,
) -> u64 {
    let counts = prepared.messages.get(mi).unwrap_or_default();
    let per_message = price.framing.per_message;
    match &wm.blocks {
        None => {
            if wm.source.blocks().is_empty() {
                let c = counts.first().copied().unwrap_or(BlockCount {
                    key: tracecost_cost::tokens::ContentHash::of(b""),
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
            // Counted when the message is rebuilt, not kept: the request is
            // rebuilt from the first message that changed, so a message is
            // counted again only when it changed, while a map of every
            // rewritten message's count was one entry per cleared result
            // for the whole run.
            let chars = message_json(wm).chars().count() as u64;
            for (bi, wb) in list.iter().enumerate() {
                // A cleared result's block is made here once, and let go.
                let sent = wb.block();
                if drop_reasoning && is_reasoning(&sent) {
                    blocks.push(dropped_reasoning(mi, if bi == 0 { per_message } else { 0 }));
                    continue;
                }
                let frame = price.framing.per_block + if bi == 0 { per_message } else { 0 };
                let c = match wb {
                    WireBlock::Original(_) => counts
                        .get(bi)
                        .copied()
                        .unwrap_or_else(|| count_block(memo, &sent)),
                    WireBlock::Compacted { stub, .. } => tokens.count(stub),
                    WireBlock::Cleared { .. } => count_block(memo, &sent),
                };
                blocks.push(prefix(
                    &c,
                    &prepared.calibration,
                    frame,
                    PrefixKind::from(sent.kind()),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Boundaries read back as pushed, through a cut and a clear; one
    /// that a `u32` cannot hold is said not kept (the caller then scans),
    /// never read back as another.
    #[test]
    fn boundaries_read_back_as_pushed_or_not_at_all() {
        let at = |message, block| Some(BlockRef::Message { message, block });
        let mut b = Boundaries::default();
        for pushed in [None, at(0, 0), at(0, 0), at(2, 3), None, at(7, 1)] {
            b.push(pushed);
        }
        let read: Vec<_> = (0..6).map(|i| b.get(i)).collect();
        assert_eq!(
            read,
            [None, at(0, 0), at(0, 0), at(2, 3), None, at(7, 1)].map(Some)
        );
        assert_eq!(b.get(6), None);
        b.truncate(3);
        assert_eq!((b.len(), b.get(2), b.get(3)), (3, Some(at(0, 0)), None));
        b.push(at(1 << 33, 0));
        assert_eq!(b.get(0), None);
        b.truncate(1);
        assert_eq!(b.get(0), None, "a cut keeps a boundary unkept");
        b.clear();
        b.push(at(u32::MAX as usize, u32::MAX as usize));
        b.push(Some(BlockRef::System(0)));
        assert_eq!(b.get(0), None);
        b.clear();
        b.push(at(4, 5));
        assert_eq!(b.get(0), Some(at(4, 5)));
    }
}
