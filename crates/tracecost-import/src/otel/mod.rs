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
//! Log records (`LogsData` lines) are read where they hold a whole call:
//! the conventions' `gen_ai.client.inference.operation.details` event
//! carries the span's attributes (content and usage) and, sharing its
//! response id, counts once with it. The per-message events older
//! instrumentations emit (`gen_ai.user.message`, `gen_ai.choice`, …) are
//! the content of the span they name ([`events`]): an export's logs files
//! are read before its traces files, and a span without content attributes
//! takes its events' messages.
//!
//! **Sessions.** A call's `gen_ai.conversation.id` (OpenInference:
//! `session.id`) files its trace under that session; calls of different
//! sessions never extend each other.
//!
//! **Providers.** The provider the span names, else the one the model's
//! name tells; a call to a provider tracecost does not simulate is dropped
//! and counted, never priced under another's cache rules.

mod attrs;
mod events;
mod model_span;
mod openinference;
mod parts;
mod window;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use self::attrs::{Attrs, any_value};
use self::model_span::{DUPLICATE, ModelSpan};
use super::common::{self, Conversations, IdGen, SharedCall, TraceBuilder, Unmapped, message_key};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::Message;
use tracecost_trace::{Call, Prompt, RecordedUsage};

/// Imports OpenTelemetry (OTLP JSON) exports of model calls. Directories
/// are expanded to their `.json`/`.jsonl` files; files are read in path
/// order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::Otel.import(inputs, opts)
}

/// What [`super::InputFormat::Otel`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "call(s)",
    nothing_found: "model-call spans or inference-details events with their messages",
    read,
    first: Some(is_logs_file),
    csv: false,
};

/// Whether a file holds OTLP log records (`LogsData`), from its first
/// line's first member: a logs file is read before a traces file, so that
/// its per-message events are at hand when their spans are read.
fn is_logs_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..n]);
    let head = head.trim_start_matches(|c: char| c.is_whitespace() || c == '{' || c == '"');
    head.starts_with("resourceLogs")
}

/// The GenAI operations that call a model.
const MODEL_OPERATIONS: [&str; 3] = ["chat", "text_completion", "generate_content"];

/// The provider a span names (`gen_ai.provider.name`, the older
/// `gen_ai.system`, OpenInference's `llm.provider`), when tracecost
/// simulates it; `Err` holds a name it does not.
fn named_provider(name: &str) -> Result<ProviderKind, ()> {
    match name.to_ascii_lowercase().as_str() {
        "anthropic" | "gcp.vertex_ai.anthropic" => Ok(ProviderKind::Anthropic),
        "openai" | "azure.ai.openai" | "azure" => Ok(ProviderKind::OpenAi),
        "gcp.gemini" | "gcp.vertex_ai" | "gemini" | "google" | "vertex_ai" | "gcp.gen_ai" => {
            Ok(ProviderKind::Google)
        }
        "aws.bedrock" | "bedrock" => Ok(ProviderKind::BedrockConverse),
        _ => Err(()),
    }
}

/// The provider of a call: the one the span names, else the one its model
/// name tells ([`common::provider_of_model`]); `None` when neither tells
/// one tracecost simulates (the call is dropped and counted, never priced
/// under another provider's rules).
fn provider_of(name: Option<&str>, model: Option<&str>) -> Option<ProviderKind> {
    match name.map(named_provider) {
        Some(Ok(p)) => Some(p),
        _ => model.and_then(common::provider_of_model),
    }
}

/// The usage a span recorded, as [`span_usage`] and [`langfuse_usage`]
/// read it.
#[derive(Default)]
struct SpanUsage {
    /// The usage, when the span recorded any.
    usage: Option<RecordedUsage>,
    /// Whether the span records no cache figures at all (neither read nor
    /// write), as against a zero it wrote.
    no_cache_fields: bool,
    /// The cache write split by TTL (5 minutes, 1 hour), when recorded.
    split: Option<(u64, u64)>,
}

