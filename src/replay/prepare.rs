//! Work done once per trace and shared by every config of a sweep: the
//! content key and token count of every distinct block ("tokens once").
//!
//! Claude's tokenizer is not public: counts come from the configured
//! tokenizer (o200k_base by default) and, where the trace recorded usage,
//! are scaled by a per-trace calibration factor fitted on the growth of the
//! recorded prompt between consecutive calls.

use std::borrow::Cow;
use std::sync::Arc;

use crate::cost::pricing::{Framing, ModelPrice};
use crate::cost::tokens::{Calibration, ContentHash, TokenMemo, calibrate};
use crate::engine::message::{
    BlockKind, Content, ContentBlock, Message, ToolDefinition, ToolResultContent,
};
use crate::engine::recall::recall_tool_definition;
use crate::engine::wire::Ttl;
use crate::trace::Trace;

pub use crate::trace::MEDIA_TOKENS;

/// Key and raw (uncalibrated, unframed) token count of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockCount {
    /// Hash of the block's JSON without `cache_control`.
    pub key: ContentHash,
    /// Tokens of its content, as the tokenizer counts them.
    pub raw_tokens: u64,
    /// Which calibration factor scales it.
    pub scale: Scale,
}

/// Which factor scales a block's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Message content: the factor fitted on prompt growth.
    Content,
    /// System prompt and tool definitions: the prefix factor when fitted.
    Prefix,
    /// Already in the provider's tokens (a hidden prefix known from usage).
    Exact,
}

/// The per-trace calibration: Claude's tokenizer is not public, so counts
/// from the configured tokenizer are scaled to the recorded usage.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct TraceCalibration {
    /// Scales message content; fitted on the growth of the recorded prompt
    /// between consecutive calls.
    #[serde(flatten)]
    pub content: Calibration,
    /// Scales the system prompt and tool definitions; fitted on the first
    /// recorded call's total once its messages are accounted for (content
    /// of another kind — prose and schemas rather than payloads — often
    /// tokenizes at another ratio). `None`: the content factor applies.
    pub prefix_factor: Option<f64>,
}

impl BlockCount {
    /// Tokens billed for this block: content, calibrated, plus `framing`.
    pub fn tokens(&self, cal: &TraceCalibration, framing: u64) -> u64 {
        let content = match (self.scale, cal.prefix_factor) {
            (Scale::Exact, _) => self.raw_tokens,
            (Scale::Prefix, Some(f)) => (self.raw_tokens as f64 * f).round().max(0.0) as u64,
            (Scale::Content | Scale::Prefix, _) => cal.content.apply(self.raw_tokens),
        };
        content + framing
    }
}

/// The text of a block that the tokenizer counts, plus fixed tokens for
/// media. One rule, used for history blocks, stubs and placeholders alike.
pub fn block_token_text(block: &ContentBlock) -> (Cow<'_, str>, u64) {
    match block.kind() {
        BlockKind::Text { text } => (Cow::Borrowed(&**text), 0),
        BlockKind::ToolUse { name, .. } => {
            let input = block.tool_input().map_or("{}", |r| r.get());
            (Cow::Owned(format!("{name} {input}")), 0)
        }
        BlockKind::ToolResult { content, .. } => match content {
            ToolResultContent::Empty => (Cow::Borrowed(""), 0),
            ToolResultContent::Text(t) => (Cow::Borrowed(&**t), 0),
            ToolResultContent::Blocks(inner) => {
                let mut text = String::new();
                let mut media = 0;
                for b in inner {
                    let (t, m) = block_token_text(b);
                    if !text.is_empty() && !t.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&t);
                    media += m;
                }
                (Cow::Owned(text), media)
            }
        },
        BlockKind::Image | BlockKind::Document => (Cow::Borrowed(""), MEDIA_TOKENS),
        BlockKind::Thinking | BlockKind::RedactedThinking | BlockKind::Other { .. } => {
            (Cow::Owned(block.to_json()), 0)
        }
    }
}

