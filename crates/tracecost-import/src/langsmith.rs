//! Importer for LangSmith runs: the batches the LangSmith client sends
//! (`POST /runs/batch`: `{"post": [run, …], "patch": [run, …]}`, one per
//! line as a receiver or proxy logs them), and runs as LangSmith's API
//! returns them (`{"runs": [run, …]}` from a runs query, a list of runs, or
//! one run per line).
//!
//! A call is an `llm` run. A run sent in parts (a post at its start, a
//! patch at its end) is read as one, the patch's members overriding the
//! post's. Two shapes of llm run are read:
//!
//! - **LangChain chat models** (langchain-anthropic, langchain-openai, …):
//!   `inputs.messages` is a list of one list of LangChain-serialized
//!   messages (`{"lc": 1, "type": "constructor", "id": [… "HumanMessage"],
//!   "kwargs": {…}}`), the reply `outputs.generations[0][0].message`, both
//!   mapped as the LangChain importer maps messages ([`crate::langchain`]);
//!   the tools are `extra.invocation_params.tools`;
//! - **wrapped SDK clients** (`langsmith.wrappers.wrap_anthropic`,
//!   `wrap_openai`): `inputs` is the request's own parameters (`messages`,
//!   with the system prompt as a first `system` message, and `tools`), the
//!   reply the `outputs` message ([`crate::chat`]).
//!
//! **Usage** is LangChain's `usage_metadata` (on the reply message, or in
//! `outputs`, or copied to `extra.metadata`), whose `input_tokens`
//! **includes** the cache: uncached input = `input_tokens` −
//! `input_token_details.cache_read` − the writes, which are the
//! `ephemeral_5m_input_tokens` + `ephemeral_1h_input_tokens` split when
//! given (langchain-anthropic then zeroes `cache_creation`), else
//! `cache_creation`. Runs from the API that carry only `prompt_tokens` /
//! `completion_tokens` are priced as recorded, no cache known.
//!
//! The model is the reply's (`response_metadata.model_name`, `outputs.model`),
//! else the one asked for (`extra.metadata.ls_model_name`); the provider
//! `extra.metadata.ls_provider`, else the model's name. The session is the
//! thread LangSmith groups runs by (`extra.metadata.session_id`,
//! `thread_id` or `conversation_id`), else the run's trace; the project is
//! `session_name`. Chain, tool and other runs are passed over.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{
    self, Conversations, IdGen, NewCall, ReplyMeta, TraceBuilder, Unmapped, message_key,
};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::RawObject;
use tracecost_engine::message::Message;
use tracecost_engine::wire::{BlockRef, Marker};
use tracecost_trace::{Call, Prompt, RecordedUsage};

/// Imports LangSmith run batches and runs. Directories are expanded to
/// their `.json`/`.jsonl` files; files are read in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::Langsmith.import(inputs, opts)
}

/// What [`super::InputFormat::Langsmith`] reads, for the loop every log
/// importer shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "llm run(s)",
    nothing_found: "LangSmith llm runs with their inputs",
    read,
    first: None,
    csv: false,
};

const GENERATED_IDS: &str = "call_langsmith_";

/// Whether a JSON object is a LangSmith record: a batch, a page of runs,
/// or one run.
pub(crate) fn is_langsmith(o: &serde_json::Map<String, Value>) -> bool {
    let run = |v: &Value| {
        v.get("run_type").and_then(Value::as_str).is_some()
            && (v.get("id").is_some() || v.get("trace_id").is_some())
    };
    for key in ["post", "patch", "runs"] {
        if let Some(list) = o.get(key).and_then(Value::as_array) {
            return list.first().is_some_and(run);
        }
    }
    run(&Value::Object(o.clone()))
}

/// One run, from its parts.
struct Run {
    line: usize,
    at: String,
    /// The run's members, but for `inputs.messages`.
    run: serde_json::Map<String, Value>,
    /// Its `inputs.messages`, shared with the file's other runs (each llm
    /// run resends the conversation): a list of messages (a wrapped
    /// client's), or of lists (a chat model's prompts).
    messages: Option<Vec<Shared>>,
}