/// The usage a span recorded (`Err`: figures that contradict each other;
/// a malformed count is left in `c`, and the usage with it).
fn span_usage(a: &Attrs, c: &mut common::Counts) -> Result<SpanUsage, String> {
    let mut n = |k: &str| a.count(k, c);
    let (input, read, write, output) = match n("llm.token_count.prompt") {
        Some(prompt) if n("gen_ai.usage.input_tokens").is_none() => (
            Some(prompt),
            n("llm.token_count.prompt_details.cache_read"),
            n("llm.token_count.prompt_details.cache_write"),
            n("llm.token_count.completion"),
        ),
        _ => (
            n("gen_ai.usage.input_tokens"),
            n("gen_ai.usage.cache_read.input_tokens"),
            n("gen_ai.usage.cache_creation.input_tokens")
                .or_else(|| n("gen_ai.usage.cache_write.input_tokens")),
            n("gen_ai.usage.output_tokens"),
        ),
    };
    let split = match (
        n("anthropic.usage.cache_creation.ephemeral_5m_input_tokens"),
        n("anthropic.usage.cache_creation.ephemeral_1h_input_tokens"),
    ) {
        (None, None) => None,
        (m5, h1) => Some((m5.unwrap_or(0), h1.unwrap_or(0))),
    };
    if (input.is_none() && output.is_none()) || c.malformed() {
        return Ok(SpanUsage::default());
    }
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
    Ok(SpanUsage {
        usage: Some(u),
        no_cache_fields,
        split,
    })
}

/// Whether a log record carries a whole model call (the GenAI
/// conventions' `gen_ai.client.inference.operation.details` event, with
/// the span's attributes), rather than one message of one.
fn is_call_event(record: &Value) -> bool {
    record.get("eventName").and_then(Value::as_str)
        == Some("gen_ai.client.inference.operation.details")
}

/// Whether an OTLP `LogsData` object holds GenAI events: model-call
/// events ([`is_call_event`]) or per-message ones ([`events`]).
pub(crate) fn logs_hold_genai(logs: &Value) -> bool {
    log_records(logs).any(|(_, _, _, r)| is_call_event(r) || events::is_message_event(r))
}

/// The log records of a `LogsData` object, with their indices.
fn log_records(logs: &Value) -> impl Iterator<Item = (usize, usize, usize, &Value)> {
    let resources = logs.get("resourceLogs").and_then(Value::as_array);
    resources
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(r, res)| {
            let scopes = res.get("scopeLogs").and_then(Value::as_array);
            scopes
                .into_iter()
                .flatten()
                .enumerate()
                .flat_map(move |(s, scope)| {
                    let records = scope.get("logRecords").and_then(Value::as_array);
                    records
                        .into_iter()
                        .flatten()
                        .enumerate()
                        .map(move |(k, rec)| (r, s, k, rec))
                })
        })
}

/// A time in nanoseconds as OTLP JSON writes it (a string, or a number).
fn nanos(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
    .filter(|&n| n > 0)
}

/// The usage of a Langfuse generation span
/// (`langfuse.observation.usage_details`, in Langfuse's keys:
/// [`crate::langfuse::usage`]).
fn langfuse_usage(a: &Attrs, c: &mut common::Counts) -> Result<SpanUsage, String> {
    let Some(details) = a.json("langfuse.observation.usage_details") else {
        return Ok(SpanUsage::default());
    };
    let u = crate::langfuse::usage(&details, c)?;
    let no_cache = u.as_ref().is_some_and(|u| {
        u.cache_read_input_tokens.is_none() && u.cache_creation_input_tokens.is_none()
    });
    let split = u
        .as_ref()
        .and_then(|u| Some((u.ephemeral_5m_input_tokens?, u.ephemeral_1h_input_tokens?)));
    Ok(SpanUsage {
        usage: u,
        no_cache_fields: no_cache,
        split,
    })
}