/// Counts one block (key + raw tokens) through the memo.
pub fn count_block(memo: &TokenMemo, block: &ContentBlock) -> BlockCount {
    let json = block.to_json();
    let (text, media) = block_token_text(block);
    BlockCount {
        key: ContentHash::of(json.as_bytes()),
        raw_tokens: memo.count(&text) + media,
        scale: Scale::Content,
    }
}

/// Counts one tool definition.
pub fn count_tool(memo: &TokenMemo, tool: &ToolDefinition) -> BlockCount {
    let json = tool.to_json();
    BlockCount {
        key: ContentHash::of(json.as_bytes()),
        raw_tokens: memo.count(&json),
        scale: Scale::Prefix,
    }
}

/// What a trace's recorded usage reveals of the provider's cache around a
/// prefix the source did not record (Claude Code's system prompt and tools).
///
/// A Claude Code session is one of many of its account, and they send the
/// same tools and opening system prompt. When a call's own prefix is cold
/// (its first call, or a call reading less than the call before it
/// cached), the record's read says exactly how much of the prompt was
/// warm anyway: a prefix another session wrote. Those lengths, where they
/// fall inside the hidden prefix, split it into parts; at such a call the
/// part the read reached was warm and the longer ones were not. And when
/// such a read comes within the TTL the call before wrote with, the
/// session's own rest of the hidden prompt changed (Claude Code rewrites
/// it: the date, git status, a tool connected): from that call on it is
/// new content. Both are facts about the provider's side, the same
/// whatever policy is replayed, so every config sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenCache {
    /// Prompt tokens through the end of each shared part, ascending.
    pub boundaries: Vec<u64>,
    /// Per call, what the record says of the shared parts.
    pub calls: Vec<SharedState>,
    /// Per call: which version of the session's own hidden rest it sent.
    pub version: Vec<u32>,
    /// The cache key of the own rest's block in each version (the first is
    /// the block's own; later ones stand for content that changed).
    pub own_keys: Vec<ContentHash>,
}

/// What a call's record says of the prefixes other sessions kept warm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedState {
    /// Nothing (no recorded usage, or the call's own prefix was warm).
    Unknown,
    /// None of the shared parts was warm.
    Cold,
    /// The shared parts through boundary `j` were warm, longer ones not.
    Warm(usize),
    /// The call read what the call before it cached: those entries were
    /// still alive, whatever the request times say (they are the times the
    /// transcript wrote its lines, a few seconds off the requests').
    Carried,
}

