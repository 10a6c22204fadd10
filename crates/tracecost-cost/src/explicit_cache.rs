//! Gemini's explicit cached contents: a prefix the client stores once and
//! names in later requests, billed for its storage by the hour.
//!
//! The rules, from Google's context-caching guide and pricing
//! (ai.google.dev/gemini-api/docs/caching, 2026; Vertex AI's overview says
//! the same of creation):
//!
//! - **Creation.** The client creates a cached content holding a fixed
//!   prefix (here: what the request's last breakpoint closes, the tools and
//!   the system instruction under `gemini-explicit`). Its tokens are billed
//!   once at the standard input price, plus their storage for the TTL.
//! - **Reads.** A request naming a live cached content is billed its tokens
//!   (`cachedContentTokenCount`) at the model's cached-input price; the rest
//!   of the prompt is input. The first request after a creation reads it
//!   too, so a creation costs input + storage + one read: the price table's
//!   explicit write rate ([`crate::pricing::explicit_write_rate`]), and the
//!   simulator reports that request's cached tokens as the write.
//! - **TTL.** A cached content lives its TTL from creation, 1 hour when the
//!   client sets none ([`TTL_MS`]); reads do not extend it. A request after
//!   it expired creates it again.
//! - **Minimum.** The model's minimum for caching (`min_cacheable_tokens`):
//!   a shorter prefix is not cached and the request is all input.
//! - **Visibility.** As the other simulators: a cached content is readable
//!   only by a request that started strictly after the one that created it,
//!   and only for the same model (its key includes the model).
//!
//! Not simulated (a client's choice, not a rule): a TTL other than the
//! default or extended while in use, caching more than the prefix the
//! breakpoint closes, and Gemini's implicit cache on the rest of a request
//! that names a cached content (undocumented; counted as input).

use std::collections::HashMap;

use tracecost_engine::wire::Ttl;

use super::cache_sim::{CacheHold, EntryState, PrefixIndex, SimError, SimRequest, SimResult};
use super::pricing::Usage;
use super::prompt_cache::PromptCache;

/// How long a cached content lives when the client sets no TTL: Google's
/// documented default, 1 hour.
pub const TTL_MS: u64 = 60 * 60 * 1000;

#[derive(Debug, Clone, Copy)]
struct Entry {
    created_ms: u64,
    created_seq: u64,
    expires_ms: u64,
}

/// Gemini's explicit cached contents across requests.
#[derive(Debug, Clone, Default)]
pub struct ExplicitCache {
    /// Live and expired cached contents by prefix key.
    entries: HashMap<u128, Entry>,
    clock_ms: Option<u64>,
    seq: u64,
}

impl ExplicitCache {
    /// No cached content yet.
    pub fn new() -> Self {
        Self::default()
    }
}

impl PromptCache for ExplicitCache {
    fn simulate_indexed(
        &mut self,
        req: &SimRequest<'_>,
        prefix: &PrefixIndex,
    ) -> Result<SimResult, SimError> {
        if let Some(bp) = req.breakpoints.iter().find(|b| b.block >= prefix.len()) {
            return Err(SimError::OutOfRange {
                block: bp.block,
                len: prefix.len(),
            });
        }
        let back_to_back = req.start_ms.is_none();
        let now = req.start_ms.unwrap_or(self.clock_ms.unwrap_or(0));
        let seq = self.seq;
        self.seq += 1;
        self.clock_ms = Some(self.clock_ms.map_or(now, |c| c.max(now)));
        let total = prefix
            .len()
            .checked_sub(1)
            .and_then(|last| prefix.tokens_through(last))
            .unwrap_or(0);
        // The cached content is what the last breakpoint closes.
        let cached = req
            .breakpoints
            .iter()
            .map(|b| b.block)
            .max()
            .map(|b| (b, prefix.tokens_through(b).unwrap_or(0)))
            .filter(|&(_, tokens)| tokens >= req.model.min_cacheable_tokens);
        let Some((block, tokens)) = cached else {
            return Ok(SimResult {
                usage: Usage::new(total, 0, 0, 0, req.output_tokens),
                hit: None,
                written: Vec::new(),
                start_ms: now,
            });
        };
        let key = prefix.key_at(block).unwrap_or_default();
        let live = self.entries.get(&key).is_some_and(|e| {
            e.expires_ms > now && (e.created_ms < now || (back_to_back && e.created_seq < seq))
        });
        if live {
            return Ok(SimResult {
                usage: Usage::new(total - tokens, 0, 0, tokens, req.output_tokens),
                hit: Some(block),
                written: Vec::new(),
                start_ms: now,
            });
        }
        self.entries.insert(
            key,
            Entry {
                created_ms: now,
                created_seq: seq,
                expires_ms: now.saturating_add(TTL_MS),
            },
        );
        // Created for an hour: the write goes in the 1-hour column, priced
        // at the explicit write rate (input, an hour's storage, one read).
        Ok(SimResult {
            usage: Usage::new(total - tokens, 0, tokens, 0, req.output_tokens),
            hit: None,
            written: vec![(block, Ttl::OneHour)],
            start_ms: now,
        })
    }

