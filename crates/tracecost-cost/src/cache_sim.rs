//! The Anthropic prompt-cache simulator.
//!
//! Feed it the requests of a conversation in order; for each it returns the
//! [`Usage`] the Messages API would report (`input_tokens`,
//! `cache_creation_input_tokens` with its 5m / 1h split,
//! `cache_read_input_tokens`, `output_tokens`). It keeps the cache between
//! requests. The rules, from the provider facts:
//!
//! - **Prefix.** A request is a flat list of [`PrefixBlock`]s in order
//!   tools → tool-use system prompt (a pseudo-block, when tools are present)
//!   → system → message blocks. Each block's key is a hash of its bytes
//!   *without* `cache_control`; the key of a prefix is a cumulative hash over
//!   the keys of all blocks up to it, seeded with the model id. Changing any
//!   byte at or before a block therefore changes every later key (a tools
//!   change invalidates everything, a system change invalidates system and
//!   messages), and caches are per model.
//! - **Breakpoints.** At most [`MAX_BREAKPOINTS`] per request; more is a
//!   [`SimError`]. Thinking blocks and the tool-prompt pseudo-block cannot be
//!   marked. 1h breakpoints must come before 5m ones.
//! - **Positions.** Each block is one position, except that a run of
//!   consecutive `tool_use` blocks is one position and so is a run of
//!   consecutive `tool_result` blocks (runs may span adjacent messages). The
//!   tool-prompt pseudo-block is not a position.
//! - **Reads.** At each breakpoint the simulator checks that position, then
//!   walks back one position at a time, at most [`LOOKBACK_POSITIONS`]
//!   positions *including* the breakpoint's own, for an entry that an
//!   earlier request wrote (every block of a run position is checked). The
//!   highest hit over all breakpoints is the read.
//! - **Visibility.** An entry is readable only by a request that started
//!   strictly after the writer started: parallel requests with the same
//!   start all miss.
//! - **Writes.** Only at breakpoints above the highest hit whose prefix has
//!   at least the model's minimum cacheable tokens (smaller ones are ignored
//!   without error): one entry per breakpoint. Breakpoints at or below the
//!   highest hit write nothing.
//! - **TTL.** 5 minutes or 1 hour from the request's start. Every hit
//!   refreshes the entry's expiry to `start + its TTL`, at no cost. An entry
//!   whose expiry is not after a request's start is gone for it.
//! - **Billing.** A = prefix tokens at the highest hit (0 if none), B = at
//!   the highest 1h breakpoint above it (A if none), C = at the last
//!   breakpoint (A if none above A): read A, 1h write B−A, 5m write C−B,
//!   `input_tokens` = total − C. With no breakpoints everything is input.
//!
//! **Assumption — back-to-back requests.** A request with no start time
//! (`start_ms: None`) is taken to start right after the previous request
//! with zero gap: it is strictly later than every earlier request (so it can
//! read what they wrote) but its clock is the previous start, so nothing
//! expires between back-to-back requests. The first such request starts at
//! time 0.
//!
//! What the simulator does not model itself, and callers fold into the block
//! keys: web-search / citations toggles (salt the first system block),
//! `tool_choice`, image and thinking-setting changes (salt the first message
//! block), workspaces (use one simulator per workspace).

use std::collections::HashMap;

use tracecost_engine::wire::Ttl;

use super::pricing::Usage;
use super::prompt_cache::PromptCache;
use super::tokens::PrehashedBuild;
/// Re-exported: `cost::cache_sim::SimRequest` and the rest keep their paths.
pub use crate::request::{
    Breakpoint, CacheHold, EntryState, LOOKBACK_POSITIONS, MAX_BREAKPOINTS, PrefixBlock,
    PrefixIndex, PrefixKind, SimError, SimRequest, SimResult, automatic_breakpoint,
};

/// At most [`MAX_BREAKPOINTS`] breakpoints, on the stack: a request's
/// breakpoints are sorted and filtered at every simulated call.
#[derive(Clone, Copy)]
struct Breakpoints {
    items: [Breakpoint; MAX_BREAKPOINTS],
    len: usize,
}

impl Default for Breakpoints {
    fn default() -> Self {
        let unused = Breakpoint {
            block: 0,
            ttl: Ttl::FiveMinutes,
        };
        Self {
            items: [unused; MAX_BREAKPOINTS],
            len: 0,
        }
    }
}

