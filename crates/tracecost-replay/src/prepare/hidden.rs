//! The prefix a trace did not record: Claude Code transcripts carry no
//! system prompt or tool definitions, but their recorded usage tells their
//! size, and whether another session kept them warm. Here the stand-in
//! blocks for them, and what each call's record says of their cache.

use std::collections::HashMap;

use tracecost_cost::pricing::ModelPrice;
use tracecost_cost::tokens::ContentHash;
use tracecost_engine::message::ContentBlock;
use tracecost_engine::wire::Ttl;

use super::{BlockCount, PreparedTrace, Scale};

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
    /// The trace's first call read past the end of the hidden prefix:
    /// another session of the account had sent the same hidden prompt and
    /// the same opening (an Agent-SDK run started again with the same
    /// prompt), and its entries were alive. The whole hidden prefix was
    /// warm, and the blocks after it but for the tail the call wrote (this
    /// many tokens): counted from the end, the tokenizer's estimate of the
    /// opening does not move the line.
    ReadPast {
        /// Tokens the call wrote after what it read.
        written: u64,
    },
}

impl PreparedTrace<'_> {
    /// Splits the hidden prefix where the record shows other sessions'
    /// prefixes ending, and reads per call what was warm and whether the
    /// session's own rest changed (see [`HiddenCache`]). `None` when the
    /// trace has no hidden prefix, or its record shows no such read.
    pub(super) fn read_hidden_cache(&mut self, price: &ModelPrice) -> Option<HiddenCache> {
        let calls = &self.trace.calls;
        let p = calls.first()?.prompt;
        if calls.iter().any(|c| c.prompt != p) {
            return None;
        }
        let hidden = self.system.get(p)?.last()?.raw_tokens;
        let before = self.before_hidden(p, price)?;
        let frame = price.framing.per_block;
        let usage = recorded_reads(calls);
        let cold = cold_reads(calls, &usage);
        let boundaries = part_boundaries(&cold, before, before + hidden, frame);
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
        let own_key = self.split_hidden(&parts, own);
        let end = before + hidden;
        let states = shared_states(&cold, &usage, &boundaries, end, frame);
        let (version, fresh) = self.own_versions(&cold, end);
        let own_keys = (0..=fresh)
            .map(|v| {
                if v == 0 {
                    return own_key;
                }
                let mut bytes = own_key.0.to_vec();
                bytes.extend_from_slice(&v.to_le_bytes());
                ContentHash::of(&bytes)
            })
            .collect();
        Some(HiddenCache {
            boundaries,
            calls: states,
            version,
            own_keys,
        })
    }

    /// Replaces every prompt version's hidden block with its parts (each
    /// shared part's tokens, then the session's own rest); returns the own
    /// rest's key.
    fn split_hidden(&mut self, parts: &[u64], own: u64) -> ContentHash {
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
        own_count.key
    }

    /// Per call, the version of the session's own hidden rest it sent
    /// (0: the first), and the last version made: a cold read within the
    /// TTL of the session's own entries, short of the rest's `end`, means
    /// the rest changed.
    fn own_versions(&self, cold: &[Option<u64>], end: u64) -> (Vec<u32>, u32) {
        let calls = &self.trace.calls;
        let mut version = 0u32;
        let mut fresh = 0u32;
        let mut versions = Vec::with_capacity(calls.len());
        // (start, TTL it wrote with) of the last call that recorded usage.
        let mut lasts: HashMap<String, (u64, Ttl)> = HashMap::new();
        for (i, (c, r)) in calls.iter().zip(cold).enumerate() {
            // Within the TTL the session's own entries were written with
            // (an hour where Claude Code asked for one), they were alive.
            let last = lasts.get(&model_of(c)).copied();
            let recent = match (c.start_ms, last) {
                (Some(s), Some((l, ttl))) => s.saturating_sub(l) < ttl.millis(),
                _ => false,
            };
            // A read the record shows fell back (OpenAI's service sending
            // the request where less was cached, `recorded_fallbacks`) is
            // explained by that; the calls after it read the prompts before
            // it again, so the rest did not change.
            let fell_back = self.recorded_fallbacks.get(i).is_some_and(Option::is_some);
            if recent && !fell_back && r.is_some_and(|read| read < end) {
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
                if let Some(l) = c.start_ms.or(last.map(|(l, _)| l)) {
                    lasts.insert(model_of(c), (l, ttl));
                }
            }
            versions.push(version);
        }
        (versions, fresh)
    }
}

/// The cache is per model: a call's record speaks of its own model's
/// entries only (an advisor's request, on another model, neither reads
/// nor keeps the executor's).
fn model_of(c: &tracecost_trace::Call) -> String {
    c.model.clone().unwrap_or_default()
}

/// Per call, what its record says it read from the cache and what was
/// cached after it (read + written); `None` without recorded input.
fn recorded_reads(calls: &[tracecost_trace::Call]) -> Vec<Option<(u64, u64)>> {
    calls
        .iter()
        .map(|c| {
            let u = c.recorded_usage()?;
            u.total_input()?;
            let read = u.cache_read_input_tokens.unwrap_or(0);
            Some((read, read + u.cache_creation_input_tokens.unwrap_or(0)))
        })
        .collect()
}

