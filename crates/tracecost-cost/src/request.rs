//! What a replay asks of a prompt-cache simulator and what it answers,
//! whichever provider's rules it follows: a request's prefix blocks and
//! their index, its breakpoints, the outcome, the errors an API would
//! return, what the cache holds for a prefix. Beneath the simulators and
//! the trait they share ([`crate::prompt_cache::PromptCache`]).

use tracecost_engine::message::BlockKind;
use tracecost_engine::wire::Ttl;

use super::pricing::{ModelPrice, Usage};
use super::tokens::ContentHash;

/// The most breakpoints one request may carry.
pub const MAX_BREAKPOINTS: usize = tracecost_engine::wire::MAX_BREAKPOINTS;

/// How many positions a breakpoint checks, its own included.
pub const LOOKBACK_POSITIONS: usize = 20;

/// What a prefix block is, as far as the cache is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrefixKind {
    /// A tool definition.
    ToolDef,
    /// The tool-use system prompt the API adds when tools are present (a
    /// pseudo-block: not markable, not a position).
    ToolPrompt,
    /// A system block.
    System,
    /// A text block.
    Text,
    /// A tool_use block (runs of them are one position).
    ToolUse,
    /// A tool_result block (runs of them are one position).
    ToolResult,
    /// A thinking or redacted_thinking block (not markable).
    Thinking,
    /// An image block.
    Image,
    /// Any other block (document, server tool blocks, …).
    Other,
}

impl PrefixKind {
    /// Whether a `cache_control` breakpoint may sit on such a block.
    pub fn is_markable(self) -> bool {
        !matches!(self, PrefixKind::Thinking | PrefixKind::ToolPrompt)
    }
}

impl From<&BlockKind> for PrefixKind {
    fn from(k: &BlockKind) -> Self {
        match k {
            BlockKind::Text { .. } => PrefixKind::Text,
            BlockKind::ToolUse { .. } => PrefixKind::ToolUse,
            BlockKind::ToolResult { .. } => PrefixKind::ToolResult,
            BlockKind::Thinking | BlockKind::RedactedThinking => PrefixKind::Thinking,
            BlockKind::Image => PrefixKind::Image,
            BlockKind::Document | BlockKind::Other { .. } => PrefixKind::Other,
        }
    }
}

/// One block of a request's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefixBlock {
    /// Hash of the block's bytes without `cache_control`.
    pub key: ContentHash,
    /// Its tokens (content plus framing).
    pub tokens: u64,
    /// What it is.
    pub kind: PrefixKind,
    /// Index of the message it belongs to (`None` for tools and system);
    /// informational, the cache rules do not depend on it.
    pub message: Option<usize>,
}

/// Key of the tool-use system prompt pseudo-block.
const TOOL_PROMPT_KEY: &[u8] = b"tracecost:tool-use-system-prompt";

impl PrefixBlock {
    /// The tool-use system prompt pseudo-block with `tokens` tokens (see
    /// `ModelPrice::tool_prompt`). Its key is constant.
    pub fn tool_prompt(tokens: u64) -> Self {
        Self {
            key: ContentHash::of(TOOL_PROMPT_KEY),
            tokens,
            kind: PrefixKind::ToolPrompt,
            message: None,
        }
    }
}

/// A `cache_control` breakpoint on block `block` of the flattened prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Breakpoint {
    /// Index into the request's blocks.
    pub block: usize,
    /// Its TTL.
    pub ttl: Ttl,
}

/// The breakpoint of automatic caching (a top-level `cache_control`): on
/// the last markable block, if any.
pub fn automatic_breakpoint(blocks: &[PrefixBlock], ttl: Ttl) -> Option<Breakpoint> {
    blocks
        .iter()
        .rposition(|b| b.kind.is_markable())
        .map(|block| Breakpoint { block, ttl })
}

/// Cumulative prefix keys, token counts and kinds of one request's
/// blocks: everything the simulation needs that depends only on the
/// blocks and the model, not on the breakpoints. A replay holds one for
/// every request it is building, so it holds no more than that: the
/// blocks themselves (their keys, their messages) are not needed once
/// indexed, and the positions a breakpoint looks back over are read from
/// the kinds as it looks ([`PrefixIndex::lookback`]), not kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrefixIndex {
    /// Per block, the key of the prefix that ends with it.
    pub(crate) cum: Vec<u128>,
    /// Per block, the tokens of the prefix that ends with it.
    pub(crate) prefix_tokens: Vec<u64>,
    kinds: Vec<PrefixKind>,
}

impl PrefixIndex {
    /// Indexes `blocks` for `model` (the cache is per model: its id seeds
    /// the cumulative hash).
    pub fn new(model: &ModelPrice, blocks: &[PrefixBlock]) -> Self {
        let mut index = Self::default();
        index.extend(model, blocks);
        index
    }

