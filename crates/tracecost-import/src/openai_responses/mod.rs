//! Importer for OpenAI Responses API requests and responses
//! (`POST /v1/responses`), mapped to Anthropic shapes so they can be
//! priced and replayed like any other trace.
//!
//! A file holds what the Chat Completions importer reads, with Responses
//! bodies: one request body `{"model", "instructions"?, "input", "tools"?}`
//! (one call), a JSON list of request bodies or `{"request": …,
//! "response": …}` pairs, or JSON Lines of either (one call per line);
//! recorders' wrappers (`{"body": …, "status_code": …}`) are unwrapped as
//! there. A file whose first line is a JSON value of its own is read a line
//! at a time (a log may be larger than memory); any other file is one
//! document.
//!
//! Mapping:
//!
//! - `instructions` (a string) → the prompt's system text, followed by
//!   the developer / system messages that open `input`;
//! - `input`: a string is one user message; a list of items is mapped by
//!   [`items`] (messages, reasoning, function and custom tool calls and
//!   their outputs);
//! - `tools`: function tools, flat in the Responses API (`{"type":
//!   "function", "name", "description", "parameters"}`), → `{"name",
//!   "description", "input_schema"}` (`parameters`, or an empty object
//!   schema); hosted tools (web search, file search, MCP, …) and custom
//!   tools have no Anthropic definition and are dropped and reported, as
//!   are `strict` flags.
//!
//! Calls: each request is one call sending its mapped input; successive
//! requests extend a trace when its latest request's messages are a prefix
//! of theirs (a client that resends the whole conversation, as with
//! `store: false`), otherwise they start a new one. A request with
//! `previous_response_id` sends only what follows that response: when the
//! response is in the same file (among the last [`CHAIN_MEMORY`] read) its
//! request's messages and its output are put before the new input, so the
//! call sends the conversation the API saw; when it is not, the earlier
//! conversation is not in the log and the call sends only its own input
//! (reported: its recorded input tokens then exceed what the trace shows).
//!
//! Usage comes from the response's `usage`: `input_tokens` includes the
//! cache reads (`input_tokens_details.cached_tokens`) and, on GPT-5.6 and
//! later, the cache writes (`input_tokens_details.cache_write_tokens`), so
//! uncached input = `input_tokens` − cached − written; reads and writes are
//! kept apart (a write is billed once, as a write); `output_tokens`
//! includes the reasoning tokens (`output_tokens_details.reasoning_tokens`)
//! and is the output. A usage whose cached and written tokens exceed
//! `input_tokens` is an error at the record (`…/usage`), skipped under
//! `skip_invalid`. `start_ms` is the record's `timestamp`, else the
//! response's `created_at`. The response's `output` items are the reply;
//! the last call's reply ends the history.

pub(crate) mod items;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

use self::items::Items;
use super::common::{
    self, Conversations, Exchange, NewCall, TraceBuilder, Unmapped, UsageProblem, answered,
    compact_object, exchange, finish_usage, message_key, openai_usage, read_text, timestamp_ms,
};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::{ContentBlock, Message, Role, ToolDefinition};
use tracecost_trace::{Call, Prompt};

/// How many earlier responses of a file a `previous_response_id` is
/// looked up among (each is held with the conversation it ends).
pub const CHAIN_MEMORY: usize = 64;

/// Imports OpenAI Responses API request bodies and request/response logs.
/// Directories are expanded to their `.json`/`.jsonl` files; files are read
/// in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::OpenaiResponses.import(inputs, opts)
}

/// What [`super::InputFormat::OpenaiResponses`] reads, for the loop every log
/// importer shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "call(s)",
    nothing_found: "OpenAI Responses API requests",
    read,
    first: None,
    csv: false,
};

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
    _shared: &mut common::Shared,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let builders = import_file(path, opts, report, un)?;
    Ok((
        builders,
        format!("OpenAI Responses {}", common::file_name(path)),
    ))
}

/// What reading a file keeps between records.
#[derive(Default)]
struct State {
    convs: Conversations,
    /// The latest responses read, by id, with the conversation each ends
    /// (its request's messages and its reply).
    chain: VecDeque<(String, Vec<Message>)>,
}