    fn warm(&mut self, key: u128, now_ms: u64) {
        let live = self
            .entries
            .get(&key)
            .is_some_and(|e| e.expires_ms > now_ms);
        if !live {
            self.entries.insert(
                key,
                Entry {
                    created_ms: now_ms.saturating_sub(1),
                    created_seq: 0,
                    expires_ms: now_ms.saturating_add(TTL_MS),
                },
            );
        }
    }

    fn evict(&mut self, key: u128) {
        self.entries.remove(&key);
    }

    fn entry_state(&self, key: u128, now_ms: u64) -> EntryState {
        let ttl = CacheHold::from_ms(TTL_MS);
        match self.entries.get(&key) {
            None => EntryState::Absent,
            Some(e) if e.expires_ms > now_ms => EntryState::Readable { ttl },
            Some(e) => EntryState::Expired {
                ttl,
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

    /// Sends `blocks` with a breakpoint after block `mark` at minute `at`.
    fn send(
        c: &mut ExplicitCache,
        m: &ModelPrice,
        blocks: &[PrefixBlock],
        mark: Option<usize>,
        at: Option<u64>,
    ) -> Usage {
        let bps: Vec<Breakpoint> = mark
            .map(|block| Breakpoint {
                block,
                ttl: Ttl::OneHour,
            })
            .into_iter()
            .collect();
        c.simulate(
            &SimRequest {
                model: m,
                start_ms: at.map(|a| a * MIN),
                breakpoints: &bps,
                output_tokens: 5,
            },
            blocks,
        )
        .unwrap()
        .usage
    }

    #[test]
    fn a_creation_is_billed_input_an_hour_of_storage_and_a_read() {
        let m = model("gemini-2.5-pro");
        // $1.25 input + $0.125 cached + $4.50 an hour of storage.
        assert_eq!(m.cache_storage_per_mtok_hour, Some(4.5));
        assert!((m.rates.cache_write_1h - 5.875).abs() < 1e-9);
        let mut c = ExplicitCache::new();
        let p = [blk(1, 5000), blk(2, 300)];
        let u = send(&mut c, &m, &p, Some(0), Some(0));
        assert_eq!(
            (u.input_tokens, u.write_1h(), u.cache_read_input_tokens),
            (300, 5000, 0)
        );
        // The next request reads the cached content; the rest is input.
        let q = [blk(1, 5000), blk(2, 300), blk(3, 40)];
        let u = send(&mut c, &m, &q, Some(0), Some(1));
        assert_eq!(
            (
                u.input_tokens,
                u.cache_creation_input_tokens,
                u.cache_read_input_tokens
            ),
            (340, 0, 5000)
        );
    }

    #[test]
    fn a_cached_content_lives_an_hour_from_creation_and_reads_do_not_extend_it() {
        let m = model("gemini-2.5-flash");
        let mut c = ExplicitCache::new();
        let p = [blk(1, 5000), blk(2, 10)];
        send(&mut c, &m, &p, Some(0), Some(0));
        assert_eq!(
            send(&mut c, &m, &p, Some(0), Some(59)).cache_read_input_tokens,
            5000
        );
        // Read at minute 59, yet gone at 60: created again.
        let u = send(&mut c, &m, &p, Some(0), Some(60));
        assert_eq!((u.cache_read_input_tokens, u.write_1h()), (0, 5000));
        assert_eq!(
            c.entry_state(PrefixIndex::new(&m, &p).key_at(0).unwrap(), 61 * MIN),
            EntryState::Readable {
                ttl: CacheHold::from_ms(TTL_MS)
            }
        );
    }

    #[test]
    fn under_the_models_minimum_nothing_is_cached() {
        let m = model("gemini-3-flash");
        assert_eq!(m.min_cacheable_tokens, 4096);
        let mut c = ExplicitCache::new();
        let p = [blk(1, 4095), blk(2, 10)];
        for at in 0..2 {
            let u = send(&mut c, &m, &p, Some(0), Some(at));
            assert_eq!((u.input_tokens, u.cache_creation_input_tokens), (4105, 0));
        }
    }

    #[test]
    fn no_breakpoint_means_no_cached_content() {
        let m = model("gemini-2.5-pro");
        let mut c = ExplicitCache::new();
        let p = [blk(1, 9000)];
        for at in 0..2 {
            let u = send(&mut c, &m, &p, None, Some(at));
            assert_eq!(u.input_tokens, 9000);
        }
    }

    #[test]
    fn a_changed_prefix_or_another_model_creates_its_own() {
        let pro = model("gemini-2.5-pro");
        let flash = model("gemini-2.5-flash");
        let mut c = ExplicitCache::new();
        send(&mut c, &pro, &[blk(1, 5000), blk(2, 5)], Some(0), Some(0));
        let u = send(&mut c, &flash, &[blk(1, 5000), blk(2, 5)], Some(0), Some(1));
        assert_eq!(u.write_1h(), 5000, "another model's cache is not read");
        let u = send(&mut c, &pro, &[blk(9, 5000), blk(2, 5)], Some(0), Some(2));
        assert_eq!(u.write_1h(), 5000, "another prefix is another content");
    }

    #[test]
    fn parallel_requests_do_not_see_a_creation_of_the_same_instant() {
        let m = model("gemini-2.5-pro");
        let mut c = ExplicitCache::new();
        let p = [blk(1, 5000), blk(2, 5)];
        send(&mut c, &m, &p, Some(0), Some(0));
        let u = send(&mut c, &m, &p, Some(0), Some(0));
        assert_eq!(u.write_1h(), 5000);
        // Back-to-back requests (no start times) follow one another.
        let mut c = ExplicitCache::new();
        send(&mut c, &m, &p, Some(0), None);
        assert_eq!(
            send(&mut c, &m, &p, Some(0), None).cache_read_input_tokens,
            5000
        );
    }

    proptest! {
        /// A request reads or writes at most its prompt, all of one
        /// breakpoint's prefix or nothing, and writes only in the 1-hour
        /// column.
        #[test]
        fn reads_and_writes_stay_within_the_prompt(
            reqs in prop::collection::vec(
                (prop::collection::vec((0u64..4, 1u64..3000), 1..6), 0u64..200, prop::option::of(0usize..6)),
                1..20,
            )
        ) {
            let m = model("gemini-2.5-flash");
            let mut c = ExplicitCache::new();
            for (blocks, at, mark) in reqs {
                let p: Vec<PrefixBlock> = blocks.iter().map(|&(k, t)| blk(k, t)).collect();
                let mark = mark.filter(|&b| b < p.len());
                let u = send(&mut c, &m, &p, mark, Some(at));
                let total: u64 = p.iter().map(|b| b.tokens).sum();
                prop_assert_eq!(
                    u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
                    total
                );
                prop_assert_eq!(u.write_5m(), 0);
                let cached = mark.map_or(0, |b| p[..=b].iter().map(|x| x.tokens).sum());
                prop_assert!(u.cache_read_input_tokens == 0 || u.cache_read_input_tokens == cached);
                prop_assert!(u.write_1h() == 0 || u.write_1h() == cached);
                prop_assert!(u.cache_read_input_tokens == 0 || u.write_1h() == 0);
            }
        }
    }
}
