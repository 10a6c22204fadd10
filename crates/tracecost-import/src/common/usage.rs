//! Recorded usage in the spellings the logs use: Anthropic's usage
//! objects (also inside LangChain's `response_metadata`), OpenAI's, and
//! the checks every importer applies before a call keeps it. The formats
//! meet here because one log may use another's spelling.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::Unmapped;
use tracecost_engine::json::RawObject;
// Usage figures above the loader's limit are corrupt records: the same
// limit as the loader's, so a trace the importer keeps always loads.
use tracecost_trace::{ABSURD_TOKENS, RecordedModifiers, RecordedUsage};

/// What the import note counts for a usage object holding a malformed
/// token count ([`token_count`]): the call is kept, that usage object is
/// dropped, as for an absurd figure.
pub(crate) const MALFORMED_USAGE: &str = "usage objects with a malformed token count (dropped: a count is a non-negative integer below 2^64, written as a number or as a string holding one)";

/// A token count that breaks [`token_count`]'s rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Malformed;

/// The one rule every reader applies to a recorded token count: a
/// non-negative integer below 2^64, written as a JSON number (57, or 57.0
/// which is the same number) or as a string holding one (OTLP JSON writes
/// int64 as a string, and some SDKs copy that). `null` is no count.
/// Anything else (a string that is not such a number, a negative,
/// fractional or overflowing number, a boolean, an object) is malformed,
/// never read as 0 nor truncated.
pub(crate) fn token_count(v: &Value) -> Result<Option<u64>, Malformed> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => Ok(Some(u)),
            // 2^64 is exact as an f64; every integral float below it
            // converts without loss of what was written.
            (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0 => {
                Ok(Some(f as u64))
            }
            _ => Err(Malformed),
        },
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            s.parse().map(Some).map_err(|_| Malformed)
        }
        _ => Err(Malformed),
    }
}

/// [`token_count`] for a usage object read with serde:
/// `#[serde(default, deserialize_with = "count")]` on an `Option<u64>`.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Value::deserialize(d)?;
    token_count(&v).map_err(|_| serde::de::Error::custom("malformed token count"))
}

/// Reads the counts of one usage object by hand, remembering whether any
/// was malformed, so that the object is dropped and counted whole
/// ([`Counts::finish`]) rather than read with a hole in it.
#[derive(Default)]
pub(crate) struct Counts {
    malformed: bool,
}

impl Counts {
    /// The count `v` holds (`None` when absent, null or malformed).
    pub(crate) fn of(&mut self, v: Option<&Value>) -> Option<u64> {
        match v.map(token_count) {
            Some(Ok(n)) => n,
            Some(Err(Malformed)) => {
                self.malformed = true;
                None
            }
            None => None,
        }
    }

    /// Whether a count read so far was malformed.
    pub(crate) fn malformed(&self) -> bool {
        self.malformed
    }

    /// The usage read, unless a count was malformed (then dropped and
    /// counted in the note); absurd figures are dropped as ever
    /// ([`finish_usage`]).
    pub(crate) fn finish(
        self,
        u: Option<RecordedUsage>,
        un: &mut Unmapped,
    ) -> Option<RecordedUsage> {
        if self.malformed {
            un.add(MALFORMED_USAGE, 1);
            return None;
        }
        u.and_then(|u| finish_usage(u, un))
    }
}

#[derive(Deserialize)]
struct AnthropicUsage {
    #[serde(default, deserialize_with = "count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    cache_creation_input_tokens: Option<u64>,
    cache_creation: Option<CacheCreation>,
    #[serde(default, deserialize_with = "count")]
    cache_read_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    output_tokens: Option<u64>,
    // The price modifiers: read as text when they are text, passed over
    // otherwise (a modifier of another shape says nothing of the price).
    #[serde(default, deserialize_with = "text")]
    speed: Option<String>,
    #[serde(default, deserialize_with = "text")]
    inference_geo: Option<String>,
    #[serde(default, deserialize_with = "text")]
    service_tier: Option<String>,
}

/// A member's string, `None` when absent, null or of another type.
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

#[derive(Deserialize)]
struct CacheCreation {
    #[serde(default, deserialize_with = "count")]
    ephemeral_5m_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    ephemeral_1h_input_tokens: Option<u64>,
}

/// The requests one Anthropic response made, each with its model (`None`:
/// the request's own) and tokens, as its `usage.iterations` records them:
/// a server-side compaction samples a summary first (a `compaction`
/// iteration, in no top-level count: the top level sums the `message`
/// iterations), an advisor answers at its own model (`advisor_message`,
/// naming it). Empty when the usage records no iterations, or one that
/// cannot be read (the top level is then the call's usage).
pub(crate) fn anthropic_iterations(raw: &RawValue) -> Vec<(Option<String>, RecordedUsage)> {
    #[derive(Deserialize)]
    struct Iterations<'a> {
        #[serde(borrow, default)]
        iterations: Option<Vec<&'a RawValue>>,
    }
    #[derive(Deserialize)]
    struct Kind {
        #[serde(rename = "type", default, deserialize_with = "text")]
        kind: Option<String>,
        #[serde(default, deserialize_with = "text")]
        model: Option<String>,
    }
    let Ok(Iterations {
        iterations: Some(its),
    }) = serde_json::from_str::<Iterations<'_>>(raw.get())
    else {
        return Vec::new();
    };
    let read: Option<Vec<_>> = its
        .iter()
        .map(|it| {
            let k = serde_json::from_str::<Kind>(it.get()).ok()?;
            let mut usage = RecordedUsage::default();
            if !merge_anthropic_usage(&mut usage, it) || usage.input_tokens.is_none() {
                return None;
            }
            let model = match k.kind.as_deref() {
                Some("advisor_message") => Some(k.model?),
                _ => None,
            };
            Some((model, usage))
        })
        .collect();
    read.unwrap_or_default()
}

