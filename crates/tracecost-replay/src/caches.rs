//! The prompt cache each config's replay runs against: the simulator of
//! the provider and model its cache policy names.

use crate::cost::automatic_cache::{AutomaticCache, Retention};
use crate::cost::cache_sim::CacheSim;
use crate::cost::pricing::ModelPrice;
use crate::cost::prompt_cache::PromptCache;
use crate::policy::{Cache, Config};

use super::{PreparedTrace, ReplayContext, ReplayError};

/// One empty prompt cache per config, each following the rules of the
/// cache its policy runs: OpenAI's automatic cache for `openai-auto`
/// (held as the config asks, or as the model of `prepared`'s trace takes
/// by default), Anthropic's breakpoints for the others.
pub(super) fn caches(
    prepared: &PreparedTrace<'_>,
    configs: &[Config],
    ctx: ReplayContext<'_>,
) -> Result<Vec<Box<dyn PromptCache>>, ReplayError> {
    configs
        .iter()
        .map(|c| {
            let price = ctx.pricing.lookup(c.model_for_trace(prepared.trace))?;
            Ok(prompt_cache(&c.cache, price))
        })
        .collect()
}

/// An empty prompt cache for `cache` on `price`'s model. OpenAI's cache
/// is the model's: breakpoints from GPT-5.6 on (held 30 minutes, 12 hours
/// under extended retention, the idle time asked otherwise), the automatic
/// prefix cache before.
pub fn prompt_cache(cache: &Cache, price: &ModelPrice) -> Box<dyn PromptCache> {
    use crate::cost::openai_breakpoints::{DEFAULT_TTL_MS, LONG_TTL_MS, OpenAiBreakpointCache};
    use crate::policy::OpenAiRetention;
    match cache {
        Cache::OpenAiAuto { retention } if price.breakpoint_cache => {
            Box::new(OpenAiBreakpointCache::new(match retention {
                OpenAiRetention::Model => DEFAULT_TTL_MS,
                OpenAiRetention::Extended => LONG_TTL_MS,
                r => r.idle_ms(false).unwrap_or(DEFAULT_TTL_MS),
            }))
        }
        Cache::GeminiImplicit { idle_minutes } => {
            Box::new(AutomaticCache::gemini(Retention::InMemory {
                idle_ms: idle_minutes.map_or(crate::cost::automatic_cache::DEFAULT_IDLE_MS, |m| {
                    u64::from(m) * 60_000
                }),
            }))
        }
        Cache::OpenAiAuto { retention } => Box::new(AutomaticCache::new(
            match retention.idle_ms(price.extended_cache_only) {
                Some(idle_ms) => Retention::InMemory { idle_ms },
                None => Retention::Extended,
            },
        )),
        _ => Box::new(CacheSim::new()),
    }
}