/// The content of a Langfuse generation span: its
/// `langfuse.observation.input` (chat messages, [`crate::langfuse::request`])
/// and `langfuse.observation.output`.
fn langfuse_content(
    a: &Attrs,
    provider: Option<ProviderKind>,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<parts::Content, String> {
    let Some(input) = a.json("langfuse.observation.input") else {
        return Ok(parts::Content::default());
    };
    let Some(req) =
        crate::langfuse::request(provider, &input, "/langfuse.observation.input", ids, un)?
    else {
        return Ok(parts::Content::default());
    };
    let reply = a
        .json("langfuse.observation.output")
        .and_then(|o| crate::chat::reply(&o, ids, un));
    Ok(parts::Content {
        system: req.prompt.system,
        messages: req.messages,
        tools: req.prompt.tools,
        reply,
        markers: req.markers,
    })
}

/// A content's messages as shared ones, with their keys.
fn into_shared(mut c: parts::Content) -> (parts::Content, Vec<Arc<Message>>, Vec<u64>) {
    let messages = std::mem::take(&mut c.messages);
    let keys = messages.iter().map(message_key).collect();
    (c, messages.into_iter().map(Arc::new).collect(), keys)
}

/// Reads one span (or model-call log record), when it is a model call.
fn model_span(
    span: &Value,
    line: usize,
    ids: &mut IdGen,
    cache: &mut parts::MessageCache,
    shared: &mut common::Shared,
    un: &mut Unmapped,
) -> Result<Option<ModelSpan>, String> {
    let a = Attrs::of(span);
    let genai = a
        .str("gen_ai.operation.name")
        .is_some_and(|op| MODEL_OPERATIONS.contains(&op));
    let oi = a.str("openinference.span.kind") == Some("LLM");
    let langfuse = a.str("langfuse.observation.type") == Some("generation");
    if !genai && !oi && !langfuse {
        return Ok(None);
    }
    // A span's start; an event has only its own time, taken when the
    // call ended.
    let start_ns = nanos(span.get("startTimeUnixNano"))
        .or_else(|| nanos(span.get("timeUnixNano")))
        .or_else(|| nanos(span.get("observedTimeUnixNano")))
        .unwrap_or(0);
    let mut counts = common::Counts::default();
    let SpanUsage {
        usage,
        no_cache_fields,
        split,
    } = match langfuse {
        true => langfuse_usage(&a, &mut counts)?,
        false => span_usage(&a, &mut counts)?,
    };
    let mut usage = counts.finish(usage, un);
    // The GenAI conventions' OpenAI attribute: the tier that served it.
    common::openai_tier(a.str("openai.response.service_tier"), usage.as_mut(), un);
    let model = a
        .str("langfuse.observation.model.name")
        .or_else(|| a.str("gen_ai.response.model"))
        .or_else(|| a.str("gen_ai.request.model"))
        .or_else(|| a.str("llm.model_name"))
        .or_else(|| a.str("llm.request.model_name"))
        .map(str::to_owned);
    let provider = provider_of(
        a.str("gen_ai.provider.name")
            .or_else(|| a.str("gen_ai.system"))
            .or_else(|| a.str("llm.provider")),
        model.as_deref(),
    );
    let session = a
        .str("gen_ai.conversation.id")
        .or_else(|| a.str("session.id"))
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let id = |k: &str| span.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    // Its per-message events, read from a logs file (content the span
    // itself carries wins: the events then say it again).
    let events = match genai {
        true => shared
            .pending
            .remove(&events::key(&id("traceId"), &id("spanId"))),
        false => None,
    };
    if let Some(evs) = &events {
        let files: Vec<usize> = events::files(evs).collect();
        shared.completing.extend(files);
    }
    let (mut content, messages, keys) = if langfuse {
        into_shared(langfuse_content(&a, provider, ids, un)?)
    } else if genai && a.0.contains_key("gen_ai.input.messages") {
        parts::content(&a, cache, un)
    } else if oi {
        into_shared(openinference::content(&a, un))
    } else if let Some(events) = events {
        into_shared(events::content(&events, "/body", ids, un)?)
    } else {
        (parts::Content::default(), Vec::new(), Vec::new())
    };
    Ok(Some(ModelSpan {
        start_ns,
        line,
        span_ids: Some(id("spanId"))
            .filter(|s| !s.is_empty())
            .into_iter()
            .collect(),
        trace_id: id("traceId"),
        parent_id: id("parentSpanId"),
        response_id: a.str("gen_ai.response.id").map(str::to_owned),
        weight: a.len() + if messages.is_empty() { 0 } else { 1000 },
        bytes: a.text_bytes(),
        provider,
        model,
        session,
        system: std::mem::take(&mut content.system),
        messages,
        keys,
        tools: content.tools,
        reply: content.reply,
        markers: content.markers,
        usage,
        no_cache_fields,
        split,
    }))
}

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
    shared: &mut common::Shared,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let label = format!("OpenTelemetry {}", common::file_name(path));
    let mut spans = SpanReader {
        window: window::Window::new(window::WINDOW),
        sink: Sink::default(),
        ids: IdGen::new("call_otel_"),
        cache: parts::MessageCache::default(),
        trace_sessions: HashMap::new(),
    };
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
            let mut reject = |at: String| {
                common::reject(
                    opts,
                    report,
                    common::invalid(path, line.number, Some(1), &at),
                )
            };
            return spans.logs(&v, line.number, shared, un, &mut reject);
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
        let mut reject = |at: String| {
            common::reject(
                opts,
                report,
                common::invalid(path, line.number, Some(1), &at),
            )
        };
        spans.spans(resources, line.number, shared, un, &mut reject)
    })?;
    let SpanReader {
        mut window,
        mut sink,
        trace_sessions,
        ..
    } = spans;
    for m in window.drain() {
        sink.finish(m, shared, un);
    }
    // A trace's session named on another of its spans (Langfuse's root,
    // which ends after the calls) labels the traces it began.
    let Sink {
        convs: mut builders,
        origins,
    } = sink;
    for (b, trace) in builders.builders.iter_mut().zip(origins) {
        if b.session.is_none() {
            b.session = trace.and_then(|t| trace_sessions.get(&t).cloned());
        }
    }
    Ok((builders.builders, label))
}