impl Breakpoints {
    /// Adds one; callers check the count first (a fifth is dropped).
    fn push(&mut self, bp: Breakpoint) {
        if let Some(slot) = self.items.get_mut(self.len) {
            *slot = bp;
            self.len += 1;
        }
    }

    fn as_slice(&self) -> &[Breakpoint] {
        &self.items[..self.len]
    }

    fn as_mut_slice(&mut self) -> &mut [Breakpoint] {
        &mut self.items[..self.len]
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    writer_ms: u64,
    writer_seq: u64,
    expires_ms: u64,
    ttl: Ttl,
}

/// The longest the cache holds an entry past the request that last wrote,
/// read or warmed it: the longest TTL a marker can ask (an hour; a prefix
/// warmed from the record is held 5 minutes). After that much time without
/// a request the cache holds nothing readable.
pub const LONGEST_HOLD_MS: u64 = 60 * 60 * 1000;

/// The prompt cache across a sequence of requests.
#[derive(Debug, Clone, Default)]
pub struct CacheSim {
    entries: HashMap<u128, Entry, PrehashedBuild>,
    /// The entries held when the cache last went [`LONGEST_HOLD_MS`]
    /// without a request (all expired, none readable), kept only to say
    /// why a prefix written before that was not read ([`Self::entry_state`])
    /// until the next such gap; a key written again leaves them.
    expired: HashMap<u128, Entry, PrehashedBuild>,
    /// Start of the latest request seen (for back-to-back requests).
    clock_ms: Option<u64>,
    /// The latest time a request or a warmed prefix came.
    seen_ms: Option<u64>,
    /// Prefixes the record showed cold ([`Self::evict`]) and not written
    /// since: absent for that reason, not dropped once expired.
    evicted: std::collections::HashSet<u128, PrehashedBuild>,
    /// Requests simulated so far.
    seq: u64,
}

impl CacheSim {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Time passes to `now_ms`: past [`LONGEST_HOLD_MS`] since the latest
    /// request, every entry has expired, and the cache starts afresh (its
    /// entries kept apart only to explain a miss): what it does next
    /// depends on nothing before the gap, as a replay started at the gap
    /// has it. Expired entries are otherwise dropped when the cache grows
    /// past a size, at moments that depend on what came before.
    fn pass_time(&mut self, now_ms: u64) {
        if let Some(seen) = self.seen_ms
            && now_ms > seen.saturating_add(LONGEST_HOLD_MS)
        {
            self.expired = std::mem::take(&mut self.entries);
        }
        self.seen_ms = Some(self.seen_ms.map_or(now_ms, |s| s.max(now_ms)));
    }

    /// Entries currently held (expired ones may linger until purged; they
    /// are never read).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Makes the prefix `key` readable at `now_ms`, as if another request
    /// of the account had just written (or read) it with a 5-minute TTL:
    /// the record shows a prefix warm that this trace did not write.
    pub fn warm(&mut self, key: u128, now_ms: u64) {
        self.pass_time(now_ms);
        self.expired.remove(&key);
        self.evicted.remove(&key);
        let ttl = Ttl::FiveMinutes;
        let expires = now_ms.saturating_add(ttl.millis());
        match self.entries.get_mut(&key) {
            // Readable already: the other session's use refreshes it.
            Some(e) if e.expires_ms > now_ms && e.writer_ms < now_ms => {
                e.expires_ms = e.expires_ms.max(expires);
            }
            _ => {
                self.entries.insert(
                    key,
                    Entry {
                        writer_ms: now_ms.saturating_sub(1),
                        writer_seq: 0,
                        expires_ms: expires,
                        ttl,
                    },
                );
            }
        }
    }

    /// What the cache holds for the prefix `key` at `now_ms`, before a
    /// request: why a prefix written earlier was or was not read.
    pub fn entry_state(&self, key: u128, now_ms: u64) -> EntryState {
        match self.entries.get(&key).or_else(|| self.expired.get(&key)) {
            None if self.evicted.contains(&key) => EntryState::Absent,
            // A prefix is only asked about once written: gone without the
            // record saying so, it expired and was dropped.
            None => EntryState::Dropped,
            Some(e) if e.expires_ms > now_ms => EntryState::Readable { ttl: e.ttl.into() },
            Some(e) => EntryState::Expired {
                ttl: e.ttl.into(),
                expired_ms: e.expires_ms,
            },
        }
    }

    /// Drops the prefix `key`: the record shows it was not in the cache.
    pub fn evict(&mut self, key: u128) {
        self.expired.remove(&key);
        self.entries.remove(&key);
        self.evicted.insert(key);
    }

