//! Importer for Langfuse generations: the ingestion batches the Langfuse
//! SDKs (v2) send (`{"batch": [{"type": "generation-create", "body": …},
//! …]}`, one per line as a receiver or proxy logs them) and the
//! observations of Langfuse's public API (`GET /api/public/observations`:
//! `{"data": [observation, …]}`, a list, or one observation per line, as
//! exported). Langfuse v3 and later send OpenTelemetry spans instead;
//! those are read by the OpenTelemetry importer ([`crate::otel`]).
//!
//! A call is a `GENERATION` observation. An observation sent in parts
//! (`generation-create` with the input, start and request model, then
//! `generation-update` with the output, end, response model and usage)
//! is read as one, later parts overriding earlier ones. Read from it:
//!
//! - **the request**: `input`, a list of chat messages or an object with
//!   `messages` (and `tools`), in the Anthropic or the OpenAI shape
//!   ([`crate::chat`]); Anthropic `cache_control` markers recorded in it
//!   become the call's markers;
//! - **the reply**: `output`;
//! - **the model**: `model` (the response's, when an update gives it);
//! - **the start**: `startTime`;
//! - **the session**: the `sessionId` of the observation's trace, when a
//!   `trace-create` event or a trace (`GET /api/public/traces`) in the
//!   same file names one, else the trace (`traceId`): calls of different
//!   sessions never join one conversation;
//! - **usage** ([`usage`]): the usage the client provided
//!   (`providedUsageDetails`, or `usageDetails` in ingestion events),
//!   else the one Langfuse stored (`usageDetails`). In Langfuse's own keys
//!   `input` **excludes** the cache: `input` is the uncached input,
//!   `input_cache_read` / `cache_read_input_tokens` / `input_cached_tokens`
//!   the reads, `input_cache_creation` / `cache_creation_input_tokens` (or
//!   the `input_cache_creation_5m` / `_1h` split) the writes. The OpenAI
//!   integration passes OpenAI's own usage through (`prompt_tokens`,
//!   which **includes** `prompt_tokens_details.cached_tokens`). A
//!   generation with only the deprecated `usage` (`input`/`output`/`total`)
//!   is priced as recorded with no cache read or write known.
//!
//! The provider follows the model's name; a generation whose model names
//! no provider tracecost simulates is dropped and counted. Other
//! observations (spans, events) and events (`sdk-log`, scores) are passed
//! over.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{
    self, Conversations, Counts, IdGen, NewCall, TraceBuilder, Unmapped, message_key,
};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_trace::{Call, RecordedUsage};

/// Imports Langfuse ingestion batches and API observations. Directories
/// are expanded to their `.json`/`.jsonl` files; files are read in path
/// order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::Langfuse.import(inputs, opts)
}

/// What [`super::InputFormat::Langfuse`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "generation(s)",
    nothing_found: "Langfuse generations with their input",
    read,
    first: None,
    csv: true,
};

/// How ids generated for OpenAI tool calls that have none start.
const GENERATED_IDS: &str = "call_langfuse_";

/// Whether a JSON object is a Langfuse record: an ingestion batch, an API
/// page of observations, or one observation.
pub(crate) fn is_langfuse(o: &serde_json::Map<String, Value>) -> bool {
    let event = |e: &Value| {
        e.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| EVENT_KINDS.iter().any(|k| t.starts_with(k)))
            && e.get("body").is_some()
    };
    if let Some(batch) = o.get("batch").and_then(Value::as_array) {
        return batch.iter().any(event);
    }
    if let Some(data) = o.get("data").and_then(Value::as_array) {
        return data.first().is_some_and(is_observation);
    }
    is_observation(&Value::Object(o.clone()))
}

const EVENT_KINDS: [&str; 5] = ["trace-", "generation-", "span-", "event-", "observation-"];

/// An observation of the API (`traceId`, `type`, `startTime`) or a row of
/// the blob-storage export (`trace_id`, `type`, `start_time`).
fn is_observation(v: &Value) -> bool {
    let api = v.get("traceId").is_some() && v.get("startTime").is_some();
    let export = v.get("trace_id").is_some() && v.get("start_time").is_some();
    (api || export)
        && v.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| OBSERVATION_TYPES.contains(&t))
}