/// Hands a line's place-named problem to the import's rule for damage
/// (an error, or counted and passed over).
type Reject<'r> = dyn FnMut(String) -> Result<(), ImportError> + 'r;

/// What reading a file's model spans keeps between lines: the window that
/// merges a call's two spans, the traces built, and the sessions the
/// traces' spans name (for the model spans that do not: Langfuse puts
/// `session.id` on the trace's root span only).
struct SpanReader {
    window: window::Window,
    sink: Sink,
    ids: IdGen,
    cache: parts::MessageCache,
    trace_sessions: HashMap<String, String>,
}

impl SpanReader {
    /// A record that may be a model call, pushed through the window;
    /// `false` when it is not one.
    fn model(
        &mut self,
        rec: &Value,
        line: usize,
        shared: &mut common::Shared,
        un: &mut Unmapped,
    ) -> Result<bool, String> {
        match model_span(rec, line, &mut self.ids, &mut self.cache, shared, un)? {
            Some(m) => {
                for out in self.window.push(m, un) {
                    self.sink.finish(out, shared, un);
                }
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// A line of OTLP logs: message events kept for their spans, model
    /// calls read, anything else counted.
    fn logs(
        &mut self,
        v: &Value,
        line: usize,
        shared: &mut common::Shared,
        un: &mut Unmapped,
        reject: &mut Reject<'_>,
    ) -> Result<(), ImportError> {
        for (r, s, k, rec) in log_records(v) {
            if events::is_message_event(rec) {
                if !events::keep(rec, shared.file, &mut shared.pending) {
                    un.add(EVENTS_WITHOUT_SPAN, 1);
                }
                continue;
            }
            if !is_call_event(rec) {
                un.add(OTHER_LOGS, 1);
                continue;
            }
            match self.model(rec, line, shared, un) {
                Ok(true) => {}
                Ok(false) => un.add(OTHER_LOGS, 1),
                Err(why) => reject(format!(
                    "at /resourceLogs/{r}/scopeLogs/{s}/logRecords/{k}/attributes: {why}"
                ))?,
            }
        }
        Ok(())
    }

    /// A line of OTLP traces: every span's session noted, model calls
    /// read.
    fn spans(
        &mut self,
        resources: &[Value],
        line: usize,
        shared: &mut common::Shared,
        un: &mut Unmapped,
        reject: &mut Reject<'_>,
    ) -> Result<(), ImportError> {
        for (r, res) in resources.iter().enumerate() {
            let scopes = res.get("scopeSpans").and_then(Value::as_array);
            for (s, scope) in scopes.into_iter().flatten().enumerate() {
                let list = scope.get("spans").and_then(Value::as_array);
                for (k, span) in list.into_iter().flatten().enumerate() {
                    note_session(span, &mut self.trace_sessions);
                    if let Err(why) = self.model(span, line, shared, un) {
                        reject(format!(
                            "at /resourceSpans/{r}/scopeSpans/{s}/spans/{k}/attributes: {why}"
                        ))?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Where a file's calls go as they leave the window: their conversations,
/// and the trace of each conversation's first call.
#[derive(Default)]
struct Sink {
    convs: Conversations,
    /// Per conversation, in order: the OpenTelemetry trace it began in.
    origins: Vec<Option<String>>,
}

impl Sink {
    /// Adds one call to its conversation, or counts why it is not one.
    fn finish(&mut self, m: ModelSpan, shared: &mut common::Shared, un: &mut Unmapped) {
        if m.messages.is_empty() {
            un.add(
                    "model-call spans without their messages (content capture off, or its per-message log events in no logs file given): not replayable, dropped",
                    1,
                );
            return;
        }
        let Some(provider) = m.provider else {
            un.add(
                    "model calls to a provider tracecost does not simulate (named by gen_ai.provider.name, and not told by the model name): dropped",
                    1,
                );
            return;
        };
        // A call read from another file of this import (its span, where
        // this file holds its inference event, which names the span, or
        // the other way round) is counted there.
        let keys: Vec<String> = m
            .span_ids
            .iter()
            .map(|s| format!("{}/{s}", m.trace_id))
            .collect();
        if keys.iter().any(|k| shared.calls.contains(k)) {
            un.add(DUPLICATE, 1);
            return;
        }
        shared.calls.extend(keys);
        if m.no_cache_fields {
            un.add(
                    "calls whose export records no cache tokens (priced as recorded, no cache read or write known)",
                    1,
                );
        }
        if provider == ProviderKind::Anthropic && m.markers.is_none() {
            un.add(
                    "Anthropic calls whose cache markers the export does not record (the status quo replays none; name yours with --baseline)",
                    1,
                );
        }
        let call = Call {
            cleared: Vec::new(),
            compacted: None,
            messages: m.messages.len(),
            start_ms: (m.start_ns > 0).then_some(m.start_ns / 1_000_000),
            model: m.model,
            prompt: 0,
            markers: m.markers,
            usage: m.usage.map(Box::new),
        };
        let req = SharedCall {
            messages: m.messages,
            keys: m.keys,
            prompt: Prompt {
                system: m.system,
                tools: m.tools,
            },
            before: Vec::new(),
            call,
            reply: m.reply,
        };
        let before = self.convs.builders.len();
        self.convs
            .add_shared_in_session(provider, m.session.as_deref(), m.line, req);
        if self.convs.builders.len() > before {
            self.origins
                .push(Some(m.trace_id).filter(|t| !t.is_empty()));
        }
    }
}

/// Files a span's session (`session.id`, `gen_ai.conversation.id`) under
/// its trace.
fn note_session(span: &Value, sessions: &mut HashMap<String, String>) {
    let Some(trace) = span.get("traceId").and_then(Value::as_str) else {
        return;
    };
    if sessions.contains_key(trace) {
        return;
    }
    let attrs = span.get("attributes").and_then(Value::as_array);
    let session = attrs.into_iter().flatten().find_map(|kv| {
        let k = kv.get("key")?.as_str()?;
        matches!(
            k,
            "session.id" | "gen_ai.conversation.id" | "langfuse.session.id"
        )
        .then(|| any_value(kv.get("value")?))
        .flatten()
    });
    if let Some(Value::String(s)) = session.filter(|s| s.as_str().is_some_and(|s| !s.is_empty())) {
        sessions.insert(trace.to_owned(), s);
    }
}

const OTHER_LOGS: &str = "OpenTelemetry log records that are not GenAI events: not read";

const EVENTS_WITHOUT_SPAN: &str =
    "OpenTelemetry per-message log events that name no span (no traceId or spanId): not read";
