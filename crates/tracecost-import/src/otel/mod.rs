//! Importer for OpenTelemetry exports of LLM calls: the OTLP JSON that the
//! Collector's file exporter writes (one `TracesData` object per line, ids
//! in hex, 64-bit integers as strings), with the model calls' spans as the
//! GenAI semantic conventions describe them and as the real
//! instrumentations write them.
//!
//! A span is a model call when its `gen_ai.operation.name` is one that
//! calls a model (`chat`, `text_completion`, `generate_content`) or, for
//! OpenInference (Arize Phoenix), its `openinference.span.kind` is `LLM`.
//! Read from it:
//!
//! - **Content** (opt-in in every instrumentation): the GenAI conventions'
//!   JSON attributes `gen_ai.system_instructions`, `gen_ai.input.messages`,
//!   `gen_ai.output.messages` and `gen_ai.tool.definitions`, in the "parts"
//!   schema (`text`, `tool_call`, `tool_call_response`; other parts are
//!   dropped and counted), or OpenInference's flattened
//!   `llm.input_messages.{i}.message.*` / `llm.output_messages.*` /
//!   `llm.tools.{i}.tool.json_schema` ([`openinference`]). A span without
//!   content is kept as a call with its usage and no messages it could be
//!   replayed with; the summary counts them.
//! - **The model**: `gen_ai.response.model`, else `gen_ai.request.model`
//!   (OpenInference: `llm.model_name`); the provider from
//!   `gen_ai.provider.name` (or the older `gen_ai.system`, or
//!   `llm.provider`).
//! - **Usage**, whose input count includes the cache (the conventions'
//!   SHOULD, and what every instrumentation tried writes: 12 uncached + 2,100
//!   written is `gen_ai.usage.input_tokens` 2,112): uncached input =
//!   `gen_ai.usage.input_tokens` − `gen_ai.usage.cache_read.input_tokens`
//!   − the writes (`gen_ai.usage.cache_creation.input_tokens`, or the
//!   anthropic SDK's `gen_ai.usage.cache_write.input_tokens`), with the
//!   SDK's `anthropic.usage.cache_creation.ephemeral_{5m,1h}_input_tokens`
//!   split where it gives one; OpenInference's `llm.token_count.prompt`
//!   includes its `prompt_details.cache_read` / `cache_write` the same way.
//!   A span whose export records no cache figure at all
//!   (opentelemetry-instrumentation-openai-v2 writes input and output
//!   tokens only) is priced as recorded, with no cache read or write
//!   known, and the summary says how many.
//! - **The start**: `startTimeUnixNano`.
//!
//! **One call, two spans.** The `anthropic` SDK (2.x) emits a span of its
//! own (`anthropic.messages.create`, scope `com.anthropic.sdk.python`) for
//! each call whenever a tracer provider is set, so under an instrumentor
//! each call has two model spans with the same `gen_ai.response.id`:
//! summing them bills the call twice. Spans of one response id are one
//! call: the one that carries the most is kept, and the SDK's 5m/1h write
//! split completes it.
//!
//! Calls are taken in start order; a call extends the trace whose latest
//! call's messages are a prefix of its own, as in the request-log
//! importers. The GenAI conventions record no cache markers (`cache_control`
//! is not in the parts schema), so an Anthropic trace's status quo replays
//! none; the summary says so.
//!
//! Not read yet: log records (`LogsData`: the per-message events older
//! instrumentations emit); they are counted and named.

mod openinference;
mod parts;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::common::{self, Conversations, NewCall, TraceBuilder, Unmapped, message_key};
use super::{ImportError, ImportOptions, ImportOutput, ImportReport};
use crate::engine::cache::ProviderKind;
use crate::engine::message::{Message, ToolDefinition};
use crate::trace::{Call, Prompt, RecordedUsage};

/// Imports OpenTelemetry (OTLP JSON) exports of model calls. Directories
/// are expanded to their `.json`/`.jsonl` files; files are read in path
/// order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportOutput, ImportError> {
    super::Format::Otel.import(inputs, opts)
}

/// What [`super::Format::Otel`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "call(s)",
    nothing_found: "model-call spans with their messages (OpenTelemetry log records are not read)",
    read,
};