const OBSERVATION_TYPES: [&str; 10] = [
    "GENERATION",
    "SPAN",
    "EVENT",
    "AGENT",
    "TOOL",
    "CHAIN",
    "RETRIEVER",
    "EVALUATOR",
    "EMBEDDING",
    "GUARDRAIL",
];

/// Whether a file's first line is the header of Langfuse's CSV export of
/// observations (the blob-storage export, or the UI's): it names
/// `trace_id`, `type`, `start_time` and `input`.
pub(crate) fn is_csv_header(line: &str) -> bool {
    let names: Vec<&str> = line
        .trim_end()
        .split(',')
        .map(|n| n.trim_matches('"'))
        .collect();
    ["id", "trace_id", "type", "start_time", "input"]
        .iter()
        .all(|n| names.contains(n))
}

/// The members of an export row that hold JSON (written as JSON text in
/// CSV, and `input` / `output` as JSON text in every export).
const JSON_COLUMNS: [&str; 6] = [
    "input",
    "output",
    "usage_details",
    "metadata",
    "cost_details",
    "tool_definitions",
];

/// A row of Langfuse's observations export (`observations_v2/` or
/// `observations/` in blob storage, JSON Lines or CSV; field names in
/// snake case, times as `YYYY-MM-DD HH:MM:SS.ffffff` in UTC, `input` and
/// `output` as JSON text) in the names and shapes of the API's
/// observations. `usage_details` is what Langfuse stored (in its keys,
/// `input` without the cache); the session is the enriched row's
/// `session_id`.
fn export_row(mut row: serde_json::Map<String, Value>) -> (Value, Option<(String, String)>) {
    for k in JSON_COLUMNS {
        let Some(Value::String(text)) = row.get(k) else {
            continue;
        };
        let t = text.trim_start();
        if t.starts_with('{') || t.starts_with('[') || t.starts_with('"') {
            if let Ok(v) = serde_json::from_str::<Value>(text) {
                row.insert(k.to_owned(), v);
            }
        } else if t.is_empty() {
            row.insert(k.to_owned(), Value::Null);
        }
    }
    let mut out = serde_json::Map::new();
    let session = match (row.get("trace_id"), row.get("session_id")) {
        (Some(Value::String(t)), Some(Value::String(s))) if !s.is_empty() => {
            Some((t.clone(), s.clone()))
        }
        _ => None,
    };
    for (k, v) in row {
        let name = match k.as_str() {
            "trace_id" => "traceId",
            "start_time" | "end_time" => {
                let name = if k == "start_time" {
                    "startTime"
                } else {
                    "endTime"
                };
                out.insert(name.into(), utc_time(v));
                continue;
            }
            "provided_model_name" => "model",
            "usage_details" => "usageDetails",
            "id" | "type" | "input" | "output" | "name" => k.as_str(),
            _ => continue,
        };
        out.insert(name.to_owned(), v);
    }
    (Value::Object(out), session)
}

/// An export's UTC time (`2024-05-29 13:46:19.963000`, no offset) as the
/// time parser reads it: with `Z` added where it names no zone.
fn utc_time(v: Value) -> Value {
    match v {
        Value::String(s) if crate::time::parse_rfc3339_ms(&s).is_none() => {
            let utc = format!("{s}Z");
            match crate::time::parse_rfc3339_ms(&utc) {
                Some(_) => Value::String(utc),
                None => Value::String(s),
            }
        }
        v => v,
    }
}

/// One generation, from its parts.
#[derive(Default)]
struct Generation {
    line: usize,
    /// The JSON pointer of its first part, for errors.
    at: String,
    trace_id: Option<String>,
    start_ms: Option<u64>,
    model: Option<String>,
    input: Option<Input>,
    output: Option<Value>,
    /// `providedUsageDetails`, or an ingestion event's `usageDetails`.
    provided: Option<Value>,
    /// `usageDetails` as Langfuse stored it (API observations).
    stored: Option<Value>,
    /// The deprecated `usage`.
    legacy: Option<Value>,
}

