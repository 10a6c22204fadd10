//! The automatic prompt caches: OpenAI's (the models before GPT-5.6:
//! gpt-4o and later, o-series, GPT-4.1, GPT-5 to 5.5) and Gemini's implicit
//! cache (Gemini 2.5 and later). Neither takes markers; both read the
//! longest prefix an earlier request left; they differ in the steps a read
//! is counted in and the minimum, which come from the model.
//!
//! OpenAI's rules, from its prompt-caching guide:
//!
//! - **Automatic.** Requests carry no markers (a breakpoint is a
//!   [`SimError::MarkersRefused`]) and nothing is charged for writing: every
//!   request of at least [`MIN_CACHED_TOKENS`] tokens (the model's
//!   `min_cacheable_tokens`) leaves its prefix in the cache at no cost.
//! - **Reads.** A request reads the longest prefix an earlier request of the
//!   same model (and cache key) left that is still held, counted from
//!   [`MIN_CACHED_TOKENS`] in steps of [`STEP_TOKENS`]: `cached_tokens` is
//!   0, 1,024, 1,152, … A prompt under 1,024 tokens reads nothing.
//! - **Exact prefix.** Tools, messages and images in order: a change at any
//!   byte ends the match there. The simulator matches whole blocks (the
//!   cumulative keys of [`PrefixIndex`]); a block that changed part-way
//!   matches none of its tokens, where the service may match those before
//!   the change.
//! - **Retention.** In memory, a prefix is "typically cleared after 5–10
//!   minutes of inactivity, always within one hour of last use": when within
//!   that window is not documented, so it is a parameter,
//!   [`Retention::InMemory`]'s `idle_ms` (default [`DEFAULT_IDLE_MS`], the
//!   window's lower end), held to at most an hour. Extended retention
//!   (`prompt_cache_retention: "24h"`, the only one GPT-5.5 and later
//!   accept) holds it 24 hours. Every request that uses a prefix (reading it
//!   or leaving it) counts as its last use.
//! - **Visibility.** As for Anthropic's simulator: a prefix is readable only
//!   by a request that started strictly after the one that left it
//!   (parallel requests miss); a request with no start time runs right
//!   after the previous one.
//!
//! Gemini's implicit cache (ai.google.dev/gemini-api/docs/caching, 2026-10):
//! on by default, no write fee, the discount on `cachedContentTokenCount`;
//! a minimum input per model (2,048 for Gemini 2.5, 4,096 for 3.x, in the
//! price table). How long a prefix is held and the granularity of a read
//! are not documented ("no cost saving guarantee"): the simulator counts a
//! read to the token ([`Steps::Gemini`]) and holds a prefix for the same
//! named idle time, default 5 minutes, reported as a parameter.
//!
//! Not modelled (not documented as a rule): OpenAI's overflow to other
//! machines beyond about 15 requests a minute per prefix and key, and
//! eviction under load before the idle time.

use std::collections::HashMap;

use tracecost_engine::wire::Ttl;

use super::cache_sim::{CacheHold, EntryState, PrefixIndex, SimError, SimRequest, SimResult};
use super::pricing::Usage;
use super::prompt_cache::PromptCache;
use super::tokens::PrehashedBuild;

/// The shortest prompt cached, and the shortest read.
pub const MIN_CACHED_TOKENS: u64 = 1024;
/// Reads grow in steps of this many tokens above [`MIN_CACHED_TOKENS`].
pub const STEP_TOKENS: u64 = 128;
/// The default idle time of an in-memory prefix: the documented window's
/// lower end (5 minutes; the guide says 5–10).
pub const DEFAULT_IDLE_MS: u64 = 5 * 60 * 1000;
/// The longest an in-memory prefix is held after its last use.
pub const MAX_IN_MEMORY_MS: u64 = 60 * 60 * 1000;
/// How long extended retention holds a prefix after its last use.
pub const EXTENDED_MS: u64 = 24 * 60 * 60 * 1000;

