//! OpenAI's prompt cache from GPT-5.6 on: breakpoints, and writes billed.
//!
//! The rules, from OpenAI's prompt-caching guide for GPT-5.6 and later:
//!
//! - **Breakpoints.** A request is cached at breakpoints: in the implicit
//!   mode (the default) one managed breakpoint near the newest user or tool
//!   message, which the simulator puts on the request's last block; explicit
//!   `prompt_cache_breakpoint`s on content blocks besides. At most
//!   [`MAX_WRITES`] breakpoints are written per request (the latest ones).
//! - **Reads.** A request reads the longest prefix that ends exactly at one
//!   of the latest [`MATCHED_BREAKPOINTS`] breakpoints written earlier (of
//!   the same model), still held: no lookback limit and no rounding to
//!   128-token steps (except where a model's records show reads in
//!   blocks, `automatic_cache::RECORDED_READ_STEPS`).
//! - **Writes** are billed (1.25× input, reported as `cache_write_tokens`):
//!   the tokens from the read (or the start) to the last breakpoint
//!   written. Reads are billed at the model's cached-input price.
//! - **TTL.** 30 minutes from the write ([`DEFAULT_TTL_MS`]); 12 hours for
//!   a breakpoint that asks. Not documented, and so parameters with the
//!   defaults named here: whether a read refreshes an entry (taken as yes,
//!   as Anthropic's), and a minimum length (the model's
//!   `min_cacheable_tokens`, 1,024 as for the earlier models).
//! - **Visibility.** As the other simulators: readable only by a request
//!   that started strictly after the writer.

use std::collections::VecDeque;

use tracecost_engine::wire::Ttl;

use super::cache_sim::{CacheHold, EntryState, PrefixIndex, SimError, SimRequest, SimResult};
use super::pricing::Usage;
use super::prompt_cache::PromptCache;

/// Breakpoints written per request, at most.
pub const MAX_WRITES: usize = 4;
/// How many of the latest breakpoints a read is matched against.
pub const MATCHED_BREAKPOINTS: usize = 80;
/// A breakpoint's TTL unless it asks for more.
pub const DEFAULT_TTL_MS: u64 = 30 * 60 * 1000;
/// The TTL a breakpoint may ask for.
pub const LONG_TTL_MS: u64 = 12 * 60 * 60 * 1000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: u128,
    writer_ms: u64,
    writer_seq: u64,
    expires_ms: u64,
}

/// OpenAI's breakpoint cache (GPT-5.6 and later) across requests.
#[derive(Debug, Clone)]
pub struct OpenAiBreakpointCache {
    ttl_ms: u64,
    /// The latest breakpoints written, oldest first.
    entries: VecDeque<Entry>,
    /// Breakpoints kept from the current request ([`PromptCache::set_aside`]).
    aside: Vec<Entry>,
    clock_ms: Option<u64>,
    seq: u64,
}

impl OpenAiBreakpointCache {
    /// An empty cache whose breakpoints live `ttl_ms` ([`DEFAULT_TTL_MS`]
    /// or [`LONG_TTL_MS`]).
    pub fn new(ttl_ms: u64) -> Self {
        OpenAiBreakpointCache {
            ttl_ms,
            entries: VecDeque::new(),
            aside: Vec::new(),
            clock_ms: None,
            seq: 0,
        }
    }
}