/// An item of `inputs.messages`: a message, or a list of them.
#[derive(PartialEq)]
enum Shared {
    One(Arc<Value>),
    List(Vec<Arc<Value>>),
}

impl Run {
    /// The run as sent, its messages back in place (a copy of them, for
    /// the time it takes to map the run).
    fn value(self) -> Value {
        let mut run = Value::Object(self.run);
        if let Some(items) = self.messages {
            let items = items
                .iter()
                .map(|i| match i {
                    Shared::One(m) => (**m).clone(),
                    Shared::List(ms) => common::unshared(ms),
                })
                .collect();
            run["inputs"]["messages"] = Value::Array(items);
        }
        run
    }
}

/// What the note counts for a run that shares its id with an earlier,
/// different one.
const SHARED_ID: &str = "LangSmith runs sharing their id with an earlier, different one (another trace, start time or input messages): kept as runs of their own";

impl Run {
    /// Whether a part (`o`, its `inputs.messages` taken out) describes
    /// another run than the parts read so far: it names another trace,
    /// start time or input messages. A run's post and patch agree on
    /// what both give.
    fn other_run(&self, o: &serde_json::Map<String, Value>, messages: Option<&[Shared]>) -> bool {
        let differs = |k: &str| {
            let theirs = o.get(k).filter(|v| !v.is_null());
            matches!((self.run.get(k).filter(|v| !v.is_null()), theirs), (Some(a), Some(b)) if a != b)
        };
        let other_messages = matches!(
            (self.messages.as_deref(), messages),
            (Some(a), Some(b)) if a != b
        );
        differs("trace_id") || differs("start_time") || other_messages
    }
}

#[derive(Default)]
struct Read {
    runs: Vec<Run>,
    by_id: HashMap<String, usize>,
    interner: common::Interner,
}