fn import_file(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
) -> Result<Vec<TraceBuilder>, ImportError> {
    let mut st = State::default();
    if first_line_alone(path)? {
        common::each_line(path, |line| {
            let text = match line.text {
                Ok(t) => t,
                Err(col) => {
                    let err = common::invalid(path, line.number, Some(col), "not UTF-8");
                    return common::reject(opts, report, err);
                }
            };
            let v = match serde_json::from_str::<&RawValue>(text) {
                Ok(v) => v,
                Err(e) => {
                    return common::reject(
                        opts,
                        report,
                        common::invalid_json(path, line.number, &e),
                    );
                }
            };
            // A line may hold a list of records, as a whole file may.
            let records = match serde_json::from_str::<Vec<&RawValue>>(v.get()) {
                Ok(list) => list,
                Err(_) => vec![v],
            };
            for v in records {
                if let Err(msg) = record(v, line.number, &mut st, un) {
                    let err = common::invalid(path, line.number, Some(1), &msg);
                    common::reject(opts, report, err)?;
                }
            }
            Ok(())
        })?;
        return Ok(st.convs.builders);
    }
    let text = read_text(path, opts, report)?;
    let Some(doc) = common::split_doc(path, &text, opts, report)? else {
        return Ok(Vec::new());
    };
    common::each_record(
        path,
        &text,
        doc,
        opts,
        report,
        "expected a list of request bodies or request/response records",
        |v, line| record(v, line, &mut st, un),
    )?;
    Ok(st.convs.builders)
}

/// Whether the file's first non-blank line is a JSON value on its own:
/// the file is then JSON Lines (a one-line document reads the same
/// either way).
fn first_line_alone(path: &Path) -> Result<bool, ImportError> {
    use std::io::BufRead;
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            return Ok(false);
        }
        let line = buf.strip_prefix(tracecost_trace::UTF8_BOM).unwrap_or(&buf);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return Ok(serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok());
    }
}

fn str_of(o: &RawObject, k: &str) -> Option<String> {
    match o.parse::<String>(k) {
        Some(Ok(s)) => Some(s),
        _ => None,
    }
}

/// One request body or request/response pair.
fn record(v: &RawValue, line: usize, st: &mut State, un: &mut Unmapped) -> Result<(), String> {
    let obj = compact_object(v.get()).ok_or("expected a JSON object")?;
    let Some(Exchange {
        body,
        base,
        response,
        start_ms: top_ts,
        ..
    }) = exchange(obj, un)?
    else {
        return Ok(());
    };
    if body.get("input").is_none() {
        un.add(
            "records that are neither a Responses request body nor a request/response pair",
            1,
        );
        return Ok(());
    }
    let items = input_items(&body, base, st, un)?;
    let mut system = Vec::new();
    match body.get("instructions").filter(|i| i.get() != "null") {
        None => {}
        Some(i) => match serde_json::from_str::<String>(i.get()) {
            Ok(t) if !t.is_empty() => system.push(ContentBlock::text(&t)),
            Ok(_) => {}
            Err(_) => un.add("instructions that are not a string (dropped)", 1),
        },
    }
    system.extend(items.system.iter().cloned());
    let messages = items.finish();
    if messages.is_empty() {
        un.add("requests with no conversation items (no call)", 1);
        return Ok(());
    }
    let tools = map_tools(&body, un);
    let model = str_of(&body, "model");
    let answer = read_answer(response, un)?;
    let start_ms = top_ts.or(answer.start_ms);
    let (usage, reply, response_id) = (answer.usage, answer.reply, answer.response_id);
    if let Some(id) = response_id {
        let mut history = messages.clone();
        history.extend(reply.iter().cloned());
        if st.chain.len() == CHAIN_MEMORY {
            st.chain.pop_front();
        }
        st.chain.push_back((id, history));
    }
    let call = Call {
        cleared: Vec::new(),
        compacted: None,
        messages: messages.len(),
        start_ms,
        model,
        prompt: 0,
        markers: None,
        usage: usage.map(Box::new),
    };
    let keys = messages.iter().map(message_key).collect();
    let req = NewCall {
        messages,
        keys,
        meta: Vec::new(),
        prompt: Prompt { system, tools },
    };
    st.convs.add(ProviderKind::OpenAi, line, req, call, reply);
    Ok(())
}