/// A generation's input, its messages shared with the file's other
/// generations ([`common::Interner`]: each resends the conversation).
#[derive(PartialEq)]
enum Input {
    /// A list of chat messages.
    List(Vec<Arc<Value>>),
    /// An object with `messages` (the OpenAI integration's), without them.
    Object(Vec<Arc<Value>>, Value),
    /// Anything else, as read.
    Other(Value),
}

impl Input {
    fn of(v: Value, interner: &mut common::Interner) -> Input {
        match v {
            Value::Array(ms) => Input::List(interner.share_list(ms)),
            Value::Object(mut o) if o.get("messages").is_some_and(Value::is_array) => {
                let Some(Value::Array(ms)) = o.remove("messages") else {
                    unreachable!("checked to be a list")
                };
                Input::Object(interner.share_list(ms), Value::Object(o))
            }
            v => Input::Other(v),
        }
    }

    /// The input as sent (a copy, for the time it takes to map it).
    fn value(&self) -> Value {
        match self {
            Input::List(ms) => common::unshared(ms),
            Input::Object(ms, rest) => {
                let mut o = rest.as_object().cloned().unwrap_or_default();
                o.insert("messages".into(), common::unshared(ms));
                Value::Object(o)
            }
            Input::Other(v) => v.clone(),
        }
    }
}

impl Generation {
    /// Takes the members one part (event body or observation) gives,
    /// moving them out of it (the input is the whole conversation, its
    /// messages shared through `interner`).
    fn take(
        &mut self,
        body: &mut Value,
        provided_key: &str,
        stored_key: Option<&str>,
        interner: &mut common::Interner,
    ) {
        let some = |slot: &mut Option<Value>, v: Option<Value>| {
            if v.is_some() {
                *slot = v;
            }
        };
        if let Some(t) = body.get("traceId").and_then(Value::as_str) {
            self.trace_id = Some(t.to_owned());
        }
        if let Some(ms) = body
            .get("startTime")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_rfc3339_ms)
        {
            self.start_ms = Some(ms);
        }
        if let Some(m) = body
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            self.model = Some(m.to_owned());
        }
        let mut get = |k: &str| body.get_mut(k).map(Value::take).filter(|v| !v.is_null());
        if let Some(input) = get("input") {
            self.input = Some(Input::of(input, interner));
        }
        some(&mut self.output, get("output"));
        some(&mut self.provided, get(provided_key).filter(non_empty));
        if let Some(k) = stored_key {
            some(&mut self.stored, get(k).filter(non_empty));
        }
        some(&mut self.legacy, get("usage").filter(non_empty));
    }
}

/// What the note counts for a generation that shares its id with an
/// earlier, different one.
const SHARED_ID: &str = "Langfuse generations sharing their id with an earlier, different one (another trace, start time or input): kept as calls of their own";

impl Generation {
    /// Whether `part` describes another call than the parts read so far:
    /// it names another trace, start time or input. Parts of one call
    /// (an ingestion event's create and updates, an observation read
    /// twice) agree on what both give.
    fn other_call(&self, part: &Value, interner: &mut common::Interner) -> bool {
        let trace = part.get("traceId").and_then(Value::as_str);
        if let (Some(mine), Some(theirs)) = (&self.trace_id, trace)
            && mine != theirs
        {
            return true;
        }
        let start = part
            .get("startTime")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_rfc3339_ms);
        if let (Some(mine), Some(theirs)) = (self.start_ms, start)
            && mine != theirs
        {
            return true;
        }
        match (&self.input, part.get("input").filter(|v| !v.is_null())) {
            (Some(mine), Some(theirs)) => *mine != Input::of(theirs.clone(), interner),
            _ => false,
        }
    }
}

fn non_empty(v: &Value) -> bool {
    v.as_object().is_some_and(|o| !o.is_empty())
}

/// What one file holds, read in one pass.
#[derive(Default)]
struct Read {
    generations: Vec<Generation>,
    by_id: HashMap<String, usize>,
    sessions: HashMap<String, String>,
    interner: common::Interner,
}