impl Read {
    /// Takes a run (or a part of one) in, moving its members: an llm
    /// run's inputs are its whole conversation.
    fn run(&mut self, v: Value, line: usize, at: String, un: &mut Unmapped) {
        let Value::Object(mut o) = v else { return };
        let messages = o
            .get_mut("inputs")
            .and_then(Value::as_object_mut)
            .and_then(|i| i.remove("messages"));
        let messages = match messages {
            Some(Value::Array(items)) => Some(
                items
                    .into_iter()
                    .map(|item| match item {
                        Value::Array(ms) => Shared::List(self.interner.share_list(ms)),
                        m => Shared::One(self.interner.share(m)),
                    })
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        };
        let id = o.get("id").and_then(Value::as_str).map(str::to_owned);
        let known = id.as_ref().and_then(|id| self.by_id.get(id)).copied();
        let other = known.is_some_and(|i| self.runs[i].other_run(&o, messages.as_deref()));
        if other {
            un.add(SHARED_ID, 1);
        }
        let i = match known.filter(|_| !other) {
            Some(i) => i,
            None => {
                if let Some(id) = id {
                    self.by_id.insert(id, self.runs.len());
                }
                self.runs.push(Run {
                    line,
                    at,
                    run: serde_json::Map::new(),
                    messages: None,
                });
                self.runs.len() - 1
            }
        };
        if messages.is_some() {
            self.runs[i].messages = messages;
        }
        let into = &mut self.runs[i].run;
        for (k, v) in o {
            let empty = v.is_null() || v.as_object().is_some_and(serde_json::Map::is_empty);
            if !empty || !into.contains_key(&k) {
                into.insert(k, v);
            }
        }
    }

    fn record(&mut self, v: &RawValue, line: usize, un: &mut Unmapped) -> Result<(), String> {
        let mut v: Value = serde_json::from_str(v.get()).map_err(|e| e.to_string())?;
        let mut any = false;
        for key in ["post", "patch", "runs"] {
            if let Some(Value::Array(list)) = v.get_mut(key).map(Value::take) {
                any = true;
                for (i, r) in list.into_iter().enumerate() {
                    self.run(r, line, format!("/{key}/{i}"), un);
                }
            }
        }
        if !any {
            if v.get("run_type").is_none() {
                return Err(
                    "expected a LangSmith run batch (`post`/`patch`), a page of runs (`runs`) or a run"
                        .to_owned(),
                );
            }
            self.run(v, line, String::new(), un);
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
    let label = format!("LangSmith {}", common::file_name(path));
    let mut found = Read::default();
    common::each_file_record(
        path,
        opts,
        report,
        "expected a list of LangSmith runs or run batches",
        |v, line| found.record(v, line, un),
    )?;
    let mut runs: Vec<(Option<u64>, Run)> = found
        .runs
        .into_iter()
        .filter(|r| r.run.get("run_type").and_then(Value::as_str) == Some("llm"))
        .map(|r| (time(r.run.get("start_time")), r))
        .collect();
    // A message no run holds any more is freed as they are read.
    drop(found.interner);
    runs.sort_by_key(|(t, r)| (t.unwrap_or(0), r.line));
    let mut convs = Conversations::default();
    let mut ids = IdGen::new(GENERATED_IDS);
    for (start_ms, r) in runs {
        let (line, at) = (r.line, r.at.clone());
        if let Err(why) = call_of(r, start_ms, &mut convs, &mut ids, un) {
            let at = if at.is_empty() { "/".to_owned() } else { at };
            let why = format!("at {at}: {why}");
            common::reject(opts, report, common::invalid(path, line, Some(1), &why))?;
        }
    }
    Ok((convs.builders, label))
}

fn time(v: Option<&Value>) -> Option<u64> {
    let s = v?.as_str()?;
    crate::time::parse_rfc3339_ms(s).or_else(|| {
        // The Python client writes naive UTC times (no offset) at times.
        crate::time::parse_rfc3339_ms(&format!("{s}Z"))
    })
}

/// A path of members and indices into a JSON value.
fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| match k.parse::<usize>() {
        Ok(i) => v.get(i),
        Err(_) => v.get(*k),
    })
}

/// A LangChain-serialized message (`{"lc": 1, "type": "constructor",
/// "id": […, "AIMessage"], "kwargs": {…}}`) as `messages_to_dict` writes
/// it (`{"type": "ai", "data": {…}}`), which the LangChain importer maps.
/// Other values are returned as they are.
fn as_message_dict(v: &Value) -> Value {
    let Some(kwargs) = v.get("kwargs").filter(|_| v.get("lc").is_some()) else {
        return v.clone();
    };
    let class = v
        .get("id")
        .and_then(Value::as_array)
        .and_then(|id| id.last())
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = kwargs
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| {
            match class.trim_end_matches("Chunk") {
                "SystemMessage" => "system",
                "HumanMessage" => "human",
                "AIMessage" => "ai",
                "ToolMessage" => "tool",
                "ChatMessage" => "chat",
                _ => "",
            }
            .to_owned()
        });
    serde_json::json!({"type": kind, "data": kwargs})
}

/// What one llm run's request and reply map to.
struct Mapped {
    messages: Vec<Message>,
    prompt: Prompt,
    markers: Option<Vec<Marker>>,
    reply: Option<Message>,
    meta: ReplyMeta,
}

