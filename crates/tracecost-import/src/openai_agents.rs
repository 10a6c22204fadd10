//! Importer for the OpenAI Agents SDK's trace exports: the bodies its
//! exporter sends to OpenAI's trace ingest (`{"data": [trace, span, …]}`,
//! one per line as a proxy or receiver logs them), and the objects a
//! tracing processor writes (`trace.export()` / `span.export()`, one per
//! line), or a list of them.
//!
//! A call is a `generation` span (the Chat Completions model, and LiteLLM
//! models): its `span_data.input` is the chat messages sent (OpenAI's Chat
//! shape, whatever the provider: the SDK converts), `output` the reply,
//! `model` the model asked for, and `usage` the tokens. The usage's
//! `input_tokens` **includes** the cache: uncached input = `input_tokens`
//! − `input_tokens_details.cached_tokens` − `cache_write_tokens` (the
//! ingest nests the details under `details`). The start is `started_at`,
//! the session the trace's `group_id` (the SDK's link between the traces
//! of one conversation), else the trace.
//!
//! **Response spans cannot be replayed.** With the default Responses
//! model the SDK exports a `response` span holding only the response id
//! (and, outside OpenAI's ingest, the usage): no model and no input. Such
//! spans are counted and said; an export holding only them gives no
//! trace, with what to do instead ([`RESPONSE_SPANS`]). Tool definitions
//! are not exported (the `agent` span names them only): calls replay
//! without them, and the summary says so.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{self, Conversations, IdGen, NewCall, TraceBuilder, Unmapped, message_key};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use crate::chat::Dialect;
use tracecost_engine::cache::ProviderKind;
use tracecost_trace::{Call, RecordedUsage};

/// Imports OpenAI Agents SDK trace exports. Directories are expanded to
/// their `.json`/`.jsonl` files; files are read in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::OpenaiAgents.import(inputs, opts)
}

/// What [`super::InputFormat::OpenaiAgents`] reads, for the loop every log
/// importer shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "generation(s)",
    nothing_found: "OpenAI Agents SDK generation spans",
    read,
    first: None,
    csv: false,
};

/// Why a `response` span is not read, and what to do instead.
const RESPONSE_SPANS: &str = "OpenAI Agents SDK response spans: they hold only a response id and usage, not the model or the input, so they cannot be replayed; run the agent with OpenAIChatCompletionsModel (its generation spans carry the input), or log the Responses API requests and responses and import those (tracecost reads Responses logs), or trace it with an OpenTelemetry instrumentation that records content";

const NO_TOOLS: &str = "OpenAI Agents SDK calls whose tool definitions the export does not hold (only their names): replayed without them";

/// How ids generated for tool calls that have none start.
const GENERATED_IDS: &str = "call_agents_";

/// Whether a JSON object is an Agents SDK export: an ingest body, or one
/// exported trace or span.
pub(crate) fn is_agents_export(o: &serde_json::Map<String, Value>) -> bool {
    let item = |v: &Value| {
        matches!(
            v.get("object").and_then(Value::as_str),
            Some("trace" | "trace.span")
        )
    };
    match o.get("data").and_then(Value::as_array) {
        Some(items) => items.first().is_some_and(item),
        None => {
            item(&Value::Object(o.clone()))
                && (o.contains_key("span_data") || o.contains_key("workflow_name"))
        }
    }
}

/// One generation span.
struct Generation {
    line: usize,
    at: String,
    trace_id: String,
    start_ms: Option<u64>,
    /// Its `span_data`, but for the input.
    span: Value,
    /// Its `input`, shared with the file's other generations (each
    /// resends the conversation).
    input: Option<Vec<Arc<Value>>>,
}

#[derive(Default)]
struct Read {
    generations: Vec<Generation>,
    /// Trace id → its `group_id`.
    groups: HashMap<String, String>,
    interner: common::Interner,
}