impl PromptCache for OpenAiBreakpointCache {
    fn simulate_indexed(
        &mut self,
        req: &SimRequest<'_>,
        prefix: &PrefixIndex,
    ) -> Result<SimResult, SimError> {
        for bp in req.breakpoints {
            if bp.block >= prefix.len() {
                return Err(SimError::OutOfRange {
                    block: bp.block,
                    len: prefix.len(),
                });
            }
        }
        let back_to_back = req.start_ms.is_none();
        let now = req.start_ms.unwrap_or(self.clock_ms.unwrap_or(0));
        let seq = self.seq;
        let Some(last) = prefix.len().checked_sub(1) else {
            self.seq += 1;
            return Ok(SimResult {
                usage: Usage::new(0, 0, 0, 0, req.output_tokens),
                hit: None,
                written: Vec::new(),
                start_ms: now,
            });
        };
        let tokens = |b: usize| prefix.tokens_through(b).unwrap_or(0);
        let total = tokens(last);
        let minimum = req.model.min_cacheable_tokens;
        // The longest prefix ending at a held breakpoint among the latest.
        let readable = |e: &Entry| {
            e.expires_ms > now && (e.writer_ms < now || (back_to_back && e.writer_seq < seq))
        };
        let mut hit = None;
        for b in (0..=last).rev() {
            let key = prefix.key_at(b).unwrap_or_default();
            if self.entries.iter().any(|e| e.key == key && readable(e)) {
                hit = Some(b);
                break;
            }
        }
        if let Some(h) = hit {
            let key = prefix.key_at(h).unwrap_or_default();
            for e in self.entries.iter_mut().filter(|e| e.key == key) {
                e.expires_ms = e.expires_ms.max(now.saturating_add(self.ttl_ms));
            }
        }
        // The breakpoints: the implicit one on the last block, the
        // explicit ones; those above the read and long enough are written,
        // the latest MAX_WRITES of them.
        let mut at: Vec<(usize, Ttl)> = req.breakpoints.iter().map(|b| (b.block, b.ttl)).collect();
        at.push((last, Ttl::FiveMinutes));
        at.sort_by_key(|&(b, _)| b);
        at.dedup_by_key(|&mut (b, _)| b);
        let above: Vec<(usize, Ttl)> = at
            .into_iter()
            .filter(|&(b, _)| hit.is_none_or(|h| b > h) && tokens(b) >= minimum)
            .collect();
        let written: Vec<(usize, Ttl)> = above[above.len().saturating_sub(MAX_WRITES)..].to_vec();
        // Exact, unless the model's records show reads in blocks
        // (`automatic_cache::RECORDED_READ_STEPS`); what the block leaves
        // out is written again.
        let step = super::automatic_cache::read_step(&req.model.id, 1);
        let read = hit.map_or(0, |h| {
            super::automatic_cache::read_in_steps(tokens(h), minimum, step)
        });
        let through = written.last().map_or(read, |&(b, _)| tokens(b));
        let write = through - read;
        let long: u64 = written
            .iter()
            .rev()
            .find(|(_, t)| *t == Ttl::OneHour)
            .map_or(read, |&(b, _)| tokens(b))
            .saturating_sub(read);
        for &(b, ttl) in &written {
            let hold = if ttl == Ttl::OneHour {
                LONG_TTL_MS
            } else {
                self.ttl_ms
            };
            self.entries.push_back(Entry {
                key: prefix.key_at(b).unwrap_or_default(),
                writer_ms: now,
                writer_seq: seq,
                expires_ms: now.saturating_add(hold),
            });
            if self.entries.len() > MATCHED_BREAKPOINTS {
                self.entries.pop_front();
            }
        }
        self.seq += 1;
        self.clock_ms = Some(self.clock_ms.map_or(now, |c| c.max(now)));
        Ok(SimResult {
            // Writes asking for 12 hours go in the 1-hour column, priced
            // as the others (the guide gives no other price).
            usage: Usage::new(total - through, write - long, long, read, req.output_tokens),
            hit,
            written,
            start_ms: now,
        })
    }

    fn warm(&mut self, key: u128, now_ms: u64) {
        if !self
            .entries
            .iter()
            .any(|e| e.key == key && e.expires_ms > now_ms)
        {
            self.entries.push_back(Entry {
                key,
                writer_ms: now_ms.saturating_sub(1),
                writer_seq: 0,
                expires_ms: now_ms.saturating_add(self.ttl_ms),
            });
            if self.entries.len() > MATCHED_BREAKPOINTS {
                self.entries.pop_front();
            }
        }
    }

    fn evict(&mut self, key: u128) {
        self.entries.retain(|e| e.key != key);
    }

    fn set_aside(&mut self, key: u128) {
        let aside = &mut self.aside;
        self.entries.retain(|e| {
            let keep = e.key != key;
            if !keep {
                aside.push(*e);
            }
            keep
        });
    }

    fn put_back(&mut self) {
        if self.aside.is_empty() {
            return;
        }
        // Back in the order they were written, where the request did not
        // write them again; still only the latest are matched.
        for e in std::mem::take(&mut self.aside) {
            if !self.entries.iter().any(|n| n.key == e.key) {
                self.entries.push_back(e);
            }
        }
        self.entries.make_contiguous().sort_by_key(|e| e.writer_seq);
        while self.entries.len() > MATCHED_BREAKPOINTS {
            self.entries.pop_front();
        }
    }