/// An attribute value as OTLP JSON writes it (`AnyValue`), made plain:
/// strings, integers (written as strings), doubles, booleans, and arrays
/// and key-value lists as JSON.
pub(crate) fn any_value(v: &Value) -> Option<Value> {
    let o = v.as_object()?;
    let (kind, inner) = o.iter().next()?;
    Some(match kind.as_str() {
        "stringValue" => inner.clone(),
        "intValue" => match inner {
            Value::String(s) => s.parse::<i64>().ok().map(Value::from)?,
            n @ Value::Number(_) => n.clone(),
            _ => return None,
        },
        "doubleValue" | "boolValue" | "bytesValue" => inner.clone(),
        "arrayValue" => Value::Array(
            inner
                .get("values")
                .and_then(Value::as_array)
                .map(|vs| vs.iter().filter_map(any_value).collect())
                .unwrap_or_default(),
        ),
        "kvlistValue" => Value::Object(
            inner
                .get("values")
                .and_then(Value::as_array)
                .map(|kvs| {
                    kvs.iter()
                        .filter_map(|kv| {
                            let k = kv.get("key")?.as_str()?.to_owned();
                            Some((k, any_value(kv.get("value")?)?))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        _ => return None,
    })
}

/// A span's attributes by key.
pub(crate) struct Attrs(HashMap<String, Value>);

impl Attrs {
    fn of(span: &Value) -> Attrs {
        let map = span
            .get("attributes")
            .and_then(Value::as_array)
            .map(|kvs| {
                kvs.iter()
                    .filter_map(|kv| {
                        let k = kv.get("key")?.as_str()?.to_owned();
                        Some((k, any_value(kv.get("value")?)?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Attrs(map)
    }

    pub(crate) fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.as_str()
    }

    pub(crate) fn u64(&self, key: &str) -> Option<u64> {
        match self.0.get(key)? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }
    }

    /// A JSON attribute: a string holding JSON (how the conventions write
    /// structured content on spans), or a structured value.
    pub(crate) fn json(&self, key: &str) -> Option<Value> {
        match self.0.get(key)? {
            Value::String(s) => serde_json::from_str(s).ok(),
            v => Some(v.clone()),
        }
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.keys()
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// The GenAI operations that call a model.
const MODEL_OPERATIONS: [&str; 3] = ["chat", "text_completion", "generate_content"];

/// One model call read from a span.
struct ModelSpan {
    start_ns: u64,
    line: usize,
    span_id: String,
    parent_id: String,
    response_id: Option<String>,
    /// How much the span carries (attributes), to choose among duplicates.
    weight: usize,
    provider: ProviderKind,
    model: Option<String>,
    system: Vec<crate::engine::message::ContentBlock>,
    messages: Vec<Message>,
    tools: Vec<ToolDefinition>,
    reply: Option<Message>,
    usage: Option<RecordedUsage>,
    /// The export recorded usage but no cache figure.
    no_cache_fields: bool,
    /// The anthropic SDK's write split, for a duplicate to complete.
    split: Option<(u64, u64)>,
}

fn provider_of(name: Option<&str>) -> ProviderKind {
    match name.map(str::to_ascii_lowercase).as_deref() {
        Some("openai" | "azure.ai.openai") => ProviderKind::OpenAi,
        Some("gcp.gemini" | "gcp.vertex_ai" | "gemini" | "google" | "vertex_ai" | "gcp.gen_ai") => {
            ProviderKind::Google
        }
        Some("aws.bedrock") => ProviderKind::BedrockConverse,
        _ => ProviderKind::Anthropic,
    }
}

/// The usage a span recorded (`Err`: figures that contradict each other).
fn span_usage(a: &Attrs) -> Result<(Option<RecordedUsage>, bool, Option<(u64, u64)>), String> {
    let (input, read, write, output) = match a.u64("llm.token_count.prompt") {
        Some(prompt) if a.u64("gen_ai.usage.input_tokens").is_none() => (
            Some(prompt),
            a.u64("llm.token_count.prompt_details.cache_read"),
            a.u64("llm.token_count.prompt_details.cache_write"),
            a.u64("llm.token_count.completion"),
        ),
        _ => (
            a.u64("gen_ai.usage.input_tokens"),
            a.u64("gen_ai.usage.cache_read.input_tokens"),
            a.u64("gen_ai.usage.cache_creation.input_tokens")
                .or_else(|| a.u64("gen_ai.usage.cache_write.input_tokens")),
            a.u64("gen_ai.usage.output_tokens"),
        ),
    };
    if input.is_none() && output.is_none() {
        return Ok((None, false, None));
    }
    let split = match (
        a.u64("anthropic.usage.cache_creation.ephemeral_5m_input_tokens"),
        a.u64("anthropic.usage.cache_creation.ephemeral_1h_input_tokens"),
    ) {
        (None, None) => None,
        (m5, h1) => Some((m5.unwrap_or(0), h1.unwrap_or(0))),
    };
    // OpenInference leaves a zero read out; a write recorded says the
    // export records the cache.
    let openinference_cache = a
        .keys()
        .any(|k| k.starts_with("llm.token_count.prompt_details."));
    let no_cache_fields = read.is_none() && write.is_none() && !openinference_cache;
    let read = read.or((openinference_cache || write.is_some()).then_some(0));
    let mut u = common::split_included_input(input, read, write, output)?;
    if let Some((m5, h1)) = split {
        u.ephemeral_5m_input_tokens = Some(m5);
        u.ephemeral_1h_input_tokens = Some(h1);
    }
    Ok((Some(u), no_cache_fields, split))
}

/// Reads one span, when it is a model call.
fn model_span(span: &Value, line: usize, un: &mut Unmapped) -> Result<Option<ModelSpan>, String> {
    let a = Attrs::of(span);
    let genai = a
        .str("gen_ai.operation.name")
        .is_some_and(|op| MODEL_OPERATIONS.contains(&op));
    let oi = a.str("openinference.span.kind") == Some("LLM");
    if !genai && !oi {
        return Ok(None);
    }
    let start_ns = match span.get("startTimeUnixNano") {
        Some(Value::String(s)) => s.parse().unwrap_or(0),
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    };
    let (usage, no_cache_fields, split) = span_usage(&a)?;
    let provider = provider_of(
        a.str("gen_ai.provider.name")
            .or_else(|| a.str("gen_ai.system"))
            .or_else(|| a.str("llm.provider")),
    );
    let model = a
        .str("gen_ai.response.model")
        .or_else(|| a.str("gen_ai.request.model"))
        .or_else(|| a.str("llm.model_name"))
        .or_else(|| a.str("llm.request.model_name"))
        .map(str::to_owned);
    let content = if genai && a.str("gen_ai.input.messages").is_some() {
        parts::content(&a, un)
    } else if oi {
        openinference::content(&a, un)
    } else {
        parts::Content::default()
    };
    let id = |k: &str| span.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    Ok(Some(ModelSpan {
        start_ns,
        line,
        span_id: id("spanId"),
        parent_id: id("parentSpanId"),
        response_id: a.str("gen_ai.response.id").map(str::to_owned),
        weight: a.len() + if content.messages.is_empty() { 0 } else { 1000 },
        provider,
        model,
        system: content.system,
        messages: content.messages,
        tools: content.tools,
        reply: content.reply,
        usage,
        no_cache_fields,
        split,
    }))
}

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportReport,
    un: &mut Unmapped,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let label = format!("OpenTelemetry {}", common::file_name(path));
    let mut spans: Vec<ModelSpan> = Vec::new();
    common::each_line(path, |line| {
        let text = match line.text {
            Ok(t) => t,
            Err(col) => {
                let err = common::invalid(path, line.number, Some(col), "not UTF-8");
                return common::reject(opts, report, err);
            }
        };
        if text.trim().is_empty() {
            return Ok(());
        }
        let v: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                return common::reject(opts, report, common::invalid_json(path, line.number, &e));
            }
        };
        if v.get("resourceLogs").is_some() {
            un.add(
                "OpenTelemetry log records (per-message events; not read yet: export the spans with content)",
                1,
            );
            return Ok(());
        }
        let Some(resources) = v.get("resourceSpans").and_then(Value::as_array) else {
            let err = common::invalid(
                path,
                line.number,
                Some(1),
                "expected an OTLP JSON TracesData object (`resourceSpans`)",
            );
            return common::reject(opts, report, err);
        };
        for (r, res) in resources.iter().enumerate() {
            let scopes = res.get("scopeSpans").and_then(Value::as_array);
            for (s, scope) in scopes.into_iter().flatten().enumerate() {
                let list = scope.get("spans").and_then(Value::as_array);
                for (k, span) in list.into_iter().flatten().enumerate() {
                    match model_span(span, line.number, un) {
                        Ok(Some(m)) => spans.push(m),
                        Ok(None) => {}
                        Err(why) => {
                            let at = format!(
                                "at /resourceSpans/{r}/scopeSpans/{s}/spans/{k}/attributes: {why}"
                            );
                            common::reject(
                                opts,
                                report,
                                common::invalid(path, line.number, Some(1), &at),
                            )?;
                        }
                    }
                }
            }
        }
        Ok(())
    })?;
    let calls = one_per_response(one_per_call(spans, un), un);
    let mut convs = Conversations::default();
    for m in calls {
        if m.messages.is_empty() {
            un.add(
                "model-call spans without their messages (content capture off, or content in log records, which are not read): not replayable, dropped",
                1,
            );
            continue;
        }
        if m.no_cache_fields {
            un.add(
                "calls whose export records no cache tokens (priced as recorded, no cache read or write known)",
                1,
            );
        }
        if m.provider == ProviderKind::Anthropic && !m.messages.is_empty() {
            un.add(
                "Anthropic calls whose cache markers the export does not record (the status quo replays none; name yours with --baseline)",
                1,
            );
        }
        let call = Call {
            cleared: Vec::new(),
            messages: m.messages.len(),
            start_ms: (m.start_ns > 0).then_some(m.start_ns / 1_000_000),
            model: m.model,
            prompt: 0,
            markers: None,
            usage: m.usage,
        };
        let keys = m.messages.iter().map(message_key).collect();
        let req = NewCall {
            messages: m.messages,
            keys,
            meta: Vec::new(),
            prompt: Prompt {
                system: m.system,
                tools: m.tools,
            },
        };
        convs.add(m.provider, m.line, req, call, m.reply);
    }
    Ok((convs.builders, label))
}

/// A model span inside another (the anthropic SDK's own span as a child of
/// OpenInference's, which records no response id) is the same call: merged
/// into its parent ([`merge`]).
fn one_per_call(spans: Vec<ModelSpan>, un: &mut Unmapped) -> Vec<ModelSpan> {
    let index: HashMap<String, usize> = spans
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.span_id.is_empty())
        .map(|(i, m)| (m.span_id.clone(), i))
        .collect();
    let mut slots: Vec<Option<ModelSpan>> = spans.into_iter().map(Some).collect();
    for i in 0..slots.len() {
        let parent = slots[i]
            .as_ref()
            .and_then(|m| index.get(&m.parent_id).copied())
            .filter(|&p| p != i);
        let Some(p) = parent else { continue };
        if slots[p].is_none() {
            continue;
        }
        let Some(child) = slots[i].take() else {
            continue;
        };
        un.add(DUPLICATE, 1);
        if let Some(kept) = slots[p].as_mut() {
            merge(kept, child);
        }
    }
    slots.into_iter().flatten().collect()
}

const DUPLICATE: &str = "spans of a call already read (the anthropic SDK's own span beside or inside an instrumentor's; counted once)";

/// Keeps in `kept` the one of two spans of one call that carries the most,
/// completed by the other's response id and 5m/1h write split.
fn merge(kept: &mut ModelSpan, other: ModelSpan) {
    let split = other.split.or(kept.split);
    let response_id = kept
        .response_id
        .clone()
        .or_else(|| other.response_id.clone());
    let (start_ns, line) = (kept.start_ns.min(other.start_ns), kept.line.min(other.line));
    if other.weight > kept.weight {
        *kept = other;
    }
    kept.response_id = response_id;
    kept.start_ns = start_ns;
    kept.line = line;
    if let (Some((m5, h1)), Some(u)) = (split, kept.usage.as_mut()) {
        u.ephemeral_5m_input_tokens = Some(m5);
        u.ephemeral_1h_input_tokens = Some(h1);
        kept.split = Some((m5, h1));
    }
}

/// One call per response: spans sharing a `gen_ai.response.id` are one
/// call (the anthropic SDK's own span beside an instrumentor's); the one
/// carrying the most is kept, completed by the others' 5m/1h write split.
/// In start order.
fn one_per_response(spans: Vec<ModelSpan>, un: &mut Unmapped) -> Vec<ModelSpan> {
    let mut out: Vec<ModelSpan> = Vec::with_capacity(spans.len());
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for m in spans {
        let Some(id) = m.response_id.clone() else {
            out.push(m);
            continue;
        };
        match by_id.get(&id) {
            None => {
                by_id.insert(id, out.len());
                out.push(m);
            }
            Some(&i) => {
                un.add(DUPLICATE, 1);
                merge(&mut out[i], m);
            }
        }
    }
    out.sort_by_key(|m| (m.start_ns, m.line));
    out
}