impl Read {
    /// The index of the generation of `id` that `part` (an event body or
    /// an observation) completes: a new one if none is known, or if the
    /// one known is another call ([`Generation::other_call`]; kept apart
    /// and counted, never merged).
    fn generation(
        &mut self,
        id: Option<&str>,
        part: &mut Value,
        line: usize,
        at: String,
        un: &mut Unmapped,
    ) -> usize {
        let known = id.and_then(|id| self.by_id.get(id).copied());
        if let Some(i) = known {
            if !self.generations[i].other_call(part, &mut self.interner) {
                return i;
            }
            un.add(SHARED_ID, 1);
        }
        if let Some(id) = id {
            self.by_id.insert(id.to_owned(), self.generations.len());
        }
        self.generations.push(Generation {
            line,
            at,
            ..Generation::default()
        });
        self.generations.len() - 1
    }

    fn session(&mut self, trace: &Value) {
        let (Some(id), Some(s)) = (
            trace.get("id").and_then(Value::as_str),
            trace.get("sessionId").and_then(Value::as_str),
        ) else {
            return;
        };
        self.sessions.insert(id.to_owned(), s.to_owned());
    }

    /// One event of an ingestion batch.
    fn event(&mut self, e: &mut Value, line: usize, at: String, un: &mut Unmapped) {
        let kind = e
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let Some(body) = e.get_mut("body") else {
            un.add("Langfuse ingestion events without a body (passed over)", 1);
            return;
        };
        let generation = match kind.as_str() {
            "generation-create" | "generation-update" => true,
            "observation-create" | "observation-update" => {
                body.get("type").and_then(Value::as_str) == Some("GENERATION")
            }
            "trace-create" => {
                self.session(body);
                false
            }
            _ => false,
        };
        if generation {
            let id = body.get("id").and_then(Value::as_str).map(str::to_owned);
            let i = self.generation(id.as_deref(), body, line, at, un);
            self.generations[i].take(body, "usageDetails", None, &mut self.interner);
        }
    }

    /// One row of the observations export ([`export_row`]).
    fn export_row(&mut self, row: serde_json::Map<String, Value>, line: usize, un: &mut Unmapped) {
        let (mut o, session) = export_row(row);
        if let Some((trace, session)) = session {
            self.sessions.entry(trace).or_insert(session);
        }
        self.observation(&mut o, line, String::new(), un);
    }

    /// One observation of the API (a GENERATION), or a trace.
    fn observation(&mut self, o: &mut Value, line: usize, at: String, un: &mut Unmapped) {
        if o.get("type").and_then(Value::as_str) == Some("GENERATION") {
            let id = o.get("id").and_then(Value::as_str).map(str::to_owned);
            let i = self.generation(id.as_deref(), o, line, at, un);
            let stored = Some("usageDetails");
            self.generations[i].take(o, "providedUsageDetails", stored, &mut self.interner);
        } else if o.get("type").is_none() && o.get("sessionId").is_some() {
            self.session(o);
        }
    }