    fn entry_state(&self, key: u128, now_ms: u64) -> EntryState {
        match self.entries.iter().rev().find(|e| e.key == key) {
            None => EntryState::Absent,
            Some(e) if e.expires_ms > now_ms => EntryState::Readable {
                ttl: CacheHold::from_ms(self.ttl_ms),
            },
            Some(e) => EntryState::Expired {
                ttl: CacheHold::from_ms(self.ttl_ms),
                expired_ms: e.expires_ms,
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

    fn send_marked(
        c: &mut OpenAiBreakpointCache,
        m: &ModelPrice,
        blocks: &[PrefixBlock],
        marks: &[(usize, Ttl)],
        at: u64,
    ) -> SimResult {
        let bps: Vec<Breakpoint> = marks
            .iter()
            .map(|&(block, ttl)| Breakpoint { block, ttl })
            .collect();
        c.simulate(
            &SimRequest {
                model: m,
                start_ms: Some(at * MIN),
                breakpoints: &bps,
                output_tokens: 5,
            },
            blocks,
        )
        .unwrap()
    }

    fn send(
        c: &mut OpenAiBreakpointCache,
        m: &ModelPrice,
        blocks: &[PrefixBlock],
        at: u64,
    ) -> Usage {
        send_marked(c, m, blocks, &[], at).usage
    }

    fn cache() -> OpenAiBreakpointCache {
        OpenAiBreakpointCache::new(DEFAULT_TTL_MS)
    }

    #[test]
    fn a_breakpoint_set_aside_is_missed_by_one_request_and_held_after() {
        let m = model("gpt-5.6");
        let mut c = cache();
        send(&mut c, &m, &[blk(1, 2000), blk(2, 2000)], 0);
        let longer = [blk(1, 2000), blk(2, 2000), blk(3, 2000)];
        let key = PrefixIndex::new(&m, &longer).key_at(1).unwrap();
        c.set_aside(key);
        assert_eq!(send(&mut c, &m, &longer, 1).cache_read_input_tokens, 0);
        c.put_back();
        // Held again for the request after, beside what the one before
        // wrote: a request on the first prompt's prefix reads it.
        let other = [blk(1, 2000), blk(2, 2000), blk(4, 2000)];
        assert_eq!(send(&mut c, &m, &other, 2).cache_read_input_tokens, 4000);
        assert_eq!(send(&mut c, &m, &longer, 3).cache_read_input_tokens, 6000);
        // Dropped, it is gone for good.
        c.evict(key);
        let third = [blk(1, 2000), blk(2, 2000), blk(5, 2000)];
        assert_eq!(send(&mut c, &m, &third, 4).cache_read_input_tokens, 0);
    }

    #[test]
    fn a_model_whose_records_show_blocks_reads_whole_blocks_and_writes_the_rest() {
        // gpt-5.6-sol: reads in blocks of 1,024 as its records show; the
        // tokens of the hit past the last whole block are written again.
        let sol = model("gpt-5.6-sol");
        let mut c = cache();
        send(&mut c, &sol, &[blk(1, 3000)], 0);
        let u = send(&mut c, &sol, &[blk(1, 3000), blk(2, 500)], 1);
        assert_eq!(u.cache_read_input_tokens, 2048);
        assert_eq!(u.cache_creation_input_tokens, 3500 - 2048);
        // gpt-5.6 keeps the guide's exact reads.
        let base = model("gpt-5.6");
        let mut c = cache();
        send(&mut c, &base, &[blk(1, 3000)], 0);
        let u = send(&mut c, &base, &[blk(1, 3000), blk(2, 500)], 1);
        assert_eq!(u.cache_read_input_tokens, 3000);
    }

    #[test]
    fn the_implicit_breakpoint_writes_the_prompt_and_is_billed() {
        let m = model("gpt-5.6");
        assert!(m.breakpoint_cache);
        assert_eq!(m.rates.cache_write_5m, m.rates.input * 1.25, "1.25x input");
        let mut c = cache();
        let p = [blk(1, 1500), blk(2, 300)];
        let u = send(&mut c, &m, &p, 0);
        assert_eq!((u.input_tokens, u.cache_creation_input_tokens), (0, 1800));
        // Read exactly, no rounding to 128-token steps.
        let q = [blk(1, 1500), blk(2, 300), blk(3, 77)];
        let u = send(&mut c, &m, &q, 1);
        assert_eq!(u.cache_read_input_tokens, 1800);
        assert_eq!(u.cache_creation_input_tokens, 77);
        assert_eq!(u.input_tokens, 0);
    }

    #[test]
    fn a_read_ends_exactly_at_a_breakpoint_and_has_no_lookback_limit() {
        let m = model("gpt-5.6");
        let mut c = cache();
        // An explicit breakpoint after the system prompt (block 0).
        let mut p = vec![blk(1, 2000)];
        p.extend((10..60).map(|k| blk(k, 30)));
        send_marked(&mut c, &m, &p, &[(0, Ttl::FiveMinutes)], 0);
        // Fifty blocks later the history differs from block 1: the read is
        // the explicit breakpoint's prefix, not the longest common one.
        let mut q = vec![blk(1, 2000)];
        q.extend((100..160).map(|k| blk(k, 30)));
        let u = send(&mut c, &m, &q, 1).cache_read_input_tokens;
        assert_eq!(u, 2000);
        // A prefix that matched only part-way to a breakpoint reads none.
        let r = [blk(1, 2000), blk(10, 30), blk(999, 30)];
        let mut fresh = cache();
        send(&mut fresh, &m, &p, 0);
        assert_eq!(send(&mut fresh, &m, &r, 1).cache_read_input_tokens, 0);
    }

    #[test]
    fn at_most_four_breakpoints_are_written_the_latest_ones() {
        let m = model("gpt-5.6");
        let mut c = cache();
        let p: Vec<PrefixBlock> = (0..8).map(|k| blk(k, 1100)).collect();
        let marks: Vec<(usize, Ttl)> = (0..7).map(|b| (b, Ttl::FiveMinutes)).collect();
        let out = send_marked(&mut c, &m, &p, &marks, 0);
        let written: Vec<usize> = out.written.iter().map(|w| w.0).collect();
        assert_eq!(
            written,
            [4, 5, 6, 7],
            "the implicit one on the last block among them"
        );
        // What was not written is not read.
        let u = send(&mut c, &m, &p[..4], 1);
        assert_eq!(u.cache_read_input_tokens, 0);
    }

    #[test]
    fn only_the_latest_80_breakpoints_are_matched() {
        let m = model("gpt-5.6");
        let mut c = cache();
        let first = [blk(0, 2000)];
        send(&mut c, &m, &first, 0);
        for k in 1..=MATCHED_BREAKPOINTS as u64 {
            send(&mut c, &m, &[blk(1000 + k, 2000)], 1);
        }
        assert_eq!(send(&mut c, &m, &first, 2).cache_read_input_tokens, 0);
    }

    #[test]
    fn breakpoints_live_30_minutes_or_12_hours_where_asked() {
        let m = model("gpt-5.6");
        let p = [blk(1, 2000), blk(2, 100)];
        let mut c = cache();
        send(&mut c, &m, &p, 0);
        assert_eq!(send(&mut c, &m, &p, 29).cache_read_input_tokens, 2100);
        assert_eq!(send(&mut c, &m, &p, 29 + 31).cache_read_input_tokens, 0);
        let mut c = cache();
        send_marked(&mut c, &m, &p, &[(0, Ttl::OneHour)], 0);
        let u = send(&mut c, &m, &p, 11 * 60);
        assert_eq!(u.cache_read_input_tokens, 2000);
        let mut c = OpenAiBreakpointCache::new(LONG_TTL_MS);
        send(&mut c, &m, &p, 0);
        assert_eq!(send(&mut c, &m, &p, 11 * 60).cache_read_input_tokens, 2100);
    }

    #[test]
    fn caches_are_per_model_and_parallel_requests_miss() {
        let (a, b) = (model("gpt-5.6"), model("gpt-5.6-luna"));
        let p = [blk(1, 3000)];
        let mut c = cache();
        send(&mut c, &a, &p, 0);
        assert_eq!(send(&mut c, &b, &p, 1).cache_read_input_tokens, 0);
        assert_eq!(send(&mut c, &a, &p, 0).cache_read_input_tokens, 0);
        assert_eq!(send(&mut c, &a, &p, 2).cache_read_input_tokens, 3000);
    }

    #[test]
    fn prompts_under_the_minimum_write_nothing() {
        let m = model("gpt-5.6");
        let mut c = cache();
        let p = [blk(1, 1000)];
        let u = send(&mut c, &m, &p, 0);
        assert_eq!((u.input_tokens, u.cache_creation_input_tokens), (1000, 0));
        assert_eq!(send(&mut c, &m, &p, 1).cache_read_input_tokens, 0);
    }

    proptest! {
        /// A read is never more than the prompt, the bill's parts add up to
        /// the prompt, and a write covers only what follows the read.
        #[test]
        fn the_parts_add_up_to_the_prompt(
            requests in prop::collection::vec(
                (prop::collection::vec((0u64..6, 1u64..1500), 1..8), 0u64..40, 0usize..8),
                1..20,
            ),
        ) {
            let m = model("gpt-5.6");
            let mut c = cache();
            let mut at = 0;
            for (spec, gap, mark) in requests {
                at += gap;
                let blocks: Vec<PrefixBlock> = spec.iter().map(|&(k, t)| blk(k, t)).collect();
                let marks = if mark < blocks.len() { vec![(mark, Ttl::FiveMinutes)] } else { vec![] };
                let u = send_marked(&mut c, &m, &blocks, &marks, at).usage;
                let total: u64 = blocks.iter().map(|b| b.tokens).sum();
                prop_assert_eq!(u.total_input(), total);
                prop_assert!(u.cache_read_input_tokens <= total);
            }
        }
    }
}