/// Per call, its read when it was cold: less than the call before (of its
/// model) cached.
fn cold_reads(calls: &[tracecost_trace::Call], usage: &[Option<(u64, u64)>]) -> Vec<Option<u64>> {
    let mut cold: Vec<Option<u64>> = vec![None; calls.len()];
    let mut prev: HashMap<String, u64> = HashMap::new();
    for (i, (u, c)) in usage.iter().zip(calls).enumerate() {
        if let Some((read, cached)) = *u {
            if prev.get(&model_of(c)).is_none_or(|&p| read < p) {
                cold[i] = Some(read);
            }
            prev.insert(model_of(c), cached);
        }
    }
    cold
}

/// Where other sessions' prefixes end inside the hidden prefix (from
/// `before` to `end`): the cold reads that fall inside it with room for a
/// framed part on each side, ascending, a few tokens apart at least.
fn part_boundaries(cold: &[Option<u64>], before: u64, end: u64, frame: u64) -> Vec<u64> {
    // Each part is a framed block: a boundary needs room for its frame.
    let mut boundaries: Vec<u64> = cold
        .iter()
        .flatten()
        .copied()
        .filter(|&r| r > before + frame && r + frame < end)
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
    boundaries
}

/// Per call, what the record says of the hidden prefix's shared parts.
fn shared_states(
    cold: &[Option<u64>],
    usage: &[Option<(u64, u64)>],
    boundaries: &[u64],
    end: u64,
    frame: u64,
) -> Vec<SharedState> {
    // Only a first call can show another session's copy of the rest:
    // later, a read past it is the session's own entries.
    let first = usage.iter().position(Option::is_some);
    cold.iter()
        .zip(usage)
        .enumerate()
        .map(|(i, (c, u))| match c {
            None if u.is_some() => SharedState::Carried,
            None => SharedState::Unknown,
            // Past the last place a part could end (the boundaries'
            // bound above): the own rest was read too.
            Some(read) if first == Some(i) && read + frame >= end => SharedState::ReadPast {
                written: u.map_or(0, |(read, cached)| cached - read),
            },
            Some(read) => match boundaries.iter().rposition(|b| b <= read) {
                Some(j) => SharedState::Warm(j),
                None => SharedState::Cold,
            },
        })
        .collect()
}

impl PreparedTrace<'_> {
    /// Tokens before the hidden prefix in prompt version `p`'s request
    /// (tools, tool prompt, system blocks), framing included; `None` when
    /// the version has no hidden prefix.
    fn before_hidden(&self, p: usize, price: &ModelPrice) -> Option<u64> {
        if self.trace.hidden_prefix_tokens == 0 {
            return None;
        }
        let tools = self.tools.get(p)?;
        let system = self.system.get(p)?;
        if system.last().is_none_or(|c| c.scale != Scale::Exact) {
            return None;
        }
        let cal = self.calibration;
        Some(
            tools
                .iter()
                .map(|c| c.tokens(&cal, price.framing.per_tool))
                .sum::<u64>()
                + if tools.is_empty() {
                    0
                } else {
                    price
                        .tool_prompt
                        .tokens(tracecost_cost::pricing::ToolChoice::Auto)
                }
                + system[..system.len() - 1]
                    .iter()
                    .map(|c| c.tokens(&cal, price.framing.per_block))
                    .sum::<u64>(),
        )
    }

    /// Sizes the hidden prefix so that the first recorded call sends its
    /// recorded prompt. The importer sized it from a rough count of that
    /// call's visible messages (characters / 4); here they are counted as
    /// the replay sends them (calibrated, framed), and the hidden prefix is
    /// the rest of the recorded prompt. A dense message (code, a long tool
    /// result kept by a compaction) no longer leaves its undercount in the
    /// hidden prefix of every later call. Left as imported when the rest
    /// would be nothing.
    pub(super) fn refit_hidden(&mut self, price: &ModelPrice) {
        let Some((call, recorded)) = self
            .trace
            .calls
            .iter()
            .find_map(|c| Some((c, c.recorded_usage()?.total_input()?)))
        else {
            return;
        };
        let Some(before) = self.before_hidden(call.prompt, price) else {
            return;
        };
        let cal = self.calibration;
        let f = price.framing;
        let visible: u64 = self
            .messages
            .range(0..call.messages.min(self.messages.len()))
            .map(|m| m.iter().map(|c| c.tokens(&cal, f.per_block)).sum::<u64>() + f.per_message)
            .sum();
        let Some(hidden) = recorded
            .checked_sub(before + visible + f.per_block)
            .filter(|&h| h > 0)
        else {
            return;
        };
        let (block, count) = hidden_prefix_block(hidden);
        for (sc, sb) in self.system.iter_mut().zip(&mut self.system_blocks) {
            if let (Some(c), Some(b)) = (sc.last_mut(), sb.last_mut()) {
                *c = count;
                *b = block.clone();
            }
        }
    }
}

/// The stand-in for a system prompt and tools the trace did not record: a
/// text block whose token count is set to the known size.
pub fn hidden_prefix_block(tokens: u64) -> (ContentBlock, BlockCount) {
    stand_in(
        &format!("[system prompt and tool definitions not recorded: {tokens} tokens]"),
        tokens,
    )
}

/// A stand-in for one part of a prefix the trace did not record.
pub(super) fn hidden_part_block(what: &str, tokens: u64) -> (ContentBlock, BlockCount) {
    stand_in(
        &format!("[system prompt and tool definitions not recorded, {what}: {tokens} tokens]"),
        tokens,
    )
}

/// A text block standing in for content of a known size: its key is its
/// text's, its count exact.
pub(super) fn stand_in(text: &str, tokens: u64) -> (ContentBlock, BlockCount) {
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
