//! Whether a config can apply to a trace: its cache and compaction
//! policies must be ones the trace's provider runs.

use tracecost_cost::pricing::ModelPrice;
use tracecost_engine::cache::ProviderKind;
use tracecost_policy::{Cache, Config};
use tracecost_trace::TraceFacts;

use super::ReplayError;

/// A trace as an error names it: its name and, when known, its file.
pub fn trace_label(trace: &(impl TraceFacts + ?Sized)) -> String {
    match trace.source() {
        Some(file) => format!("{} ({file})", trace.name()),
        None => trace.name().to_owned(),
    }
}

/// Checks that `config` can apply to `trace` before anything runs.
pub fn check_config(
    trace: &(impl TraceFacts + ?Sized),
    config: &Config,
) -> Result<(), ReplayError> {
    let kind = config.cache.kind();
    let markers = kind.places_markers() && kind != tracecost_policy::CacheKind::Recorded;
    if markers && !trace.provider().speaks_cache_control() {
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy {} places cache_control markers, which provider {} does not accept",
                config.cache,
                trace.provider()
            ),
        });
    }
    if matches!(config.cache, Cache::OpenAiAuto { .. }) && trace.provider() != ProviderKind::OpenAi
    {
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy {} is OpenAI's automatic cache, and this trace's provider is {}",
                config.cache,
                trace.provider()
            ),
        });
    }
    if matches!(config.cache, Cache::GeminiImplicit { .. })
        && trace.provider() != ProviderKind::Google
    {
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy {} is Gemini's implicit cache, and this trace's provider is {}",
                config.cache,
                trace.provider()
            ),
        });
    }
    if matches!(config.cache, Cache::BedrockCachePoint { .. })
        && trace.provider() != ProviderKind::BedrockConverse
    {
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy {} places Bedrock Converse cachePoint blocks, and this trace's provider is {}",
                config.cache,
                trace.provider()
            ),
        });
    }
    if config.cache == Cache::GeminiExplicit && trace.provider() != ProviderKind::Google {
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy {} stores Gemini cached contents, and this trace's provider is {}",
                config.cache,
                trace.provider()
            ),
        });
    }
    if matches!(config.cache, Cache::OpenAiBreakpoints { .. })
        && trace.provider() != ProviderKind::OpenAi
    {
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy {} places OpenAI's prompt_cache_breakpoints, and this trace's provider is {}",
                config.cache,
                trace.provider()
            ),
        });
    }
    if config.cache == Cache::Recorded && !trace.has_markers() {
        let others: Vec<&str> = tracecost_policy::CacheKind::ALL
            .into_iter()
            .filter(|k| *k != tracecost_policy::CacheKind::Recorded && k.runs_on(trace.provider()))
            .map(tracecost_policy::CacheKind::name)
            .collect();
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy recorded replays the markers the requests carried, and this trace recorded none; choose {} instead{}",
                others.join(", "),
                if trace.provider().speaks_cache_control() {
                    format!(
                        " ({} replays what Claude Code does)",
                        tracecost_policy::CacheKind::ClaudeCode.name()
                    )
                } else {
                    String::new()
                }
            ),
        });
    }
    // A provider's server-side feature runs on that provider's API only
    // (`CompactionKind::runs_on`).
    let kind = config.compaction.kind();
    if !kind.runs_on(trace.provider()) {
        let api = if kind.runs_on(ProviderKind::Anthropic) {
            "an Anthropic API feature"
        } else {
            "an OpenAI API feature"
        };
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!("{} is {api}; provider is {}", kind.name(), trace.provider()),
        });
    }
    Ok(())
}

/// Checks that `config`'s cache runs on `price`, the model `config`
/// prices `trace` with: OpenAI's breakpoints only on the models that take
/// them (GPT-5.6 and later), Gemini's cached contents only where their
/// storage price is known.
pub fn check_model(
    trace: &(impl TraceFacts + ?Sized),
    config: &Config,
    price: &ModelPrice,
) -> Result<(), ReplayError> {
    if config.cache == Cache::GeminiExplicit && price.cache_storage_per_mtok_hour.is_none() {
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy {} bills cached contents' storage by the hour, and no storage price is known for {}; choose {} instead",
                config.cache,
                price.id,
                tracecost_policy::CacheKind::GeminiImplicit.name()
            ),
        });
    }
    if matches!(config.cache, Cache::OpenAiBreakpoints { .. }) && !price.breakpoint_cache {
        return Err(ReplayError::Config {
            trace: trace_label(trace),
            reason: format!(
                "cache policy {} places prompt_cache_breakpoints, which only GPT-5.6 and later take; {} caches automatically: choose {} instead",
                config.cache,
                price.id,
                tracecost_policy::CacheKind::OpenAiAuto.name()
            ),
        });
    }
    Ok(())
}