/// The conversation a request sends: the response it continues (when
/// still remembered), then its own input (a string or a list of items).
fn input_items(
    body: &RawObject,
    base: &str,
    st: &State,
    un: &mut Unmapped,
) -> Result<Items, String> {
    let mut items = match str_of(body, "previous_response_id") {
        Some(id) => match st.chain.iter().find(|(r, _)| *r == id) {
            Some((_, history)) => Items::continuing(history.clone()),
            None => {
                un.add(
                    "requests continuing a response not in the file (previous_response_id: the earlier conversation is not in the log, the call sends only its own input)",
                    1,
                );
                Items::new()
            }
        },
        None => Items::new(),
    };
    let input = body.get("input").filter(|i| i.get() != "null");
    match input {
        None => {}
        Some(raw) if raw.get().starts_with('"') => {
            let text: String = serde_json::from_str(raw.get())
                .map_err(|_| format!("at {base}/input: expected a string or a list of items"))?;
            let mut m = RawObject::new();
            m.set("role", raw_string("user"));
            m.set("content", raw_string(&text));
            items.push(&raw_json(m.to_json()), un);
        }
        Some(raw) => {
            let list = serde_json::from_str::<Vec<&RawValue>>(raw.get())
                .map_err(|_| format!("at {base}/input: expected a string or a list of items"))?;
            for item in list {
                items.push(item, un);
            }
        }
    }
    Ok(items)
}

/// What a record's response says: when it started, its usage, its reply
/// and its id (for the requests that continue it).
struct Answer {
    start_ms: Option<u64>,
    usage: Option<tracecost_trace::RecordedUsage>,
    reply: Option<Message>,
    response_id: Option<String>,
}

fn read_answer(
    response: Option<Option<Box<RawValue>>>,
    un: &mut Unmapped,
) -> Result<Answer, String> {
    let mut start_ms = None;
    let mut usage = None;
    let mut reply = None;
    let mut response_id = None;
    if let Some((b, wrapped)) = response.and_then(|r| answered(r.as_deref(), un)) {
        let at = if wrapped {
            "/response/body"
        } else {
            "/response"
        };
        start_ms = b
            .raw("created_at")
            .or_else(|| b.raw("created"))
            .and_then(timestamp_ms);
        if let Some(u) = b.raw("usage").filter(|u| u.get() != "null") {
            match openai_usage(u) {
                Ok(u) => usage = finish_usage(u, un),
                Err(UsageProblem::Malformed) => {
                    un.add(common::MALFORMED_USAGE, 1);
                }
                Err(UsageProblem::Exceeds(why)) => {
                    return Err(format!("at {at}/usage: {why}"));
                }
            }
        }
        common::openai_tier(common::service_tier(&b).as_deref(), usage.as_mut(), un);
        reply = reply_message(&b, un);
        response_id = str_of(&b, "id");
    }
    Ok(Answer {
        start_ms,
        usage,
        reply,
        response_id,
    })
}

/// A response's `output` items as one assistant message.
fn reply_message(body: &RawObject, un: &mut Unmapped) -> Option<Message> {
    let output = match body.parse::<Vec<&RawValue>>("output") {
        Some(Ok(o)) => o,
        _ => return None,
    };
    let mut items = Items::new();
    for item in output {
        items.push(item, un);
    }
    let mut messages = items.finish().into_iter();
    let first = messages.next()?;
    un.add(
        "response output items that are not the model's (dropped)",
        messages.len(),
    );
    (first.role() == Role::Assistant).then_some(first)
}

fn map_tools(body: &RawObject, un: &mut Unmapped) -> Vec<ToolDefinition> {
    super::common::function_tools(
        body,
        |t| super::common::is_function(t).then(|| t.clone()),
        "tools that are not functions (hosted, custom; no Anthropic definition; dropped)",
        un,
    )
}