    /// Validates breakpoints and returns them sorted by block.
    fn check(req: &SimRequest<'_>, prefix: &PrefixIndex) -> Result<Breakpoints, SimError> {
        if req.breakpoints.len() > MAX_BREAKPOINTS {
            return Err(SimError::TooManyBreakpoints {
                count: req.breakpoints.len(),
            });
        }
        let mut bps = Breakpoints::default();
        for bp in req.breakpoints {
            bps.push(*bp);
        }
        bps.as_mut_slice().sort_by_key(|b| b.block);
        let mut last_5m: Option<usize> = None;
        for (i, bp) in bps.as_slice().iter().enumerate() {
            let Some(kind) = prefix.kind_at(bp.block) else {
                return Err(SimError::OutOfRange {
                    block: bp.block,
                    len: prefix.len(),
                });
            };
            if i > 0 && bps.as_slice()[i - 1].block == bp.block {
                return Err(SimError::Duplicate { block: bp.block });
            }
            if !kind.is_markable() {
                return Err(SimError::NotMarkable {
                    block: bp.block,
                    kind,
                });
            }
            match (bp.ttl, last_5m) {
                (Ttl::FiveMinutes, None) => last_5m = Some(bp.block),
                (Ttl::OneHour, Some(five_minute)) => {
                    return Err(SimError::TtlOrder {
                        five_minute,
                        one_hour: bp.block,
                    });
                }
                _ => {}
            }
        }
        Ok(bps)
    }

    /// Simulates one request of `blocks` and updates the cache. An invalid
    /// request is an error and leaves the cache unchanged.
    pub fn simulate(
        &mut self,
        req: &SimRequest<'_>,
        blocks: &[PrefixBlock],
    ) -> Result<SimResult, SimError> {
        let prefix = PrefixIndex::new(req.model, blocks);
        self.simulate_indexed(req, &prefix)
    }

    /// Like [`CacheSim::simulate`] with the request's blocks indexed
    /// already (for the request's model): requests that share their blocks
    /// and model (several cache policies over one wire view) share one
    /// index, and a replay holds the index, not the blocks.
    pub fn simulate_indexed(
        &mut self,
        req: &SimRequest<'_>,
        prefix: &PrefixIndex,
    ) -> Result<SimResult, SimError> {
        let bps = Self::check(req, prefix)?;
        let back_to_back = req.start_ms.is_none();
        let now = req.start_ms.unwrap_or(self.clock_ms.unwrap_or(0));
        self.pass_time(now);
        let seq = self.seq;
        let PrefixIndex {
            cum, prefix_tokens, ..
        } = prefix;
        let total = prefix_tokens.last().copied().unwrap_or(0);

        let readable = |e: &Entry| {
            e.expires_ms > now && (e.writer_ms < now || (back_to_back && e.writer_seq < seq))
        };
        let min = req.model.min_cacheable_tokens;
        let mut effective = Breakpoints::default();
        for bp in bps.as_slice() {
            if prefix_tokens[bp.block] >= min {
                effective.push(*bp);
            }
        }

        // Lookback at each breakpoint.
        let mut hits: [usize; MAX_BREAKPOINTS] = [0; MAX_BREAKPOINTS];
        let mut n_hits = 0;
        for bp in effective.as_slice() {
            // A breakpoint is on a markable block (checked), so on one
            // with a position.
            let Some(mut walk) = prefix.lookback(bp.block) else {
                continue;
            };
            if let Some(b) = walk.find(|&b| self.entries.get(&cum[b]).is_some_and(readable)) {
                hits[n_hits] = b;
                n_hits += 1;
            }
        }
        let hits = &hits[..n_hits];
        for &b in hits {
            if let Some(e) = self.entries.get_mut(&cum[b]) {
                e.expires_ms = e.expires_ms.max(now.saturating_add(e.ttl.millis()));
            }
        }
        let hit = hits.iter().copied().max();

        // Billing: A, B, C.
        let a = hit.map_or(0, |b| prefix_tokens[b]);
        let mut above = Breakpoints::default();
        for bp in effective.as_slice() {
            if hit.is_none_or(|h| bp.block > h) {
                above.push(*bp);
            }
        }
        let above = above.as_slice();
        let b_tokens = above
            .iter()
            .rev()
            .find(|bp| bp.ttl == Ttl::OneHour)
            .map_or(a, |bp| prefix_tokens[bp.block]);
        let c = above.last().map_or(a, |bp| prefix_tokens[bp.block]);
        let usage = Usage::new(total - c, c - b_tokens, b_tokens - a, a, req.output_tokens);

        // Writes.
        let mut written = Vec::with_capacity(above.len());
        for bp in above {
            self.expired.remove(&cum[bp.block]);
            self.evicted.remove(&cum[bp.block]);
            self.entries.insert(
                cum[bp.block],
                Entry {
                    writer_ms: now,
                    writer_seq: seq,
                    expires_ms: now.saturating_add(bp.ttl.millis()),
                    ttl: bp.ttl,
                },
            );
            written.push((bp.block, bp.ttl));
        }

        self.seq += 1;
        let clock = self.clock_ms.map_or(now, |c| c.max(now));
        self.clock_ms = Some(clock);
        self.purge(clock);
        Ok(SimResult {
            usage,
            hit,
            written,
            start_ms: now,
        })
    }
}

impl CacheSim {
    /// Drops the entries expired by `clock` once the table holds
    /// [`PURGE_FROM`] entries and the next request's writes could make it
    /// grow, and remakes the table for twice the entries still readable.
    /// The table is sized to the account's live prefixes, not to every
    /// prefix written since the last purge: a crowded account writes
    /// thousands an hour, a table never shrinks, and the entries it drops
    /// leave it no room to take new ones without growing or rehashing. A
    /// purge (a pass over the table) comes after at least as many writes
    /// as the table holds live entries.
    fn purge(&mut self, clock: u64) {
        let len = self.entries.len();
        if len < PURGE_FROM || len + MAX_BREAKPOINTS <= self.entries.capacity() {
            return;
        }
        let live = self
            .entries
            .values()
            .filter(|e| e.expires_ms > clock)
            .count();
        let mut kept = HashMap::with_capacity_and_hasher(
            (live * 2).max(PURGE_FROM),
            PrehashedBuild::default(),
        );
        kept.extend(self.entries.drain().filter(|(_, e)| e.expires_ms > clock));
        self.entries = kept;
    }
}

/// Below this many entries a cache's table is small enough to keep its
/// expired entries until it fills.
const PURGE_FROM: usize = 1024;

impl PromptCache for CacheSim {
    fn simulate_indexed(
        &mut self,
        req: &SimRequest<'_>,
        prefix: &PrefixIndex,
    ) -> Result<SimResult, SimError> {
        CacheSim::simulate_indexed(self, req, prefix)
    }