/// A trace with every block counted.
pub struct PreparedTrace<'t> {
    /// The trace.
    pub trace: &'t Trace,
    /// Per message, per block (a string-content message has one entry).
    pub messages: Vec<Vec<BlockCount>>,
    /// Characters of each message's compact JSON as recorded.
    pub message_chars: Vec<u64>,
    /// Per prompt version: its tools.
    pub tools: Vec<Vec<BlockCount>>,
    /// Per prompt version: its system blocks, then the hidden prefix when
    /// the trace has one.
    pub system: Vec<Vec<BlockCount>>,
    /// Per prompt version: the system blocks as sent (with the hidden-prefix
    /// stand-in appended when the trace has one).
    pub system_blocks: Vec<Vec<ContentBlock>>,
    /// The recall tool's definition and count (added under the ledger).
    pub recall_tool: (Arc<ToolDefinition>, BlockCount),
    /// The fitted calibration (factor 1 when off or nothing to fit).
    pub calibration: TraceCalibration,
    /// Calibrated content tokens of `messages[..k]`, for k in 0..=len.
    pub cumulative_tokens: Vec<u64>,
    /// Blocks in `messages[..k]` (string content counts as one).
    pub cumulative_blocks: Vec<u64>,
    /// What the record reveals of the provider's cache around a hidden
    /// prefix (Claude Code transcripts), when calibration is on.
    pub hidden_cache: Option<HiddenCache>,
    /// Per call, the TTL its record resolves to, for a cache policy whose
    /// TTL is the recorded one ([`crate::policy::recorded_ttls`]).
    pub recorded_ttls: Vec<crate::engine::wire::Ttl>,
    /// Tool results the record shows cleared without saying which, as
    /// `(history length from which on, tool_use id)` in call order (see
    /// [`PreparedTrace::infer_clears`]); replayed by the `recorded`
    /// compaction beside the clears the transcript wrote.
    pub inferred_clears: Vec<(usize, Arc<str>)>,
    /// The ledger every replay of this trace records into: handles are a
    /// pure function of the result, so they are derived once per trace.
    pub ledger: std::sync::Arc<crate::engine::ledger::InMemoryLedger>,
    /// The stubs made for that ledger, shared by every replay of the trace
    /// (a stub is a pure function of its result).
    pub stubs: std::sync::Arc<crate::engine::rewrite::StubCache>,
    /// Token counts of blocks made during replays (stubs), shared by every
    /// replay of the trace. Keyed by address, and holding each block so
    /// that the address names it while the trace is prepared.
    made_counts: std::sync::Mutex<
        std::collections::HashMap<
            usize,
            (Arc<ContentBlock>, BlockCount),
            crate::cost::tokens::FastBuild,
        >,
    >,
    /// Counts of the history's blocks by address (the trace is immutable
    /// while prepared, so an address names one block).
    by_address: std::collections::HashMap<usize, BlockCount>,
}

impl<'t> PreparedTrace<'t> {
    /// The count of `block`, a block made during a replay (a stub): counted
    /// once for every replay of the trace.
    pub fn count_made(&self, memo: &TokenMemo, block: &Arc<ContentBlock>) -> BlockCount {
        let addr = Arc::as_ptr(block) as usize;
        let lock = || self.made_counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = lock().get(&addr) {
            return *c;
        }
        let c = count_block(memo, block);
        lock().entry(addr).or_insert_with(|| (block.clone(), c)).1
    }

    /// Counts every distinct block of `trace` (in parallel, each once) and
    /// fits the calibration when `calibrate_auto` and usage was recorded.
    pub fn new(
        trace: &'t Trace,
        memo: &TokenMemo,
        price: &ModelPrice,
        calibrate_auto: bool,
    ) -> Self {
        // One parallel pass over the distinct texts; later lookups hit the memo.
        let mut texts: Vec<Cow<'_, str>> = Vec::new();
        for m in &trace.messages {
            match m.content() {
                Content::Text(t) => texts.push(Cow::Borrowed(&**t)),
                Content::Blocks(bs) => texts.extend(bs.iter().map(|b| block_token_text(b).0)),
            }
        }
        let refs: Vec<&str> = texts.iter().map(|c| &**c).collect();
        memo.count_all(&refs);
        drop(refs);
        drop(texts);

        let messages: Vec<Vec<BlockCount>> = trace
            .messages
            .iter()
            .map(|m| message_counts(memo, m))
            .collect();
        let message_chars = trace
            .messages
            .iter()
            .map(|m| m.to_json().chars().count() as u64)
            .collect();
        let hidden = (trace.hidden_prefix_tokens > 0)
            .then(|| hidden_prefix_block(trace.hidden_prefix_tokens));
        let mut tools = Vec::new();
        let mut system = Vec::new();
        let mut system_blocks = Vec::new();
        for p in &trace.prompts {
            tools.push(p.tools.iter().map(|t| count_tool(memo, t)).collect());
            let mut blocks = p.system.clone();
            let mut counts: Vec<BlockCount> = blocks
                .iter()
                .map(|b| BlockCount {
                    scale: Scale::Prefix,
                    ..count_block(memo, b)
                })
                .collect();
            if let Some((block, count)) = &hidden {
                blocks.push(block.clone());
                counts.push(*count);
            }
            system.push(counts);
            system_blocks.push(blocks);
        }
        let recall = Arc::new(recall_tool_definition());
        let recall_count = count_tool(memo, &recall);
        let mut prepared = PreparedTrace {
            trace,
            messages,
            message_chars,
            tools,
            system,
            system_blocks,
            recall_tool: (recall, recall_count),
            calibration: TraceCalibration::default(),
            cumulative_tokens: Vec::new(),
            cumulative_blocks: Vec::new(),
            by_address: Default::default(),
            ledger: Default::default(),
            stubs: Default::default(),
            made_counts: Default::default(),
            hidden_cache: None,
            recorded_ttls: crate::policy::recorded_ttls(&trace.calls),
            inferred_clears: Vec::new(),
        };
        if calibrate_auto {
            prepared.calibration.content = prepared.fit_calibration(&price.framing);
            prepared.calibration.prefix_factor = prepared.fit_prefix(price);
            prepared.apportion_growth(&price.framing);
            prepared.inferred_clears = prepared.infer_clears(memo, &price.framing);
            prepared.hidden_cache = prepared.read_hidden_cache(price);
        }
        let (mut tokens, mut blocks) = (0u64, 0u64);
        prepared.cumulative_tokens.push(0);
        prepared.cumulative_blocks.push(0);
        for (m, counts) in trace.messages.iter().zip(&prepared.messages) {
            tokens += counts
                .iter()
                .map(|c| c.tokens(&prepared.calibration, 0))
                .sum::<u64>();
            blocks += counts.len() as u64;
            prepared.cumulative_tokens.push(tokens);
            prepared.cumulative_blocks.push(blocks);
            for (b, c) in m.blocks().iter().zip(counts) {
                prepared
                    .by_address
                    .insert(b as *const ContentBlock as usize, *c);
            }
        }
        prepared
    }

