//! What an `ai` message says of its call: the model, and the usage in
//! whichever of LangChain's spellings it comes (`response_metadata.usage`
//! in Anthropic's or OpenAI's fields, `response_metadata.token_usage`, or
//! LangChain's own `usage_metadata` totals). Kept apart from the message
//! mapping because these spellings follow the provider, not LangChain.

use serde_json::value::RawValue;

use crate::common::{
    MALFORMED_USAGE, ReplyMeta, Unmapped, UsageProblem, finish_usage, merge_anthropic_usage,
    openai_usage,
};
use tracecost_engine::json::RawObject;
use tracecost_trace::RecordedUsage;

pub(crate) fn reply_meta(data: &RawObject, un: &mut Unmapped) -> ReplyMeta {
    let rm = match data.parse::<RawObject>("response_metadata") {
        Some(Ok(o)) => Some(o),
        _ => None,
    };
    let model = rm.as_ref().and_then(|rm| {
        ["model_name", "model"]
            .iter()
            .find_map(|k| match rm.parse::<String>(k) {
                Some(Ok(m)) if !m.is_empty() => Some(m),
                _ => None,
            })
    });
    let mut usage = None;
    // A malformed usage object is dropped and counted, never read as
    // zero; another spelling present is not read instead.
    let mut malformed = false;
    if let Some(rm) = &rm {
        if let Some(u) = rm.raw("usage").filter(|u| u.get().starts_with('{')) {
            if u.get().contains("\"prompt_tokens\"") {
                (usage, malformed) = openai(u, un);
            } else {
                let mut r = RecordedUsage::default();
                match merge_anthropic_usage(&mut r, u) {
                    true => usage = Some(r),
                    false => malformed = true,
                }
            }
        }
        if usage.is_none()
            && !malformed
            && let Some(u) = rm.raw("token_usage").filter(|u| u.get().starts_with('{'))
        {
            (usage, malformed) = openai(u, un);
        }
    }
    if usage.is_none()
        && !malformed
        && let Some(u) = data
            .raw("usage_metadata")
            .filter(|u| u.get().starts_with('{'))
    {
        usage = langchain_usage(u);
        malformed = usage.is_none();
    }
    if malformed {
        un.add(MALFORMED_USAGE, 1);
    }
    ReplyMeta {
        usage: usage.and_then(|u| finish_usage(u, un)),
        model,
        malformed,
    }
}

/// An OpenAI usage object in LangChain's metadata: the usage, and
/// whether it was malformed.
fn openai(u: &RawValue, un: &mut Unmapped) -> (Option<RecordedUsage>, bool) {
    match openai_usage(u) {
        Ok(u) => (Some(u), false),
        Err(UsageProblem::Malformed) => (None, true),
        Err(UsageProblem::Exceeds(_)) => {
            un.add(
                "usage objects whose cached and cache-write tokens exceed the input (ignored)",
                1,
            );
            (None, false)
        }
    }
}

#[derive(serde::Deserialize)]
struct LcUsage {
    #[serde(default, deserialize_with = "crate::common::count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    output_tokens: Option<u64>,
    input_token_details: Option<LcDetails>,
}

#[derive(serde::Deserialize)]
struct LcDetails {
    #[serde(default, deserialize_with = "crate::common::count")]
    cache_read: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    cache_creation: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    ephemeral_5m_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    ephemeral_1h_input_tokens: Option<u64>,
}

/// LangChain's `usage_metadata`, whose `input_tokens` is the total input.
///
/// The writes are the `ephemeral_5m` / `ephemeral_1h` split when it is
/// there, else `cache_creation`: langchain-anthropic sets `cache_creation`
/// to 0 whenever it reports the split (so as not to count the writes twice
/// in its own total), and a reader taking `cache_creation` alone would
/// leave the writes in the uncached input and bill them twice.
fn langchain_usage(raw: &RawValue) -> Option<RecordedUsage> {
    let u: LcUsage = serde_json::from_str(raw.get()).ok()?;
    let d = u.input_token_details;
    let read = d.as_ref().and_then(|d| d.cache_read);
    let split = d.as_ref().map_or(0, |d| {
        d.ephemeral_5m_input_tokens
            .unwrap_or(0)
            .saturating_add(d.ephemeral_1h_input_tokens.unwrap_or(0))
    });
    let creation = match d.as_ref().and_then(|d| d.cache_creation) {
        _ if split > 0 => Some(split),
        c => c,
    };
    Some(RecordedUsage {
        input_tokens: u.input_tokens.map(|t| {
            t.saturating_sub(read.unwrap_or(0))
                .saturating_sub(creation.unwrap_or(0))
        }),
        cache_creation_input_tokens: creation,
        ephemeral_5m_input_tokens: d.as_ref().and_then(|d| d.ephemeral_5m_input_tokens),
        ephemeral_1h_input_tokens: d.as_ref().and_then(|d| d.ephemeral_1h_input_tokens),
        cache_read_input_tokens: read,
        output_tokens: u.output_tokens,
        modifiers: Default::default(),
        reasoning_tokens: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_metadata_totals_are_split() {
        let raw = RawValue::from_string(
            r#"{"input_tokens":1000,"output_tokens":7,"total_tokens":1007,"input_token_details":{"cache_read":800,"cache_creation":150}}"#.to_owned(),
        )
        .unwrap();
        let u = langchain_usage(&raw).unwrap();
        assert_eq!(u.input_tokens, Some(50));
        assert_eq!(u.cache_read_input_tokens, Some(800));
        assert_eq!(u.cache_creation_input_tokens, Some(150));
        assert_eq!(u.output_tokens, Some(7));
    }

    #[test]
    fn the_write_split_counts_once_when_cache_creation_is_zeroed() {
        // As langchain-anthropic reports a streamed reply: the split given,
        // cache_creation set to 0, input_tokens the total.
        let raw = RawValue::from_string(
            r#"{"input_tokens":2112,"output_tokens":40,"input_token_details":{"cache_read":0,"cache_creation":0,"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":2000}}"#.to_owned(),
        )
        .unwrap();
        let u = langchain_usage(&raw).unwrap();
        assert_eq!(u.input_tokens, Some(12));
        assert_eq!(u.cache_creation_input_tokens, Some(2100));
        assert_eq!(u.ephemeral_5m_input_tokens, Some(100));
        assert_eq!(u.ephemeral_1h_input_tokens, Some(2000));
    }
}