/// How long a prefix is held after its last use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Retention {
    /// In memory, for `idle_ms` of inactivity (at most
    /// [`MAX_IN_MEMORY_MS`]).
    InMemory {
        /// Idle time before the prefix is cleared.
        idle_ms: u64,
    },
    /// Extended: 24 hours.
    Extended,
}

impl Default for Retention {
    fn default() -> Self {
        Retention::InMemory {
            idle_ms: DEFAULT_IDLE_MS,
        }
    }
}

impl Retention {
    /// How long a prefix is held after its last use.
    pub fn hold_ms(self) -> u64 {
        match self {
            Retention::InMemory { idle_ms } => idle_ms.min(MAX_IN_MEMORY_MS),
            Retention::Extended => EXTENDED_MS,
        }
    }
}

/// Models whose recorded reads come in coarser steps than the guide's
/// [`STEP_TOKENS`], with the step their records show. Real Codex CLI
/// sessions (0.142–0.144, July 2026; `docs/fidelity.md`, "Real Codex
/// sessions as they ran") recorded 2,820 non-zero `cached_input_tokens`
/// on gpt-5.5, every one 384 modulo 512, and 4,781 on gpt-5.6-sol, every
/// one 768 modulo 1,024; a read fell short of the previous request's
/// prompt by 0–511 tokens (gpt-5.5) and by about 128–1,151 (gpt-5.6-sol),
/// evenly spread: the service caches those models' prefixes in blocks of
/// 512 and 1,024 tokens. Every other model keeps the documented steps.
pub const RECORDED_READ_STEPS: [(&str, u64); 2] = [("gpt-5.5", 512), ("gpt-5.6-sol", 1024)];

/// The step a read of `model` is counted in: what its records show
/// ([`RECORDED_READ_STEPS`]), else `documented`.
pub fn read_step(model: &str, documented: u64) -> u64 {
    RECORDED_READ_STEPS
        .iter()
        .find(|(id, _)| *id == model)
        .map_or(documented, |&(_, step)| step)
}

/// A read of `matched` tokens counted in `step`s from `minimum`: 0 below
/// it (the breakpoint cache's reads are exact where `step` is 1).
pub fn read_in_steps(matched: u64, minimum: u64, step: u64) -> u64 {
    cached_in_steps(matched, minimum, step)
}

/// The tokens a request reads when it matches `matched` tokens of an
/// earlier prefix, for a model whose shortest cached prompt is `minimum`
/// ([`MIN_CACHED_TOKENS`] for every model the guide names): 0 below it,
/// else rounded down to `minimum` + a multiple of [`STEP_TOKENS`].
pub fn cached_tokens(matched: u64, minimum: u64) -> u64 {
    cached_in_steps(matched, minimum, STEP_TOKENS)
}

fn cached_in_steps(matched: u64, minimum: u64, step: u64) -> u64 {
    if matched < minimum {
        0
    } else {
        minimum + (matched - minimum) / step * step
    }
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// When the request that first left it started.
    writer_ms: u64,
    writer_seq: u64,
    /// Its last use (the start of the latest request that sent it).
    used_ms: u64,
}

/// How a read is counted above the model's minimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Steps {
    /// OpenAI's: in steps of [`STEP_TOKENS`].
    #[default]
    OpenAi,
    /// Gemini's: to the token (the granularity is not documented).
    Gemini,
}

impl Steps {
    fn tokens(self) -> u64 {
        match self {
            Steps::OpenAi => STEP_TOKENS,
            Steps::Gemini => 1,
        }
    }
}

/// An automatic prompt cache across a sequence of requests.
#[derive(Debug, Clone, Default)]
pub struct AutomaticCache {
    retention: Retention,
    steps: Steps,
    entries: HashMap<u128, Entry, PrehashedBuild>,
    /// Prefixes kept from the current request ([`PromptCache::set_aside`]).
    aside: Vec<(u128, Entry)>,
    clock_ms: Option<u64>,
    seq: u64,
    purge_above: usize,
}

impl AutomaticCache {
    /// OpenAI's, empty, holding prefixes for `retention`.
    pub fn new(retention: Retention) -> Self {
        AutomaticCache {
            retention,
            ..Default::default()
        }
    }