    /// Blocks indexed.
    pub fn len(&self) -> usize {
        self.cum.len()
    }

    /// Whether no block is indexed.
    pub fn is_empty(&self) -> bool {
        self.cum.is_empty()
    }

    /// Forgets every block from `len` on, as if only `blocks[..len]` had
    /// been indexed.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.cum.len() {
            return;
        }
        self.cum.truncate(len);
        self.prefix_tokens.truncate(len);
        self.kinds.truncate(len);
    }

    /// Indexes `blocks[self.len()..]`: the request's blocks, of which the
    /// first `self.len()` were indexed before, for the same `model`. A
    /// request that shares its leading blocks with the previous one is
    /// indexed in the time of what it adds; the result is exactly
    /// [`PrefixIndex::new`]'s.
    pub fn extend(&mut self, model: &ModelPrice, blocks: &[PrefixBlock]) {
        if let Some(new) = blocks.get(self.len()..) {
            self.append(model, new);
        }
    }

    /// Indexes `new` as the blocks that follow those indexed, for the same
    /// `model`: [`PrefixIndex::extend`] for a caller that holds only the
    /// blocks added.
    pub fn append(&mut self, model: &ModelPrice, new: &[PrefixBlock]) {
        let mut h = match self.cum.last() {
            Some(h) => *h,
            None => ContentHash::of(model.id.as_bytes()).as_u128(),
        };
        let mut t = self.prefix_tokens.last().copied().unwrap_or(0);
        self.cum.reserve(new.len());
        self.prefix_tokens.reserve(new.len());
        self.kinds.reserve(new.len());
        for b in new {
            h = combine(h, b.key);
            t += b.tokens;
            self.cum.push(h);
            self.prefix_tokens.push(t);
            self.kinds.push(b.kind);
        }
    }

    /// Tokens of the prefix that ends with block `block`.
    pub fn tokens_through(&self, block: usize) -> Option<u64> {
        self.prefix_tokens.get(block).copied()
    }

    /// What block `block` is.
    pub fn kind_at(&self, block: usize) -> Option<PrefixKind> {
        self.kinds.get(block).copied()
    }

    /// The blocks a breakpoint on block `block` looks back over for an
    /// entry, nearest first: those of its own position up to it, then
    /// those of the [`LOOKBACK_POSITIONS`]` - 1` positions before. Each
    /// block is a position but for a run of tool_use or of tool_result
    /// blocks (one position) and the tool-prompt pseudo-block (none).
    /// `None` for that pseudo-block, or past the end.
    pub(crate) fn lookback(&self, block: usize) -> Option<Lookback<'_>> {
        if self.kind_at(block)? == PrefixKind::ToolPrompt {
            return None;
        }
        Some(Lookback {
            kinds: &self.kinds,
            next: Some(block),
            after: None,
            positions: 0,
        })
    }
}

impl PrefixIndex {
    /// The cache key of the prefix that ends with block `block`.
    pub fn key_at(&self, block: usize) -> Option<u128> {
        self.cum.get(block).copied()
    }
}

/// The walk of [`PrefixIndex::lookback`].
pub(crate) struct Lookback<'i> {
    kinds: &'i [PrefixKind],
    /// The next block to look at.
    next: Option<usize>,
    /// The block given last, and its kind.
    after: Option<(PrefixKind, usize)>,
    /// Positions entered so far.
    positions: usize,
}

impl Iterator for Lookback<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        loop {
            let b = self.next?;
            self.next = b.checked_sub(1);
            let kind = *self.kinds.get(b)?;
            if kind == PrefixKind::ToolPrompt {
                continue;
            }
            // A block is in the position of the block after it when both
            // are tool_use, or both tool_result, with nothing between.
            let same = matches!(kind, PrefixKind::ToolUse | PrefixKind::ToolResult)
                && self.after.is_some_and(|(k, a)| k == kind && a == b + 1);
            if !same {
                self.positions += 1;
                if self.positions > LOOKBACK_POSITIONS {
                    self.next = None;
                    return None;
                }
            }
            self.after = Some((kind, b));
            return Some(b);
        }
    }
}

/// One request to simulate.
#[derive(Debug, Clone, Copy)]
pub struct SimRequest<'a> {
    /// The model (its id keys the cache; its minimum cacheable length
    /// applies).
    pub model: &'a ModelPrice,
    /// When the request started, in milliseconds on any fixed clock;
    /// `None` = back-to-back with the previous request (see module docs).
    /// Its blocks are those of the [`PrefixIndex`] it is simulated with.
    pub start_ms: Option<u64>,
    /// Its breakpoints, in any order.
    pub breakpoints: &'a [Breakpoint],
    /// Output tokens of the response.
    pub output_tokens: u64,
}