/// Overwrites `into`'s fields with those present in an Anthropic usage
/// object; `false` when the object is malformed. The price modifiers
/// (`speed`, `inference_geo`, `service_tier`) are read by the rule of
/// [`RecordedModifiers::from_anthropic`], each only when present: a
/// stream's `message_delta` usage, which carries none, keeps those of its
/// `message_start`.
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
    let read = RecordedModifiers::from_anthropic(
        u.speed.as_deref(),
        u.inference_geo.as_deref(),
        u.service_tier.as_deref(),
    );
    let m = &mut into.modifiers;
    if u.speed.is_some() {
        m.fast = read.fast;
    }
    if u.inference_geo.is_some() {
        m.regional = read.regional;
    }
    if u.service_tier.is_some() {
        m.batch = read.batch;
    }
    true
}

#[derive(Deserialize)]
struct OpenAiUsage {
    #[serde(default, deserialize_with = "count")]
    prompt_tokens: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<OpenAiDetails>,
    #[serde(default, deserialize_with = "count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "count")]
    output_tokens: Option<u64>,
    input_tokens_details: Option<OpenAiDetails>,
    // Some gateways put the write count beside the totals rather than in
    // the details.
    #[serde(default, deserialize_with = "count")]
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OpenAiDetails {
    #[serde(default, deserialize_with = "count")]
    cached_tokens: Option<u64>,
    #[serde(default, deserialize_with = "count")]
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

/// What the import note counts for an OpenAI response served by the
/// priority tier ([`openai_tier`]).
pub(crate) const PRIORITY_TIER: &str = "responses served by OpenAI's priority tier (priced at the standard rate: the price table has no priority prices)";

/// Sets the modifiers of an OpenAI response's usage from the tier that
/// served it (the response's `service_tier`, which may differ from the
/// request's `auto`), by [`RecordedModifiers::from_openai`]; a priority
/// response is counted in the note.
pub(crate) fn openai_tier(
    tier: Option<&str>,
    usage: Option<&mut RecordedUsage>,
    un: &mut Unmapped,
) {
    if RecordedModifiers::is_openai_priority(tier) {
        un.add(PRIORITY_TIER, 1);
    }
    if let Some(u) = usage {
        u.modifiers = RecordedModifiers::from_openai(tier);
    }
}

/// The `service_tier` member of an OpenAI response body.
pub(crate) fn service_tier(response: &RawObject) -> Option<String> {
    match response.parse::<String>("service_tier") {
        Some(Ok(t)) => Some(t),
        _ => None,
    }
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
    if all
        .iter()
        .chain([&u.reasoning_tokens])
        .flatten()
        .any(|&v| v > ABSURD_TOKENS)
    {
        un.add("usage objects with absurd token counts (dropped)", 1);
        return None;
    }
    Some(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_count_is_a_non_negative_integer_as_a_number_or_a_string() {
        let read = |s: &str| token_count(&serde_json::from_str::<Value>(s).unwrap());
        for (text, n) in [
            ("0", 0),
            ("57", 57),
            ("57.0", 57),
            ("5.7e1", 57),
            ("\"57\"", 57),
            ("\"18446744073709551615\"", u64::MAX),
            ("18446744073709551615", u64::MAX),
        ] {
            assert_eq!(read(text), Ok(Some(n)), "{text}");
        }
        assert_eq!(read("null"), Ok(None));
        for bad in [
            "\"abc\"",
            "\"\"",
            "\" 57\"",
            "\"57.0\"",
            "\"-5\"",
            "-5",
            "-0.5",
            "57.5",
            "1e30",
            "18446744073709551616",
            "\"18446744073709551616\"",
            "true",
            "[57]",
            "{}",
        ] {
            assert_eq!(read(bad), Err(Malformed), "{bad}");
        }
    }

    #[test]
    fn a_usage_object_with_one_malformed_count_is_dropped_whole_and_counted() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        let mut u = RecordedUsage::default();
        assert!(merge_anthropic_usage(
            &mut u,
            &raw(r#"{"input_tokens":"12","output_tokens":3.0}"#)
        ));
        assert_eq!((u.input_tokens, u.output_tokens), (Some(12), Some(3)));
        assert!(!merge_anthropic_usage(
            &mut u,
            &raw(r#"{"input_tokens":12.5}"#)
        ));
        assert_eq!(
            openai_usage(&raw(r#"{"prompt_tokens":-1,"completion_tokens":2}"#)),
            Err(UsageProblem::Malformed)
        );
        let mut un = Unmapped::default();
        let mut c = Counts::default();
        let v: Value = serde_json::from_str(r#"{"a":"x","b":7}"#).unwrap();
        let (a, b) = (c.of(v.get("a")), c.of(v.get("b")));
        assert_eq!((a, b), (None, Some(7)));
        let u = RecordedUsage {
            output_tokens: b,
            ..RecordedUsage::default()
        };
        assert_eq!(c.finish(Some(u), &mut un), None);
        assert_eq!(un.lines(), [format!("1 × {MALFORMED_USAGE}")]);
    }
}