    /// Gemini's implicit cache, empty, holding prefixes for `retention`.
    pub fn gemini(retention: Retention) -> Self {
        AutomaticCache {
            retention,
            steps: Steps::Gemini,
            ..Default::default()
        }
    }

    fn expires(&self, e: &Entry) -> u64 {
        e.used_ms.saturating_add(self.retention.hold_ms())
    }
}

impl PromptCache for AutomaticCache {
    fn simulate_indexed(
        &mut self,
        req: &SimRequest<'_>,
        prefix: &PrefixIndex,
    ) -> Result<SimResult, SimError> {
        if !req.breakpoints.is_empty() {
            return Err(SimError::MarkersRefused {
                count: req.breakpoints.len(),
            });
        }
        let back_to_back = req.start_ms.is_none();
        let now = req.start_ms.unwrap_or(self.clock_ms.unwrap_or(0));
        let seq = self.seq;
        let total = prefix
            .len()
            .checked_sub(1)
            .map_or(0, |last| prefix.tokens_through(last).unwrap_or(0));
        let hold = self.retention.hold_ms();
        let minimum = req.model.min_cacheable_tokens;
        let readable = |e: &Entry| {
            e.used_ms.saturating_add(hold) > now
                && (e.writer_ms < now || (back_to_back && e.writer_seq < seq))
        };
        // Only prefixes of at least the minimum are ever held, and a held
        // prefix's shorter prefixes were held with it and used as late: the
        // longest readable one is found from the end.
        let first = (0..prefix.len()).find(|&b| prefix.tokens_through(b).unwrap_or(0) >= minimum);
        let mut hit = None;
        if let Some(first) = first {
            for b in (first..prefix.len()).rev() {
                let key = prefix.key_at(b).unwrap_or_default();
                if self.entries.get(&key).is_some_and(readable) {
                    hit = Some(b);
                    break;
                }
            }
        }
        let matched = hit.and_then(|b| prefix.tokens_through(b)).unwrap_or(0);
        let step = match self.steps {
            Steps::OpenAi => read_step(&req.model.id, STEP_TOKENS),
            Steps::Gemini => self.steps.tokens(),
        };
        let read = cached_in_steps(matched, minimum, step);
        // Every prefix of the request from the minimum on is left (or
        // used again) now.
        let mut written = Vec::new();
        if let (Some(first), true) = (first, total >= minimum) {
            for b in first..prefix.len() {
                let key = prefix.key_at(b).unwrap_or_default();
                match self.entries.get_mut(&key) {
                    Some(e) if e.used_ms.saturating_add(hold) > now => {
                        e.used_ms = e.used_ms.max(now);
                    }
                    _ => {
                        self.entries.insert(
                            key,
                            Entry {
                                writer_ms: now,
                                writer_seq: seq,
                                used_ms: now,
                            },
                        );
                    }
                }
            }
            if hit != Some(prefix.len() - 1) {
                // What a later request can read: the whole prompt, held at
                // no charge (the TTL names the nearer documented hold).
                written.push((prefix.len() - 1, Ttl::FiveMinutes));
            }
        }
        self.seq += 1;
        let clock = self.clock_ms.map_or(now, |c| c.max(now));
        self.clock_ms = Some(clock);
        if self.entries.len() > self.purge_above.max(4096) {
            self.entries
                .retain(|_, e| e.used_ms.saturating_add(hold) > clock);
            self.purge_above = self.entries.len() * 2;
        }
        Ok(SimResult {
            usage: Usage::new(total - read, 0, 0, read, req.output_tokens),
            hit,
            written,
            start_ms: now,
        })
    }

    fn warm(&mut self, key: u128, now_ms: u64) {
        let hold = self.retention.hold_ms();
        match self.entries.get_mut(&key) {
            Some(e) if e.used_ms.saturating_add(hold) > now_ms && e.writer_ms < now_ms => {
                e.used_ms = e.used_ms.max(now_ms);
            }
            _ => {
                self.entries.insert(
                    key,
                    Entry {
                        writer_ms: now_ms.saturating_sub(1),
                        writer_seq: 0,
                        used_ms: now_ms,
                    },
                );
            }
        }
    }