    fn record(&mut self, v: &RawValue, line: usize, un: &mut Unmapped) -> Result<(), String> {
        let mut v: Value = serde_json::from_str(v.get()).map_err(|e| e.to_string())?;
        if let Some(batch) = v.get_mut("batch").and_then(Value::as_array_mut) {
            for (i, e) in batch.iter_mut().enumerate() {
                self.event(e, line, format!("/batch/{i}/body"), un);
            }
        } else if let Some(data) = v.get_mut("data").and_then(Value::as_array_mut) {
            for (i, o) in data.iter_mut().enumerate() {
                self.observation(o, line, format!("/data/{i}"), un);
            }
        } else if v.get("trace_id").is_some() && v.get("type").is_some() {
            if let Value::Object(row) = v {
                self.export_row(row, line, un);
            }
        } else if v.get("traceId").is_some() || v.get("sessionId").is_some() {
            self.observation(&mut v, line, String::new(), un);
        } else {
            return Err(
                "expected a Langfuse ingestion batch (`batch`), a page of observations (`data`) or an observation"
                    .to_owned(),
            );
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
    let label = format!("Langfuse {}", common::file_name(path));
    let mut found = Read::default();
    if is_csv(path) {
        common::each_csv_row(path, opts, report, |row, line| {
            found.export_row(row, line, un);
            Ok(())
        })?;
    } else {
        common::each_file_record(
            path,
            opts,
            report,
            "expected a list of Langfuse observations or ingestion batches",
            |v, line| found.record(v, line, un),
        )?;
    }
    let Read {
        mut generations,
        sessions,
        interner,
        ..
    } = found;
    // A message no generation holds any more is freed as they are read.
    drop(interner);
    generations.sort_by_key(|g| (g.start_ms.unwrap_or(0), g.line));
    let mut convs = Conversations::default();
    let mut ids = IdGen::new(GENERATED_IDS);
    for g in generations {
        match call_of(g, &sessions, &mut convs, &mut ids, un) {
            Ok(()) => {}
            Err((line, why)) => {
                common::reject(opts, report, common::invalid(path, line, Some(1), &why))?;
            }
        }
    }
    Ok((convs.builders, label))
}

/// Whether a file is CSV: by its extension, or its first line (an
/// observations export's header).
fn is_csv(path: &Path) -> bool {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
    {
        return true;
    }
    use std::io::BufRead;
    let mut first = String::new();
    std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .and_then(|mut r| r.read_line(&mut first))
        .is_ok_and(|_| is_csv_header(first.trim_start_matches('\u{feff}')))
}

/// Adds one generation's call to its conversation.
fn call_of(
    g: Generation,
    sessions: &HashMap<String, String>,
    convs: &mut Conversations,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<(), (usize, String)> {
    let fail = |why: String| {
        (
            g.line,
            format!("at {}: {why}", if g.at.is_empty() { "/" } else { &g.at }),
        )
    };
    let Some(input) = g.input.as_ref().map(Input::value) else {
        un.add(
            "Langfuse generations without their input (not replayable, dropped)",
            1,
        );
        return Ok(());
    };
    let Some(provider) = g.model.as_deref().and_then(common::provider_of_model) else {
        un.add(
            "Langfuse generations whose model names no provider tracecost simulates (dropped)",
            1,
        );
        return Ok(());
    };
    let base = format!("{}/input", g.at);
    let Some(req) = request(Some(provider), &input, &base, ids, un).map_err(fail)? else {
        return Ok(());
    };
    let mut counts = Counts::default();
    let usage = match (&g.provided, &g.stored, &g.legacy) {
        (Some(u), _, _) | (None, Some(u), _) => {
            usage(u, &mut counts).map_err(|why| fail(format!("usageDetails: {why}")))?
        }
        (None, None, Some(u)) => {
            un.add(
                "Langfuse generations with only the deprecated `usage` (priced as recorded, no cache read or write known)",
                1,
            );
            legacy_usage(u, &mut counts)
        }
        (None, None, None) => None,
    };
    let usage = counts.finish(usage, un);
    let reply = g
        .output
        .as_ref()
        .and_then(|o| crate::chat::reply(o, ids, un));
    let markers = req.markers;
    let call = Call {
        cleared: Vec::new(),
        compacted: None,
        messages: req.messages.len(),
        start_ms: g.start_ms,
        model: g.model,
        prompt: 0,
        markers,
        usage: usage.map(Box::new),
    };
    let keys = req.messages.iter().map(message_key).collect();
    let new = NewCall {
        messages: req.messages,
        keys,
        meta: Vec::new(),
        prompt: req.prompt,
    };
    // A trace's session when the file names it; else the trace itself: two
    // Langfuse traces are two runs unless a session joins them (an eval
    // sending one prompt a hundred times is a hundred conversations).
    let session = g
        .trace_id
        .as_deref()
        .map(|t| sessions.get(t).map_or(t, String::as_str));
    convs.add_in_session(provider, session, g.line, new, call, reply);
    Ok(())
}

/// The request a generation's `input` holds: a list of chat messages, or
/// an object with `messages` and `tools` (the OpenAI integration's). Its
/// markers are `Some` for Anthropic-shaped messages, which carry their
/// `cache_control` as sent. `Ok(None)`: not a chat request (counted).
pub(crate) fn request(
    provider: Option<ProviderKind>,
    input: &Value,
    base: &str,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<Option<Generated>, String> {
    let (messages, tools) = match input {
        Value::Array(ms) => (ms.as_slice(), None),
        Value::Object(o) if o.get("messages").is_some_and(Value::is_array) => (
            o.get("messages")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice),
            o.get("tools"),
        ),
        _ => {
            un.add(
                "Langfuse generations whose input is not a list of chat messages (dropped)",
                1,
            );
            return Ok(None);
        }
    };
    let dialect = crate::chat::dialect_for(provider, messages);
    let anthropic = dialect == crate::chat::Dialect::Anthropic;
    Ok(
        crate::chat::request(dialect, messages, tools, base, ids, un)?.map(|r| Generated {
            messages: r.messages,
            prompt: r.prompt,
            markers: anthropic.then_some(r.markers),
        }),
    )
}

/// A generation's request, ready for its call.
pub(crate) struct Generated {
    pub messages: Vec<tracecost_engine::message::Message>,
    pub prompt: tracecost_trace::Prompt,
    pub markers: Option<Vec<tracecost_engine::wire::Marker>>,
}

/// A count in a usage object, at a flat key or a dotted path
/// (`prompt_tokens_details.cached_tokens`, nested or flattened, as the
/// SDKs and the server write it); [`common::token_count`]'s rule, a
/// malformed count left in `c`.
fn count(u: &Value, key: &str, c: &mut Counts) -> Option<u64> {
    if let Some(v) = u.get(key) {
        return c.of(Some(v));
    }
    let (head, rest) = key.split_once('.')?;
    count(u.get(head)?, rest, c)
}

fn first(u: &Value, keys: &[&str], c: &mut Counts) -> Option<u64> {
    keys.iter().find_map(|k| count(u, k, c))
}

/// Recorded usage from a Langfuse usage-details object (the rule in the
/// module's documentation); `None` when a count is malformed (left in
/// `c`, for the caller to count).
pub(crate) fn usage(u: &Value, c: &mut Counts) -> Result<Option<RecordedUsage>, String> {
    if let Some(prompt) = count(u, "prompt_tokens", c) {
        // OpenAI's own usage, passed through: the prompt includes the reads.
        let read = count(u, "prompt_tokens_details.cached_tokens", c);
        let output = count(u, "completion_tokens", c);
        if c.malformed() {
            return Ok(None);
        }
        return common::split_included_input(Some(prompt), read.or(Some(0)), None, output)
            .map(Some);
    }
    let input = count(u, "input", c);
    let output = count(u, "output", c);
    let read = first(
        u,
        &[
            "input_cache_read",
            "cache_read_input_tokens",
            "input_cached_tokens",
            "cache_read",
        ],
        c,
    );
    let m5 = count(u, "input_cache_creation_5m", c);
    let h1 = count(u, "input_cache_creation_1h", c);
    let write = first(
        u,
        &[
            "input_cache_creation",
            "cache_creation_input_tokens",
            "input_cache_write",
        ],
        c,
    )
    .or_else(|| {
        (m5.is_some() || h1.is_some()).then(|| m5.unwrap_or(0).saturating_add(h1.unwrap_or(0)))
    });
    if c.malformed() || (input.is_none() && output.is_none() && read.is_none() && write.is_none()) {
        return Ok(None);
    }
    let known = read.is_some() || write.is_some();
    Ok(Some(RecordedUsage {
        input_tokens: input,
        cache_read_input_tokens: read.or(known.then_some(0)),
        cache_creation_input_tokens: write.or(known.then_some(0)),
        ephemeral_5m_input_tokens: m5.or(h1.map(|_| 0)),
        ephemeral_1h_input_tokens: h1.or(m5.map(|_| 0)),
        output_tokens: output,
        modifiers: Default::default(),
        reasoning_tokens: None,
    }))
}

/// The deprecated `usage` (`input` / `output`): as recorded, no cache
/// figure.
fn legacy_usage(u: &Value, c: &mut Counts) -> Option<RecordedUsage> {
    Some(RecordedUsage {
        input_tokens: count(u, "input", c),
        output_tokens: count(u, "output", c),
        ..RecordedUsage::default()
    })
}
