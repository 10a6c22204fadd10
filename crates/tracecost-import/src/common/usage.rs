//! Recorded usage in the spellings the logs use: Anthropic's usage
//! objects (also inside LangChain's `response_metadata`), OpenAI's, and
//! the checks every importer applies before a call keeps it. The formats
//! meet here because one log may use another's spelling.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Unmapped;
// Usage figures above the loader's limit are corrupt records: the same
// limit as the loader's, so a trace the importer keeps always loads.
use crate::trace::{ABSURD_TOKENS, RecordedUsage};

#[derive(Deserialize)]
struct AnthropicUsage {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_creation: Option<CacheCreation>,
    cache_read_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CacheCreation {
    ephemeral_5m_input_tokens: Option<u64>,
    ephemeral_1h_input_tokens: Option<u64>,
}

/// Overwrites `into`'s fields with those present in an Anthropic usage
/// object; `false` when the object is malformed.
pub(crate) fn merge_anthropic_usage(into: &mut RecordedUsage, raw: &RawValue) -> bool {
    if raw.get() == "null" {
        return true;
    }
    let Ok(u) = serde_json::from_str::<AnthropicUsage>(raw.get()) else {
        return false;
    };
    let set = |slot: &mut Option<u64>, v: Option<u64>| {
        if v.is_some() {
            *slot = v;
        }
    };
    set(&mut into.input_tokens, u.input_tokens);
    set(
        &mut into.cache_creation_input_tokens,
        u.cache_creation_input_tokens,
    );
    set(&mut into.cache_read_input_tokens, u.cache_read_input_tokens);
    set(&mut into.output_tokens, u.output_tokens);
    if let Some(c) = u.cache_creation {
        set(
            &mut into.ephemeral_5m_input_tokens,
            c.ephemeral_5m_input_tokens,
        );
        set(
            &mut into.ephemeral_1h_input_tokens,
            c.ephemeral_1h_input_tokens,
        );
    }
    true
}

#[derive(Deserialize)]
struct OpenAiUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<OpenAiDetails>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    input_tokens_details: Option<OpenAiDetails>,
}

#[derive(Deserialize)]
struct OpenAiDetails {
    cached_tokens: Option<u64>,
}

/// An OpenAI usage object (`prompt_tokens`, `completion_tokens`,
/// `prompt_tokens_details.cached_tokens`; or the Responses API's
/// `input_tokens` spelling): cached tokens are cache reads, the rest of
/// the prompt is uncached input. `None` when malformed.
pub(crate) fn openai_usage(raw: &RawValue) -> Option<RecordedUsage> {
    let u = serde_json::from_str::<OpenAiUsage>(raw.get()).ok()?;
    let prompt = u.prompt_tokens.or(u.input_tokens);
    let cached = u
        .prompt_tokens_details
        .or(u.input_tokens_details)
        .and_then(|d| d.cached_tokens);
    Some(RecordedUsage {
        input_tokens: prompt.map(|p| p.saturating_sub(cached.unwrap_or(0))),
        cache_read_input_tokens: cached,
        output_tokens: u.completion_tokens.or(u.output_tokens),
        ..RecordedUsage::default()
    })
}

/// `None` for an empty usage; drops (and reports) corrupt figures.
pub(crate) fn finish_usage(u: RecordedUsage, un: &mut Unmapped) -> Option<RecordedUsage> {
    let all = [
        u.input_tokens,
        u.cache_creation_input_tokens,
        u.ephemeral_5m_input_tokens,
        u.ephemeral_1h_input_tokens,
        u.cache_read_input_tokens,
        u.output_tokens,
    ];
    if all.iter().all(Option::is_none) {
        return None;
    }
    if all.iter().flatten().any(|&v| v > ABSURD_TOKENS) {
        un.add("usage objects with absurd token counts (dropped)", 1);
        return None;
    }
    Some(u)
}