    fn evict(&mut self, key: u128) {
        self.entries.remove(&key);
    }

    fn set_aside(&mut self, key: u128) {
        if let Some(e) = self.entries.remove(&key) {
            self.aside.push((key, e));
        }
    }

    fn put_back(&mut self) {
        for (key, e) in std::mem::take(&mut self.aside) {
            self.entries.entry(key).or_insert(e);
        }
    }

    fn entry_state(&self, key: u128, now_ms: u64) -> EntryState {
        match self.entries.get(&key) {
            None => EntryState::Absent,
            Some(e) if self.expires(e) > now_ms => EntryState::Readable {
                ttl: CacheHold::from_ms(self.retention.hold_ms()),
            },
            Some(e) => EntryState::Expired {
                ttl: CacheHold::from_ms(self.retention.hold_ms()),
                expired_ms: self.expires(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache_sim::{Breakpoint, PrefixBlock};
    use crate::pricing::ModelPrice;
    use crate::test_blocks::{MIN, blk, model};
    use proptest::prelude::*;

    /// Sends `blocks` at `start_ms` (minutes) and returns the usage.
    fn send(cache: &mut AutomaticCache, m: &ModelPrice, blocks: &[PrefixBlock], at: u64) -> Usage {
        cache
            .simulate(
                &SimRequest {
                    model: m,
                    start_ms: Some(at * MIN),
                    breakpoints: &[],
                    output_tokens: 7,
                },
                blocks,
            )
            .unwrap()
            .usage
    }

    fn in_memory() -> AutomaticCache {
        AutomaticCache::new(Retention::default())
    }

    #[test]
    fn prompts_under_1024_tokens_are_never_cached() {
        let m = model("gpt-4o");
        let mut c = in_memory();
        let p = [blk(1, 600), blk(2, 423)];
        send(&mut c, &m, &p, 0);
        let u = send(&mut c, &m, &p, 1);
        assert_eq!((u.cache_read_input_tokens, u.input_tokens), (0, 1023));
    }

    #[test]
    fn reads_count_from_1024_in_steps_of_128() {
        assert_eq!(cached_tokens(1023, 1024), 0);
        assert_eq!(cached_tokens(1024, 1024), 1024);
        assert_eq!(cached_tokens(1151, 1024), 1024);
        assert_eq!(cached_tokens(1152, 1024), 1152);
        let m = model("gpt-4o");
        let mut c = in_memory();
        let p = [blk(1, 1000), blk(2, 500)];
        let first = send(&mut c, &m, &p, 0);
        assert_eq!(first.cache_read_input_tokens, 0);
        let u = send(&mut c, &m, &p, 1);
        // 1,500 matched: 1,024 + 3 × 128.
        assert_eq!((u.cache_read_input_tokens, u.input_tokens), (1408, 92));
        assert_eq!(u.output_tokens, 7);
    }

    #[test]
    fn a_read_is_the_longest_earlier_prefix_and_ends_at_a_change() {
        let m = model("gpt-4.1");
        let mut c = in_memory();
        send(&mut c, &m, &[blk(1, 2000), blk(2, 1000), blk(3, 1000)], 0);
        // The third block changed: the first two match.
        let u = send(&mut c, &m, &[blk(1, 2000), blk(2, 1000), blk(4, 1000)], 1);
        assert_eq!(u.cache_read_input_tokens, cached_tokens(3000, 1024));
        // The first changed: nothing matches, whatever follows.
        let u = send(&mut c, &m, &[blk(9, 2000), blk(2, 1000), blk(3, 1000)], 2);
        assert_eq!(u.cache_read_input_tokens, 0);
        // The longest of several earlier prompts.
        let u = send(
            &mut c,
            &m,
            &[blk(1, 2000), blk(2, 1000), blk(3, 1000), blk(5, 9)],
            3,
        );
        assert_eq!(u.cache_read_input_tokens, cached_tokens(4000, 1024));
    }

    #[test]
    fn caches_are_per_model() {
        let (a, b) = (model("gpt-4o"), model("gpt-4o-mini"));
        let mut c = in_memory();
        let p = [blk(1, 3000)];
        send(&mut c, &a, &p, 0);
        assert_eq!(send(&mut c, &b, &p, 1).cache_read_input_tokens, 0);
        assert_eq!(send(&mut c, &a, &p, 2).cache_read_input_tokens, 2944);
    }

    #[test]
    fn nothing_is_charged_for_writing() {
        let m = model("gpt-5");
        let mut c = in_memory();
        for at in 0..3 {
            let u = send(&mut c, &m, &[blk(1, 5000), blk(at + 10, 100)], at);
            assert_eq!(u.cache_creation_input_tokens, 0);
            assert_eq!(u.total_input(), 5100);
        }
    }

    #[test]
    fn in_memory_prefixes_clear_after_the_idle_time_and_each_use_extends_it() {
        let m = model("gpt-4o");
        let p = [blk(1, 2048)];
        // Default: 5 minutes idle.
        let mut c = in_memory();
        send(&mut c, &m, &p, 0);
        assert_eq!(send(&mut c, &m, &p, 4).cache_read_input_tokens, 2048);
        // Used at 4: still held at 8, 4 minutes after its last use.
        assert_eq!(send(&mut c, &m, &p, 8).cache_read_input_tokens, 2048);
        assert_eq!(send(&mut c, &m, &p, 14).cache_read_input_tokens, 0);
        // Idle of 10 minutes: a 9-minute gap reads.
        let mut c = AutomaticCache::new(Retention::InMemory { idle_ms: 10 * MIN });
        send(&mut c, &m, &p, 0);
        assert_eq!(send(&mut c, &m, &p, 9).cache_read_input_tokens, 2048);
        // Never more than an hour, whatever the idle time asked.
        let mut c = AutomaticCache::new(Retention::InMemory { idle_ms: 600 * MIN });
        send(&mut c, &m, &p, 0);
        assert_eq!(send(&mut c, &m, &p, 61).cache_read_input_tokens, 0);
    }

    #[test]
    fn gpt_5_5_reads_in_the_512_token_blocks_its_records_show() {
        let m = model("gpt-5.5");
        let mut c = AutomaticCache::new(Retention::Extended);
        send(&mut c, &m, &[blk(1, 2000)], 0);
        let u = send(&mut c, &m, &[blk(1, 2000), blk(2, 900)], 1);
        // 2,000 matched: 1,536 in blocks of 512 (1,920 in steps of 128).
        assert_eq!(u.cache_read_input_tokens, 1536);
        assert_eq!(u.input_tokens, 2900 - 1536);
        // Models without such records keep the documented steps.
        let m = model("gpt-5.4");
        let mut c = in_memory();
        send(&mut c, &m, &[blk(1, 2000)], 0);
        let u = send(&mut c, &m, &[blk(1, 2000), blk(2, 900)], 1);
        assert_eq!(u.cache_read_input_tokens, 1920);
    }

    #[test]
    fn extended_retention_holds_a_prefix_a_day() {
        let m = model("gpt-5.5");
        let p = [blk(1, 2048)];
        let mut c = AutomaticCache::new(Retention::Extended);
        send(&mut c, &m, &p, 0);
        assert_eq!(send(&mut c, &m, &p, 23 * 60).cache_read_input_tokens, 2048);
        assert_eq!(send(&mut c, &m, &p, 48 * 60).cache_read_input_tokens, 0);
    }

    #[test]
    fn parallel_requests_miss_and_back_to_back_ones_read() {
        let m = model("gpt-4o");
        let p = [blk(1, 2048)];
        let mut c = in_memory();
        send(&mut c, &m, &p, 3);
        assert_eq!(send(&mut c, &m, &p, 3).cache_read_input_tokens, 0);
        let mut c = in_memory();
        for expect in [0, 2048] {
            let u = c
                .simulate(
                    &SimRequest {
                        model: &m,
                        start_ms: None,
                        breakpoints: &[],
                        output_tokens: 0,
                    },
                    &p,
                )
                .unwrap()
                .usage;
            assert_eq!(u.cache_read_input_tokens, expect);
        }
    }

    #[test]
    fn markers_are_refused_and_leave_the_cache_unchanged() {
        let m = model("gpt-4o");
        let p = [blk(1, 2048)];
        let mut c = in_memory();
        let e = c
            .simulate(
                &SimRequest {
                    model: &m,
                    start_ms: Some(0),
                    breakpoints: &[Breakpoint {
                        block: 0,
                        ttl: Ttl::FiveMinutes,
                    }],
                    output_tokens: 0,
                },
                &p,
            )
            .unwrap_err();
        assert_eq!(e, SimError::MarkersRefused { count: 1 });
        assert_eq!(send(&mut c, &m, &p, 1).cache_read_input_tokens, 0);
    }

    #[test]
    fn a_hold_is_written_as_the_duration_it_is() {
        use crate::cache_sim::CacheHold;
        for (ms, text) in [
            (300_000, "5m"),
            (3_600_000, "1h"),
            (1_800_000, "30m"),
            (EXTENDED_MS, "24h"),
            (90_500, "91s"),
        ] {
            assert_eq!(CacheHold::from_ms(ms).to_string(), text);
        }
        let c = in_memory();
        let m = model("gpt-4o");
        let mut c2 = c.clone();
        let p = [blk(1, 2048)];
        send(&mut c2, &m, &p, 0);
        let key = crate::cache_sim::PrefixIndex::new(&m, &p)
            .key_at(0)
            .unwrap();
        assert_eq!(
            c2.entry_state(key, 6 * MIN),
            EntryState::Expired {
                ttl: CacheHold::from_ms(DEFAULT_IDLE_MS),
                expired_ms: 5 * MIN
            }
        );
    }

    #[test]
    fn gemini_reads_to_the_token_above_its_models_minimum() {
        let flash = model("gemini-2.5-flash");
        assert_eq!(flash.min_cacheable_tokens, 2048);
        assert_eq!(model("gemini-3.1-pro-preview").min_cacheable_tokens, 4096);
        let mut c = AutomaticCache::gemini(Retention::default());
        // Under 2.5 Flash's 2,048: nothing cached.
        let small = [blk(1, 2000)];
        send(&mut c, &flash, &small, 0);
        assert_eq!(send(&mut c, &flash, &small, 1).cache_read_input_tokens, 0);
        // Above it: the whole prefix, no 128-token steps, no write fee.
        let p = [blk(2, 2100), blk(3, 77)];
        send(&mut c, &flash, &p, 2);
        let u = send(&mut c, &flash, &[blk(2, 2100), blk(3, 77), blk(4, 9)], 3);
        assert_eq!(u.cache_read_input_tokens, 2177);
        assert_eq!(u.cache_creation_input_tokens, 0);
        assert_eq!(u.input_tokens, 9);
    }

    proptest! {
        /// Whatever is sent, a read is never more than the prompt, never
        /// off the model's steps, and nothing is ever written for a fee.
        #[test]
        fn reads_stay_within_the_prompt_and_on_the_steps(
            requests in prop::collection::vec(
                (prop::collection::vec((0u64..6, 1u64..900), 0..8), 0u64..12),
                1..20,
            ),
            id in prop::sample::select(vec!["gpt-4o-mini", "gpt-5.5"]),
        ) {
            let m = model(id);
            let step = read_step(id, STEP_TOKENS);
            let mut c = in_memory();
            let mut at = 0;
            for (spec, gap) in requests {
                at += gap;
                let blocks: Vec<PrefixBlock> = spec.iter().map(|&(k, t)| blk(k, t)).collect();
                let u = send(&mut c, &m, &blocks, at);
                let total: u64 = blocks.iter().map(|b| b.tokens).sum();
                prop_assert_eq!(u.total_input(), total);
                prop_assert!(u.cache_read_input_tokens <= total);
                prop_assert_eq!(u.cache_creation_input_tokens, 0);
                let r = u.cache_read_input_tokens;
                prop_assert!(r == 0 || (r >= 1024 && (r - 1024).is_multiple_of(step)), "{}", r);
            }
        }
    }
}