impl Read {
    fn item(&mut self, v: &mut Value, line: usize, at: String, un: &mut Unmapped) {
        match v.get("object").and_then(Value::as_str) {
            Some("trace") => {
                if let (Some(id), Some(g)) = (
                    v.get("id").and_then(Value::as_str),
                    v.get("group_id").and_then(Value::as_str),
                ) {
                    self.groups.insert(id.to_owned(), g.to_owned());
                }
            }
            Some("trace.span") => {
                let kind = v.pointer("/span_data/type").and_then(Value::as_str);
                match kind {
                    Some("generation") => {
                        let mut span = v.get_mut("span_data").map(Value::take);
                        let input = match span.as_mut().and_then(Value::as_object_mut) {
                            Some(o) => match o.remove("input") {
                                Some(Value::Array(ms)) => Some(self.interner.share_list(ms)),
                                // Not a list: left in place, to be said so.
                                Some(other) => {
                                    o.insert("input".into(), other);
                                    None
                                }
                                None => None,
                            },
                            None => None,
                        };
                        self.generations.push(Generation {
                            line,
                            at,
                            trace_id: v
                                .get("trace_id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned(),
                            start_ms: v
                                .get("started_at")
                                .and_then(Value::as_str)
                                .and_then(crate::time::parse_rfc3339_ms),
                            span: span.unwrap_or(Value::Null),
                            input,
                        })
                    }
                    Some("response") => un.add(RESPONSE_SPANS, 1),
                    _ => {}
                }
            }
            _ => un.add(
                "OpenAI Agents SDK export items that are neither a trace nor a span (passed over)",
                1,
            ),
        }
    }

    fn record(&mut self, v: &RawValue, line: usize, un: &mut Unmapped) -> Result<(), String> {
        let mut v: Value = serde_json::from_str(v.get()).map_err(|e| e.to_string())?;
        if let Some(items) = v.get_mut("data").and_then(Value::as_array_mut) {
            for (i, item) in items.iter_mut().enumerate() {
                self.item(item, line, format!("/data/{i}"), un);
            }
            return Ok(());
        }
        match v.get("object") {
            Some(_) => self.item(&mut v, line, String::new(), un),
            None => {
                return Err(
                    "expected an OpenAI Agents SDK export: an ingest body (`data`), a trace or a span"
                        .to_owned(),
                );
            }
        }
        Ok(())
    }
}

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
    _shared: &mut common::Shared,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let label = format!("OpenAI Agents SDK {}", common::file_name(path));
    let mut found = Read::default();
    common::each_file_record(
        path,
        opts,
        report,
        "expected a list of OpenAI Agents SDK traces and spans",
        |v, line| found.record(v, line, un),
    )?;
    let Read {
        mut generations,
        groups,
        interner,
        ..
    } = found;
    // A message no generation holds any more is freed as they are read.
    drop(interner);
    generations.sort_by_key(|g| (g.start_ms.unwrap_or(0), g.line));
    let mut convs = Conversations::default();
    let mut ids = IdGen::new(GENERATED_IDS);
    for g in generations {
        let (line, at) = (g.line, g.at.clone());
        if let Err(why) = call_of(g, &groups, &mut convs, &mut ids, un) {
            let why = format!("at {}/span_data: {why}", at);
            common::reject(opts, report, common::invalid(path, line, Some(1), &why))?;
        }
    }
    Ok((convs.builders, label))
}

fn call_of(
    g: Generation,
    groups: &HashMap<String, String>,
    convs: &mut Conversations,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<(), String> {
    let input = g.input.as_deref().map(common::unshared);
    let Some(messages) = input.as_ref().and_then(Value::as_array) else {
        un.add(
            "OpenAI Agents SDK generation spans without their input (sensitive data off: not replayable, dropped)",
            1,
        );
        return Ok(());
    };
    let model = g
        .span
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let Some(provider) = model.as_deref().and_then(common::provider_of_model) else {
        un.add(
            "OpenAI Agents SDK generations whose model names no provider tracecost simulates (dropped)",
            1,
        );
        return Ok(());
    };
    let Some(req) =
        crate::chat::request(Dialect::OpenAi, messages, None, "/span_data/input", ids, un)?
    else {
        return Ok(());
    };
    un.add(NO_TOOLS, 1);
    let mut counts = common::Counts::default();
    let usage = match g.span.get("usage") {
        Some(u) if !u.is_null() => usage(u, &mut counts).map_err(|why| format!("usage: {why}"))?,
        _ => None,
    };
    let usage = counts.finish(usage, un);
    let reply = g
        .span
        .get("output")
        .and_then(|o| crate::chat::reply(o, ids, un));
    let call = Call {
        cleared: Vec::new(),
        compacted: None,
        messages: req.messages.len(),
        start_ms: g.start_ms,
        model,
        prompt: 0,
        markers: (provider == ProviderKind::OpenAi).then(Vec::new),
        usage: usage.map(Box::new),
    };
    let keys = req.messages.iter().map(message_key).collect();
    let new = NewCall {
        messages: req.messages,
        keys,
        meta: Vec::new(),
        prompt: req.prompt,
    };
    let session = groups
        .get(&g.trace_id)
        .map_or(g.trace_id.as_str(), String::as_str);
    let session = (!session.is_empty()).then_some(session);
    convs.add_in_session(provider, session, g.line, new, call, reply);
    Ok(())
}

/// The usage of a generation span: `input_tokens` includes the cache
/// reads (`input_tokens_details.cached_tokens`) and writes
/// (`cache_write_tokens`), which the ingest nests under `details`.
/// `None` when a count is malformed (left in `c`).
fn usage(u: &Value, c: &mut common::Counts) -> Result<Option<RecordedUsage>, String> {
    let details = u
        .get("input_tokens_details")
        .or_else(|| u.get("details").and_then(|d| d.get("input_tokens_details")));
    let input = c.of(u.get("input_tokens"));
    let output = c.of(u.get("output_tokens"));
    let read = c.of(details.and_then(|d| d.get("cached_tokens")));
    let write = c
        .of(details.and_then(|d| d.get("cache_write_tokens")))
        .filter(|&w| w > 0);
    if c.malformed() || (input.is_none() && output.is_none()) {
        return Ok(None);
    }
    common::split_included_input(input, read.or(Some(0)), write, output).map(Some)
}
