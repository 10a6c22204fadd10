//! The prompt cache each config's replay runs against: the simulator of
//! the provider and model its cache policy names.

use tracecost_cost::automatic_cache::{AutomaticCache, Retention};
use tracecost_cost::cache_sim::CacheSim;
use tracecost_cost::pricing::ModelPrice;
use tracecost_cost::prompt_cache::PromptCache;
use tracecost_policy::{Cache, Config};

use super::{PreparedTrace, ReplayContext, ReplayError};

/// One empty prompt cache per config, each following the rules of the
/// cache its policy runs ([`prompt_cache`]) for the model of `prepared`'s
/// trace under that config.
pub(super) fn caches(
    prepared: &PreparedTrace<'_>,
    configs: &[Config],
    ctx: ReplayContext<'_>,
) -> Result<Vec<Box<dyn PromptCache>>, ReplayError> {
    configs
        .iter()
        .map(|c| {
            let price = ctx.pricing.lookup(c.model_for_trace(prepared.trace))?;
            super::check_model(prepared.trace, c, price)?;
            let fitted = prepared.calibration.idle.map(|f| f.idle_ms);
            Ok(prompt_cache(&c.cache, price, fitted))
        })
        .collect()
}

/// The prompt caches of traces replayed against one (an account's
/// sessions): one cache per config for each model the traces run on. A
/// provider's cache is per model (a request never reads what another
/// model's requests wrote), and each model's cache follows that model's
/// rules (which cache, how long it holds, what a write costs, the blocks
/// it reads in), so a trace on one model must not run on the cache made
/// for another's. Each model's caches are made for the first trace of that
/// model to meet them (its record gives the idle time fitted,
/// [`crate::IdleFit`]); a trace keeps its model's caches throughout, as a
/// trace replayed alone keeps the caches made for it.
#[derive(Default)]
pub(crate) struct SharedCaches {
    /// Per model met, in the order met.
    by_model: Vec<ModelCaches>,
}

/// One model's caches in a [`SharedCaches`]: the model of each config (its
/// price's id), and each config's cache.
type ModelCaches = (Vec<Box<str>>, Vec<Box<dyn PromptCache>>);

impl SharedCaches {
    /// Which of the caches `prepared`'s trace runs on under `configs`
    /// ([`SharedCaches::get`]): those of its model, made for it when no
    /// trace of that model has met them yet.
    pub(crate) fn for_trace(
        &mut self,
        prepared: &PreparedTrace<'_>,
        configs: &[Config],
        ctx: ReplayContext<'_>,
    ) -> Result<usize, ReplayError> {
        // The model as the price table resolves it: an alias and a dated
        // id of one model name one cache, as they name one price (whose id
        // every cache key starts from).
        let models = configs
            .iter()
            .map(|c| Ok(&*ctx.pricing.lookup(c.model_for_trace(prepared.trace))?.id))
            .collect::<Result<Vec<&str>, ReplayError>>()?;
        if let Some(i) = self
            .by_model
            .iter()
            .position(|(m, _)| m.iter().map(|m| &**m).eq(models.iter().copied()))
        {
            return Ok(i);
        }
        let made = caches(prepared, configs, ctx)?;
        self.by_model
            .push((models.into_iter().map(Box::from).collect(), made));
        Ok(self.by_model.len() - 1)
    }

    /// The caches [`SharedCaches::for_trace`] named `which`, one per
    /// config.
    pub(crate) fn get(
        &mut self,
        which: usize,
        trace: &str,
    ) -> Result<&mut [Box<dyn PromptCache>], ReplayError> {
        self.by_model
            .get_mut(which)
            .map(|(_, sims)| &mut sims[..])
            .ok_or_else(|| ReplayError::Config {
                trace: trace.to_owned(),
                reason: "replayed before its caches were made".into(),
            })
    }
}

