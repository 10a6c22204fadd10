//! One trait for every provider's prompt cache: what a replay asks of a
//! simulator, whichever provider's rules it follows.

use super::request::{EntryState, PrefixBlock, PrefixIndex, SimError, SimRequest, SimResult};

/// A provider's prompt cache across a sequence of requests: each request's
/// usage as that provider would report it, the cache kept between them.
///
/// Implemented by [`crate::cache_sim::CacheSim`] (Anthropic's
/// `cache_control` breakpoints) and [`crate::automatic_cache::AutomaticCache`]
/// (OpenAI's automatic cache).
pub trait PromptCache: Send {
    /// Simulates one request whose blocks `prefix` indexes (for the
    /// request's model) and updates the cache. An invalid
    /// request is an error and leaves the cache unchanged.
    fn simulate_indexed(
        &mut self,
        req: &SimRequest<'_>,
        prefix: &PrefixIndex,
    ) -> Result<SimResult, SimError>;

    /// Simulates one request of `blocks`, indexing them first.
    fn simulate(
        &mut self,
        req: &SimRequest<'_>,
        blocks: &[PrefixBlock],
    ) -> Result<SimResult, SimError> {
        let prefix = PrefixIndex::new(req.model, blocks);
        self.simulate_indexed(req, &prefix)
    }

    /// Makes the prefix `key` readable at `now_ms`, as if another request
    /// of the account had just used it: the record shows it warm.
    fn warm(&mut self, key: u128, now_ms: u64);

    /// Drops the prefix `key`: the record shows it was not cached.
    fn evict(&mut self, key: u128);

    /// Keeps the prefix `key` from the next request only: the record
    /// shows that request read less than the cache held, and later
    /// requests reading it again (OpenAI's service routes a request to one
    /// of several machines, each with its own cache). [`Self::put_back`],
    /// after the request, holds it again. A simulator that cannot give an
    /// entry back drops it.
    fn set_aside(&mut self, key: u128) {
        self.evict(key);
    }

    /// Holds again what [`Self::set_aside`] kept from the request just
    /// simulated, where that request did not cache it anew.
    fn put_back(&mut self) {}

    /// What the cache holds for the prefix `key` at `now_ms`.
    fn entry_state(&self, key: u128, now_ms: u64) -> EntryState;
}