/// What one simulated request did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimResult {
    /// The usage the API would report.
    pub usage: Usage,
    /// Block index of the highest cache hit, if any.
    pub hit: Option<usize>,
    /// Blocks where entries were written, with their TTL, in block order.
    pub written: Vec<(usize, Ttl)>,
    /// The start time used (after applying the back-to-back rule).
    pub start_ms: u64,
}

/// A request the API would reject.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// More than [`MAX_BREAKPOINTS`] breakpoints.
    #[error("{count} cache breakpoints in one request; at most {MAX_BREAKPOINTS} are allowed")]
    TooManyBreakpoints {
        /// How many there were.
        count: usize,
    },
    /// A breakpoint past the last block.
    #[error("cache breakpoint on block {block}, but the request has {len} blocks")]
    OutOfRange {
        /// The breakpoint's block.
        block: usize,
        /// Number of blocks.
        len: usize,
    },
    /// Two breakpoints on one block.
    #[error("two cache breakpoints on block {block}")]
    Duplicate {
        /// The block.
        block: usize,
    },
    /// A breakpoint on a block that cannot carry one.
    #[error("block {block} ({kind:?}) cannot carry a cache breakpoint")]
    NotMarkable {
        /// The block.
        block: usize,
        /// Its kind.
        kind: PrefixKind,
    },
    /// Breakpoints on a request to a cache that takes none (OpenAI's
    /// automatic cache).
    #[error("{count} cache breakpoints on a request whose cache is automatic and takes none")]
    MarkersRefused {
        /// How many there were.
        count: usize,
    },
    /// A 1h breakpoint after a 5m one.
    #[error(
        "1h cache breakpoint on block {one_hour} comes after the 5m breakpoint on block {five_minute}; 1h breakpoints must come first"
    )]
    TtlOrder {
        /// The 5m breakpoint's block.
        five_minute: usize,
        /// The later 1h breakpoint's block.
        one_hour: usize,
    },
}

/// How long a cache holds an entry after its write or last use: a
/// breakpoint's TTL, or a provider's retention. Written as `5m`, `1h`,
/// `30m`, `12h`, `24h`. Kept in seconds, so that a call's explanation stays
/// small in a fleet's result rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheHold {
    secs: u32,
}

impl CacheHold {
    /// A hold of `ms` milliseconds (to the second, at most 136 years).
    pub fn from_ms(ms: u64) -> Self {
        CacheHold {
            secs: u32::try_from(ms.div_ceil(1000)).unwrap_or(u32::MAX),
        }
    }

    /// In milliseconds.
    pub fn ms(self) -> u64 {
        u64::from(self.secs) * 1000
    }
}

impl From<Ttl> for CacheHold {
    fn from(t: Ttl) -> Self {
        CacheHold::from_ms(t.millis())
    }
}

impl std::fmt::Display for CacheHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.secs {
            s if s % 3600 == 0 && s > 0 => write!(f, "{}h", s / 3600),
            s if s % 60 == 0 && s > 0 => write!(f, "{}m", s / 60),
            s => write!(f, "{s}s"),
        }
    }
}

/// A prefix's entry in the cache at a moment ([`crate::prompt_cache::PromptCache::entry_state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryState {
    /// Never written, or dropped (the record showed it cold).
    Absent,
    /// Written, then dropped once expired (a full cache drops its expired
    /// entries; when depends on all it held), so its TTL is not known here.
    Dropped,
    /// Written or last read with `ttl`, and past it since `expired_ms`.
    Expired {
        /// How long it was held.
        ttl: CacheHold,
        /// When it expired (ms since the epoch).
        expired_ms: u64,
    },
    /// Still held.
    Readable {
        /// How long it is held.
        ttl: CacheHold,
    },
}

fn mix64(mut x: u64) -> u64 {
    // splitmix64 finalizer.
    x ^= x >> 30;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Cumulative prefix hash: order-sensitive 128-bit mix of the previous
/// prefix hash and the next block's key. Deterministic and fast; block keys
/// are already uniformly distributed.
pub(crate) fn combine(prev: u128, key: ContentHash) -> u128 {
    let k = key.as_u128();
    let (ph, pl) = ((prev >> 64) as u64, prev as u64);
    let (kh, kl) = ((k >> 64) as u64, k as u64);
    let hi = mix64(ph ^ mix64(kh ^ 0x9E37_79B9_7F4A_7C15).rotate_left(23) ^ pl.rotate_left(7));
    let lo = mix64(pl.wrapping_add(0xD1B5_4A32_D192_ED03) ^ mix64(kl ^ hi) ^ ph.rotate_left(41));
    (u128::from(hi) << 64) | u128::from(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_is_order_sensitive() {
        let a = ContentHash::of(b"a");
        let b = ContentHash::of(b"b");
        assert_ne!(combine(combine(0, a), b), combine(combine(0, b), a));
        assert_ne!(combine(0, a), combine(1, a));
    }
}