/// An empty prompt cache for `cache` on `price`'s model, an automatic
/// cache whose config names no idle time holding prefixes `fitted_idle_ms`
/// where the trace's record gave one ([`crate::IdleFit`]), else the
/// default:
///
/// - `openai-auto`: the model's own cache: breakpoints from GPT-5.6 on
///   (held 30 minutes, 12 hours under extended retention, the idle time
///   asked otherwise), the automatic prefix cache before (held as the
///   config asks, else as the model takes by default);
/// - `openai-breakpoints`: the breakpoint cache of GPT-5.6 and later, the
///   implicit breakpoint held 30 minutes and the explicit ones as asked;
/// - `gemini-implicit`: Gemini's implicit cache, held the idle time asked
///   (else the default);
/// - `gemini-explicit`: Gemini's explicit cached contents;
/// - every other policy (Anthropic's markers, Bedrock's cache points, no
///   markers at all): Anthropic's breakpoint rules.
pub fn prompt_cache(
    cache: &Cache,
    price: &ModelPrice,
    fitted_idle_ms: Option<u64>,
) -> Box<dyn PromptCache> {
    use tracecost_cost::openai_breakpoints::{DEFAULT_TTL_MS, LONG_TTL_MS, OpenAiBreakpointCache};
    use tracecost_policy::OpenAiRetention;
    match cache {
        Cache::OpenAiAuto { retention, .. } if price.breakpoint_cache => {
            Box::new(OpenAiBreakpointCache::new(match retention {
                OpenAiRetention::Model => DEFAULT_TTL_MS,
                OpenAiRetention::Extended => LONG_TTL_MS,
                r => r.idle_ms(false).unwrap_or(DEFAULT_TTL_MS),
            }))
        }
        // The explicit breakpoints carry their own TTL (a 1-hour marker
        // asks for 12 hours); the implicit one is held the default.
        Cache::OpenAiBreakpoints { .. } => Box::new(OpenAiBreakpointCache::new(DEFAULT_TTL_MS)),
        Cache::GeminiExplicit => Box::new(tracecost_cost::explicit_cache::ExplicitCache::new()),
        Cache::GeminiImplicit { idle_minutes } => {
            Box::new(AutomaticCache::gemini(Retention::InMemory {
                idle_ms: match idle_minutes {
                    Some(m) => u64::from(*m) * 60_000,
                    None => {
                        fitted_idle_ms.unwrap_or(tracecost_cost::automatic_cache::DEFAULT_IDLE_MS)
                    }
                },
            }))
        }
        Cache::OpenAiAuto { retention, .. } => Box::new(AutomaticCache::new(
            match (retention, retention.idle_ms(price.extended_cache_only)) {
                // A fitted idle time past in-memory retention's hour is
                // the record showing extended retention.
                (OpenAiRetention::Model, Some(_))
                    if fitted_idle_ms.is_some_and(|ms| {
                        ms > tracecost_cost::automatic_cache::MAX_IN_MEMORY_MS
                    }) =>
                {
                    Retention::Extended
                }
                (OpenAiRetention::Model, Some(default)) => Retention::InMemory {
                    idle_ms: fitted_idle_ms.unwrap_or(default),
                },
                (_, Some(idle_ms)) => Retention::InMemory { idle_ms },
                (_, None) => Retention::Extended,
            },
        )),
        _ => Box::new(CacheSim::new()),
    }
}

/// The longest a prompt cache made for `cache` can hold an entry after the
/// last request that wrote, read or warmed it, whatever the trace it is
/// made for, such that a replay started afresh past that much idle time
/// gives every later call the same figures; `None` when that is not known.
///
/// Anthropic's rules (every policy [`prompt_cache`] runs on them): a marker
/// holds 5 minutes or an hour, refreshed on each read, and the simulator
/// starts afresh after that long without a request
/// ([`LONGEST_HOLD_MS`](tracecost_cost::cache_sim::LONGEST_HOLD_MS)). `None`
/// for the other providers' caches, which a replay makes for the first
/// trace of each model that meets them (the idle time its record shows,
/// [`SharedCaches`]), so a replay started afresh could run another cache.
pub fn longest_hold_ms(cache: &Cache) -> Option<u64> {
    match cache {
        Cache::OpenAiAuto { .. }
        | Cache::OpenAiBreakpoints { .. }
        | Cache::GeminiExplicit
        | Cache::GeminiImplicit { .. } => None,
        _ => Some(tracecost_cost::cache_sim::LONGEST_HOLD_MS),
    }
}