fn call_of(
    r: Run,
    start_ms: Option<u64>,
    convs: &mut Conversations,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<(), String> {
    let line = r.line;
    let run = r.value();
    let meta = at(&run, &["extra", "metadata"]);
    let named_model = meta
        .and_then(|m| m.get("ls_model_name"))
        .or_else(|| at(&run, &["inputs", "model"]))
        .or_else(|| at(&run, &["extra", "invocation_params", "model"]))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let named_provider = meta
        .and_then(|m| m.get("ls_provider"))
        .and_then(Value::as_str)
        .and_then(provider_named);
    let messages = at(&run, &["inputs", "messages"]).and_then(Value::as_array);
    let Some(messages) = messages.filter(|ms| !ms.is_empty()) else {
        un.add(
            "LangSmith llm runs without input messages (not replayable, dropped)",
            1,
        );
        return Ok(());
    };
    let lists_of_messages = messages.first().is_some_and(Value::is_array);
    let mapped = if lists_of_messages {
        chat_model_run(&run, messages, ids, un)
    } else {
        let provider =
            named_provider.or_else(|| named_model.as_deref().and_then(common::provider_of_model));
        wrapped_run(&run, messages, provider, ids, un)?
    };
    let Some(mut m) = mapped else {
        return Ok(());
    };
    let model = m.meta.model.clone().or(named_model);
    let Some(provider) =
        named_provider.or_else(|| model.as_deref().and_then(common::provider_of_model))
    else {
        un.add(
            "LangSmith llm runs whose provider is not one tracecost simulates (dropped)",
            1,
        );
        return Ok(());
    };
    if m.meta.usage.is_none() && !m.meta.malformed {
        m.meta.usage = fallback_usage(&run, un);
    }
    let call = Call {
        cleared: Vec::new(),
        compacted: None,
        messages: m.messages.len(),
        start_ms,
        model,
        prompt: 0,
        markers: m.markers,
        usage: m.meta.usage.map(Box::new),
    };
    let keys = m.messages.iter().map(message_key).collect();
    let new = NewCall {
        messages: m.messages,
        keys,
        meta: Vec::new(),
        prompt: m.prompt,
    };
    let session = ["session_id", "thread_id", "conversation_id"]
        .iter()
        .find_map(|k| meta.and_then(|m| m.get(*k)).and_then(Value::as_str))
        .or_else(|| run.get("trace_id").and_then(Value::as_str))
        .filter(|s| !s.is_empty());
    let project = run.get("session_name").and_then(Value::as_str);
    let before = convs.builders.len();
    convs.add_in_session(provider, session, line, new, call, m.reply);
    if convs.builders.len() > before
        && let Some(b) = convs.builders.last_mut()
    {
        b.project = project.map(str::to_owned);
    }
    Ok(())
}

fn provider_named(name: &str) -> Option<ProviderKind> {
    match name {
        "anthropic" => Some(ProviderKind::Anthropic),
        "openai" | "azure" | "azure_openai" => Some(ProviderKind::OpenAi),
        "google_genai" | "google_vertexai" | "google" => Some(ProviderKind::Google),
        "amazon_bedrock" | "bedrock" | "bedrock_converse" => Some(ProviderKind::BedrockConverse),
        _ => None,
    }
}

/// A LangChain chat model's run: the first list of serialized messages,
/// then the reply generation; the tools from the invocation parameters.
fn chat_model_run(
    run: &Value,
    lists: &[Value],
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Option<Mapped> {
    if lists.len() > 1 {
        un.add("LangSmith llm runs of several prompts (the first read)", 1);
    }
    let mut items: Vec<Value> = lists
        .first()?
        .as_array()?
        .iter()
        .map(as_message_dict)
        .collect();
    let n = items.len();
    let reply = at(run, &["outputs", "generations", "0", "0", "message"]);
    if let Some(reply) = reply {
        items.push(as_message_dict(reply));
    }
    let raws: Vec<Box<RawValue>> = items
        .iter()
        .filter_map(|v| RawValue::from_string(v.to_string()).ok())
        .collect();
    let refs: Vec<&RawValue> = raws.iter().map(AsRef::as_ref).collect();
    let mut mapped = crate::langchain::map_list(&refs, ids, un);
    let has_reply = reply.is_some() && mapped.ends_with_ai && mapped.messages.len() > n.min(1);
    let (reply, meta) = if has_reply {
        (
            mapped.messages.pop(),
            mapped.meta.pop().flatten().unwrap_or_default(),
        )
    } else {
        (None, ReplyMeta::default())
    };
    if mapped.messages.is_empty() {
        un.add("requests with no conversation messages (no call)", 1);
        return None;
    }
    let count = mapped.messages.len();
    let mut markers: Vec<Marker> = mapped
        .markers
        .into_iter()
        .filter(|m| !matches!(m.at, BlockRef::Message { message, .. } if message >= count))
        .collect();
    common::cap_markers(&mut markers, un);
    let tools = at(run, &["extra", "invocation_params", "tools"])
        .map(|t| crate::chat::tools(t, un))
        .unwrap_or_default();
    Some(Mapped {
        messages: mapped.messages,
        prompt: Prompt {
            system: mapped.system,
            tools,
        },
        markers: Some(markers),
        reply,
        meta,
    })
}

/// A wrapped SDK client's run: the request's own parameters, the reply
/// message flattened into `outputs`.
fn wrapped_run(
    run: &Value,
    messages: &[Value],
    provider: Option<ProviderKind>,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<Option<Mapped>, String> {
    let dialect = crate::chat::dialect_for(provider, messages);
    let tools = at(run, &["inputs", "tools"]);
    let Some(req) = crate::chat::request(dialect, messages, tools, "/inputs/messages", ids, un)?
    else {
        return Ok(None);
    };
    let outputs = run
        .get("outputs")
        .filter(|o| o.as_object().is_some_and(|o| !o.is_empty()));
    let reply = outputs.and_then(|o| crate::chat::reply(o, ids, un));
    let meta = outputs.map(|o| reply_meta(o, un)).unwrap_or_default();
    Ok(Some(Mapped {
        messages: req.messages,
        prompt: req.prompt,
        markers: (dialect == crate::chat::Dialect::Anthropic).then_some(req.markers),
        reply,
        meta,
    }))
}

/// The model and usage of a wrapped client's `outputs`, read as the
/// LangChain importer reads a reply's (`usage_metadata`, and the model as
/// `response_metadata.model_name`).
fn reply_meta(outputs: &Value, un: &mut Unmapped) -> ReplyMeta {
    let mut data = serde_json::Map::new();
    if let Some(u) = outputs.get("usage_metadata") {
        data.insert("usage_metadata".into(), u.clone());
    }
    if let Some(m) = outputs.get("model").and_then(Value::as_str) {
        data.insert(
            "response_metadata".into(),
            serde_json::json!({ "model_name": m }),
        );
    }
    match RawObject::from_json(&Value::Object(data).to_string()) {
        Ok(o) => crate::langchain::reply_meta(&o, un),
        Err(_) => ReplyMeta::default(),
    }
}

/// Usage where the reply carries none: `extra.metadata.usage_metadata`,
/// else the run's own `prompt_tokens` / `completion_tokens` (priced as
/// recorded, no cache known).
fn fallback_usage(run: &Value, un: &mut Unmapped) -> Option<RecordedUsage> {
    if let Some(u) = at(run, &["extra", "metadata", "usage_metadata"]) {
        let meta = reply_meta(&serde_json::json!({ "usage_metadata": u }), un);
        if meta.usage.is_some() || meta.malformed {
            return meta.usage;
        }
    }
    let mut c = common::Counts::default();
    let (input, output) = (
        c.of(run.get("prompt_tokens")),
        c.of(run.get("completion_tokens")),
    );
    if c.malformed() {
        return c.finish(None, un);
    }
    if input.is_none() && output.is_none() {
        return None;
    }
    un.add(
        "LangSmith llm runs with only their prompt and completion token counts (priced as recorded, no cache read or write known)",
        1,
    );
    common::finish_usage(
        RecordedUsage {
            input_tokens: input,
            output_tokens: output,
            ..RecordedUsage::default()
        },
        un,
    )
}