    /// Fits `recorded ≈ factor × estimated` on the growth of the prompt
    /// between consecutive calls with recorded input, same prompt version,
    /// and a growing history. Framing is taken out of the recorded growth
    /// so the factor only scales the tokenizer's counts.
    fn fit_calibration(&self, framing: &Framing) -> Calibration {
        let mut pairs = Vec::new();
        for w in self.trace.calls.windows(2) {
            let [a, b] = w else { continue };
            let (Some(ra), Some(rb)) = (
                a.usage.and_then(|u| u.total_input()),
                b.usage.and_then(|u| u.total_input()),
            ) else {
                continue;
            };
            if a.prompt != b.prompt || b.messages <= a.messages {
                continue;
            }
            let new = &self.messages[a.messages..b.messages];
            let raw: u64 = new.iter().flatten().map(|c| c.raw_tokens).sum();
            let frame: u64 = new
                .iter()
                .map(|m| framing.per_message + framing.per_block * m.len() as u64)
                .sum();
            let recorded = rb as i64 - ra as i64 - frame as i64;
            pairs.push((raw as i64, recorded));
        }
        calibrate(&pairs)
    }
}

impl PreparedTrace<'_> {
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
    fn apportion_growth(&mut self, framing: &Framing) {
        let calls = &self.trace.calls;
        for w in calls.windows(2) {
            let [a, b] = w else { continue };
            let (Some(ra), Some(rb)) = (
                a.usage.and_then(|u| u.total_input()),
                b.usage.and_then(|u| u.total_input()),
            ) else {
                continue;
            };
            if a.prompt != b.prompt || b.messages <= a.messages || b.messages > self.messages.len()
            {
                continue;
            }
            let range = a.messages..b.messages;
            let frame: u64 = self.messages[range.clone()]
                .iter()
                .map(|m| framing.per_message + framing.per_block * m.len() as u64)
                .sum();
            let Some(growth) = rb.checked_sub(ra).and_then(|g| g.checked_sub(frame)) else {
                continue;
            };
            let cal = self.calibration;
            let weights: Vec<u64> = self.messages[range.clone()]
                .iter()
                .flatten()
                .map(|c| c.tokens(&cal, 0))
                .collect();
            let Some(shares) = apportion(growth, &weights) else {
                continue;
            };
            let mut shares = shares.into_iter();
            for m in &mut self.messages[range] {
                for c in m.iter_mut() {
                    if let Some(s) = shares.next() {
                        c.raw_tokens = s;
                        c.scale = Scale::Exact;
                    }
                }
            }
        }
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
    fn infer_clears(&self, memo: &TokenMemo, framing: &Framing) -> Vec<(usize, Arc<str>)> {
        let trace = self.trace;
        let calls = &trace.calls;
        let cal = self.calibration;
        let mut cleared: std::collections::HashSet<&str> = Default::default();
        let mut out: Vec<(usize, Arc<str>)> = Vec::new();
        // A cleared result's content is the placeholder: its tokens, counted
        // once (a tool_result counts its content's text, as a text block).
        let placeholder = count_block(
            memo,
            &ContentBlock::text(crate::policy::CLAUDE_CODE_CLEARED_PLACEHOLDER),
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
                a.usage.and_then(|u| u.total_input()),
                b.usage.and_then(|u| u.total_input()),
            ) else {
                continue;
            };
            // A call the transcript says what was cleared at is explained.
            if a.prompt != b.prompt
                || b.messages <= a.messages
                || b.messages > self.messages.len()
                || rb >= ra
                || !b.cleared.is_empty()
            {
                continue;
            }
            let appended: u64 = self.messages[a.messages..b.messages]
                .iter()
                .map(|m| tokens(m))
                .sum();
            let removed = (ra + appended).saturating_sub(rb);
            // Oldest first, each result's saving as the placeholder.
            let mut taken: Vec<&Arc<str>> = Vec::new();
            let mut small: Vec<&Arc<str>> = Vec::new();
            let mut saved = 0u64;
            'scan: for (m, counts) in trace.messages[..a.messages].iter().zip(&self.messages) {
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

    /// Splits the hidden prefix where the record shows other sessions'
    /// prefixes ending, and reads per call what was warm and whether the
    /// session's own rest changed (see [`HiddenCache`]). `None` when the
    /// trace has no hidden prefix, or its record shows no such read.
    fn read_hidden_cache(&mut self, price: &ModelPrice) -> Option<HiddenCache> {
        let hidden = self.trace.hidden_prefix_tokens;
        if hidden == 0 {
            return None;
        }
        let calls = &self.trace.calls;
        let p = calls.first()?.prompt;
        if calls.iter().any(|c| c.prompt != p) {
            return None;
        }
        // What precedes the hidden prefix in the request, framing included.
        let tools = self.tools.get(p)?;
        let system = self.system.get(p)?;
        if system.last().is_none_or(|c| c.scale != Scale::Exact) {
            return None;
        }
        let cal = self.calibration;
        let before: u64 = tools
            .iter()
            .map(|c| c.tokens(&cal, price.framing.per_tool))
            .sum::<u64>()
            + if tools.is_empty() {
                0
            } else {
                price
                    .tool_prompt
                    .tokens(crate::cost::pricing::ToolChoice::Auto)
            }
            + system[..system.len() - 1]
                .iter()
                .map(|c| c.tokens(&cal, price.framing.per_block))
                .sum::<u64>();
        let frame = price.framing.per_block;
        // (read, cached) per recorded call; a call is cold when it read
        // less than the call before it cached.
        let usage: Vec<Option<(u64, u64)>> = calls
            .iter()
            .map(|c| {
                let u = c.usage?;
                u.total_input()?;
                let read = u.cache_read_input_tokens.unwrap_or(0);
                Some((read, read + u.cache_creation_input_tokens.unwrap_or(0)))
            })
            .collect();
        let mut cold: Vec<Option<u64>> = vec![None; calls.len()];
        let mut prev: Option<u64> = None;
        for (i, u) in usage.iter().enumerate() {
            if let Some((read, cached)) = *u {
                if prev.is_none_or(|p| read < p) {
                    cold[i] = Some(read);
                }
                prev = Some(cached);
            }
        }
        // Each part is a framed block: a boundary needs room for its frame.
        let mut boundaries: Vec<u64> = cold
            .iter()
            .flatten()
            .copied()
            .filter(|&r| r > before + frame && r + frame < before + hidden)
            .collect();
        boundaries.sort_unstable();
        // Reads a few tokens apart (other sessions' prompts differing by a
        // word) cannot each end a framed part: the lower one stands for
        // them, so such a read is taken to reach a few tokens less.
        let mut at = before;
        boundaries.retain(|&b| {
            let room = b > at + frame;
            if room {
                at = b;
            }
            room
        });
        // Parts: between consecutive boundaries, each framed, then the rest.
        let mut parts = Vec::with_capacity(boundaries.len() + 1);
        let mut at = before;
        for &b in &boundaries {
            parts.push(b - at - frame);
            at = b;
        }
        // With no shared part, the record still says which calls read
        // what the call before cached and when the hidden rest changed.
        let own = (before + hidden)
            .checked_sub(at + frame)
            .filter(|t| *t > 0)?;
        let mut counts = Vec::with_capacity(parts.len() + 1);
        let mut blocks = Vec::with_capacity(parts.len() + 1);
        for (j, &t) in parts.iter().enumerate() {
            let (b, c) = hidden_part_block(&format!("shared part {}", j + 1), t);
            blocks.push(b);
            counts.push(c);
        }
        let (b, mut own_count) = hidden_part_block("this session's own", own);
        // The rest is this trace's own: another trace's rest of the same
        // size is other content (its own system prompt and context), so
        // its key says whose it is.
        own_count.key = ContentHash::of(
            [own_count.key.0.as_slice(), self.trace.name.as_bytes()]
                .concat()
                .as_slice(),
        );
        blocks.push(b);
        counts.push(own_count);
        for (sc, sb) in self.system.iter_mut().zip(&mut self.system_blocks) {
            sc.pop();
            sb.pop();
            sc.extend(counts.iter().copied());
            sb.extend(blocks.iter().cloned());
        }
        let states = cold
            .iter()
            .zip(&usage)
            .map(|(c, u)| match c {
                None if u.is_some() => SharedState::Carried,
                None => SharedState::Unknown,
                Some(read) => match boundaries.iter().rposition(|b| b <= read) {
                    Some(j) => SharedState::Warm(j),
                    None => SharedState::Cold,
                },
            })
            .collect();
        let end = before + hidden;
        let mut version = 0u32;
        let mut fresh = 0u32;
        let mut versions = Vec::with_capacity(calls.len());
        // (start, TTL it wrote with) of the last call that recorded usage.
        let mut last: Option<(u64, Ttl)> = None;
        for (i, (c, r)) in calls.iter().zip(&cold).enumerate() {
            // Within the TTL the session's own entries were written with
            // (an hour where Claude Code asked for one), they were alive.
            let recent = match (c.start_ms, last) {
                (Some(s), Some((l, ttl))) => s.saturating_sub(l) < ttl.millis(),
                _ => false,
            };
            if recent && r.is_some_and(|read| read < end) {
                // A fresh version: never one an earlier call sent.
                fresh += 1;
                version = fresh;
            } else if let Some(read) = *r
                && read >= end
                && i >= 2
                && versions[i - 1] == version
                && versions[i - 2] != version
            {
                // The call before changed the hidden rest, and this one
                // read past it less than that call cached: what it read
                // was cached before the change, so that one request went
                // with another prefix and this one is back on the old.
                version = versions[i - 2];
            }
            if c.usage.is_some() {
                let ttl = self
                    .recorded_ttls
                    .get(i)
                    .copied()
                    .unwrap_or(Ttl::FiveMinutes);
                last = c.start_ms.map(|s| (s, ttl)).or(last.map(|(l, _)| (l, ttl)));
            }
            versions.push(version);
        }
        let own_keys = (0..=fresh)
            .map(|v| {
                if v == 0 {
                    return own_count.key;
                }
                let mut bytes = own_count.key.0.to_vec();
                bytes.extend_from_slice(&v.to_le_bytes());
                ContentHash::of(&bytes)
            })
            .collect();
        Some(HiddenCache {
            boundaries,
            calls: states,
            version: versions,
            own_keys,
        })
    }

    /// The count of a block of this trace's history, found by address.
    pub fn count_of(&self, block: &ContentBlock) -> Option<BlockCount> {
        self.by_address
            .get(&(block as *const ContentBlock as usize))
            .copied()
    }

    /// Calibrated tokens of `history` when it is a prefix of this trace's
    /// history, with `per_block` and `per_message` framing.
    pub fn prefix_tokens(
        &self,
        history: &[Message],
        per_block: u64,
        per_message: u64,
    ) -> Option<u64> {
        if !std::ptr::eq(history.as_ptr(), self.trace.messages.as_ptr()) {
            return None;
        }
        let n = history.len();
        Some(
            self.cumulative_tokens.get(n)?
                + per_block * self.cumulative_blocks.get(n)?
                + per_message * n as u64,
        )
    }

    /// Fits the prefix factor on the first call that recorded its input:
    /// what remains of its total once its messages (content-calibrated),
    /// the framing, the tool-use prompt and any hidden prefix are taken out
    /// is the true size of the system prompt and tools.
    fn fit_prefix(&self, price: &ModelPrice) -> Option<f64> {
        let (call, recorded) = self
            .trace
            .calls
            .iter()
            .find_map(|c| Some((c, c.usage?.total_input()?)))?;
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
        };
        let messages: u64 = self.messages[..call.messages.min(self.messages.len())]
            .iter()
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
                    .tokens(crate::cost::pricing::ToolChoice::Auto)
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

/// A stand-in for one part of a prefix the trace did not record.
fn hidden_part_block(what: &str, tokens: u64) -> (ContentBlock, BlockCount) {
    stand_in(
        &format!("[system prompt and tool definitions not recorded, {what}: {tokens} tokens]"),
        tokens,
    )
}

/// `total` split in proportion to `weights`, summing exactly (largest
/// remainder; ties to the earlier block). `None` when every weight is 0.
fn apportion(total: u64, weights: &[u64]) -> Option<Vec<u64>> {
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

/// The stand-in for a system prompt and tools the trace did not record: a
/// text block whose token count is set to the known size.
pub fn hidden_prefix_block(tokens: u64) -> (ContentBlock, BlockCount) {
    stand_in(
        &format!("[system prompt and tool definitions not recorded: {tokens} tokens]"),
        tokens,
    )
}

/// A text block standing in for content of a known size: its key is its
/// text's, its count exact.
fn stand_in(text: &str, tokens: u64) -> (ContentBlock, BlockCount) {
    let block = ContentBlock::text(text);
    let key = ContentHash::of(block.to_json().as_bytes());
    (
        block,
        BlockCount {
            key,
            raw_tokens: tokens,
            scale: Scale::Exact,
        },
    )
}

fn message_counts(memo: &TokenMemo, m: &Message) -> Vec<BlockCount> {
    match m.content() {
        Content::Text(t) => {
            // The block the string stands for, written from the message's
            // own member (no second copy of its bytes is kept).
            let mut json = String::from(r#"{"type":"text","text":"#);
            match m.fields().value("content") {
                Some(v) => v.write_json(&mut json),
                None => json.push_str("\"\""),
            }
            json.push('}');
            vec![BlockCount {
                key: ContentHash::of(json.as_bytes()),
                raw_tokens: memo.count(t),
                scale: Scale::Content,
            }]
        }
        Content::Blocks(bs) => bs.iter().map(|b| count_block(memo, b)).collect(),
    }
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
