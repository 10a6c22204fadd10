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
    // Some gateways put the write count beside the totals rather than in
    // the details.
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OpenAiDetails {
    cached_tokens: Option<u64>,
    cache_write_tokens: Option<u64>,
}

/// Why an OpenAI usage object gives no usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UsageProblem {
    /// Not a usage object (a member of the wrong type).
    Malformed,
    /// Its parts exceed the input they are part of: what it billed as
    /// uncached input is unknown (the message says how).
    Exceeds(String),
}

/// An OpenAI usage object (`prompt_tokens`, `completion_tokens`,
/// `prompt_tokens_details.{cached_tokens, cache_write_tokens}`; or the
/// Responses API's `input_tokens` spelling with `input_tokens_details`):
/// the prompt count includes both cache reads and cache writes, so
/// uncached input is what is left of it ([`split_included_input`]).
pub(crate) fn openai_usage(raw: &RawValue) -> Result<RecordedUsage, UsageProblem> {
    let u = serde_json::from_str::<OpenAiUsage>(raw.get()).map_err(|_| UsageProblem::Malformed)?;
    let prompt = u.prompt_tokens.or(u.input_tokens);
    let details = u.prompt_tokens_details.or(u.input_tokens_details);
    let cached = details.as_ref().and_then(|d| d.cached_tokens);
    let written = details
        .as_ref()
        .and_then(|d| d.cache_write_tokens)
        .or(u.cache_write_tokens);
    split_included_input(
        prompt,
        cached,
        written,
        u.completion_tokens.or(u.output_tokens),
    )
    .map_err(UsageProblem::Exceeds)
}

/// Usage from an input count that includes its cache reads and writes
/// (OpenAI's `prompt_tokens` / `input_tokens`, Codex's `input_tokens`):
/// uncached input = input − read − written, read and written kept apart,
/// so a write is billed once, as a write. `Err` (saying why) when read and
/// written together exceed the input: the record contradicts itself.
pub(crate) fn split_included_input(
    input: Option<u64>,
    read: Option<u64>,
    written: Option<u64>,
    output: Option<u64>,
) -> Result<RecordedUsage, String> {
    let parts = read.unwrap_or(0).saturating_add(written.unwrap_or(0));
    let uncached = match input {
        Some(i) if parts > i => {
            return Err(format!(
                "cached ({}) and cache-write ({}) tokens exceed the input tokens ({i}) that include them",
                read.unwrap_or(0),
                written.unwrap_or(0)
            ));
        }
        Some(i) => Some(i - parts),
        None => None,
    };
    Ok(RecordedUsage {
        input_tokens: uncached,
        cache_creation_input_tokens: written,
        cache_read_input_tokens: read,
        output_tokens: output,
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