    fn warm(&mut self, key: u128, now_ms: u64) {
        CacheSim::warm(self, key, now_ms)
    }

    fn evict(&mut self, key: u128) {
        CacheSim::evict(self, key)
    }

    fn entry_state(&self, key: u128, now_ms: u64) -> EntryState {
        CacheSim::entry_state(self, key, now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::Pricing;
    use crate::tokens::ContentHash;

    fn blk(i: u64, tokens: u64, kind: PrefixKind) -> PrefixBlock {
        PrefixBlock {
            key: ContentHash::of(&i.to_le_bytes()),
            tokens,
            kind,
            message: Some(0),
        }
    }

    /// A crowded account's cache holds about twice the prefixes still
    /// readable, however many it wrote: one that writes a new prefix every
    /// 400 ms at a 5-minute TTL has 750 live at any moment, and its table
    /// stays the size 1,500 need (2,048 slots) over 22 hours of writes,
    /// rather than growing with the expired ones it has yet to drop.
    #[test]
    fn a_cache_table_is_sized_to_its_live_entries() {
        let pricing = Pricing::builtin();
        let model = pricing.lookup("claude-sonnet-4-6").unwrap();
        let bp = [Breakpoint {
            block: 1,
            ttl: Ttl::FiveMinutes,
        }];
        let mut sim = CacheSim::new();
        let mut most = 0;
        for i in 0..200_000u64 {
            let blocks = [
                blk(2 * i, 600, PrefixKind::Text),
                blk(2 * i + 1, 600, PrefixKind::Text),
            ];
            let req = SimRequest {
                model,
                start_ms: Some(i * 400),
                breakpoints: &bp,
                output_tokens: 0,
            };
            sim.simulate(&req, &blocks).unwrap();
            most = most.max(sim.entries.capacity());
        }
        let live = Ttl::FiveMinutes.millis() / 400;
        assert!(
            sim.entries.len() as u64 >= live,
            "{} held",
            sim.entries.len()
        );
        assert!(
            most < 2048,
            "a table of {most} slots for {live} live entries"
        );
    }

    /// After [`LONGEST_HOLD_MS`] without a request the cache goes on as a
    /// cache started afresh at that moment does, however much it held and
    /// however many expired entries it dropped before (the moments a full
    /// cache drops them depend on all it saw): same outcomes, same
    /// explanations of the prefixes written after. A prefix written before
    /// the gap still reads as expired, with its TTL, not as never held.
    #[test]
    fn after_an_hour_without_requests_the_cache_is_one_started_afresh() {
        assert!(
            [Ttl::FiveMinutes, Ttl::OneHour]
                .iter()
                .all(|t| t.millis() <= LONGEST_HOLD_MS)
        );
        let pricing = Pricing::builtin();
        let model = pricing.lookup("claude-sonnet-4-6").unwrap();
        let request = |sim: &mut CacheSim, first: u64, start: u64, ttl: Ttl| {
            let blocks: Vec<PrefixBlock> = (0..4)
                .map(|i| blk(first + i, 600, PrefixKind::Text))
                .collect();
            let bp = [Breakpoint { block: 3, ttl }];
            let out = sim
                .simulate(
                    &SimRequest {
                        model,
                        start_ms: Some(start),
                        breakpoints: &bp,
                        output_tokens: 0,
                    },
                    &blocks,
                )
                .unwrap();
            let key = PrefixIndex::new(model, &blocks).key_at(3).unwrap();
            (out, key)
        };
        const MIN: u64 = 60_000;
        // Before the gap: enough distinct prefixes that the cache drops
        // expired ones (past 1,024 entries), and one written at 1h TTL.
        let mut before = CacheSim::new();
        for i in 0..1500u64 {
            request(&mut before, 10 * i, i * 10_000, Ttl::FiveMinutes);
        }
        let (_, old_key) = request(&mut before, 99_999, 15_000_000, Ttl::OneHour);
        let gap_end = 15_000_000 + LONGEST_HOLD_MS + 1;
        let mut fresh = CacheSim::new();
        // The same requests after the gap, in both: a write, a read within
        // its TTL, one past it, and enough more for the full cache to drop.
        let mut steps = vec![(1, 0), (1, 2 * MIN), (1, 10 * MIN), (2, 11 * MIN)];
        steps.extend((0..1100u64).map(|i| (1000 + 10 * i, 12 * MIN + i * 1000)));
        steps.push((1, 80 * MIN));
        for (first, at) in steps {
            let (a, key) = request(&mut before, first, gap_end + at, Ttl::FiveMinutes);
            let (b, _) = request(&mut fresh, first, gap_end + at, Ttl::FiveMinutes);
            assert_eq!(a, b, "request at +{at} ms");
            let later = gap_end + at + 6 * MIN;
            assert_eq!(
                before.entry_state(key, later),
                fresh.entry_state(key, later)
            );
        }
        assert_eq!(before.len(), fresh.len());
        assert_eq!(
            before.entry_state(old_key, gap_end),
            EntryState::Expired {
                ttl: Ttl::OneHour.into(),
                expired_ms: 15_000_000 + LONGEST_HOLD_MS,
            }
        );
        assert_eq!(fresh.entry_state(old_key, gap_end), EntryState::Dropped);
        // The record showing it cold: absent.
        before.evict(old_key);
        assert_eq!(before.entry_state(old_key, gap_end), EntryState::Absent);
    }

    #[test]
    fn runs_of_tool_blocks_are_one_position() {
        let pricing = Pricing::builtin();
        let model = pricing.lookup("claude-sonnet-4-6").unwrap();
        let mut sim = CacheSim::new();
        // Request 1: 2 text blocks then a breakpoint on block 1.
        let mut blocks = vec![blk(0, 2000, PrefixKind::Text), blk(1, 10, PrefixKind::Text)];
        let bp1 = [Breakpoint {
            block: 1,
            ttl: Ttl::FiveMinutes,
        }];
        sim.simulate(
            &SimRequest {
                model,
                start_ms: None,
                breakpoints: &bp1,
                output_tokens: 0,
            },
            &blocks,
        )
        .unwrap();
        // Request 2: 30 tool_use then 30 tool_result blocks follow: only 2
        // positions, so the breakpoint at the end still reaches block 1.
        for i in 0..30 {
            blocks.push(blk(100 + i, 1, PrefixKind::ToolUse));
        }
        for i in 0..30 {
            blocks.push(blk(200 + i, 1, PrefixKind::ToolResult));
        }
        let bp2 = [Breakpoint {
            block: blocks.len() - 1,
            ttl: Ttl::FiveMinutes,
        }];
        let out = sim
            .simulate(
                &SimRequest {
                    model,
                    start_ms: None,
                    breakpoints: &bp2,
                    output_tokens: 0,
                },
                &blocks,
            )
            .unwrap();
        assert_eq!(out.hit, Some(1));
        assert_eq!(out.usage.cache_read_input_tokens, 2010);
        assert_eq!(out.usage.cache_creation_input_tokens, 60);
    }
}

#[cfg(test)]
mod incremental_index {
    use super::*;
    use crate::pricing::Pricing;
    use crate::tokens::ContentHash;
    use proptest::prelude::*;

    fn kind(k: u8) -> PrefixKind {
        match k % 5 {
            0 => PrefixKind::Text,
            1 => PrefixKind::ToolUse,
            2 => PrefixKind::ToolResult,
            3 => PrefixKind::ToolPrompt,
            _ => PrefixKind::Thinking,
        }
    }

    fn blocks(spec: &[(u8, u8)]) -> Vec<PrefixBlock> {
        spec.iter()
            .map(|&(key, k)| PrefixBlock {
                key: ContentHash::of(&[key]),
                tokens: u64::from(key) + 1,
                kind: kind(k),
                message: None,
            })
            .collect()
    }

    proptest! {
        /// Cutting an index anywhere and extending it with other blocks
        /// gives exactly the index built from scratch.
        #[test]
        fn truncate_then_extend_is_new(
            a in prop::collection::vec((0u8..6, 0u8..5), 0..40),
            b in prop::collection::vec((0u8..6, 0u8..5), 0..40),
            cut in 0usize..45,
        ) {
            let model = Pricing::builtin();
            let model = model.lookup("claude-sonnet-4-6").unwrap();
            let first = blocks(&a);
            let mut index = PrefixIndex::new(model, &first);
            let keep = cut.min(first.len());
            index.truncate(keep);
            let mut second = first[..keep].to_vec();
            second.extend(blocks(&b));
            index.extend(model, &second);
            prop_assert_eq!(&index, &PrefixIndex::new(model, &second));
            // Appending only the blocks added is the same.
            let mut appended = PrefixIndex::new(model, &first);
            appended.truncate(keep);
            appended.append(model, &second[keep..]);
            prop_assert_eq!(&appended, &index);
        }

        /// A breakpoint looks back over the blocks of its own position and
        /// the 19 before, as a scan of the blocks numbers the positions: a
        /// new one for each block but the tool-prompt pseudo-block (none),
        /// a run of tool_use or of tool_result blocks one position.
        #[test]
        fn a_breakpoint_looks_back_over_the_positions_a_scan_gives(
            spec in prop::collection::vec((0u8..6, 0u8..5), 0..60),
            cut in 0usize..65,
        ) {
            let model = Pricing::builtin();
            let model = model.lookup("claude-sonnet-4-6").unwrap();
            let all = blocks(&spec);
            let mut index = PrefixIndex::new(model, &all);
            let keep = cut.min(all.len());
            index.truncate(keep);
            let all = &all[..keep];
            let mut expected = Vec::new();
            let mut positions = 0usize;
            let mut prev: Option<(PrefixKind, usize)> = None;
            for (i, b) in all.iter().enumerate() {
                if b.kind == PrefixKind::ToolPrompt {
                    expected.push(None);
                    continue;
                }
                let merges = matches!(b.kind, PrefixKind::ToolUse | PrefixKind::ToolResult)
                    && prev.is_some_and(|(k, last)| k == b.kind && last + 1 == i);
                if !merges {
                    positions += 1;
                }
                expected.push(Some(positions - 1));
                prev = Some((b.kind, i));
            }
            for b in 0..all.len() {
                let want: Option<Vec<usize>> = expected[b].map(|p| {
                    let lowest = p.saturating_sub(LOOKBACK_POSITIONS - 1);
                    (0..=b)
                        .rev()
                        .filter(|&j| expected[j].is_some_and(|q| q >= lowest))
                        .collect()
                });
                let got: Option<Vec<usize>> = index.lookback(b).map(Iterator::collect);
                prop_assert_eq!(got, want, "block {}", b);
            }
            prop_assert!(index.lookback(all.len()).is_none());
            for (i, b) in all.iter().enumerate() {
                prop_assert_eq!(index.kind_at(i), Some(b.kind));
            }
        }
    }
}
